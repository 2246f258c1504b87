"""``price_history``: every price period next to the one before it for the same key, with each component's change.

The arithmetic is :func:`econ.fits.price_ratios.history`.
"""

from __future__ import annotations

from econ.analyses.price_columns import PRICE_KEY_COLUMNS, PRICE_VALUE_COLUMNS
from econ.fits import price_ratios as pr
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "price_history"
INPUTS = ("prices",)

PRICE_HISTORY = ResultTable(
    name="price_history",
    grain="source x provider x model x variant x context tier x effective period",
    key=("source", "provider", "model", "variant", "tier_min_prompt_tokens", "from_date"),
    description="Every price period next to the period before it for the same key, with the change of each component",
    columns=(
        *PRICE_KEY_COLUMNS,
        *PRICE_VALUE_COLUMNS,
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


def run(ctx) -> None:
    ctx.write(PRICE_HISTORY, pr.history(ctx.query("select * from prices")))
