"""InferenceX's launch settings: each run's KV-cache format, request limit and prefill step as its script set them."""

from __future__ import annotations

import polars as pl
import pytest

from econ.analyses import launch_settings as launch


def _rows(*rows, sparse_topk_tokens=None) -> pl.DataFrame:
    names = ("engine", "arch_model", "chip", "weight_format", "measured_date", "input_tokens", "output_tokens")
    frame = pl.DataFrame([dict(zip(names, r)) for r in rows], schema_overrides={"measured_date": pl.String})
    return frame.with_columns(pl.lit(sparse_topk_tokens, dtype=pl.Float64).alias("sparse_topk_tokens"))


def test_a_scripts_setting_holds_from_the_day_it_took_it():
    rows = _rows(
        ("vllm", "MiniMax-M2.5", "B200", "fp8", "2026-03-30", 1024, 1024),  # before bddbf4031 (2026-04-03)
        ("vllm", "MiniMax-M2.5", "B200", "fp8", "2026-04-05", 1024, 1024),
        ("vllm", "MiniMax-M2.5", "B200", "fp8", None, 1024, 1024),  # a user's row: the script as it stands
        ("sglang", "DeepSeek-R1", "H200", "fp8", "2026-03-23", 1024, 1024),  # no --kv-cache-dtype: BF16
        ("trtllm", "Llama-3.1-8B", "H100", "fp8", None, 1024, 1024),  # the engine's rule
        ("vllm", "Qwen3-32B", "H100", "fp8", None, 1024, 1024),
        ("vllm", "MiniMax-M2.5", "B300", "fp4", "2026-04-17", 1024, 1024),  # minimaxm2.5_fp4_b300.sh from its start
        ("vllm", "Kimi-K2.5", "B200", "fp4", "2026-04-14", 1024, 1024),  # before 6c3acebfa (2026-04-20)
        ("vllm", "Kimi-K2.5", "B200", "fp4", "2026-04-22", 1024, 1024),
        ("vllm", "Kimi-K2.5", "B300", "fp4", "2026-04-22", 1024, 1024),  # kimik2.5_fp4_b300.sh sets none
    )
    kv = rows.select(launch.kv_cache_format(has_date=True))[:, 0].to_list()
    assert kv == ["bf16", "fp8", "fp8", "bf16", "fp8", "bf16", "fp8", "bf16", "fp8", "bf16"]


def test_a_sparse_attention_models_cache_is_fp8_in_every_engine():
    """DeepSeek-V3.2's and V4's sparse attention runs on an FP8 cache whatever the engine (vLLM's default for it is
    its custom FP8 cache; SGLang sizes V4's pools in FP8; FlashMLA's sparse decode reads FP8), where a dense model on
    vLLM keeps BF16 and one in BF16 weights on SGLang too."""
    rows = (
        ("vllm", "DeepSeek-V4-Pro", "GB300", "fp4", None, 8192, 1024),
        ("sglang", "DeepSeek-V3.2", "H200", "bf16", None, 8192, 1024),
    )
    assert _rows(*rows, sparse_topk_tokens=2048.0).select(launch.kv_cache_format(has_date=True))[:, 0].to_list() == [
        "fp8",
        "fp8",
    ]
    assert _rows(*rows).select(launch.kv_cache_format(has_date=True))[:, 0].to_list() == ["bf16", "bf16"]


def test_an_engines_request_limit_depends_on_the_lengths_where_its_script_does():
    rows = _rows(
        ("sglang", "DeepSeek-R1", "H200", "fp8", None, 1024, 1024),  # dsr1_fp8_h200.sh: 512 at 1k/1k
        ("sglang", "DeepSeek-R1", "H200", "fp8", None, 8192, 1024),  # else 256
        ("vllm", "MiniMax-M2.5", "B200", "fp8", None, 1024, 1024),  # its script sets none below the concurrency
    )
    assert rows.select(launch.max_running_requests())[:, 0].to_list() == [512.0, 256.0, None]


def test_each_runs_kv_cache_format_is_its_launch_scripts(real_db):
    """The KV-cache format of an InferenceX run is what its launch script set on the day it was measured (not a rule
    per engine): vLLM's MiniMax-M2.5 on B200 went to ``--kv-cache-dtype fp8`` on 2026-04-03 (bddbf4031), vLLM's
    Llama-3.1-70B scripts set FP8, SGLang's DeepSeek-R1 on H200 sets none (BF16)."""
    import duckdb

    from econ.analyses import calibration as analysis
    from econ.analyses.runner import BuildContext, _Scenarios

    with duckdb.connect(str(real_db), read_only=True) as con:
        runs = analysis.build_problem(BuildContext(con=con, as_of=None, _scenarios=_Scenarios(con))).runs

    def formats(engine, model, chip, since=None, until=None):
        r = runs.filter((pl.col("engine") == engine) & (pl.col("arch_model") == model) & (pl.col("chip") == chip))
        r = r.filter(pl.col("weight_format") == "fp8")
        if since:
            r = r.filter(pl.col("measured_date") >= since)
        if until:
            r = r.filter(pl.col("measured_date") < until)
        assert r.height >= 10
        return set(r["kv_used"])

    assert formats("vllm", "MiniMax-M2.5", "B200", until="2026-04-03") == {"bf16"}
    assert formats("vllm", "MiniMax-M2.5", "B200", since="2026-04-03") == {"fp8"}
    assert formats("vllm", "Llama-3.1-70B", "H200") == {"fp8"}
    assert formats("sglang", "DeepSeek-R1", "H200") == {"bf16"}
    assert formats("sglang", "DeepSeek-R1", "B200") == {"fp8"}  # the engine's rule, as its script sets


def test_a_single_node_scripts_request_limit_holds_for_aggregated_runs_only(real_db):
    """dsr1_fp4_b200.sh runs SGLang with --max-running-requests 256; a disaggregated run's decode worker is launched
    by its multi-node recipe, so it takes that recipe's batch limit (launch_layouts) or none, never the script's."""
    import duckdb

    from econ.analyses import calibration as analysis
    from econ.analyses.runner import BuildContext, _Scenarios

    with duckdb.connect(str(real_db), read_only=True) as con:
        runs = analysis.build_problem(BuildContext(con=con, as_of=None, _scenarios=_Scenarios(con))).runs
    r = runs.filter(
        (pl.col("engine") == "sglang")
        & pl.col("arch_model").is_in(["DeepSeek-R1", "DeepSeek-V3"])  # the dump stores R1 runs as V3 too
        & (pl.col("chip") == "B200")
        & (pl.col("weight_format") == "fp4")
    )
    agg, disagg = r.filter(pl.col("mode") == "agg"), r.filter(pl.col("mode") == "disagg")
    assert agg.height >= 10 and disagg.height >= 10
    assert set(agg["max_running_requests"]) == {256.0}
    assert disagg["max_running_requests"].to_list() == disagg["launch_max_running"].to_list()


def test_a_launch_waits_for_a_fuller_step_only_where_its_script_said_so():
    """TensorRT-LLM's batch waiting as InferenceX's scripts set it: Llama-3.1-70B at 1k/1k below TP 8 (20 steps,
    0.9 of 16,384 tokens); DeepSeek-R1 FP8 on B200 at 1k/1k from 64 users, from 2026-01-29 (40 steps, 0.8 of 8,192);
    never under attention data parallelism (the engine skips it there) nor in the speculating twin's script (MTP
    stated, or launched so without a draft length)."""
    names = ("engine", "arch_model", "chip", "weight_format", "measured_date", "input_tokens", "output_tokens")
    names += ("decode_tensor_parallel", "decode_attention_data_parallel", "concurrency", "speculative_tokens", "mode")
    names += ("speculation_launched",)
    llama = ("trtllm", "Llama-3.1-70B")
    r1 = ("trtllm", "DeepSeek-R1", "B200", "fp8")
    cases = {  # what the row is: its columns in the order of ``names``
        "Llama TP 4": (*llama, "B200", "fp4", "2025-10-29", 1024, 1024, 4, 1, 8, 0.0, "agg", False),
        "Llama TP 8": (*llama, "B200", "fp4", "2025-10-29", 1024, 1024, 8, 1, 8, 0.0, "agg", False),
        "Llama 1k/8k": (*llama, "H200", "fp8", "2025-10-29", 1024, 8192, 2, 1, 8, 0.0, "agg", False),
        "R1 64 users": (*r1, "2026-02-05", 1024, 1024, 8, 1, 64, 0.0, "agg", False),
        "R1 before 2026-01-29": (*r1, "2026-01-14", 1024, 1024, 8, 1, 64, 0.0, "agg", False),
        "R1 32 users": (*r1, "2026-02-05", 1024, 1024, 8, 1, 32, 0.0, "agg", False),
        "R1 attention DP": (*r1, "2026-02-05", 1024, 1024, 1, 8, 64, 0.0, "agg", False),
        "R1 MTP stated": (*r1, "2026-02-05", 1024, 1024, 8, 1, 64, 3.0, "agg", False),
        "R1 MTP launched": (*r1, "2026-02-05", 1024, 1024, 8, 1, 64, None, "agg", True),
        "R1 a user's row (no date)": (*r1, None, 1024, 1024, 8, 1, 64, None, "agg", False),
        "Llama disaggregated": (*llama, "B200", "fp4", "2025-10-29", 1024, 1024, 4, 1, 8, 0.0, "disagg", False),
    }
    rows = pl.DataFrame(
        [dict(zip(names, r)) for r in cases.values()],
        schema_overrides={"measured_date": pl.String, "speculative_tokens": pl.Float64},
    )
    held = rows.select(*(e.alias(n) for e, n in zip(launch.batch_wait(rows.columns), ("timeout", "tokens"))))
    timeout = dict(zip(cases, held["timeout"].to_list()))
    assert timeout == {
        **dict.fromkeys(cases),
        "Llama TP 4": 20.0,
        "R1 64 users": 40.0,
        "R1 a user's row (no date)": 40.0,
    }
    tokens = dict(zip(cases, held["tokens"].to_list()))
    assert tokens["Llama TP 4"] == pytest.approx(0.9 * 16384) and tokens["R1 64 users"] == pytest.approx(0.8 * 8192)


def test_the_measured_wait_of_a_launch_that_holds_prompts_is_the_holds(real_db):
    """An independent reading of TensorRT-LLM's batch waiting in the measurements themselves: InferenceX ran each
    Llama-3.1-70B configuration at 1k/1k (its script holding prompts below TP 8) and at 1k/8k (never held), so the
    difference of their measured TTFTs is the wait. Over the 40 such pairs it is the hold the renewal form gives
    (prompt_hold.batch_wait_hold's steps times the run's measured TPOT), median 1.01x, within 15%; at TP 8, where
    the script holds nothing, the two TTFTs agree within 25% (median 0.97x)."""
    import duckdb

    from econ.analyses import calibration as analysis
    from econ.analyses.runner import BuildContext, _Scenarios

    with duckdb.connect(str(real_db), read_only=True) as con:
        i = analysis.build_problem(BuildContext(con=con, as_of=None, _scenarios=_Scenarios(con)))
    runs = i.runs.with_columns(pl.Series("hold_steps", i.extra["prompt_hold_steps"])).filter(
        (pl.col("engine") == "trtllm") & (pl.col("arch_model") == "Llama-3.1-70B") & (pl.col("input_tokens") == 1024)
    )
    key = ["chip", "weight_format", "decode_tensor_parallel", "concurrency"]
    one_k = runs.filter(pl.col("output_tokens") == 1024)
    pairs = one_k.join(runs.filter(pl.col("output_tokens") == 8192), on=key, suffix="_8k")
    held, free = pairs.filter(pl.col("hold_steps") > 0), pairs.filter(pl.col("hold_steps") == 0)
    assert held.height >= 30 and free.height >= 10
    measured = (held["measured_ttft_s"] - held["measured_ttft_s_8k"]) / (held["hold_steps"] * held["measured_tpot_s"])
    assert measured.median() == pytest.approx(1.0, rel=0.15)
    assert (free["measured_ttft_s"] / free["measured_ttft_s_8k"]).median() == pytest.approx(1.0, rel=0.25)
