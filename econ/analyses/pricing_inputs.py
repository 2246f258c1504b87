"""What every price inference reads and states: current prices, architectures, the serving assumptions.

``assumption_columns`` carries the stated assumptions into each result row (kind ``assumption``), so a
row says what it assumed; the assumptions themselves are :class:`econ.fits.assumptions.Assumptions`.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.inference_efficiencies import serving_scenario
from econ.analyses.inputs import MODELS_SQL
from econ.fits.assumptions import Assumptions, from_scenario

SCHEDULE = ["source", "provider", "model"]
ARCH_KEEP = ("arch_model", "arch_match", "params_total", "params_active", "kv_bytes_per_token")
INPUTS = (
    "inference_prices",
    "models",
    "model_derived",
    "hardware",
    "hardware_derived",
    "scenarios",
    "calibration_parameters",
)
"""What the price inferences read (prices, architectures, chips for the deployment model, the scenario)."""

SNAPSHOT_COLUMNS = ("snapshot_date", "source_line", "prev_snapshot_date", "source_commit", "last_commit")
"""Where and when a current price was last read (its map's snapshot, the line, the snapshot before): every new
snapshot of a map moves them though no price moved. No price inference reads them."""
PRICES_READ_SQL = f"select * exclude ({', '.join(SNAPSHOT_COLUMNS)}) from inference_prices"
"""The current prices the inferences read (``queries/inference_prices.sql``: price_current without the replayed
histories, which date prices and changes and repeat the maps' sellers), without :data:`SNAPSHOT_COLUMNS`."""
READS = {"inference_prices": PRICES_READ_SQL}
"""What an inference that reads the prices through :func:`inputs` reads of them (its ``READS``, econ.analyses.runner):
a new snapshot of a price map that moves no price leaves its key, and a refresh keeps its tables."""

ASSUMPTION_FIELDS = (
    "decode_mbu_frac",
    "prefill_mfu_frac",
    "context_tokens",
    "frontier_active_params",
    "batch_multiple_over_balance_ratio",
    "tier_context_density_exponent_ratio",
)
"""Scenario fields a table may carry as assumption columns (named as in the scenario)."""


def assumptions(ctx) -> Assumptions:
    """The base scenario's serving assumptions (efficiencies through :func:`serving_scenario`) over the chip × format
    rows of ``hardware_derived``."""
    base = ctx.scenario("base")
    scenario = serving_scenario(base, base.serving_chip, ctx.con)
    return from_scenario(scenario, ctx.query("select * from hardware_derived order by chip, format_order"))


def inputs(ctx, reads: dict[str, str] = READS) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(current prices, architectures with KV bytes at BF16) of the database being built: the prices of ``reads``
    (an inference's ``READS``, the query its key hashes), in schedule order."""
    order = "order by source, provider, model, variant, tier_min_prompt_tokens"
    return ctx.query(f"{reads['inference_prices']} {order}"), ctx.query(MODELS_SQL)


def assumption_columns(a: Assumptions, names: tuple[str, ...], *, hardware: bool = True) -> list[pl.Expr]:
    """The stated assumptions as constant columns, and what the scenario interval varies."""
    c = a.central
    out = [
        pl.lit(a.chip).alias("chip"),
        pl.lit(a.number_format).alias("number_format"),
        pl.lit(a.kv_cache_format).alias("kv_cache_format"),
        pl.lit(c["usd_per_chip_hour"]).alias("usd_per_chip_hour"),
        pl.lit(c["gross_margin_frac"]).alias("gross_margin_frac"),
    ]
    out += [pl.lit(c[k]).alias(k) for k in ASSUMPTION_FIELDS if k in names]
    out += [
        pl.lit(a.describe(names, hardware=hardware)).alias("scenario_interval"),
        pl.lit(", ".join(a.defaulted) or "none").alias("assumptions_defaulted"),
    ]
    return out


def thresholds(prices: pl.DataFrame) -> pl.DataFrame:
    """First long-context threshold per (source, provider, model), any variant."""
    return (
        prices.filter(pl.col("tier_min_prompt_tokens") > 0)
        .group_by(SCHEDULE)
        .agg(pl.col("tier_min_prompt_tokens").min().cast(pl.Float64).alias("tier_threshold_tokens"))
    )


def with_declared(frame: pl.DataFrame, table) -> pl.DataFrame:
    """``frame`` as ``table`` declares it: every declared column it lacks added as nulls (a fit with no rows of one
    kind adds none), in declared order; the fits' working columns (generic readings, row ids) are left behind."""
    missing = [c for c in table.columns if c.name not in frame.columns]
    return frame.with_columns(pl.lit(None, dtype=table.schema[c.name]).alias(c.name) for c in missing).select(
        table.names
    )
