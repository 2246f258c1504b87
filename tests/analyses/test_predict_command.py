"""econ predict: a number with its error factor for a point no source gave; a clear error where none can exist."""

from __future__ import annotations

import hashlib
import json

import pytest

from econ.cli import main

KEYS = (
    "decode_tokens_per_s_per_chip",
    "prefill_tokens_per_s_per_chip",
    "decode_tokens_per_s_per_user",
    "decode_batch_per_replica",
    "step_time_s",
    "ttft_s",
    "usd_per_mtok_input",
    "usd_per_mtok_output",
    "error_factor",
)


def predict(capsys, db, *args):
    code = main(["predict", "--db", str(db), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.strip()


POINT = (
    "--model",
    "Llama-3.1-70B",
    "--chip",
    "H100",
    "--decode-chips",
    "4",
    "--input-tokens",
    "3000",
    "--output-tokens",
    "700",
)


def test_a_point_no_source_gave_gets_a_number_and_its_error_factor(real_db, capsys):
    before = hashlib.sha256(real_db.read_bytes()).hexdigest()
    code, out, err = predict(capsys, real_db, *POINT, "--batch", "96", "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert set(KEYS) <= set(result)
    assert result["decode_batch_per_replica"] == 96
    assert result["efficiency_basis"] == "calibrated"
    assert 1.0 < result["error_factor"] < 2.0 and "H100" in result["error_basis"]
    assert result["decode_tokens_per_s_per_chip"] > 0 and result["ttft_s"] > 0
    # the reported rate is the batch over the replica's chips and the step
    assert result["decode_tokens_per_s_per_chip"] == pytest.approx(96 / 4 / result["step_time_s"], rel=1e-9)
    assert hashlib.sha256(real_db.read_bytes()).hexdigest() == before


def test_the_bound_is_faster_and_carries_no_error_factor(real_db, capsys):
    _, out, _ = predict(capsys, real_db, *POINT, "--batch", "96", "--format", "json")
    calibrated = json.loads(out)
    _, out, _ = predict(capsys, real_db, *POINT, "--batch", "96", "--format", "json", "--scenario", "base")
    bound = json.loads(out)
    assert bound["efficiency_basis"] == "bound" and bound["error_factor"] is None
    assert bound["decode_tokens_per_s_per_chip"] > calibrated["decode_tokens_per_s_per_chip"]


def test_a_speed_target_picks_the_largest_batch_that_meets_it(real_db, capsys):
    code, out, err = predict(capsys, real_db, *POINT, "--tokens-per-s-per-user", "40", "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert result["decode_tokens_per_s_per_user"] >= 40


def test_a_point_that_does_not_fit_is_an_error_naming_the_limit(real_db, capsys):
    code, out, err = predict(
        capsys,
        real_db,
        "--model",
        "Llama-3.1-405B",
        "--chip",
        "H100",
        "--decode-chips",
        "1",
        "--input-tokens",
        "1000",
        "--output-tokens",
        "1000",
        "--batch",
        "8",
    )
    assert code == 1 and out == ""
    assert err.startswith("Error: does not fit:") and "GB per chip" in err and "80 GB" in err


def test_an_unreachable_speed_is_an_error_naming_the_fastest(real_db, capsys):
    code, out, err = predict(capsys, real_db, *POINT, "--tokens-per-s-per-user", "5000")
    assert code == 1 and out == ""
    assert err.startswith("Error: unreachable:") and "the fastest reaches" in err


def test_batch_and_speed_are_exclusive(real_db, capsys):
    with pytest.raises(SystemExit):
        main(["predict", "--db", str(real_db), *POINT, "--batch", "8", "--tokens-per-s-per-user", "30"])
    capsys.readouterr()


def test_table_output_lists_terms_and_layout(real_db, capsys):
    code, out, _ = predict(capsys, real_db, *POINT, "--batch", "96")
    assert code == 0
    for label in ("decode layout", "decode step time", "  compute", "time to first token", "typical error factor"):
        assert label in out
