"""Reading a run of the InferenceX / AIConfigurator schema: names, concurrency, layouts and the file's known defects."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from econ.analyses import serving_runs as sr
from econ.analyses.timed_models import MODELS_SQL
from tests.conftest import REPO

RUNS = REPO / "data" / "inferencex_train.csv"


@pytest.fixture(scope="module")
def tables(real_db):
    with duckdb.connect(str(real_db), read_only=True) as con:
        return con.sql(MODELS_SQL).pl(), con.sql("select * from hardware").pl()


BASE = {
    "id": "r1",
    "silicon_data_source": "db-dump/2026-04-27; config_id=1; silicon_concurrency=64; image=x",
    "backend": "sglang",
    "model_path": "deepseek-ai/DeepSeek-R1",
    "system": "b200_sxm",
    "precision": "fp8",
    "mode": "agg",
    "isl": 1024,
    "osl": 1024,
    "gemm_quant_mode": "fp8",
    "moe_quant_mode": "fp8_block",
    "batch_size": 64,
    "tp_size": 8,
    "pp_size": 1,
    "attention_dp_size": 1,
    "moe_tp_size": 1,
    "moe_ep_size": 8,
}


def read(tables, **changes):
    row = {**BASE, **changes}
    return sr.configurations(pl.DataFrame([row]), *tables).row(0, named=True)


@pytest.mark.parametrize(
    ("hf_id", "model"),
    [
        ("deepseek-ai/DeepSeek-R1", "DeepSeek-R1"),
        ("nvidia/DeepSeek-R1-NVFP4", "DeepSeek-R1"),
        ("Qwen/Qwen3-235B-A22B-FP8", "Qwen3-235B-A22B"),
        ("meta-llama/Llama-3.1-8B-Instruct", "Llama-3.1-8B"),
        ("nvidia/Llama-3.1-8B-Instruct-FP8", "Llama-3.1-8B"),
        ("meta-llama/Llama-3.1-70B", "Llama-3.1-70B"),
        ("zai-org/GLM-5-FP8", "GLM-5"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("nvidia/DeepSeek-R1-0528-FP4-v2", "DeepSeek-R1"),
        ("amd/DeepSeek-R1-0528-MXFP4", "DeepSeek-R1"),
        ("Qwen/Qwen3-235B-A22B-Instruct-2507-FP8", "Qwen3-235B-A22B"),
        ("moonshotai/Kimi-K2-Thinking", "Kimi-K2-Instruct"),
        ("deepseek-ai/DeepSeek-V3", "DeepSeek-V3"),  # "-V3" is a version, not a suffix
        ("mistralai/Mixtral-8x22B-v0.1", "Mixtral-8x22B-v0.1"),
        ("nvidia/DeepSeek-V3.1-NVFP4", "DeepSeek-V3.1"),  # 2 rows of the measured file, unknown before
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "DeepSeek-V3.1"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "DeepSeek-V3.2"),
        ("meta-llama/Llama-3.3-70B-Instruct", "Llama-3.3-70B"),
        ("amd/Llama-3.1-70B-Instruct-FP8-KV", "Llama-3.1-70B"),
        ("amd/DeepSeek-R1-0528-MXFP4-Preview", "DeepSeek-R1"),
        ("amd/gpt-oss-120b-w-mxfp4-a-fp8", "gpt-oss-120b"),
        ("nvidia/Kimi-K2.6-NVFP4", "Kimi-K2.6"),
        ("nvidia/Qwen3.6-35B-A3B-NVFP4", "Qwen3.6-35B-A3B"),
        ("Qwen/Qwen3-32B-FP8-Static-PerTensor", "Qwen3-32B"),  # a checkpoint AIConfigurator ships a config for
        ("nvidia/GLM-5.3-NVFP4", "GLM-5.3"),
        ("nvidia/Kimi-K2.7-Code-NVFP4", "Kimi-K2.7-Code"),
        ("Qwen/Qwen3-VL-235B-A22B-Instruct", "Qwen3-VL-235B-A22B"),
        ("MiniMaxAI/MiniMax-M3-MXFP8", "MiniMax-M3"),  # InferenceX's MiniMax-M3 launches (MXFP8 re-release)
    ],
)
def test_a_hugging_face_id_or_a_quantised_re_release_names_its_model(tables, hf_id, model):
    assert read(tables, model_path=hf_id)["arch_model"] == model


@pytest.mark.parametrize(
    ("system", "chip"),
    [
        ("h100_sxm", "H100"),
        ("gb200", "GB200"),
        ("b300_sxm", "B300"),
        ("gb300", "GB300"),
        ("mi355x", "MI355X"),
        ("h800_sxm", "H800"),
    ],
)
def test_a_system_in_the_files_style_names_its_chip(tables, system, chip):
    assert read(tables, system=system)["chip"] == chip


@pytest.mark.parametrize(("backend", "engine"), [("Dynamo-TRT", "trtllm"), ("atom", "atom")])
def test_a_backend_is_read_as_the_engine_it_names(tables, backend, engine):
    """A backend in another spelling is that engine's (econ.engines); an engine econ does not fit stays its own."""
    assert read(tables, backend=backend)["engine"] == engine


def test_an_unknown_model_or_system_is_kept_with_its_reason(tables):
    r = read(tables, model_path="acme/NotAModel-7B")
    assert r["reason"].startswith("model 'acme/NotAModel-7B' is not in data/models.csv")
    draft = read(tables, model_path="nvidia/gpt-oss-120b-Eagle3")  # a draft model: not the target's architecture
    assert draft["reason"].startswith("model 'nvidia/gpt-oss-120b-Eagle3' is not in data/models.csv")
    assert read(tables, system="tpu_v9")["reason"].startswith("system 'tpu_v9' names no chip")
    for other_part in ("h100_pcie", "h100_nvl", "a100_pcie"):  # not the SXM chips of data/hardware.csv
        assert read(tables, system=other_part)["reason"].startswith(f"system '{other_part}' names no chip")


def test_the_concurrency_is_the_runs_own_and_a_mismatched_batch_says_so(tables):
    r = read(tables)
    assert r["concurrency"] == 64 and r["reason"] is None
    mismatched = read(tables, batch_size=16, attention_dp_size=1)
    assert mismatched["concurrency"] == 64 and "batch implies concurrency 16, the run states 64" in mismatched["notes"]
    no_source = read(tables, silicon_data_source=None, batch_size=32, attention_dp_size=4, tp_size=2, moe_ep_size=8)
    assert no_source["concurrency"] == 128  # batch x attention_dp, as AIConfigurator reads it
    assert no_source["notes"] is None  # a user's own point: its batch is the concurrency it asks about
    unstated = read(tables, silicon_data_source="source_file=x.csv; measured=2026-01-23", batch_size=28)
    stated_from_batch = "concurrency not stated (no silicon_concurrency in silicon_data_source): read from the batch"
    assert unstated["concurrency"] == 28 and f"{stated_from_batch} as 28" in unstated["notes"]
    assert "concurrency not stated" not in (r["notes"] or "") + mismatched["notes"]


def test_a_layout_stored_with_the_square_of_its_chips_is_read_as_the_root(tables):
    """The README's defect: an 8-GPU "tp8 ep8" run saved as tp_size=64 (and tp4 ep4 as 16)."""
    r = read(tables, tp_size=64, moe_tp_size=8, moe_ep_size=8)
    assert (r["decode_tensor_parallel"], r["decode_attention_data_parallel"], r["decode_expert_parallel"]) == (8, 1, 8)
    assert "stored with 64 chips on a 8-chip system" in r["notes"]
    dp = read(tables, tp_size=1, attention_dp_size=16, moe_tp_size=4, moe_ep_size=4)
    assert (dp["decode_tensor_parallel"], dp["decode_attention_data_parallel"]) == (1, 4)
    genuine = read(tables, system="h100_sxm", tp_size=32, moe_tp_size=1, moe_ep_size=32)
    assert genuine["decode_tensor_parallel"] == 32  # 32 chips is no square: four nodes, read as stored
    nvl = read(tables, system="gb200", tp_size=16, moe_tp_size=1, moe_ep_size=16)
    assert nvl["decode_tensor_parallel"] == 16 and nvl["notes"] is None  # within an NVL72 domain: as stored


def test_a_disaggregated_run_without_worker_counts_assumes_them_and_says_so(tables):
    r = read(
        tables,
        mode="disagg",
        batch_size=None,
        tp_size=None,
        pp_size=None,
        attention_dp_size=None,
        moe_tp_size=None,
        moe_ep_size=None,
        prefill_tp_size=8,
        prefill_pp_size=1,
        prefill_attention_dp_size=1,
        prefill_moe_tp_size=1,
        prefill_moe_ep_size=8,
        decode_tp_size=1,
        decode_pp_size=1,
        decode_attention_dp_size=8,
        decode_moe_tp_size=1,
        decode_moe_ep_size=8,
    )
    assert r["workers_assumed"] and "worker counts not stated" in r["notes"]
    assert r["concurrency"] == 64 and r["decode_attention_data_parallel"] == 8


def test_a_tensor_parallel_degree_that_splits_no_head_count_is_refused_for_a_dense_model(tables):
    r = read(tables, model_path="meta-llama/Llama-3.1-70B", tp_size=6, moe_tp_size=None, moe_ep_size=None)
    assert "tensor parallel 6 does not divide the model's 64 attention heads" in r["reason"]


def test_a_moe_pool_whose_tensor_parallel_splits_no_head_count_is_a_wide_ep_pool_of_a_disaggregated_run(tables):
    """DeepSeek-R1 on GB200 stored as ``tp36`` (agg) or with a ``tp48`` decode pool: attention dp x expert parallel
    over those chips, in a disaggregated run with assumed workers; a pool stored as a real layout is kept."""
    r = read(tables, system="gb200", tp_size=36, moe_tp_size=36, moe_ep_size=1)
    assert r["reason"] is None and r["mode"] == "disagg" and r["workers_assumed"]
    for pool in ("prefill", "decode"):
        layout = tuple(r[f"{pool}_{k}"] for k in ("tensor_parallel", "attention_data_parallel", "expert_parallel"))
        assert layout == (1, 36, 36)
        assert f"{pool} stored as agg tp 36, which divides none of the model's 128 heads" in r["notes"]
    mixed = read(
        tables,
        mode="disagg",
        system="gb200",
        **dict.fromkeys(("batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size")),
        prefill_tp_size=8,
        prefill_attention_dp_size=1,
        prefill_moe_tp_size=1,
        prefill_moe_ep_size=8,
        decode_tp_size=48,
        decode_attention_dp_size=1,
        decode_moe_tp_size=6,
        decode_moe_ep_size=8,
    )
    assert (mixed["prefill_tensor_parallel"], mixed["prefill_expert_parallel"]) == (8, 8)
    assert (mixed["decode_attention_data_parallel"], mixed["decode_expert_parallel"]) == (48, 48)
    assert "prefill stored" not in mixed["notes"]


def test_the_measured_files_wide_ep_rows_stored_as_agg_are_copies_of_disaggregated_runs():
    """The evidence for reading them as disaggregated: of the vendored file's 46 agg rows with such a layout, at
    least 40 have a disagg row of the same engine, precision, lengths, chips and concurrency whose TPOT is within
    1.3x (and most within 1%)."""
    runs = pl.read_csv(RUNS, infer_schema_length=0).with_columns(
        pl.col("silicon_data_source").str.extract(sr.CONCURRENCY, 1).alias("c"),
        pl.coalesce("tp_size", "decode_tp_size").cast(pl.Int64).alias("n"),
        pl.col("silicon_tpot_ms").cast(pl.Float64).alias("tpot"),
    )
    odd = runs.filter(pl.col("model_path").str.starts_with("deepseek-ai/") & (128 % pl.col("n") != 0))
    key = ["backend", "precision", "isl", "osl", "n", "c"]
    agg, disagg = (odd.filter(pl.col("mode") == m).unique(key, keep="first") for m in ("agg", "disagg"))
    twins = agg.join(disagg, on=key, suffix="_d").with_columns((pl.col("tpot") / pl.col("tpot_d")).alias("ratio"))
    close = twins.filter((pl.col("ratio") - 1).abs() < 0.3)
    assert odd.filter(pl.col("mode") == "agg").height == 46
    assert close.height >= 40 and (close["ratio"] - 1).abs().median() < 0.01


def test_a_moe_worker_whose_experts_span_more_chips_than_its_attention_is_the_experts_chips(tables):
    """vLLM's Qwen3-235B on H200 stored as tp 1 with moe_tp 4: four chips, attention split four ways."""
    r = read(
        tables,
        model_path="Qwen/Qwen3-235B-A22B-FP8",
        system="h200_sxm",
        backend="vllm",
        tp_size=1,
        moe_tp_size=4,
        moe_ep_size=1,
    )
    assert (r["decode_tensor_parallel"], r["decode_expert_tensor_parallel"], r["decode_expert_parallel"]) == (4, 4, 1)
    assert "decode experts stored over 4 chips (moe tp x ep) but attention over 1" in r["notes"]
    assert read(tables)["notes"] is None  # tp 8 x ep 8 as stored


def test_formats_read_from_the_quantisation_modes(tables):
    r = read(tables, gemm_quant_mode="nvfp4", moe_quant_mode="nvfp4", precision="fp4")
    assert (r["weight_format"], r["expert_weight_format"]) == ("fp4", "fp4")
    bf16 = read(tables, gemm_quant_mode=None, moe_quant_mode=None, precision=None)
    assert bf16["weight_format"] == "bf16"


def test_a_run_of_aiconfigurators_own_eval_is_read_at_its_stated_lengths(tables, real_db):
    """NVIDIA's gap-analysis runs were measured by AIConfigurator's eval, which sends every prompt and output at the
    stated length (genai-perf with a standard deviation of 0, or bench_serving --random-range-ratio 1); InferenceX's
    client draws them from [0.8·L, L], a mean of 0.9·L. Timed at 0.9·L they read too fast: held out by model, TTFT
    p90 3.32x, 3.17x at their stated lengths."""
    source = "source_file=/data/aic-auto-gap-analysis/h100_sxm/trtllm/Qwen_Qwen3-32B.csv; silicon_concurrency=8"
    fixed = read(tables, silicon_data_source=source)
    assert fixed["length_range_ratio"] == 1.0 and "fixed lengths" in fixed["notes"]
    inferencex = read(tables)
    assert inferencex["length_range_ratio"] is None and "fixed lengths" not in (inferencex["notes"] or "")
    with duckdb.connect(str(real_db), read_only=True) as con:
        n = con.execute("select count(*) from calibration_runs where notes like '%fixed lengths%'").fetchone()[0]
    assert 600 <= n <= 800  # the file's gap-analysis rows
