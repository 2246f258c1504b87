"""``inferencex_train``: measured serving runs in AIConfigurator's ``silicon_sample.csv`` schema.

The file is vendored unmodified (``data/inferencex_train.csv``, Apache-2.0, data/README.md gives its source and
sha256): 3,366 InferenceX runs, each a stated configuration (model, system, engine, formats, mode, lengths, each
pool's parallel layout) with its measured mean TTFT and TPOT. The same spec reads a user's file of runs for
``econ predict --points``: the measured columns, AIConfigurator's speculative-decoding and KV-cache columns and
the provenance may be left out. Column names are the source's; the measured milliseconds become seconds here.
How a row is read (concurrency, layouts, the file's known defects) is :mod:`econ.analyses.serving_runs`.
"""

from __future__ import annotations

import dataclasses

import polars as pl

from econ.errors import Problem
from econ.load import ceilings
from econ.load.spec import FILE, LINE, Column, TableSpec

MODES = ("agg", "disagg")


def _degree(name: str, what: str) -> Column:
    return Column(name, "int", "chips", what, min=0, ceiling=ceilings.CHIPS, optional=True)


def _pool(prefix: str, pool: str) -> tuple[Column, ...]:
    return (
        _degree(f"{prefix}tp_size", f"Tensor-parallel degree of the {pool} worker's attention"),
        _degree(f"{prefix}pp_size", f"Pipeline stages of the {pool} worker"),
        _degree(f"{prefix}attention_dp_size", f"Attention data-parallel ranks of the {pool} worker"),
        _degree(f"{prefix}moe_tp_size", f"Tensor-parallel slices of each expert ({pool})"),
        _degree(f"{prefix}moe_ep_size", f"Expert-parallel ranks ({pool})"),
    )


def _ms(name: str, db_name: str, what: str) -> Column:
    return Column(name, "float", "ms", what, positive=True, optional=True, db_name=db_name, factor=1e-3, db_unit="s")


SERVING_RUNS = TableSpec(
    name="inferencex_train",
    grain="one row per measured serving run (a configuration at one concurrency)",
    description="InferenceX serving runs (AIConfigurator's accuracy set, training split): configuration, layout, "
    "lengths, concurrency and the measured mean TTFT and TPOT",
    key=("id",),
    columns=(
        Column("id", "str", "", "The run's identifier", required=True),
        Column(
            "silicon_data_source", "str", "", "Dump date, config id, silicon_concurrency=N, engine image", optional=True
        ),
        Column(
            "backend",
            "str",
            "",
            "Serving engine (trtllm, sglang, vllm; any case, or another spelling such as dynamo-trt or TensorRT-LLM: "
            "econ.engines.NAMES)",
            required=True,
        ),
        Column("backend_version", "str", "", "Engine version", optional=True),
        Column("model_path", "str", "", "Hugging Face id of the model (or a quantised re-release)", required=True),
        Column("system", "str", "", "System (h100_sxm, h200_sxm, b200_sxm, gb200, …)", required=True),
        Column("precision", "str", "", "Checkpoint precision (fp8, fp4; blank: bf16)", optional=True),
        Column(
            "mode", "str", "", "agg (one pool) or disagg (prefill and decode workers)", required=True, allowed=MODES
        ),
        Column(
            "isl",
            "int",
            "tokens",
            "Input sequence length per request",
            required=True,
            positive=True,
            ceiling=ceilings.TOKENS,
        ),
        Column(
            "osl",
            "int",
            "tokens",
            "Output sequence length per request",
            required=True,
            positive=True,
            ceiling=ceilings.TOKENS,
        ),
        Column("gemm_quant_mode", "str", "", "Format of the dense GEMMs' weights and math (fp8, fp8_block, nvfp4)"),
        Column("moe_quant_mode", "str", "", "Format of the routed experts (fp8, fp8_block, nvfp4)"),
        Column(
            "batch_size",
            "int",
            "sequences",
            "Agg: requests per attention data-parallel rank",
            min=0,
            ceiling=ceilings.CHIPS,
        ),
        *_pool("", "agg"),
        Column("prefill_batch_size", "int", "prompts", "Disagg: prompts per prefill pass", min=0, optional=True),
        Column(
            "prefill_num_workers",
            "int",
            "workers",
            "Disagg: prefill workers",
            min=0,
            ceiling=ceilings.CHIPS,
            optional=True,
        ),
        *_pool("prefill_", "prefill"),
        Column(
            "decode_batch_size",
            "int",
            "sequences",
            "Disagg: sequences per decode attention rank",
            min=0,
            ceiling=ceilings.CHIPS,
        ),
        Column("decode_num_workers", "int", "workers", "Disagg: decode workers", min=0, ceiling=ceilings.CHIPS),
        *_pool("decode_", "decode"),
        Column(
            "kvcache_quant_mode", "str", "", "KV-cache format (fp8, bf16; blank: the engine's default)", optional=True
        ),
        Column(
            "nextn",
            "int",
            "tokens",
            "Speculative (MTP) draft tokens per step (blank: none)",
            optional=True,
            min=0,
            max=16,
        ),
        Column(
            "nextn_accept_rate", "float", "", "Acceptance rate of each draft token", optional=True, min=0.0, max=1.0
        ),
        _ms("silicon_ttft_ms", "measured_ttft_s", "Measured mean time to first token"),
        _ms("silicon_tpot_ms", "measured_tpot_s", "Measured mean time per output token"),
    ),
)

SERVING_RUNS = dataclasses.replace(
    SERVING_RUNS,
    columns=tuple(c if c.required else dataclasses.replace(c, optional=True) for c in SERVING_RUNS.columns),
)
"""Only the required columns must be in a file of runs; any other the file leaves out reads as blank."""


LAUNCH_COLUMNS = (
    Column("model_prefix", "str", "", "The config's model-prefix", required=True),
    Column("model_path", "str", "", "Hugging Face id the prefix names (blank: none known)"),
    Column("system", "str", "", "Chip of the runner (h200, gb200, mi355x, …)", required=True),
    Column("engine", "str", "", "Serving engine (trtllm, sglang, vllm, atom)", required=True),
    Column("precision", "str", "", "Checkpoint precision (fp8, fp4)", required=True),
    Column("isl", "int", "tokens", "Input length", required=True, positive=True, ceiling=ceilings.TOKENS),
    Column("osl", "int", "tokens", "Output length", required=True, positive=True, ceiling=ceilings.TOKENS),
    Column("speculative_decoding", "str", "", "mtp or none", required=True, allowed=("mtp", "none")),
)
"""The columns both launch tables start with (what was launched: model, chip, engine, format, lengths, MTP)."""
LAUNCH_KEY = ("config_key", "model_prefix", "system", "engine", "precision", "isl", "osl", "speculative_decoding")
COMMIT_COLUMNS = (
    Column("first_date", "date", "", "Commit date of the first config version that held the launch", required=True),
    Column("last_date", "date", "", "Commit date of the last version (up to 2026-04-28) that held it", required=True),
    Column("first_commit", "str", "", "That first commit of github.com/SemiAnalysisAI/InferenceX", required=True),
    Column("last_commit", "str", "", "That last commit", required=True),
    Column("config_key", "str", "", "The config's name in the master file", required=True),
)
"""The columns both launch tables end with: the commits that held the launch, and the config's name."""


def _ordered(low: str, high: str, what: str):
    """A check that ``low`` <= ``high`` in every row, naming the file, line and ``high`` column where it is not."""

    def check(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
        bad = frame.filter(pl.col(low) > pl.col(high))
        return [
            Problem(r[FILE], r[LINE], high, f"{high} is before {low}", f"{what}: {low} comes first")
            for r in bad.iter_rows(named=True)
        ]

    return check


def _launch_pool(pool: str) -> tuple[Column, ...]:
    return (
        Column(f"{pool}_workers", "int", "workers", f"{pool.title()} workers", required=True, positive=True),
        Column(
            f"{pool}_tp",
            "int",
            "chips",
            f"Chips of one {pool} worker (tensor parallel, or attention data parallel when dp_attention is 1)",
            required=True,
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(f"{pool}_ep", "int", "chips", f"Expert-parallel degree of a {pool} worker", positive=True),
        Column(
            f"{pool}_dp_attention", "int", "", f"1 when a {pool} worker's attention runs data parallel", min=0, max=1
        ),
    )


INFERENCEX_LAUNCHES = TableSpec(
    name="inferencex_launches",
    grain="one row per disaggregated launch (a search-space entry at one concurrency) of InferenceX's master configs",
    description="What InferenceX launched for its multi-node runs, as its master configs state them: each pool's "
    "workers and layout, speculative decoding, the concurrency, and the commits that held it "
    "(scripts/inferencex_launches.py writes it from the repository's history)",
    key=(
        *LAUNCH_KEY,
        "recipe",
        "concurrency",
        "prefill_workers",
        "prefill_tp",
        "prefill_ep",
        "prefill_dp_attention",
        "decode_workers",
        "decode_tp",
        "decode_ep",
        "decode_dp_attention",
    ),
    columns=(
        *LAUNCH_COLUMNS,
        Column("concurrency", "int", "requests", "Concurrency of the launch", required=True, positive=True),
        *_launch_pool("prefill"),
        *_launch_pool("decode"),
        Column("recipe", "str", "", "The recipe file the launch names (CONFIG_FILE; blank: none)"),
        Column(
            "decode_max_batch",
            "int",
            "sequences",
            "Decode batch limit per attention rank, as the recipe's name states it (batchN; blank: not stated)",
            positive=True,
        ),
        Column("draft_tokens", "int", "tokens", "MTP draft tokens the recipe's name states (mtpN; blank: not stated)"),
        *COMMIT_COLUMNS,
    ),
    checks=(_ordered("first_date", "last_date", "the commits that held a launch"),),
)


INFERENCEX_NODE_LAUNCHES = TableSpec(
    name="inferencex_node_launches",
    grain="one row per single-node launch (a search-space entry) of InferenceX's master configs",
    description="What InferenceX launched for its single-node (aggregated) runs, as its master configs state them: "
    "engine image, degrees, concurrency range, speculative decoding, and the commits that held it "
    "(scripts/inferencex_launches.py writes it from the repository's history)",
    key=(
        *LAUNCH_KEY,
        "image",
        "tp",
        "ep",
        "dp_attention",
        "concurrency_start",
        "concurrency_end",
    ),
    columns=(
        *LAUNCH_COLUMNS,
        Column("image", "str", "", "The engine's container image", required=True),
        Column("tp", "int", "chips", "Tensor-parallel degree (attention data parallel when dp_attention is 1)"),
        Column("ep", "int", "chips", "Expert-parallel degree", positive=True),
        Column("dp_attention", "int", "", "1 when attention runs data parallel", min=0, max=1),
        Column("concurrency_start", "int", "requests", "Lowest concurrency of the sweep", required=True, positive=True),
        Column("concurrency_end", "int", "requests", "Highest concurrency of the sweep", required=True, positive=True),
        *COMMIT_COLUMNS,
    ),
    checks=(
        _ordered("first_date", "last_date", "the commits that held a launch"),
        _ordered("concurrency_start", "concurrency_end", "a concurrency sweep"),
    ),
)
