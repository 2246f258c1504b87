"""Which runs the calibration counts: a row that copies another row's measurement is counted once."""

from __future__ import annotations

import polars as pl

from econ.analyses.calibration_tables import count_once

RUN = {
    "architecture_group": "DeepSeek-V3",
    "chip": "B200",
    "engine": "trtllm",
    "mode": "disagg",
    "input_tokens": 1024.0,
    "output_tokens": 1024.0,
    "measured_ttft_s": 0.31415926535,
    "measured_tpot_s": 0.0123456789012,
    "workers_assumed": False,
    "decode_expert_balanced": 0.0,
    "launch_max_running": None,
    "reason": None,
}


def frame(*rows: dict) -> pl.DataFrame:
    return pl.DataFrame([{**RUN, "run_id": f"r{i}", **row} for i, row in enumerate(rows)])


def reasons(*rows: dict) -> list[str | None]:
    return count_once(frame(*rows))["reason"].to_list()


def test_a_copy_under_another_model_of_the_architecture_is_counted_once_naming_the_run_kept():
    out = reasons({"arch_model": "DeepSeek-R1"}, {"arch_model": "DeepSeek-V3"}, {"arch_model": "DeepSeek-R1"})
    assert out[0] is None
    assert out[1] == out[2] == "the same measurement as run r0 (identical TTFT and TPOT): counted once"


def test_the_copy_that_states_its_workers_is_the_one_kept():
    out = reasons({"workers_assumed": True}, {"workers_assumed": False})
    assert out == ["the same measurement as run r1 (identical TTFT and TPOT): counted once", None]


def test_among_copies_that_state_their_workers_the_one_whose_launch_econ_read_is_kept():
    """A copy matched to its InferenceX launch carries the recipe's expert balancer and decode batch limit; another
    copy stating the same workers without them is the one set aside."""
    balanced = reasons({}, {"decode_expert_balanced": 1.0})
    assert balanced == ["the same measurement as run r1 (identical TTFT and TPOT): counted once", None]
    limited = reasons({}, {"launch_max_running": 256.0})
    assert limited == ["the same measurement as run r1 (identical TTFT and TPOT): counted once", None]


def test_two_spellings_of_one_measured_time_are_one_measurement():
    """One source file writes 50.144093052949756 ms where the other writes 50.14409305294976: twelve significant
    digits (calibration_tables.COPY_DIGITS) decide, not the float's last bit."""
    out = reasons({"measured_ttft_s": 0.050144093052949756}, {"measured_ttft_s": 0.05014409305294976})
    assert out == [None, "the same measurement as run r0 (identical TTFT and TPOT): counted once"]


def test_a_repeat_with_its_own_measurement_is_kept_it_is_a_replicate_not_a_copy():
    assert reasons({}, {"measured_ttft_s": 0.31415926536}) == [None, None]  # one digit apart: two measurements
    assert reasons({}, {"measured_tpot_s": 0.0123456789013}) == [None, None]


def test_rows_that_differ_in_what_was_run_are_never_copies():
    for change in ({"chip": "H200"}, {"engine": "sglang"}, {"mode": "agg"}, {"input_tokens": 8192.0},
                   {"output_tokens": 8192.0}, {"architecture_group": "Kimi-K2-Instruct"}):  # fmt: skip
        assert reasons({}, change) == [None, None], change


def test_a_row_already_set_aside_keeps_its_reason_and_is_no_one_s_original():
    out = reasons({"reason": "the layout does not fit"}, {}, {})
    assert out[0] == "the layout does not fit"
    assert out[1] is None and out[2] == "the same measurement as run r1 (identical TTFT and TPOT): counted once"


def test_a_row_without_a_measurement_is_left_alone():
    assert reasons({"measured_ttft_s": None}, {"measured_ttft_s": None}) == [None, None]


def test_the_rows_keep_their_order_and_columns():
    f = frame({}, {"chip": "H200"}, {})
    out = count_once(f)
    assert out["run_id"].to_list() == ["r0", "r1", "r2"]
    assert out.columns == f.columns
