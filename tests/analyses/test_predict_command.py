"""econ predict: a configuration's TTFT, TPOT and throughput with the bound beside them and the error bands of
points like it; every layout a user can state; a file of runs at once; a clear error wherever none can exist."""

from __future__ import annotations

import hashlib
import json
import math
import re

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from econ.analyses.predict_command import Point, predict_point
from econ.analyses.predict_layouts import PoolSpec
from econ.cli import main
from econ.errors import EconError
from tests.analyses.helpers import DEEPEST_LLAMA_70B_H200, points_file, predict

KEYS = (
    "tpot_s",
    "tpot_bound_s",
    "tpot_error_factor_p50",
    "tpot_error_factor_p90",
    "ttft_s",
    "ttft_bound_s",
    "ttft_error_factor_p90",
    "decode_tokens_per_s_per_chip",
    "output_tokens_per_s_per_chip",
    "usd_per_mtok_output",
)


POINT = ("--model", "Llama-3.1-70B", "--chip", "H100", "--input-tokens", "3000", "--output-tokens", "700")
STATED = ("--decode-chips", "4", "--decode-tp", "4", "--decode-dp", "1", "--decode-pp", "1")


def test_a_stated_configuration_gets_its_prediction_the_bound_and_its_bands(real_db, capsys):
    before = hashlib.sha256(real_db.read_bytes()).hexdigest()
    code, out, err = predict(capsys, real_db, *POINT, *STATED, "--mode", "agg", "--batch", "64", "--format", "json")
    assert code == 0, err
    r = json.loads(out)
    assert set(KEYS) <= set(r) and all(math.isfinite(r[k]) for k in KEYS)
    assert r["decode_layout_chosen_by"] == "stated" and r["decode_batch_per_worker"] == 64
    assert r["tpot_bound_s"] < r["tpot_s"] and r["ttft_bound_s"] < r["ttft_s"]
    assert 1.0 < r["tpot_error_factor_p50"] < r["tpot_error_factor_p90"] < 3.0
    assert "agg" in r["error_basis"] and "seen" in r["error_basis"]  # Llama-3.1-70B on H100 is calibrated
    assert r["decode_tokens_per_s_per_chip"] == pytest.approx(64 / r["tpot_s"] / 4, rel=1e-9)
    assert hashlib.sha256(real_db.read_bytes()).hexdigest() == before


def test_an_omitted_degree_is_chosen_by_the_layout_search_and_said_so(real_db, capsys):
    """The output names the degrees the search chose, those the command left out (it said only "layout search",
    beside a stated --decode-tp 8 --decode-ep 8, as if it had overridden them)."""
    code, out, err = predict(capsys, real_db, *POINT, "--decode-chips", "8", "--batch", "32", "--format", "json")
    assert code == 0, err
    r = json.loads(out)
    assert r["decode_layout_chosen_by"] == "layout search (tp, dp, pp)" and "(8 chips)" in r["decode_layout"]
    assert "fewest meeting the TTFT target" in r["prefill_layout_chosen_by"]
    moe = (
        "--model",
        "DeepSeek-R1",
        "--chip",
        "B200",
        "--input-tokens",
        "8192",
        "--output-tokens",
        "1024",
        "--batch",
        "64",
    )
    code, out, err = predict(capsys, real_db, *moe, "--mode", "agg", "--decode-tp", "8", "--decode-ep", "8")
    assert code == 0, err
    assert "layout search (chips, dp, pp)" in out and "tp 8 x" in out
    code, out, err = predict(capsys, real_db, *moe, "--decode-chips", "8", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["decode_layout_chosen_by"] == "layout search (tp, dp, pp, ep)"
    # tp, dp and pp stated: only the experts' split (spread over the 8 ranks, or split within them) was left to it
    degrees = ("--decode-tp", "8", "--decode-dp", "1", "--decode-pp", "1")
    code, out, err = predict(capsys, real_db, *moe, *degrees, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["decode_layout_chosen_by"] == "layout search (ep)"


def test_deepseeks_ep144_decode_and_a_named_layout_are_stated(real_db, capsys):
    args = (
        "--model",
        "DeepSeek-V3",
        "--chip",
        "H800",
        "--input-tokens",
        "4000",
        "--output-tokens",
        "1000",
        "--weight-format",
        "fp8",
        "--kv-cache-format",
        "fp8",
        "--speculative-tokens",
        "1",
        "--acceptance",
        "0.85",
    )
    code, out, err = predict(
        capsys,
        real_db,
        *args,
        "--decode-chips",
        "144",
        "--decode-tp",
        "1",
        "--decode-dp",
        "144",
        "--prefill-layout",
        "deepseek_prefill_ep32",
        "--batch",
        "2048",
        "--format",
        "json",
    )
    assert code == 0, err
    r = json.loads(out)
    assert "(144 chips)" in r["decode_layout"] and "ep 144" in r["decode_layout"]
    assert r["prefill_layout_chosen_by"].startswith("named layout deepseek_prefill_ep32")
    code, out, err = predict(
        capsys,
        real_db,
        *args,
        "--decode-layout",
        "deepseek_decode_ep144",
        "--batch",
        "2048",
        "--prefill-layout",
        "deepseek_prefill_ep32",
        "--format",
        "json",
    )
    assert code == 0, err


def test_more_users_than_the_kv_cache_holds_wait_for_a_slot(real_db, capsys):
    """Llama-3.1-70B in FP8 with an FP8 cache on one H200 under TensorRT-LLM (which admits a request only with room
    for its whole prompt and output): by hand, 141 GB less the 10% reserve less ~70.6 GB of weights leaves ~56 GB,
    and a request of 0.9 x (1,024 + 8,192) tokens at 2 x 80 x 8 x 128 B per token holds 1.36 GB: ~41 sequences.
    128 users then run ~40 at a time and wait for the rest; the measured InferenceX run of that configuration
    (data/inferencex_train.csv, ..._h200_sxm_trtllm_fp8_agg_1024x8192_c128_tp1_ep1_417) took 369 s to first token
    and 30.4 ms per token."""
    args = (
        "--model", "Llama-3.1-70B", "--chip", "H200", "--mode", "agg", "--engine", "trtllm",
        "--decode-chips", "1", "--decode-tp", "1", "--input-tokens", "1024", "--output-tokens", "8192",
        "--weight-format", "fp8", "--kv-cache-format", "fp8", "--format", "json",
    )  # fmt: skip
    code, out, err = predict(capsys, real_db, *args, "--concurrency", "128")
    assert code == 0, err
    r = json.loads(out)
    assert 33 <= r["decode_batch_per_worker"] <= 43 and r["concurrency"] == 128
    assert "wait for a slot" in r["notes"]
    assert 369 / 2 < r["ttft_s"] < 369 * 2 and 0.0304 / 1.3 < r["tpot_s"] < 0.0304 * 1.3
    # more users do not make the step slower: they wait longer, and throughput stays what the cache allows
    code, out, err = predict(capsys, real_db, *args, "--concurrency", "1024")
    more = json.loads(out)
    assert more["tpot_s"] == pytest.approx(r["tpot_s"], rel=1e-9)
    assert more["ttft_s"] > 6 * r["ttft_s"]
    assert more["output_tokens_per_s_per_chip"] == pytest.approx(r["output_tokens_per_s_per_chip"], rel=0.02)


def test_the_bound_scenario_is_faster_and_claims_no_error_factor(real_db, capsys):
    args = (*POINT, *STATED, "--mode", "agg", "--batch", "64", "--format", "json")
    calibrated = json.loads(predict(capsys, real_db, *args)[1])
    code, out, err = predict(capsys, real_db, *args, "--scenario", "base")
    bound = json.loads(out)
    assert code == 0, err
    assert bound["efficiency_basis"] == "bound" and bound["tpot_error_factor_p90"] is None
    assert bound["tpot_s"] < calibrated["tpot_s"]


def test_a_speed_target_picks_the_most_throughput_that_meets_it(real_db, capsys):
    code, out, err = predict(capsys, real_db, *POINT, *STATED, "--tokens-per-s-per-user", "40", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["decode_tokens_per_s_per_user"] >= 40


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            (
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
            ),
            "Error: cannot predict the decode pool: the layout does not hold",
        ),
        ((*POINT, *STATED, "--tokens-per-s-per-user", "5000"), "Error: unreachable: no layout and concurrency tried"),
        (
            (*POINT, "--decode-chips", "4", "--decode-tp", "3", "--batch", "8"),
            "Error: no decode layout has chips 4, tp 3",
        ),
        (
            (*POINT, "--decode-chips", "4", "--decode-tp", "2", "--decode-dp", "1", "--decode-pp", "1", "--batch", "8"),
            "Error: --decode-chips 4 is not tp x dp x pp = 2",
        ),
        ((*POINT, "--decode-chips", "0", "--batch", "8"), "Error: --decode-chips must be a whole number from 1 to"),
        ((*POINT, "--batch", "8", "--speculative-tokens", "2"), "Error: --speculative-tokens needs --acceptance"),
        ((*POINT, "--batch", "nan"), "Error: --batch must be a positive number"),
        ((*POINT, "--decode-layout", "nope", "--batch", "8"), "Error: no layout 'nope' in data/layouts.csv"),
        (
            (
                "--model",
                "Llama-3.1-70B",
                "--chip",
                "TPU7x",
                "--input-tokens",
                "100",
                "--output-tokens",
                "10",
                "--batch",
                "8",
            ),
            "Error: TPU7x has no scale_out_bandwidth_gbit_per_s in data/hardware.csv",
        ),
        (
            (
                "--model",
                "Llama-3.1-70b-typo",
                "--chip",
                "H100",
                "--input-tokens",
                "1",
                "--output-tokens",
                "1",
                "--batch",
                "1",
            ),
            "Error: unknown model 'Llama-3.1-70b-typo'",
        ),
        (("--chip", "H100", "--batch", "1"), "Error: econ predict needs --model, --input-tokens, --output-tokens"),
    ],
)
def test_errors_name_the_problem_and_the_fix(real_db, capsys, args, message):
    code, out, err = predict(capsys, real_db, *args)
    assert code == 1 and out == "" and err.startswith(message), err


def test_mi355x_has_cited_link_bandwidths_and_is_predicted(real_db, capsys):
    code, out, err = predict(
        capsys,
        real_db,
        "--model",
        "gpt-oss-120b",
        "--chip",
        "mi355x",
        "--input-tokens",
        "1000",
        "--output-tokens",
        "1000",
        "--decode-chips",
        "1",
        "--batch",
        "16",
        "--mode",
        "agg",
        "--format",
        "json",
    )
    assert code == 0, err
    r = json.loads(out)
    assert r["chip"] == "MI355X" and "new chip" in r["error_basis"]  # no calibration row on MI355X: a wider band


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    mode=st.sampled_from(["agg", "disagg"]),
    chips=st.sampled_from([1, 2, 3, 4, 8, 16, 144]),
    tp=st.sampled_from([None, 1, 2, 4, 8]),
    batch=st.floats(min_value=1, max_value=4096),
    lengths=st.tuples(st.integers(1, 200_000), st.integers(1, 20_000)),
    fmt=st.sampled_from([None, "bf16", "fp8", "fp4"]),
    mtp=st.sampled_from([(0, None), (1, 0.8), (3, 0.6)]),
    cached=st.sampled_from([0.0, 0.5, 0.95]),
    model=st.sampled_from(["Llama-3.1-8B", "DeepSeek-V3", "gpt-oss-120b", "Qwen3-235B-A22B", "DeepSeek-V4-Flash"]),
    chip=st.sampled_from(["H100", "GB200", "MI300X", "B200"]),
    balanced=st.booleans(),
)
def test_no_combination_ends_in_a_traceback_or_a_nan(
    real_db, mode, chips, tp, batch, lengths, fmt, mtp, cached, model, chip, balanced
):
    point = Point(
        model=model,
        chip=chip,
        input_tokens=float(lengths[0]),
        output_tokens=float(lengths[1]),
        mode=mode,
        decode=PoolSpec(chips=chips, tensor_parallel=tp),
        prefill=PoolSpec(chips=chips),
        batch=batch,
        weight_format=fmt,
        speculative_tokens=mtp[0],
        acceptance_frac=mtp[1],
        cached_input_frac=cached,
        expert_balanced=balanced,
    )
    try:
        r = predict_point(real_db, point)
    except EconError as e:
        assert str(e) and e.hint
        return
    numbers = [v for k, v in r.items() if isinstance(v, float) and "error_factor" not in k]
    assert all(math.isfinite(v) for v in numbers), r


def test_runs_that_wait_for_a_slot_are_claimed_the_error_of_runs_that_wait(real_db):
    """Where the model has users wait for a decode slot, the TTFT errs far more than the pool's (the wait is
    (C/K - 1) x a request's whole service time, so any error in K or the step is multiplied): the band the pool's
    other runs give covered 59% of them held out one model at a time. They are their own regime, and the band
    econ claims for them (new model) covers at least 80% of their held-out ratios."""
    from tests.analyses.helpers import q

    waits = q(
        real_db,
        "select regime_ttft, regime_tpot, model_out_ttft_ratio from calibration_runs "
        "where included and notes like '%wait for a slot%'",
    )
    assert waits.height >= 20 and waits["regime_ttft"].str.ends_with("_slot_wait").all()
    assert waits["regime_tpot"].str.ends_with("_slot_wait").all()
    band = q(
        real_db,
        "select regime, error_factor_p90 from calibration_bands "
        "where target = 'ttft' and distance = 'new_model' and engine_stated and engine = '' and chip = ''",
    )
    p90 = dict(band.iter_rows())
    assert p90["agg_slot_wait"] > p90["agg"]
    ratio = waits["model_out_ttft_ratio"].to_numpy()
    claimed = np.array([p90[r] for r in waits["regime_ttft"]])
    inside = np.abs(np.log(ratio)) <= np.log(claimed)
    assert inside.mean() >= 0.8


def test_a_point_beyond_the_measured_lengths_or_the_models_context_is_predicted_and_says_so(real_db, capsys, tmp_path):
    """The bands were measured on the included runs' prompts, 128 to 15,000 tokens (the shipped inferencex_train.csv's
    shortest and longest isl, read here from the file): a prompt one token past either end says its band was not
    measured there, one at the end does not. Llama-3.1-70B's config states a native context of 131,072 tokens
    (max_position_embeddings, huggingface.co/meta-llama/Llama-3.1-70B-Instruct config.json): a request longer than
    that is predicted as if served (a deployment may extend the context) and says so. Both notes reach --points too."""
    from tests.conftest import REPO

    runs = pl.read_csv(REPO / "data" / "inferencex_train.csv", infer_schema_length=10000)
    shortest, longest = int(runs["isl"].min()), int(runs["isl"].max())
    assert (shortest, longest) == (128, 15000)

    def notes(prompt, output=700):
        args = ("--model", "Llama-3.1-70B", "--chip", "H100", "--input-tokens", str(prompt), "--output-tokens")
        code, out, err = predict(capsys, real_db, *args, str(output), "--batch", "8", "--format", "json")
        assert code == 0, err
        got = json.loads(out)
        assert math.isfinite(got["ttft_error_factor_p90"]) and math.isfinite(got["tpot_error_factor_p90"])
        return got["notes"]

    outside = f"input tokens (the measured runs: {shortest}-{longest:,})"
    assert "outside the lengths" not in notes(longest) and "outside the lengths" not in notes(shortest)
    said = f"{longest + 1} {outside}: outside the lengths the error band was measured on"
    assert said in notes(longest + 1)
    assert f"{shortest - 1} {outside}" in notes(shortest - 1)
    beyond = "tokens (prompt + output) exceed Llama-3.1-70B's native context of 131072"
    assert beyond not in notes(131072 - 700) and f"131073 {beyond}" in notes(131072 - 699)
    row = "meta-llama/Llama-3.1-70B-Instruct,h100_sxm,fp8,agg,{},1024,fp8,fp8,4,8,1,1,1,1"
    path = points_file(tmp_path / "long.csv", "long,vllm," + row.format(131000), "short,vllm," + row.format(1024))
    code, out, err = predict(capsys, real_db, "--points", str(path), "--format", "json")
    rows = json.loads(out)
    assert code == 0 and [r["status"] for r in rows] == ["ok", "ok"]
    assert f"132024 {beyond}" in rows[0]["notes"] and f"131000 {outside}" in rows[0]["notes"]
    # the short row is a configuration vLLM ran at other concurrencies: its only note is the correction they give
    assert rows[1]["notes"].startswith("corrected by this configuration's measured runs at other concurrencies")
    assert "outside" not in rows[1]["notes"] and "context" not in rows[1]["notes"]


def test_a_stated_speculation_says_its_band_was_not_measured_on_one(real_db, capsys):
    """InferenceX's rows state no draft length (the shipped inferencex_train.csv has no nextn column; its MTP launches
    say "mtp" and nothing more): a point stating --speculative-tokens is timed as stated and says that no band was
    measured on a stated speculation; the same point without it says nothing of it."""
    from tests.conftest import REPO

    with (REPO / "data" / "inferencex_train.csv").open(encoding="utf-8") as runs:
        assert "nextn" not in runs.readline().split(",")
    args = ("--model", "DeepSeek-R1", "--chip", "B200", "--input-tokens", "1000", "--output-tokens", "1000")

    def notes(*more):
        code, out, err = predict(capsys, real_db, *args, "--concurrency", "64", *more, "--format", "json")
        assert code == 0, err
        return json.loads(out)["notes"] or ""

    said = "3 draft tokens per step, timed as stated: no measured run states one, so the error band was not measured"
    assert said in notes("--speculative-tokens", "3", "--acceptance", "0.7")
    assert "draft token" not in notes()
    assert "1 draft token per step, timed as stated" in notes("--speculative-tokens", "1", "--acceptance", "0.8")


def test_weights_in_a_format_the_chip_has_no_peak_for_say_what_their_matmuls_run_in(real_db, capsys):
    """Hopper has FP8 tensor cores and no FP4 ones (NVIDIA H100 datasheet: FP8, FP16, BF16, TF32, INT8), Blackwell has
    FP4 (B200): FP4 weights on H100 are timed with FP8 math, as InferenceX's gpt-oss MXFP4 runs on Hopper were, and
    the notes say so; on B200 they say nothing of it."""

    def notes(chip):
        args = ("--model", "Llama-3.1-70B", "--chip", chip, "--input-tokens", "1000", "--output-tokens", "500")
        code, out, err = predict(capsys, real_db, *args, "--weight-format", "fp4", "--batch", "8", "--format", "json")
        assert code == 0, err
        return json.loads(out)["notes"]

    assert "H100 has no fp4 peak: fp4 weights' matmuls run in fp8" in notes("H100")
    assert "no fp4 peak" not in notes("B200")


DS = ("--model", "DeepSeek-V3", "--chip", "H200", "--input-tokens", "2000", "--output-tokens", "500")
LAYOUT = re.compile(r"tp (\d+) x dp (\d+) x pp (\d+) \((\d+) chips\), ep (\d+) etp (\d+)")


def _degrees(text: str) -> dict[str, int]:
    tp, dp, pp, chips, ep, etp = (int(x) for x in LAYOUT.fullmatch(text).groups())
    return {"tp": tp, "dp": dp, "pp": pp, "chips": chips, "ep": ep, "etp": etp}


@pytest.mark.parametrize(
    "flags",
    [
        {"tp": 8},
        {"dp": 8},
        {"pp": 2},
        {"ep": 8},
        {"etp": 2},
        {"chips": 16, "ep": 16},
        {"tp": 4, "ep": 4, "etp": 2},  # ep x etp = tp x dp: dp 2
        {"chips": 16, "tp": 8, "dp": 2, "pp": 1, "ep": 4, "etp": 4},
    ],
    ids=str,
)
def test_every_stated_degree_of_either_pool_is_the_one_predicted(real_db, capsys, flags):
    """A degree the user states is the degree of the layout predicted, in both pools; the search fills only the rest
    (the layout search once replaced a stated --decode-ep when --decode-etp was given beside it)."""
    args = [a for pool in ("decode", "prefill") for k, v in flags.items() for a in (f"--{pool}-{k}", str(v))]
    workers = ("--decode-workers", "3", "--prefill-workers", "2")
    code, out, err = predict(capsys, real_db, *DS, *args, *workers, "--concurrency", "96", "--format", "json")
    assert code == 0, err
    r = json.loads(out)
    for pool in ("decode", "prefill"):
        got = _degrees(r[f"{pool}_layout"])
        assert {k: got[k] for k in flags} == flags, (pool, r[f"{pool}_layout"])
        assert got["chips"] == got["tp"] * got["dp"] * got["pp"] and got["ep"] * got["etp"] == got["tp"] * got["dp"]
    assert (r["decode_workers"], r["prefill_workers"]) == (3, 2)
    assert "fewest" not in r["prefill_layout_chosen_by"]  # the stated workers, not the search's


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((*POINT, "--decode-ep", "8", "--batch", "8"), "Error: --decode-ep 8: the model is dense"),
        ((*POINT, "--mode", "disagg", "--prefill-etp", "2", "--batch", "8"), "Error: --prefill-etp 2: the model is"),
        ((*POINT, "--mode", "agg", "--prefill-tp", "4", "--batch", "8"), "Error: --mode agg serves prefill and decode"),
        ((*POINT, "--mode", "agg", "--prefill-workers", "2", "--batch", "8"), "Error: --mode agg serves prefill"),
        (
            (*DS, "--decode-layout", "deepseek_decode_ep144", "--decode-tp", "4", "--batch", "8"),
            "Error: --decode-layout deepseek_decode_ep144 sets tp 1 x dp 144 x pp 1 (144 chips), ep 144 etp 1, not "
            "the stated tp 4 (it has 1)",
        ),
        (
            (*DS, "--prefill-layout", "deepseek_prefill_ep32", "--prefill-chips", "64", "--batch", "8"),
            "Error: --prefill-layout deepseek_prefill_ep32 sets",
        ),
        (
            (*DS, "--decode-tp", "8", "--decode-dp", "1", "--decode-ep", "4", "--decode-etp", "4", "--batch", "8"),
            "Error: no decode layout has tp 8, dp 1, ep 4, etp 4",
        ),
    ],
)
def test_a_stated_degree_the_prediction_cannot_honour_is_refused_with_why(real_db, capsys, args, message):
    code, out, err = predict(capsys, real_db, *args)
    assert code == 1 and out == "" and err.startswith(message), err


def test_a_named_layout_with_the_degrees_it_has_is_accepted(real_db, capsys):
    args = (*DS, "--decode-layout", "deepseek_decode_ep144", "--decode-chips", "144", "--decode-ep", "144")
    code, out, err = predict(capsys, real_db, *args, "--decode-workers", "2", "--batch", "8", "--format", "json")
    assert code == 0, err
    r = json.loads(out)
    assert _degrees(r["decode_layout"])["ep"] == 144 and r["decode_workers"] == 2


def test_the_prefill_pool_holds_the_weights_too(real_db, capsys):
    """DeepSeek-V3's 671 GB of FP8 weights need at least 5 H200s (141 GB each) in the prefill worker as in the decode
    one; the search once gave the prefill pool 1 chip (only the decode layout's memory was checked)."""
    code, out, err = predict(capsys, real_db, *DS, "--concurrency", "64", "--weight-format", "fp8", "--format", "json")
    assert code == 0, err
    r = json.loads(out)
    assert _degrees(r["prefill_layout"])["chips"] * 141e9 >= 671e9
    code, out, err = predict(capsys, real_db, *DS, "--prefill-chips", "1", "--concurrency", "64")
    assert code == 1 and err.startswith("Error: the prefill pool cannot run: the layout does not hold the weights"), err
    # with the sizes: 671 B parameters at one byte (and one sequence's cache) against the H200's 141 GB
    assert re.search(r"\(67[1-9] GB a chip, the chip has 141 GB\)", err), err


def test_a_dense_models_layout_names_no_expert_degrees(real_db, capsys):
    """Llama-3.1-70B has no experts: its layout reads 'tp 4 x dp 1 x pp 1 (4 chips)', with no 'ep 4 etp 1'; a MoE
    model's layout keeps them."""

    args = ["predict", "--db", str(real_db), "--chip", "H100", "--input-tokens", "3000", "--output-tokens", "700"]
    assert main([*args, "--model", "Llama-3.1-70B", "--decode-chips", "4", "--batch", "96", "--format", "json"]) == 0
    dense = json.loads(capsys.readouterr().out)
    assert dense["decode_layout"] == "tp 4 x dp 1 x pp 1 (4 chips)" and " ep " not in dense["prefill_layout"]
    assert main([*args, "--model", "DeepSeek-V3", "--decode-chips", "16", "--batch", "64", "--format", "json"]) == 0
    assert ", ep " in json.loads(capsys.readouterr().out)["decode_layout"]


def test_tp_dp_and_pp_set_the_workers_chips_without_chips_stated(real_db, capsys):
    """DeepSeek's DP144 decode unit stated by its degrees alone: 144 chips, and said to be stated, not searched."""
    code, out, err = predict(
        capsys, real_db, "--model", "DeepSeek-V3", "--chip", "H800", "--input-tokens", "4384", "--output-tokens",
        "1211", "--concurrency", "20000", "--weight-format", "fp8", "--decode-tp", "1", "--decode-dp", "144",
        "--decode-pp", "1", "--prefill-layout", "deepseek_prefill_ep32", "--format", "json",
    )  # fmt: skip
    assert code == 0, err
    r = json.loads(out)
    assert (
        r["decode_layout"].startswith("tp 1 x dp 144 x pp 1 (144 chips)") and r["decode_layout_chosen_by"] == "stated"
    )


def test_a_prediction_without_an_engine_claims_the_error_of_the_engines_average(real_db, capsys):
    """Without --engine the point is predicted with the engines' average parameters, which err more than a run's own
    engine (held out by configuration, the TTFT of aggregated Llama-3.1-70B runs on H200): the factors printed are
    those of calibration_bands' engine_stated = false cell of the chip and model, and with --engine the engine's."""
    from tests.analyses.helpers import q

    args = ("--model", "Llama-3.1-70B", "--chip", "H200", "--mode", "agg", "--concurrency", "32")
    args += ("--input-tokens", "1024", "--output-tokens", "1024", "--format", "json")
    printed = {}
    for stated, extra in ((False, ()), (True, ("--engine", "trtllm"))):
        code, out, err = predict(capsys, real_db, *args, *extra)
        assert code == 0, err
        printed[stated] = json.loads(out)
    claimed = dict(q(real_db, DEEPEST_LLAMA_70B_H200).iter_rows())
    for stated in (False, True):
        assert printed[stated]["ttft_error_factor_p90"] == pytest.approx(claimed[stated], rel=1e-12)
    assert claimed[False] > claimed[True]
    assert "engine average" in printed[False]["error_basis"] and "engine average" not in printed[True]["error_basis"]
    code, out, err = predict(capsys, real_db, *args, "--engine", "TensorRT-LLM")  # its other names are the engine
    assert code == 0 and json.loads(out) == printed[True], err


def test_a_stated_expert_balancer_times_the_experts_at_uniform_routings_busiest_rank(real_db, capsys):
    """--expert-balanced (EPLB) on a DEP32 DeepSeek-V3 decode pool: the busiest of 32 expert ranks carries uniform
    routing's excess instead of the router skew fitted to unbalanced engines, so TPOT falls (the experts are most of
    the step: by more than 20%) and never rises; the output says which load it timed; a dense model has no experts."""
    base = (*DS, "--concurrency", "4096", "--decode-dp", "32", "--decode-tp", "1", "--format", "json")
    results = []
    for extra in ((), ("--expert-balanced",)):
        code, out, err = predict(capsys, real_db, *base, *extra)
        assert (code, err) == (0, "")
        results.append(json.loads(out))
    skewed, balanced = results
    assert balanced["tpot_s"] < 0.8 * skewed["tpot_s"]
    assert balanced["expert_load"].startswith("balanced (EPLB)") and "fitted" in skewed["expert_load"]
    code, out, _ = predict(
        capsys,
        real_db,
        "--model",
        "Llama-3.1-8B",
        "--chip",
        "H100",
        "--input-tokens",
        "1000",
        "--output-tokens",
        "200",
        "--concurrency",
        "8",
        "--expert-balanced",
        "--format",
        "json",
    )
    assert code == 0 and json.loads(out)["expert_load"] == ""
