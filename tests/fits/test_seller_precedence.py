"""One price per seller: the schedule known to have taken effect latest holds, then the most authoritative source,
then the shortest key; a price a map shows from its first appearance has no known date; regions, hosts and product
tags of a key are separate offers, and a key the naming rules leave unmapped joins the seller's key of the same name."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from econ.fits import seller_precedence as sp


def ranked(*schedules) -> pl.DataFrame:
    keys = ("schedule", "source", "model", "from_date", "prev_snapshot_date")
    frame = pl.DataFrame(
        [dict(zip(keys, s)) for s in schedules],
        schema={
            "schedule": pl.String,
            "source": pl.String,
            "model": pl.String,
            "from_date": pl.Date,
            "prev_snapshot_date": pl.Date,
        },
    )
    frame = frame.with_columns(pl.lit("anthropic||claude-sonnet-4.5|standard").alias("offer"), sp.price_date())
    return sp.rank_schedules(frame)


def holder(frame: pl.DataFrame) -> str:
    return frame.filter(pl.col("offer_rank") == 1)["schedule"].item()


def test_a_hand_row_beats_a_map_that_only_first_saw_its_price():
    got = ranked(
        ("h", "hand", "claude-sonnet-4-5", date(2025, 9, 29), None),
        ("l", "litellm", "claude-sonnet-4-5", date(2026, 11, 20), None),
    )
    assert holder(got) == "h" and got.filter(pl.col("schedule") == "l")["held_by"].item() == "h"


def test_a_change_a_map_saw_after_the_hand_price_took_effect_supersedes_it():
    got = ranked(
        ("h", "hand", "m", date(2025, 5, 22), None), ("l", "litellm", "m", date(2026, 11, 20), date(2025, 9, 1))
    )  # old price still seen on 2025-09-01
    assert holder(got) == "l"


def test_a_change_that_may_predate_the_hand_price_leaves_it_to_authority():
    got = ranked(
        ("h", "hand", "m", date(2025, 9, 29), None), ("l", "litellm", "m", date(2026, 11, 20), date(2025, 9, 1))
    )
    assert holder(got) == "h"


def test_between_undated_prices_authority_then_the_shortest_key():
    assert (
        holder(
            ranked(
                ("o", "openrouter", "m", date(2026, 8, 19), None),
                ("l", "litellm", "m-20250929", date(2026, 11, 20), None),
            )
        )
        == "l"
    )
    assert (
        holder(
            ranked(
                ("a", "litellm", "claude-sonnet-4-5-20250929", date(2026, 11, 20), None),
                ("b", "litellm", "claude-sonnet-4-5", date(2026, 11, 20), None),
            )
        )
        == "b"
    )


@pytest.mark.parametrize(
    ("key", "region"),
    [
        ("eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "eu"),
        ("anthropic.claude-sonnet-4-5-20250929-v1:0", ""),  # Bedrock's :0 is a version, not a product
        ("bedrock/us-gov-east-1/anthropic.claude-sonnet-4-5", "us-gov-east-1"),
        ("azure/global/gpt-5.4", "global"),
        ("azure_ai/FW-DeepSeek-V4-Pro", "fw"),
        ("empiriolabs/deepseek-v4-pro:variant2", "variant2"),
        ("claude-sonnet-4-5", ""),
    ],
)
def test_the_region_host_or_tag_a_key_names(key, region):
    assert pl.DataFrame({"model": [key]}).select(sp.region()).item() == region


def test_an_unmapped_key_joins_the_sellers_key_of_the_same_name():
    frame = pl.DataFrame(
        {
            "seller": ["deepseek"] * 3,
            "variant": ["standard"] * 3,
            "model": ["deepseek-chat", "deepseek/deepseek-chat", "deepseek-v4-pro"],
            "canonical_model": ["deepseek-v3.2", None, "deepseek-v4-pro"],
        }
    )
    assert frame.select(sp.offer())["offer"].to_list() == [
        "deepseek||deepseek-v3.2|standard",
        "deepseek||deepseek-v3.2|standard",
        "deepseek||deepseek-v4-pro|standard",
    ]
