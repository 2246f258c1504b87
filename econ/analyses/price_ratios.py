"""``price_ratios`` and ``price_tier_ratios``: output and cache prices over input, long-context tiers over base.

Computed per price row (every effective period), so the views ``io_price_ratio``,
``cache_price_ratios`` and ``long_context_tiers`` select the rows in effect on any date and
derive nothing. The arithmetic is :mod:`econ.fits.price_ratios`.
"""

from __future__ import annotations

from econ.analyses.price_columns import PRICE_KEY_COLUMNS
from econ.fits import price_ratios as pr
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "price_ratios"
INPUTS = ("prices",)

_FROM = C("from_date", "date", "", "key", "First day of the price row's period (prices.from_date)")

PRICE_RATIOS = ResultTable(
    name="price_ratios",
    grain="price row (source x provider x model x variant x context tier x effective period)",
    key=("source", "provider", "model", "variant", "tier_min_prompt_tokens", "from_date"),
    description=(
        "Output and prompt-cache prices over the uncached input price of every price row (lecture f.3: rho; g.3: "
        "read ~0.1x, 5-minute write 1.25x, 1-hour write 2x); null where the input price is not positive"
    ),
    columns=(
        *PRICE_KEY_COLUMNS,
        _FROM,
        C("output_over_input_ratio", "float", "", "derived", "Output price over input price (rho)", pr.price_ratio),
        C("cache_read_ratio", "float", "", "derived", "Cache-read price over input price", pr.price_ratio),
        C(
            "cache_write_5m_ratio",
            "float",
            "",
            "derived",
            "5-minute cache-write price over input price",
            pr.price_ratio,
        ),
        C("cache_write_1h_ratio", "float", "", "derived", "1-hour cache-write price over input price", pr.price_ratio),
        C(
            "cache_write_12h_ratio",
            "float",
            "",
            "derived",
            "12-hour cache-write price over input price",
            pr.price_ratio,
        ),
        C(
            "cache_storage_per_hour_ratio",
            "float",
            "1/hour",
            "derived",
            "Cache storage price per token-hour over input price",
            pr.price_ratio,
        ),
    ),
)

PRICE_TIER_RATIOS = ResultTable(
    name="price_tier_ratios",
    grain="long-context tier row x base-tier row of the same schedule whose periods overlap",
    key=("source", "provider", "model", "variant", "tier_min_prompt_tokens", "from_date"),
    description=(
        "Every long-context tier's prices over the base tier's, for each overlap of the two rows' periods "
        "(from_date/to_date: the overlap), so any date pairs the rows in effect (lecture f.1)"
    ),
    columns=(
        *PRICE_KEY_COLUMNS,
        C("from_date", "date", "", "key", "First day both rows apply (inclusive)"),
        C("to_date", "date", "", "input", "First day one of them no longer applies (exclusive; null = open)"),
        C("tier_from_date", "date", "", "input", "from_date of the tier's price row"),
        C("base_from_date", "date", "", "input", "from_date of the base tier's price row"),
        C("input_uplift_ratio", "float", "", "derived", "Tier input price over base input price", pr.price_ratio),
        C("output_uplift_ratio", "float", "", "derived", "Tier output price over base output price", pr.price_ratio),
        C(
            "cache_read_uplift_ratio",
            "float",
            "",
            "derived",
            "Tier cache-read price over base cache-read price",
            pr.price_ratio,
        ),
    ),
)
TABLES = (PRICE_RATIOS, PRICE_TIER_RATIOS)


def run(ctx) -> None:
    prices = ctx.query("select * from prices")
    ctx.write(PRICE_RATIOS, pr.ratios_of_input(prices))
    ctx.write(PRICE_TIER_RATIOS, pr.tier_uplifts(prices))
