"""Serving runs in AIConfigurator's schema (``inferencex_train``, ``econ predict --points``) as configurations.

A row names a model (a Hugging Face id), a system (``h200_sxm``, ``gb200``, …), an engine, formats, lengths,
a mode (``agg``: one pool does prefill and decode; ``disagg``: prefill and decode workers) and each pool's
layout. :func:`configurations` turns rows into one configuration each, resolved against ``models`` and
``hardware``, the way AIConfigurator reads them (its ``silicon_sample.csv`` code at commit 095f58a):

- concurrency ``C``: ``silicon_concurrency=N`` in ``silicon_data_source`` (the benchmark's own figure), else
  ``batch_size × attention_dp_size`` (agg) or ``decode_batch_size × decode_attention_dp_size ×
  decode_num_workers`` (disagg), and a measured row's ``notes`` say so (15 rows of the file, all from NVIDIA's
  gap-analysis files, whose TTFT of up to 54 s at a batch of 256 shows clients queued beyond the batch);
- a worker holds ``tp × pp × attention_dp`` chips; attention runs as ``attention_dp`` replicas split ``tp``
  ways, and the MoE layers over the same chips as ``moe_tp × moe_ep`` (so ``moe_ep`` is the expert-parallel
  degree and ``moe_tp`` splits each expert).

Known defects of the measured file, repaired and said so in ``notes`` (tests/analyses/test_serving_runs.py):

- an agg row on an 8-chip system stored with more chips than the node (``tp_size=64`` for a ``tp8 ep8`` run):
  every such row's stored chip count is the square of a real one (8 → 64, 4 → 16), so the worker is taken as
  the square root, each degree capped by it;
- a disagg row without worker counts: the pools of the InferenceX launch it matches
  (:mod:`econ.analyses.launch_layouts`), else one prefill and one decode worker are assumed (``workers_assumed``);
- a batch that does not match the stated concurrency: the stated concurrency wins;
- a MoE row whose tensor parallel N divides none of the model's attention heads (DeepSeek-R1 on GB200 as ``tp36``,
  ``tp28``, ``tp72``; 118 rows): no engine splits 128 heads 36 ways, so N is the chip count of the whole system, not
  a worker's layout. These are InferenceX's GB200 runs of disaggregated wide expert parallelism, and the rows stored
  as ``agg`` are copies of ``disagg`` rows (42 of their 46 have a ``disagg`` twin of the same chips, lengths and
  concurrency whose TPOT is within 1.3x, most within 1%). Such a row is read as disaggregated, each such pool as
  attention data parallel N x expert parallel N, with the worker counts assumed as above;
- a MoE worker whose expert degrees span more chips than its attention degrees (vLLM's Qwen3-235B on H200 stored as
  ``tp_size=1`` with ``moe_tp_size=4``, which one 141 GB chip cannot hold): the worker is the experts' chips, the
  attention split over them (vLLM runs the experts over its tensor-parallel group).

What cannot be predicted gets a ``reason`` (unknown model or chip, no concurrency, a layout whose degrees do
not multiply out) and is kept, never dropped.
"""

from __future__ import annotations

import re

import polars as pl

from econ.analyses import launch_layouts
from econ.analyses import serving_run_notes as run_notes
from econ.analyses.inputs import architecture_groups, architecture_of
from econ.engines import NAMES as ENGINE_NAMES
from econ.load.serving_run_tables import SERVING_RUNS

FORMATS = {
    "bf16": "bf16",
    "fp16": "bf16",
    "float16": "bf16",
    "bfloat16": "bf16",
    "fp8": "fp8",
    "fp8_block": "fp8",
    "fp8_static": "fp8",
    "w8a8": "fp8",
    "int8": "int8",
    "int8_wo": "int8",
    "nvfp4": "fp4",
    "mxfp4": "fp4",
    "fp4": "fp4",
    "w4a8_mxfp4_fp8": "fp4",
    "w4afp8": "fp4",
}
"""AIConfigurator's quantisation modes (``gemm_quant_mode``, ``moe_quant_mode``, ``precision``) -> econ's number
format (bytes per weight and the peak the math runs at); blank is BF16 (an unquantised checkpoint)."""

KV_FORMATS = {"bf16": "bf16", "fp16": "bf16", "float16": "bf16", "fp8": "fp8", "int8": "fp8", "fp8_e4m3": "fp8"}
"""``kvcache_quant_mode`` -> econ's KV-cache format."""

DEFAULT_KV_FORMAT = "bf16"
"""The cache format where a row does not state one: the engines' default ("auto", the activations' dtype) for
every engine in the measured file."""

QUANT_SUFFIX = re.compile(
    r"(-(instruct|chat|it|base|hf|thinking|preview|exp|terminus|\d{4}|(nv|mx)?fp[48](-v\d+)?|awq|gptq|int4|int8|w4a16"
    r"|w8a8|w-[a-z0-9]+-a-[a-z0-9]+|kv|bf16|dynamic|static|pertensor))+$"
)
"""Suffixes of a re-release of the same architecture: tuning (``-Instruct``, ``-Thinking``), a dated or staged
checkpoint (``-0528``, ``-2507``, ``-Preview``, ``-Exp``, ``-Terminus``) and quantisation (``-FP8``, ``-NVFP4``,
``-FP4-v2``, ``-MXFP8``, ``-FP8-Static-PerTensor``, AMD's ``-FP8-KV`` and ``-w-mxfp4-a-fp8``; the formats a run used
are read from its quantisation columns, never from the name). A draft model (``-Eagle3``, ``-DSpark``) is not one: it
stays unknown."""


def model_key(name: str | None) -> str:
    """A model name or Hugging Face id without its organisation and :data:`QUANT_SUFFIX`, lower case
    (``nvidia/DeepSeek-R1-0528-FP4-v2`` -> ``deepseek-r1``, ``meta-llama/Meta-Llama-3.1-70B`` -> ``llama-3.1-70b``)."""
    if not name:
        return ""
    base = name.strip().split("/")[-1].lower()
    base = QUANT_SUFFIX.sub("", base)
    return base[5:] if base.startswith("meta-") else base


def model_resolver(models: pl.DataFrame) -> dict[str, str]:
    """{key: models.model} for every model's name and Hugging Face id (:func:`model_key`)."""
    out: dict[str, str] = {}
    for row in models.select("model", "hf_repo").iter_rows(named=True):
        for name in (row["hf_repo"], row["model"]):
            if name:
                out.setdefault(model_key(name), row["model"])
    return out


def chip_key(system: str | None) -> str:
    """AIConfigurator's system name -> a ``hardware.chip`` spelling (``h100_sxm`` -> ``H100``, ``gb200`` ->
    ``GB200``, ``mi355x`` -> ``MI355X``). Only the forms of the chip ``hardware`` describes lose their suffix (its
    NVIDIA rows are the SXM parts on HGX/DGX boards): ``h100_pcie`` (756 dense BF16 TFLOP/s, 2.0 TB/s, no NVLink
    switch) and ``h100_nvl`` (94 GB) are other chips, so they name none rather than the SXM part's figures."""
    if not system:
        return ""
    s = system.strip().lower()
    for suffix in ("_sxm", "_hgx", "_dgx"):
        s = s.removesuffix(suffix)
    return s.replace("_", "-").upper()


CONCURRENCY = r"silicon_concurrency=(\d+)"
MEASURED = r"measured=(\d{4}-\d{2}-\d{2})"
FIXED_LENGTHS = "aic-auto-gap-analysis"
"""The ``silicon_data_source`` of the runs NVIDIA measured for AIConfigurator's gap analysis (about 700 rows of the
file), not InferenceX's: AIConfigurator's eval runners send every prompt and output at exactly the stated length
(``genai-perf --synthetic-input-tokens-stddev 0 --output-tokens-stddev 0``, or ``bench_serving
--random-range-ratio 1``; ``src/aiconfigurator/eval/benchmarks/`` at 5e16187), where InferenceX's client draws them
from [0.8·L, L] (:data:`econ.analyses.calibration_runs.LENGTH_RATIO`). Such a run's ``length_range_ratio`` is 1."""

SOURCES = ("InferenceX", "NVIDIA gap analysis")
"""The measurement campaigns of the file's rows (a run's ``source``): InferenceX's benchmark (its dumps of 2026-03-25,
2026-04-06 and 2026-04-27 are revisions of one source) and NVIDIA's gap-analysis runs (:data:`FIXED_LENGTHS`), which
leave-one-source-out holds out in turn; a row that names no ``silicon_data_source`` (a user's own file) has none."""

POOL_COLUMNS = tuple(
    f"{pool}_{k}"
    for pool in ("prefill", "decode")
    for k in (
        "tensor_parallel",
        "attention_data_parallel",
        "pipeline_parallel",
        "expert_tensor_parallel",
        "expert_parallel",
        "workers",
    )
)
"""Each pool's degrees and worker count, as a configuration states them."""

SPEC_COLUMNS = {
    c.out_name: {"str": pl.String, "int": pl.Int64, "float": pl.Float64}[c.kind] for c in SERVING_RUNS.columns
}
"""Every column of the runs' table (``inferencex_train``'s spec): a frame without one reads it as blank."""

OPTIONAL = {
    "kvcache_quant_mode": pl.String,
    "nextn": pl.Float64,
    "nextn_accept_rate": pl.Float64,
    "measured_ttft_s": pl.Float64,
    "measured_tpot_s": pl.Float64,
    "silicon_data_source": pl.String,
    "backend_version": pl.String,
}
"""Columns a file of runs may leave out (AIConfigurator's speculative-decoding and KV-cache columns, the measured
values, the provenance)."""


def _degree(name: str) -> pl.Expr:
    """A stored degree: blank or 0 (both appear in the file for an unused dimension) is 1."""
    c = pl.col(name).cast(pl.Float64)
    return pl.when(c.is_null() | (c <= 0)).then(1.0).otherwise(c)


def _lookup(frame: pl.DataFrame, column: str, mapping) -> pl.Series:
    """``mapping`` applied to the distinct values of ``column`` (a few), joined back to every row."""
    distinct = frame.select(pl.col(column).unique())[column].to_list()
    table = pl.DataFrame(
        {column: distinct, "_v": [mapping(v) for v in distinct]}, schema={column: pl.String, "_v": pl.String}
    )
    return frame.select(column).join(table, on=column, how="left", maintain_order="left")["_v"]


def _formats(column: str) -> pl.Expr:
    return pl.col(column).str.to_lowercase().replace_strict(FORMATS, default=None, return_dtype=pl.String)


def configurations(
    rows: pl.DataFrame,
    models: pl.DataFrame,
    hardware: pl.DataFrame,
    launches: pl.DataFrame | None = None,
    node_launches: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One configuration per row of the AIConfigurator schema (columns of :data:`SCHEMA`), with the reason a row
    cannot be predicted (null: it can). ``models`` needs ``model``, ``hf_repo``, ``num_routed_experts`` and
    ``num_attention_heads`` (and ``max_position_embeddings``, where it has it: a request longer than the model's
    native context says so in its notes); ``hardware`` ``chip`` and ``scale_up_domain_chips``; ``launches`` (the
    ``inferencex_launches`` table) gives a disaggregated row without worker counts the pools it was launched with and
    ``node_launches`` (``inferencex_node_launches``) an aggregated row whether it speculated
    (:mod:`econ.analyses.launch_layouts`). Vectorised: Python touches only the distinct model and system names."""
    columns = {**SPEC_COLUMNS, **OPTIONAL}
    rows = rows.with_columns(
        (pl.col(c).cast(t, strict=False) if c in rows.columns else pl.lit(None, dtype=t)).alias(c)
        for c, t in columns.items()
    ).with_columns(pl.col("backend").str.strip_chars().str.to_lowercase().replace(ENGINE_NAMES).alias("backend"))
    resolve = model_resolver(models)
    chips = {c.upper(): c for c in hardware["chip"].to_list()}

    groups = architecture_groups(models)

    def named(frame: pl.DataFrame) -> pl.DataFrame:
        frame = frame.with_columns(
            _lookup(frame, "model_path", lambda v: resolve.get(model_key(v))).alias("arch_model"),
            _lookup(frame, "system", lambda v: chips.get(chip_key(v))).alias("chip"),
        )
        return frame.with_columns(architecture_of(groups).alias("architecture_group"))

    r = named(rows).with_columns(
        pl.col("silicon_data_source").str.extract(CONCURRENCY, 1).cast(pl.Float64).alias("_stated"),
        pl.col("silicon_data_source").str.extract(MEASURED, 1).alias("_measured_date"),
        _image().alias("_image"),
    )
    r = launch_layouts.apply(
        r,
        named(launches) if launches is not None else None,
        named(node_launches) if node_launches is not None else None,
    )
    info = models.select(
        pl.col("model").alias("arch_model"),
        pl.col("num_routed_experts").is_not_null().alias("_moe"),
        pl.col("num_attention_heads").cast(pl.Float64).alias("_heads"),
        (pl.col("max_position_embeddings") if "max_position_embeddings" in models.columns else pl.lit(None))
        .cast(pl.Float64)
        .alias("_context"),
    )
    domain = hardware.select("chip", pl.col("scale_up_domain_chips").cast(pl.Float64).fill_null(1.0).alias("_domain"))
    r = r.join(info, on="arch_model", how="left").join(domain, on="chip", how="left")
    r = r.with_columns(pl.col("mode").alias("_stored"))  # the mode as stored; "mode" becomes the one read
    stored_agg = pl.col("_stored") == "agg"
    r = r.with_columns(*(_wide_ep(stored_agg, pool).alias(f"_{pool}_wide") for pool in ("prefill", "decode")))
    wide = pl.col("_prefill_wide") | pl.col("_decode_wide")
    r = r.with_columns(pl.when(wide).then(pl.lit("disagg")).otherwise(pl.col("mode")).alias("mode"))
    agg = pl.col("mode") == "agg"
    weight = pl.coalesce(_formats("gemm_quant_mode"), _formats("precision"))
    weight = (
        pl.when(pl.col("gemm_quant_mode").is_null() & pl.col("precision").is_null())
        .then(pl.lit("bf16"))
        .otherwise(weight)
    )
    r = r.with_columns(
        weight.alias("weight_format"),
        pl.coalesce(_formats("moe_quant_mode"), weight).alias("expert_weight_format"),
        pl.col("kvcache_quant_mode")
        .str.to_lowercase()
        .replace_strict(KV_FORMATS, default=None, return_dtype=pl.String)
        .alias("_kv"),
    )
    for pool in ("prefill", "decode"):
        r = r.with_columns(
            pl.when(stored_agg).then(_degree(k)).otherwise(_degree(f"{pool}_{k}")).alias(f"_{pool}_{k}")
            for k in ("tp_size", "attention_dp_size", "pp_size", "moe_tp_size", "moe_ep_size")
        )
        tp, dp, pp = (pl.col(f"_{pool}_{k}") for k in ("tp_size", "attention_dp_size", "pp_size"))
        wide = pl.col(f"_{pool}_wide")
        stored = tp * dp * pp
        root = stored.sqrt().round(0)
        squared = agg & (stored > pl.col("_domain")) & (root * root == stored) & (root <= pl.col("_domain"))
        experts = pl.col(f"_{pool}_moe_tp_size") * pl.col(f"_{pool}_moe_ep_size")
        under = pl.col("_moe").fill_null(False) & ~wide & ~squared & (experts > tp * dp) & (experts % dp == 0)
        tp_r = (
            pl.when(wide)
            .then(1.0)
            .when(squared)
            .then(pl.min_horizontal(tp, root))
            .when(under)
            .then(experts / dp)
            .otherwise(tp)
        )
        dp_r = pl.when(wide).then(stored).when(squared).then(root / pl.min_horizontal(tp, root)).otherwise(dp)
        pp_r = pl.when(squared).then(1.0).otherwise(pp)
        r = r.with_columns(
            tp_r.alias(f"{pool}_tensor_parallel"),
            dp_r.alias(f"{pool}_attention_data_parallel"),
            pp_r.alias(f"{pool}_pipeline_parallel"),
            squared.alias(f"_{pool}_squared"),
            under.fill_null(False).alias(f"_{pool}_under"),
            stored.alias(f"_{pool}_stored"),
        )
        stage = pl.col(f"{pool}_tensor_parallel") * pl.col(f"{pool}_attention_data_parallel")
        ep, etp = pl.col(f"_{pool}_moe_ep_size"), pl.col(f"_{pool}_moe_tp_size")
        consistent = (etp * ep == stage) & ~pl.col(f"_{pool}_squared")
        spread = pl.when(ep > 1).then(1.0).otherwise(stage)
        r = r.with_columns(
            pl.when(~pl.col("_moe").fill_null(False) | wide)
            .then(1.0)
            .when(consistent)
            .then(etp)
            .otherwise(spread)
            .alias(f"{pool}_expert_tensor_parallel"),
            (pl.col("_moe").fill_null(False) & ~consistent & ~pl.col(f"_{pool}_squared") & ~wide).alias(
                f"_{pool}_respread"
            ),
        )
        r = r.with_columns(
            (stage / pl.col(f"{pool}_expert_tensor_parallel")).alias(f"{pool}_expert_parallel"),
            pl.when(agg).then(1.0).otherwise(pl.col(f"{pool}_num_workers").cast(pl.Float64)).alias(f"{pool}_workers"),
        )
    missing = ~agg & (
        pl.col("prefill_workers").is_null()
        | (pl.col("prefill_workers") <= 0)
        | pl.col("decode_workers").is_null()
        | (pl.col("decode_workers") <= 0)
    )
    r = r.with_columns(
        missing.alias("workers_assumed"),
        pl.when(missing).then(1.0).otherwise(pl.col("prefill_workers")).alias("prefill_workers"),
        pl.when(missing).then(1.0).otherwise(pl.col("decode_workers")).alias("decode_workers"),
    )
    batch = pl.when(agg).then(pl.col("batch_size")).otherwise(pl.col("decode_batch_size")).cast(pl.Float64)
    from_batch = batch * pl.col("_decode_attention_dp_size") * pl.col("decode_workers")  # as stored
    r = r.with_columns(pl.coalesce("_stated", from_batch).alias("concurrency"), from_batch.alias("_from_batch"))
    stated = pl.col("nextn").fill_null(0.0) > 0  # a run that states its speculation is timed by it
    r = r.with_columns(
        (pl.col(launch_layouts.SPECULATION) & ~stated).alias(launch_layouts.SPECULATION),
        pl.col("silicon_data_source")
        .str.contains(FIXED_LENGTHS, literal=True)
        .fill_null(False)
        .alias("_fixed_lengths"),
    )
    return r.with_columns(run_notes.notes().alias("notes"), run_notes.reason().alias("reason")).select(
        pl.col("id").alias("run_id"),
        pl.col("backend").alias("engine"),
        "model_path",
        "system",
        "arch_model",
        "architecture_group",
        "chip",
        "mode",
        pl.col("isl").cast(pl.Float64).alias("input_tokens"),
        pl.col("osl").cast(pl.Float64).alias("output_tokens"),
        "concurrency",
        pl.col("silicon_data_source").str.extract(MEASURED, 1).alias("measured_date"),
        "weight_format",
        "expert_weight_format",
        pl.coalesce("_kv", pl.lit(DEFAULT_KV_FORMAT)).alias("kv_cache_format"),
        pl.col("_kv").is_not_null().alias("kv_cache_stated"),
        pl.col("nextn").fill_null(0.0).alias("speculative_tokens"),
        pl.col("nextn_accept_rate").fill_null(0.0).alias("acceptance_frac"),
        launch_layouts.SPECULATION,
        launch_layouts.LIMIT,
        launch_layouts.BALANCED,
        *POOL_COLUMNS,
        "workers_assumed",
        launch_layouts.CHOICES,
        pl.when(pl.col("_fixed_lengths")).then(1.0).alias("length_range_ratio"),
        pl.when(pl.col("_fixed_lengths"))
        .then(pl.lit(SOURCES[1]))
        .when(pl.col("silicon_data_source").is_not_null())
        .then(pl.lit(SOURCES[0]))
        .alias("source"),
        "measured_ttft_s",
        "measured_tpot_s",
        "notes",
        "reason",
    )


def _wide_ep(stored_agg: pl.Expr, pool: str) -> pl.Expr:
    """A MoE pool whose stored tensor parallel divides none of the model's heads, attention and pipeline not split:
    a wide-EP pool of a disaggregated run (module docstring)."""

    def stored(k: str) -> pl.Expr:
        return pl.when(stored_agg).then(_degree(k)).otherwise(_degree(f"{pool}_{k}"))

    odd = (pl.col("_heads") % stored("tp_size") != 0) & (stored("attention_dp_size") == 1) & (stored("pp_size") == 1)
    return (pl.col("_moe") & odd).fill_null(False)


def _image() -> pl.Expr:
    """The engine image in ``silicon_data_source``: its ``image=`` field, else a last field that is no ``key=value``
    (the dump's own rows end with the image)."""
    fields = pl.col("silicon_data_source").str.split("; ")
    last = fields.list.last()
    bare = pl.when(~last.str.contains("=")).then(last)
    return pl.coalesce(pl.col("silicon_data_source").str.extract(r"image=([^;]+)", 1), bare)
