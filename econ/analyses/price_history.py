"""``price_history``: every price period next to the one before it for the same key, with each component's change,
the canonical model it sells (``price_keys``), whether the seller makes it and whether the row is free.

The arithmetic is :func:`econ.fits.price_ratios.history`; ``price_current`` is this table's rows in effect on a date.
"""

from __future__ import annotations

import polars as pl

from econ.analyses.model_catalog import CANONICAL, IS_FIRST_PARTY
from econ.analyses.price_columns import PRICE_KEY_COLUMNS, PRICE_VALUE_COLUMNS
from econ.fits import model_identity as mi
from econ.fits import price_ratios as pr
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "price_history"
INPUTS = ("prices", "price_keys")
IDENTITY = ("source", "provider", "model", "hugging_face_id")

PRICE_HISTORY = ResultTable(
    name="price_history",
    grain="source x provider x model x variant x context tier x effective period",
    key=("source", "provider", "model", "variant", "tier_min_prompt_tokens", "from_date"),
    description="Every price period next to the period before it for the same key, with the change of each component, "
    "the canonical model the key sells (price_keys), whether its seller makes it, and whether the row is free",
    columns=(
        *PRICE_KEY_COLUMNS,
        *PRICE_VALUE_COLUMNS,
        C(CANONICAL.name, CANONICAL.dtype, CANONICAL.unit, "input", CANONICAL.meaning + " (price_keys)"),
        C(
            IS_FIRST_PARTY.name,
            IS_FIRST_PARTY.dtype,
            IS_FIRST_PARTY.unit,
            "input",
            IS_FIRST_PARTY.meaning + " (price_keys)",
        ),
        C(
            "is_free",
            "bool",
            "",
            "derived",
            "Free tier or placeholder: input and output prices both at most 0.001 USD/MTok (zero in the maps)",
            mi.is_free,
        ),
        C("prev_from_date", "date", "", "input", "from_date of the previous period of the same key (null: first)"),
        C("prev_input_usd_per_mtok", "float", "USD/MTok", "input", "Input price of the previous period"),
        C("prev_output_usd_per_mtok", "float", "USD/MTok", "input", "Output price of the previous period"),
        C("prev_cache_read_usd_per_mtok", "float", "USD/MTok", "input", "Cache-read price of the previous period"),
        C(
            "prev_cache_write_5m_usd_per_mtok",
            "float",
            "USD/MTok",
            "input",
            "5-minute cache-write price of the previous period",
        ),
        C(
            "prev_cache_write_1h_usd_per_mtok",
            "float",
            "USD/MTok",
            "input",
            "1-hour cache-write price of the previous period",
        ),
        C(
            "prev_snapshot_date",
            "date",
            "",
            "input",
            "Newest snapshot that carried the previous period's price: with from_date, the window in which the "
            "change happened (exact when declared)",
        ),
        C("prev_last_commit", "str", "", "input", "Commit of that snapshot (replayed histories)"),
        C("period_number", "int", "", "label", "1 for the key's first period, 2 for the next, ..."),
        C("input_change_frac", "float", "", "derived", "Relative change of the input price", pr.price_change_frac),
        C("output_change_frac", "float", "", "derived", "Relative change of the output price", pr.price_change_frac),
        C(
            "cache_read_change_frac",
            "float",
            "",
            "derived",
            "Relative change of the cache-read price",
            pr.price_change_frac,
        ),
    ),
)
TABLES = (PRICE_HISTORY,)


def table(prices: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """:func:`econ.fits.price_ratios.history` of ``prices`` with the key's canonical model and the free flag."""
    identity = keys.select(*IDENTITY, "canonical_model", "is_first_party")
    return (
        pr.history(prices)
        .join(identity, on=list(IDENTITY), how="left", nulls_equal=True)
        .with_columns(
            pl.col("is_first_party").fill_null(False),
            mi.is_free(pl.col("input_usd_per_mtok"), pl.col("output_usd_per_mtok")),
        )
    )


def run(ctx) -> None:
    ctx.write(PRICE_HISTORY, table(ctx.query("select * from prices"), ctx.query("select * from price_keys")))
