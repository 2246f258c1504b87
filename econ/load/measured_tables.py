"""``measured_points``: published measured operating points of real serving systems, each sourced and quoted.

A row is what one source measured at one setting: the system and engine, the model and chip, the layout per
pool, the lengths, the batch or constraint, and the measured tokens/s with the passage that holds it. Nothing
is derived here: ``measured_value`` is the source's number (``value_as_written`` the same number as the quote
writes it, ``value_chips`` how many chips it counts), and a value the source does not state is blank. The
calibration (:mod:`econ.analyses.calibration`) reads every row; ``exclusion_reason`` says why a row cannot be
predicted (unstated lengths, speculative decoding with an unstated acceptance, …).
"""

from __future__ import annotations

import re

import polars as pl

from econ.errors import Problem
from econ.load.spec import FILE, LINE, Column, TableSpec

REGIMES = ("offline", "disaggregated", "decode", "prefill", "single_stream", "server", "interactive")
"""How the point was measured: ``offline`` aggregated max-throughput serving (prefill and decode share the
replica); ``disaggregated`` a system of separate prefill and decode replicas (output tokens/s of the system);
``decode`` / ``prefill`` one phase in isolation; ``single_stream`` one request at a time (tokens/s per user);
``server`` / ``interactive`` MLPerf's latency-bounded scenarios."""

TOKENS_KINDS = ("input", "output", "total")
NUMBER = re.compile(r"^~?(\d[\d,]*(?:\.\d+)?)([kKM]?)$")
SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6}


def value_as_number(written: str) -> float | None:
    """A number as a source writes it (``~73.7k``, ``42.6K``, ``6,430``, ``70325.7``) -> its value; None if it
    is not one."""
    m = NUMBER.match(written.strip())
    if m is None:
        return None
    return float(m.group(1).replace(",", "")) * SUFFIX[m.group(2)]


def _check_quotes(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """Every quote holds its number: ``value_as_written`` occurs in ``quote`` and reads as ``measured_value``."""
    problems = []
    for row in frame.select(FILE, LINE, "quote", "value_as_written", "measured_value").iter_rows(named=True):
        written, quote, value = row["value_as_written"], row["quote"], row["measured_value"]
        number = value_as_number(written)
        if written not in quote:
            problems.append(
                Problem(
                    row[FILE],
                    row[LINE],
                    "value_as_written",
                    f"{written!r} does not occur in the quote",
                    "copy the number exactly as the quoted passage writes it",
                )
            )
        elif number is None or abs(number - value) > 1e-9 * max(1.0, abs(value)):
            problems.append(
                Problem(
                    row[FILE],
                    row[LINE],
                    "measured_value",
                    f"measured_value {value:g} is not the quoted {written!r}",
                    "measured_value is the quoted number with its k/M suffix expanded and commas removed",
                )
            )
    return problems


def _check_layout(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """A pool's tensor-parallel degree divides its replica (the rest is attention data parallelism)."""
    problems = []
    for pool in ("prefill", "decode"):
        chips, tp = pl.col(f"{pool}_replica_chips"), pl.col(f"{pool}_tensor_parallel")
        bad = frame.filter(chips.is_not_null() & tp.is_not_null() & ((chips % tp) != 0))
        for row in bad.iter_rows(named=True):
            problems.append(
                Problem(
                    row[FILE],
                    row[LINE],
                    f"{pool}_tensor_parallel",
                    f"{pool}_tensor_parallel does not divide {pool}_replica_chips",
                    "the attention data-parallel degree is replica chips / tensor parallel",
                )
            )
    return problems


def _count(name: str, unit: str, description: str) -> Column:
    return Column(name, "int", unit, description, positive=True)


MEASURED_POINTS = TableSpec(
    name="measured_points",
    grain="one row per published measured operating point",
    description="Measured throughput of real serving systems from MLPerf logs, engine benchmarks and vendors' "
    "posts: setting, layout, lengths, the number and the passage that holds it",
    key=("point_id",),
    columns=(
        Column("point_id", "str", "", "Short id", required=True),
        Column("source", "str", "", "Source document id (the unit of leave-one-source-out validation)", required=True),
        Column("publisher", "str", "", "Who published it (MLPerf: the submitter)", required=True),
        Column("source_kind", "str", "", "mlperf, engine_doc, vendor_post, engine_blog, …", required=True),
        Column("published_date", "date", "", "Publication date (blank where the source has none)"),
        Column("system", "str", "", "The measured system as the source describes it", required=True),
        Column("engine", "str", "", "Serving engine", required=True),
        Column("engine_version", "str", "", "Engine version where stated"),
        Column("model", "str", "", "Model as the source names it", required=True),
        Column(
            "arch_model",
            "str",
            "",
            "The models.model with its architecture (blank: not in data/models.csv)",
            ref=("models", "model"),
        ),
        Column("chip", "str", "", "Accelerator (hardware.chip where econ has it)", required=True),
        _count("chips_measured", "chips", "Chips of the measured system"),
        Column(
            "regime",
            "str",
            "",
            "How it was measured (see econ.load.measured_tables.REGIMES)",
            required=True,
            allowed=REGIMES,
        ),
        _count("prefill_replica_chips", "chips", "Chips per prefill replica"),
        _count("prefill_tensor_parallel", "chips", "Tensor-parallel degree of a prefill attention rank"),
        _count("decode_replica_chips", "chips", "Chips per decode replica"),
        _count("decode_tensor_parallel", "chips", "Tensor-parallel degree of a decode attention rank"),
        _count("decode_chips_measured", "chips", "Of a disaggregated system, the chips serving decode"),
        Column(
            "overlap_comm",
            "int",
            "",
            "1 where the source says the engine overlaps its expert-parallel communication with another "
            "micro-batch's compute (two-batch or dual-batch overlap, micro-batching; notes quote it); blank where it "
            "does not say so (predicted without overlap)",
            min=0,
            max=1,
            optional=True,
        ),
        Column(
            "expert_balanced",
            "int",
            "",
            "1 where the source says a load balancer placed the routed experts from routing statistics (EPLB, "
            "redundant expert copies; notes quote it): the busiest expert rank is uniform routing's; blank where it "
            "does not say so (the router's fitted skew)",
            min=0,
            max=1,
            optional=True,
        ),
        Column(
            "weight_format",
            "str",
            "",
            "Number format of the weights (the experts' where they differ)",
            allowed=("bf16", "fp8", "int8", "fp4"),
        ),
        Column(
            "compute_format",
            "str",
            "",
            "Format of the matrix math where it differs from the weights'",
            allowed=("bf16", "fp8", "int8", "fp4"),
        ),
        Column("kv_cache_format", "str", "", "Format of the KV cache where stated", allowed=("bf16", "fp8")),
        Column("formats_as_written", "str", "", "The formats as the source writes them"),
        Column(
            "input_tokens", "float", "tokens", "Prompt length per request (a mean where lengths vary)", positive=True
        ),
        Column(
            "output_tokens", "float", "tokens", "Output length per request (a mean where lengths vary)", positive=True
        ),
        Column("context_tokens", "float", "tokens", "Context of an isolated decode test (KV length)", positive=True),
        Column("length_note", "str", "", "Lengths or their distribution as the source states them"),
        _count("batch_per_replica", "sequences", "Running batch (or concurrency) per decode replica, where stated"),
        _count("prefill_tokens_per_pass", "tokens", "Tokens per prefill pass of a replica, where stated"),
        Column("concurrency_as_written", "str", "", "Batch or concurrency as the source writes it"),
        Column("ttft_limit_s", "float", "s", "Time-to-first-token constraint of the test", positive=True),
        Column("tpot_limit_s", "float", "s", "Time-per-output-token constraint of the test", positive=True),
        Column("measured_value", "float", "tokens/s", "The measured throughput", required=True, positive=True),
        Column("value_as_written", "str", "", "measured_value exactly as the quote writes it", required=True),
        Column("measured_unit", "str", "", "What the number counts, in the source's words", required=True),
        Column(
            "value_chips",
            "int",
            "chips",
            "Chips measured_value counts (1: per chip; a single_stream value is per user)",
            required=True,
            positive=True,
        ),
        Column("tokens_kind", "str", "", "Which tokens it counts (blank: not stated)", allowed=TOKENS_KINDS),
        Column("tokens_per_s_per_user", "float", "tokens/s", "Per-user decode speed where stated", positive=True),
        Column("ttft_s", "float", "s", "Measured mean time to first token", positive=True),
        Column("tpot_s", "float", "s", "Measured mean time per output token", positive=True),
        Column("source_url", "str", "", "Where the number is published", required=True),
        Column("quote", "str", "", "The passage or table cell that holds the number, verbatim", required=True),
        Column("notes", "str", "", "How the row was read: layout, units, what the source leaves open"),
        Column("exclusion_reason", "str", "", "Why the calibration cannot predict this row (blank: it can)"),
    ),
    checks=(_check_quotes, _check_layout),
)
