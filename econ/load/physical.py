"""Physical consistency of the hand-kept tables: checks that look at several columns of a row.

The single-column ceilings live in the column specs (``econ.load.ceilings``); these are the rules a
range on one column cannot state: a model's KV heads are at most its query heads and its typed
layers at most its layers; a scenario's efficiencies are in (0, 1], its fractions in [0, 1] and
every other quantity positive and below its unit's ceiling (the unit is a column of the row).
"""

from __future__ import annotations

import polars as pl

from econ.errors import Problem
from econ.load import ceilings
from econ.load.spec import FILE, LINE, TableSpec, failing


def _rows(frame: pl.DataFrame, mask: pl.Expr) -> list[dict]:
    return frame.filter(mask).to_dicts()


def check_model_counts(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """Head and layer counts that contradict each other."""
    layers = pl.col("num_layers")
    typed = pl.sum_horizontal(
        pl.col("num_full_attention_layers").fill_null(0),
        pl.col("num_sliding_window_layers").fill_null(0),
        pl.col("num_linear_attention_layers").fill_null(0),
    )
    consistency = (
        (
            pl.col("num_kv_heads") > pl.col("num_attention_heads"),
            "num_kv_heads",
            "more KV heads than query heads",
            "KV heads are at most the query heads (equal for MHA, fewer for GQA/MQA)",
        ),
        (
            pl.col("sliding_num_kv_heads") > pl.col("num_attention_heads"),
            "sliding_num_kv_heads",
            "more KV heads in the sliding layers than query heads",
            "check sliding_num_kv_heads against num_attention_heads",
        ),
        (
            typed > layers,
            "num_full_attention_layers",
            "full-attention, sliding-window and linear-attention layers add up to more than num_layers",
            "each layer has one kind; their counts add up to at most num_layers",
        ),
        (
            pl.col("num_csa_layers").fill_null(0) + pl.col("num_hca_layers").fill_null(0) > layers,
            "num_csa_layers",
            "compressed sparse and heavily compressed layers add up to more than num_layers",
            "count compress_ratios of config.json by ratio over the num_layers main layers (not the MTP layer)",
        ),
        (
            pl.col("num_dense_layers") > layers,
            "num_dense_layers",
            "more dense layers than layers",
            "check num_dense_layers against num_layers",
        ),
    )
    problems = []
    for mask, column, what, hint in consistency:
        for row in _rows(frame, mask):
            problems.append(Problem(row[FILE], row[LINE], column, what, hint))
    return problems


EFFICIENCY = r"(^|_)(mfu|mbu)(_|$)|efficiency|bandwidth_frac$"
"""Scenario names that are efficiencies (achieved over peak): in (0, 1]."""
MAY_BE_ZERO = r"(_overhead_s|_latency_s|^speculative_tokens|_exponent_ratio)$"
"""Scenario quantities whose idealised value is none at all (no per-step overhead, no latency, no draft tokens, a
flat distribution's exponent)."""
SCENARIO_CEILINGS = {
    "USD/chip-hour": ceilings.USD_PER_CHIP_HOUR,
    "tokens/s": ceilings.TOKENS_PER_S,
    "chips": ceilings.CHIPS,
    "params": ceilings.PARAMS,
    "tokens": ceilings.TOKENS,
    "ratio": ceilings.RATIO,
    "FLOP/(param*token)": ceilings.FLOP_PER_PARAM_TOKEN,
    "models": ceilings.MODELS,
    "months": ceilings.MONTHS,
    "s": ceilings.SECONDS,
    "tokens/param": ceilings.TOKENS_PER_PARAM,
}
"""The ceiling of a scenario value by its unit; a unit not listed has :data:`econ.load.ceilings.ANY_SCENARIO_VALUE`."""


def check_scenario_ranges(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """Efficiencies in (0, 1]; fractions in [0, 1]; overheads, latencies, draft tokens and exponents 0 or more;
    every other quantity positive and below its unit's ceiling."""
    efficiency = pl.col("name").str.contains(EFFICIENCY)
    fraction = pl.col("unit") == "fraction"
    zero_ok = pl.col("name").str.contains(MAY_BE_ZERO)
    problems, checks = [], []
    for column in ("value", "low", "high"):
        x = pl.col(column)
        rules = [
            (efficiency & ((x <= 0) | (x > 1)), "an efficiency (achieved over peak) must be in (0, 1]"),
            (~efficiency & fraction & ((x < 0) | (x > 1)), "a fraction must be in [0, 1]"),
            (~efficiency & ~fraction & ~zero_ok & (x <= 0), "must be greater than 0 (a rate, price, count or size)"),
            (zero_ok & (x < 0), "must be 0 or more (an overhead, a latency, a count of draft tokens or an exponent)"),
            ((x != 0) & (x.abs() < ceilings.TINY), f"a non-zero value is at least {ceilings.TINY:g} (a typo?)"),
        ]
        for unit, ceiling in SCENARIO_CEILINGS.items():
            rules.append(
                ((pl.col("unit") == unit) & (x > ceiling.value), f"must be at most {ceiling.value:g}: {ceiling.why}")
            )
        top = ceilings.ANY_SCENARIO_VALUE
        rules.append(
            (
                ~pl.col("unit").is_in(list(SCENARIO_CEILINGS)).fill_null(False) & (x.abs() > top.value),
                f"must be at most {top.value:g}: {top.why}",
            )
        )
        checks += [(column, x.is_not_null() & mask, hint) for mask, hint in rules]
    for column, mask, hint in failing(frame, checks):
        for row in _rows(frame, mask):
            problems.append(
                Problem(
                    row[FILE],
                    row[LINE],
                    column,
                    f"{row['name']} = {row[column]:g} {row['unit']} is out of range",
                    hint,
                )
            )
    return problems
