"""InferenceX's launch settings: each run's KV-cache format, request limit and prefill step as its script set them."""

from __future__ import annotations

import polars as pl

from econ.analyses import launch_settings as launch


def _rows(*rows) -> pl.DataFrame:
    names = ("engine", "arch_model", "chip", "weight_format", "measured_date", "input_tokens", "output_tokens")
    return pl.DataFrame([dict(zip(names, r)) for r in rows], schema_overrides={"measured_date": pl.String})


def test_a_scripts_setting_holds_from_the_day_it_took_it():
    rows = _rows(
        ("vllm", "MiniMax-M2.5", "B200", "fp8", "2026-03-30", 1024, 1024),  # before bddbf4031 (2026-04-03)
        ("vllm", "MiniMax-M2.5", "B200", "fp8", "2026-04-05", 1024, 1024),
        ("vllm", "MiniMax-M2.5", "B200", "fp8", None, 1024, 1024),  # a user's row: the script as it stands
        ("sglang", "DeepSeek-R1", "H200", "fp8", "2026-03-23", 1024, 1024),  # no --kv-cache-dtype: BF16
        ("trtllm", "Llama-3.1-8B", "H100", "fp8", None, 1024, 1024),  # the engine's rule
        ("vllm", "Qwen3-32B", "H100", "fp8", None, 1024, 1024),
    )
    kv = rows.select(launch.kv_cache_format(has_date=True))[:, 0].to_list()
    assert kv == ["bf16", "fp8", "fp8", "bf16", "fp8", "bf16"]


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
        & (pl.col("arch_model") == "DeepSeek-R1")
        & (pl.col("chip") == "B200")
        & (pl.col("weight_format") == "fp4")
    )
    agg, disagg = r.filter(pl.col("mode") == "agg"), r.filter(pl.col("mode") == "disagg")
    assert agg.height >= 10 and disagg.height >= 10
    assert set(agg["max_running_requests"]) == {256.0}
    assert disagg["max_running_requests"].to_list() == disagg["launch_max_running"].to_list()
