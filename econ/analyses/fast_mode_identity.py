"""``fast_mode_identity``: price multiple × speed multiple = batch multiple of every current fast variant (lecture a.5).

On the same replica the identity m·s = B0/B1 holds exactly (:func:`econ.physics.fast_mode.batch_ratio`).
"""

from __future__ import annotations

import polars as pl

from econ.analyses.price_columns import PRICE_KEY_COLUMNS
from econ.fits.price_ratios import price_ratio
from econ.physics import fast_mode
from econ.results import Identity, ResultTable
from econ.results import ResultColumn as C

NAME = "fast_mode_identity"
INPUTS = ("inference_prices",)

KEY = ["source", "provider", "model", "tier_min_prompt_tokens"]

FAST_MODE_IDENTITY = ResultTable(
    name="fast_mode_identity",
    grain="source x provider x model x context tier with a fast variant, a published speed ratio and a standard price",
    key=tuple(KEY),
    description=(
        "Fast mode identity price multiple x speed multiple = batch multiple (lecture a.5), for every current fast "
        "variant with a published speed ratio and a standard price"
    ),
    columns=(
        *(c for c in PRICE_KEY_COLUMNS if c.name != "variant"),
        C("input_usd_per_mtok", "float", "USD/MTok", "input", "Fast variant's input price"),
        C("output_usd_per_mtok", "float", "USD/MTok", "input", "Fast variant's output price"),
        C("speed_ratio", "float", "", "input", "Published output speed of the fast variant over standard (s)"),
        C("standard_input_usd_per_mtok", "float", "USD/MTok", "input", "Standard variant's input price, same tier"),
        C("standard_output_usd_per_mtok", "float", "USD/MTok", "input", "Standard variant's output price, same tier"),
        C("input_price_ratio", "float", "", "derived", "Fast over standard input price", price_ratio),
        C("output_price_ratio", "float", "", "derived", "Fast over standard output price (m)", price_ratio),
        C(
            "batch_ratio",
            "float",
            "",
            "derived",
            "B0/B1 = m x s on the same replica: how much smaller the fast batch is (6 x 2.5 = 15)",
            fast_mode.batch_ratio,
        ),
    ),
    identities=(Identity("batch_ratio", "output_price_ratio * speed_ratio"),),
)
TABLES = (FAST_MODE_IDENTITY,)


def identity(prices: pl.DataFrame) -> pl.DataFrame:
    fast = prices.filter((pl.col("variant") == "fast") & pl.col("speed_ratio").is_not_null())
    standard = prices.filter(pl.col("variant") == "standard").select(
        *KEY,
        pl.col("input_usd_per_mtok").alias("standard_input_usd_per_mtok"),
        pl.col("output_usd_per_mtok").alias("standard_output_usd_per_mtok"),
    )
    frame = fast.select(*KEY, "input_usd_per_mtok", "output_usd_per_mtok", "speed_ratio").join(
        standard, on=KEY, how="inner"
    )
    return (
        frame.with_columns(
            price_ratio(pl.col("input_usd_per_mtok"), pl.col("standard_input_usd_per_mtok")).alias("input_price_ratio"),
            price_ratio(pl.col("output_usd_per_mtok"), pl.col("standard_output_usd_per_mtok")).alias(
                "output_price_ratio"
            ),
        )
        .with_columns(fast_mode.batch_ratio(pl.col("output_price_ratio"), pl.col("speed_ratio")).alias("batch_ratio"))
        .sort(KEY)
    )


def run(ctx) -> None:
    ctx.write(FAST_MODE_IDENTITY, identity(ctx.query("select * from inference_prices")))
