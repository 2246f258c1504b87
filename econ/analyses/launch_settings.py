"""How InferenceX launched each engine for its measured runs: the settings that decide a step's shape, not its speed.

Each is what the benchmark's public launch scripts set (cited beside it), keyed by engine and, where the scripts
differ, by architecture, chip, weight format and the day a run was measured: prompt tokens one prefill step takes,
the KV-cache format, how many requests an engine runs at once and how it admits them. They are stated inputs of
:mod:`econ.analyses.calibration_runs`, never fitted. The scripts: github.com/SemiAnalysisAI/InferenceX,
``benchmarks/single_node/*.sh`` at commit 51e31df4a (2026-04-06; the same settings at 12ba0ae07, 2026-03-25, and
8c3eb5b86, 2026-04-22), and the earlier ones each setting names.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import polars as pl

ENGINE_PREFILL_TOKENS = {"trtllm": 0.0, "sglang": 32768.0, "vllm": 8192.0}
"""Prompt tokens one attention rank prefills per step, as InferenceX launches each engine (0: one prompt per step).
TensorRT-LLM: ``--max_num_tokens = CONC + ISL + 64`` (one prompt beside the decode batch); SGLang:
``--chunked-prefill-size 32768``; vLLM: ``--max-num-batched-tokens 8192`` (InferenceMAX benchmarks/*.sh,
github.com/InferenceMAX/InferenceMAX). Another engine takes vLLM's."""
DEFAULT_PREFILL_TOKENS = 8192.0

FP8_CACHE_ENGINES = ("trtllm", "sglang")
"""Engines InferenceX runs with an FP8 KV cache for FP8/FP4 checkpoints (TensorRT-LLM ``kv_cache_config.dtype:
fp8``, SGLang ``--kv-cache-dtype fp8_e4m3``); vLLM keeps the default ("auto": BF16)."""

SPARSE_CACHE_FORMAT = "fp8"
"""The KV-cache format of a model with sparse attention (DeepSeek-V3.2's and GLM-5's indexer, DeepSeek-V4's
compressed layers) whatever the engine: vLLM's default for it is "a custom fp8 kvcache" (vllm-project/recipes,
``DeepSeek/DeepSeek-V3_2.md``), SGLang sizes DeepSeek-V4's pools in FP8 values alone (``DSv4PoolConfigurator``), and
FlashMLA's sparse decode kernel reads an FP8 cache (deepseek-ai/FlashMLA, README). No measured run is of such a model:
it is the engines' stated default, not a fit."""

LAUNCH_KV_FORMATS = {
    ("sglang", "DeepSeek-R1", "H200", "fp8"): ("bf16", None),
    ("sglang", "DeepSeek-V3", "H200", "fp8"): ("bf16", None),
    ("trtllm", "gpt-oss-120b", "H200", "fp4"): ("bf16", None),
    ("vllm", "gpt-oss-120b", "B200", "fp4"): ("fp8", "2025-12-05"),
    ("vllm", "Llama-3.1-70B", "H100", "fp8"): ("fp8", None),
    ("vllm", "Llama-3.1-70B", "H200", "fp8"): ("fp8", None),
    ("vllm", "Llama-3.1-70B", "B200", "fp8"): ("fp8", None),
    ("vllm", "Llama-3.1-70B", "B200", "fp4"): ("fp8", None),
    ("vllm", "MiniMax-M2.5", "B200", "fp8"): ("fp8", "2026-04-03"),
    ("vllm", "MiniMax-M2.5", "B200", "fp4"): ("fp8", "2026-04-08"),
    ("vllm", "MiniMax-M2.5", "B300", "fp8"): ("fp8", None),
    ("vllm", "MiniMax-M2.5", "B300", "fp4"): ("fp8", None),
    ("vllm", "Kimi-K2.5", "B200", "fp4"): ("fp8", "2026-04-20"),
}
"""KV-cache formats of InferenceX's launch scripts (the module's) where they differ from
:data:`FP8_CACHE_ENGINES`' rule, with the date a script took the setting (a run measured before it keeps the rule;
a row without a date takes it): ``dsr1_fp8_h200.sh`` (SGLang) sets no ``--kv-cache-dtype`` (the model's BF16),
``gptoss_fp4_h200_trt.sh`` ``kv_cache_config.dtype: auto`` (BF16); ``kv-cache-dtype: fp8`` in vLLM's
``gptoss_fp4_b200.sh`` (from 25506e87c, 2025-12-05), ``70b_fp8_{h100,h200,b200}_*.sh`` and ``70b_fp4_b200_docker.sh``
(2025-10, before 026d16b82 removed them), ``minimaxm2.5_fp8_b200.sh`` (from bddbf4031, 2026-04-03) and
``minimaxm2.5_fp4_b200.sh`` (from 79bd988e9, 2026-04-08), ``minimaxm2.5_fp8_b300.sh`` and ``minimaxm2.5_fp4_b300.sh``
(from their first version, 340d7854c and 22d0f12f7, 2026-04-17), ``kimik2.5_fp4_b200.sh`` (from 6c3acebfa,
2026-04-20; ``kimik2.5_fp4_b300.sh`` sets none; these read at e3a85218d, 2026-04-28). The B300 and Kimi-K2.5 runs
are none of ``inferencex_train``'s: a file's rows of them (``econ predict --points``) read what their scripts set.
Keyed by (engine, architecture, chip, weight format)."""

LAUNCH_MAX_RUNNING = {
    ("sglang", "DeepSeek-R1", "H200", "fp8"): (512.0, 256.0),
    ("sglang", "DeepSeek-V3", "H200", "fp8"): (512.0, 256.0),
    ("sglang", "DeepSeek-R1", "B200", "fp4"): (256.0, 256.0),
    ("sglang", "DeepSeek-V3", "B200", "fp4"): (256.0, 256.0),
    ("vllm", "MiniMax-M2.5", "H100", "fp8"): (256.0, 256.0),
    ("vllm", "gpt-oss-120b", "B200", "fp4"): (512.0, 512.0),
}
"""Requests one engine runs at once (SGLang ``--max-running-requests``, vLLM ``--max-num-seqs``) in InferenceX's
single-node launch scripts (the module's; aggregated runs only: a disaggregated decode worker is launched by its
multi-node recipe), as (1k/1k lengths, other lengths): ``dsr1_fp8_h200.sh`` 512 at
1k/1k and 256 otherwise, ``dsr1_fp4_b200.sh`` 256, ``minimaxm2.5_fp8_h100.sh`` 256, ``gptoss_fp4_b200.sh`` 512. The
other scripts set it to the concurrency (no limit below it)."""

ADP_BALANCE_TIMEOUT_ITERS = {
    **{
        ("trtllm", arch, chip, fmt): 60.0
        for arch in ("DeepSeek-R1", "DeepSeek-V3")
        for chip, fmt in (("B200", "fp4"), ("B200", "fp8"), ("H200", "fp8"))
    },
    ("trtllm", "gpt-oss-120b", "B200", "fp4"): 50.0,
}
"""Steps a TensorRT-LLM worker with attention data parallelism holds a new prompt back so that every rank prefills
at once (``attention_dp_config: enable_balance: true``, ``timeout_iters``), in InferenceX's single-node scripts
that run with ``DP_ATTENTION=true``: ``dsr1_fp4_b200_trt.sh``, ``dsr1_fp8_b200_trt.sh``, ``dsr1_fp8_h200_trt.sh`` and
their ``_mtp`` twins set 60 (since ec90f3fe7, 2025-09-18); ``gptoss_fp4_b200_trt.sh`` sets only ``enable_balance``
(since 28e5a01ea, 2025-09-19), so TensorRT-LLM's default ``AttentionDpConfig.timeout_iters`` of 50 holds
(``tensorrt_llm/llmapi/llm_args.py``). The scheduler (``PyExecutor._balance_adp_requests``) releases the held
prompts when every rank has one or when the count of steps since the last release reaches the timeout; TensorRT-LLM's
"ADP Balance Strategy" blog (docs/source/blogs/tech_blog/blog10) measures what it buys: 1.31x the throughput of
DeepSeek-V3 on 8 GB200 at a longer TTFT. ``batching_wait_iters`` (0 in the DeepSeek scripts, the default 10 for
gpt-oss) is not modelled. Keyed by (engine, architecture, chip, weight format); aggregated runs only."""


@dataclass(frozen=True)
class BatchWait:
    """A launch that holds new prompts until a step's scheduled tokens reach ``threshold_tokens``
    (``batch_wait_max_tokens_ratio × max_num_tokens``) or ``timeout_iters`` steps pass
    (``batch_wait_timeout_iters``), for runs of ``prompt_tokens`` and ``output_tokens``, below
    ``below_tensor_parallel``, at ``min_concurrency`` or more, measured on or after ``since``."""

    timeout_iters: float
    threshold_tokens: float
    prompt_tokens: float = 1024.0
    output_tokens: float = 1024.0
    below_tensor_parallel: float = float("inf")
    min_concurrency: float = 0.0
    since: str | None = None


BATCH_WAIT = {
    **{
        ("trtllm", "Llama-3.1-70B", chip, fmt): BatchWait(20.0, 0.9 * 16384.0, below_tensor_parallel=8.0)
        for chip, fmt in (("B200", "fp4"), ("B200", "fp8"), ("H200", "fp8"))
    },
    **{
        ("trtllm", arch, "B200", "fp8"): BatchWait(40.0, 0.8 * 8192.0, min_concurrency=64.0, since="2026-01-29")
        for arch in ("DeepSeek-R1", "DeepSeek-V3")
    },
}
"""TensorRT-LLM's batch waiting (``PyExecutor._waiting_requests``: a prompt is held while the step's scheduled
tokens, prompts' and the decode batch's, stay under the threshold, until ``batch_wait_timeout_iters`` steps with a
prompt held; not under attention data parallelism, nor while no other request decodes) in InferenceX's
single-node scripts without speculative decoding: ``70b_fp4_b200_trt_slurm.sh``, ``70b_fp8_b200_trt_slurm.sh`` and
``70b_fp8_h200_trt_slurm.sh`` (69844b2ea, 2025-10-29, the day the Llama-3.1-70B runs were measured; removed by
026d16b82) set ``batch_wait_timeout_iters: 20`` and ``batch_wait_max_tokens_ratio: 0.9`` of ``--max_num_tokens
16384`` at 1k/1k below TP 8; ``dsr1_fp8_b200_trt.sh`` (from ec7bafaae, 2026-01-29) sets 40 and 0.8 of
``max_num_tokens`` 8192 at 1k/1k from 64 users (its ``_mtp`` twin does not). Keyed by (engine, architecture,
chip, weight format); aggregated runs only. :func:`econ.physics.prompt_hold.batch_wait_hold` gives the wait."""


ADMISSION_FULL_ENGINES = ("trtllm",)
"""Engines that admit a request only with KV-cache room for its whole prompt and output: TensorRT-LLM's default
capacity scheduler policy ``GUARANTEED_NO_EVICT`` ("guarantee that a started request is never paused",
nvidia.github.io/TensorRT-LLM/performance/performance-tuning-guide/useful-runtime-flags.html). vLLM and SGLang
allocate pages as tokens arrive: a running request holds ``I + O/2`` tokens on average."""


SLOT_AFTER_PREFILL_ENGINES = ("trtllm", "vllm")
"""Engines whose disaggregated serving takes a decode slot only once the prompt is prefilled: behind Dynamo's
prefill router, which "runs between preprocessing and decode routing and returns handoff metadata for the selected
decode worker" (docs.nvidia.com/dynamo, Router: Disaggregated Serving), as InferenceX launches TensorRT-LLM and vLLM.
SGLang sends each request to its prefill and its decode worker at once, the decode worker holding the request's
cache for the transfer ("Send the request to both workers", docs.nvidia.com/dynamo, SGLang: Disaggregation, and
SGLang's own router alike): its slot is held through the prefill (:func:`econ.physics.slot_wait.slot_wait_s`)."""


def _key() -> pl.Expr:
    engine = pl.col("engine").fill_null("")
    return pl.concat_str([engine, pl.col("arch_model"), pl.col("chip"), pl.col("weight_format")], separator="|")


def prefill_tokens() -> pl.Expr:
    """Prompt tokens one attention rank prefills per step (:data:`ENGINE_PREFILL_TOKENS`; 0: one prompt)."""
    return pl.col("engine").replace_strict(
        ENGINE_PREFILL_TOKENS, default=DEFAULT_PREFILL_TOKENS, return_dtype=pl.Float64
    )


def kv_cache_format(*, has_date: bool) -> pl.Expr:
    """The KV-cache format a run's engine was launched with: its script's (:data:`LAUNCH_KV_FORMATS`, from the day
    it took the setting; a run without ``measured_date`` takes it), else a sparse-attention model's
    (:data:`SPARSE_CACHE_FORMAT`; ``sparse_topk_tokens`` of ``model_derived``), else :data:`FP8_CACHE_ENGINES`'
    rule."""
    key = _key()
    kv_of = {"|".join(k): v[0] for k, v in LAUNCH_KV_FORMATS.items()}
    since = key.replace_strict(
        {"|".join(k): v[1] for k, v in LAUNCH_KV_FORMATS.items() if v[1]}, default=None, return_dtype=pl.String
    )
    measured = pl.col("measured_date") if has_date else pl.lit(None, dtype=pl.String)
    in_force = since.is_null() | measured.is_null() | (measured >= since)
    script = pl.when(in_force).then(key.replace_strict(kv_of, default=None, return_dtype=pl.String))
    rule = (
        pl.when(pl.col("sparse_topk_tokens").is_not_null())
        .then(pl.lit(SPARSE_CACHE_FORMAT))
        .when(pl.col("engine").fill_null("").is_in(FP8_CACHE_ENGINES) & pl.col("weight_format").is_in(["fp8", "fp4"]))
        .then(pl.lit("fp8"))
        .otherwise(pl.lit("bf16"))
    )
    return pl.coalesce(script, rule)


def max_running_requests() -> pl.Expr:
    """The engine's launch limit on requests run at once (:data:`LAUNCH_MAX_RUNNING`; null: none below the
    concurrency)."""
    key = _key()
    one_k = (pl.col("input_tokens") == 1024) & (pl.col("output_tokens") == 1024)
    at_1k = {"|".join(k): v[0] for k, v in LAUNCH_MAX_RUNNING.items()}
    other = {"|".join(k): v[1] for k, v in LAUNCH_MAX_RUNNING.items()}
    return (
        pl.when(one_k)
        .then(key.replace_strict(at_1k, default=None, return_dtype=pl.Float64))
        .otherwise(key.replace_strict(other, default=None, return_dtype=pl.Float64))
    )


def adp_balance_timeout_iters() -> pl.Expr:
    """Steps a prompt may be held for the ranks of an attention-data-parallel worker to prefill together
    (:data:`ADP_BALANCE_TIMEOUT_ITERS`; null: not launched so)."""
    return _key().replace_strict(
        {"|".join(k): v for k, v in ADP_BALANCE_TIMEOUT_ITERS.items()}, default=None, return_dtype=pl.Float64
    )


def batch_wait(columns: Collection[str]) -> tuple[pl.Expr, pl.Expr]:
    """(steps a prompt may be held, scheduled tokens that release it) of each aggregated run whose launch waits
    (:data:`BATCH_WAIT`: its lengths, tensor-parallel degree, concurrency and date; not with attention data
    parallelism, nor where it speculates, stated or launched so, ``speculation_launched``: the scripts' MTP twins
    set none; a run without ``measured_date`` takes the setting), else nulls. ``columns``: the frame's."""
    key = _key()

    def field(name: str, dtype=pl.Float64) -> pl.Expr:
        return key.replace_strict(
            {"|".join(k): getattr(v, name) for k, v in BATCH_WAIT.items()}, default=None, return_dtype=dtype
        )

    measured = pl.col("measured_date") if "measured_date" in columns else pl.lit(None, dtype=pl.String)
    launched = pl.col("speculation_launched").fill_null(False) if "speculation_launched" in columns else pl.lit(False)
    since = field("since", pl.String)
    applies = (
        (pl.col("mode") == "agg")
        & (pl.col("input_tokens") == field("prompt_tokens"))
        & (pl.col("output_tokens") == field("output_tokens"))
        & (pl.col("decode_tensor_parallel") < field("below_tensor_parallel"))
        & (pl.col("concurrency") >= field("min_concurrency"))
        & (pl.col("decode_attention_data_parallel") <= 1)
        & (pl.col("speculative_tokens").fill_null(0.0) <= 0)
        & ~launched
        & (since.is_null() | measured.is_null() | (measured >= since))
    ).fill_null(False)
    return (
        pl.when(applies).then(field("timeout_iters")),
        pl.when(applies).then(field("threshold_tokens")),
    )
