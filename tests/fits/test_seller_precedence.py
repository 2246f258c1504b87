"""One price per seller: the schedule known to have taken effect latest holds, then the most authoritative source,
then the shortest key; a price a map shows from its first appearance has no known date; regions, hosts and product
tags of a key are separate offers, and a key the naming rules leave unmapped joins the seller's key of the same name.
The same rule day by day over the price history: which source holds on each day, and the conflicts listed."""

from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from econ.fits import seller_precedence as sp


def ranked(*schedules) -> pl.DataFrame:
    keys = ("schedule", "source", "model", "from_date", "prev_snapshot_date", "declared", "price_change")
    rows = [
        (*s[:5], s[5] if len(s) > 5 else False, s[6] if len(s) > 6 else ("move" if s[4] else "first"))
        for s in schedules
    ]
    frame = pl.DataFrame(
        [dict(zip(keys, r)) for r in rows],
        schema={
            "schedule": pl.String,
            "source": pl.String,
            "model": pl.String,
            "from_date": pl.Date,
            "prev_snapshot_date": pl.Date,
            "declared": pl.Boolean,
            "price_change": pl.String,
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


def test_a_history_dates_a_price_by_its_own_date_where_it_gives_one():
    """genai-prices dates a cut itself (declared): that day, not the commit that showed it, is the price's date."""
    got = ranked(
        ("h", "hand", "m", date(2026, 7, 1), None),
        ("g", "genai_prices", "m", date(2026, 7, 30), date(2026, 6, 20), True),  # the source's own date
        ("l", "llm_prices", "m", date(2026, 7, 30), date(2026, 7, 24)),  # observed: after 2026-07-24
    )
    dates = dict(got.select("schedule", "price_date").iter_rows())
    assert dates == {"h": date(2026, 7, 1), "g": date(2026, 7, 30), "l": date(2026, 7, 25)}
    assert holder(got) == "g"


def test_a_move_classed_as_a_suspected_data_fix_has_no_date():
    """llm-prices put o3 back to its launch price in 2025-10 (after OpenAI's cut, which genai-prices and LiteLLM kept):
    contradicted by the other sources, that move dates nothing, and authority decides."""
    got = ranked(
        ("g", "genai_prices", "o3", date(2025, 6, 22), None),  # first seen at $2
        ("s", "llm_prices", "o3", date(2025, 10, 10), date(2025, 10, 6), False, "data fix"),  # $10 again
    )
    assert got.filter(pl.col("schedule") == "s")["price_date"].item() is None and holder(got) == "g"


def test_the_replayed_histories_rank_after_the_maps():
    undated = [("o", "openrouter", "m"), ("l", "litellm", "m"), ("s", "llm_prices", "m"), ("g", "genai_prices", "m")]
    got = ranked(*((k, src, m, date(2026, 1, 1), None) for k, src, m in undated))
    assert got.sort("offer_rank")["schedule"].to_list() == ["l", "o", "g", "s"]


def periods(*rows) -> pl.DataFrame:
    """(source, key, from, to, input, output, prev_snapshot_date, declared) rows of one seller's offer."""
    frame = pl.DataFrame(
        schema_overrides={"prev_snapshot_date": pl.Date, "to_date": pl.Date},
        data=[
            {
                "source": s,
                "provider": "acme",
                "model": k,
                "canonical_model": "m",
                "variant": "standard",
                "tier_min_prompt_tokens": 0,
                "from_date": f,
                "to_date": t,
                "input_usd_per_mtok": i,
                "output_usd_per_mtok": o,
                "prev_snapshot_date": prev,
                "declared": s == "hand" or dated,
                "price_change": "move" if prev else "first",
            }  # fmt: skip
            for s, k, f, t, i, o, prev, dated in rows
        ],
    )
    return frame.with_columns(
        pl.lit("acme||m|standard").alias("offer"), pl.lit("acme").alias("seller"), sp.price_date()
    )


D = date


def test_day_by_day_the_price_known_to_have_taken_effect_latest_holds():
    frame = periods(
        ("hand", "m", D(2026, 1, 1), None, 2.0, 8.0, None, True),
        ("litellm", "acme/m", D(2025, 9, 1), D(2026, 3, 1), 3.0, 9.0, None, False),  # first seen: undated
        ("litellm", "acme/m", D(2026, 3, 1), None, 1.0, 4.0, D(2026, 2, 20), False),  # a cut seen after 2026-02-20
        ("llm_prices", "m", D(2026, 2, 1), None, 2.0, 8.0, None, False),
    )
    ranked_ = sp.prevailing(frame).sort("piece_from", "rank")
    holds = ranked_.filter(pl.col("rank") == 1).select("piece_from", "source", "candidates", "conflict").rows()
    assert holds == [
        (D(2025, 9, 1), "litellm", 1, False),  # alone
        (D(2026, 1, 1), "hand", 2, True),  # dated beats first seen
        (D(2026, 2, 1), "hand", 3, True),
        (D(2026, 3, 1), "litellm", 3, True),  # the cut took effect after the hand row's date
    ]
    out = sp.conflicts(ranked_, ["seller", "canonical_model", "variant"])
    assert out.select(
        "from_date", "to_date", "source", "held_by", "other_source", "other_input_usd_per_mtok"
    ).rows() == [
        (D(2026, 1, 1), D(2026, 3, 1), "hand", "date", "litellm", 3.0),
        (D(2026, 3, 1), None, "litellm", "date", "hand", 2.0),
        (D(2026, 3, 1), None, "litellm", "date", "llm_prices", 2.0),
    ]  # llm_prices agrees with the hand row before the cut: no conflict listed for it then


def test_between_undated_sources_authority_decides_and_says_so():
    frame = periods(
        ("litellm", "acme/m", D(2026, 1, 1), None, 2.0, 8.0, None, False),
        ("genai_prices", "m", D(2026, 1, 1), None, 3.0, 8.0, None, False),
    )
    out = sp.conflicts(sp.prevailing(frame), ["seller", "canonical_model", "variant"])
    assert out.select("source", "held_by", "other_source").rows() == [("litellm", "authority", "genai_prices")]


def test_a_period_in_which_no_published_price_moved_keeps_the_date_of_the_one_before():
    """genai-prices listed Sonnet 4.5's 1-hour cache write only from 2026-07-30: its prices took effect when first seen
    (no date), so the hand-kept row of 2026-04-30 (the 1M beta's end) still holds; a listing after a dated move keeps
    that move's date, and a data fix breaks the chain."""
    frame = pl.DataFrame(
        {
            "source": ["genai_prices"] * 2 + ["litellm"] * 4,
            "model": ["s"] * 2 + ["m"] * 4,
            "from_date": [D(2025, 9, 29), D(2026, 7, 30), D(2025, 9, 1), D(2026, 1, 1), D(2026, 3, 1), D(2026, 5, 1)],
            "prev_snapshot_date": [None, D(2026, 7, 25), None, D(2025, 12, 1), D(2026, 2, 1), D(2026, 4, 1)],
            "declared": [False] * 6,
            "price_change": ["first", "listing", "first", "move", "listing", "data fix"],
        }
    )
    got = frame.select(sp.price_date(["source", "model"]))["price_date"].to_list()
    assert got == [None, None, None, D(2025, 12, 2), D(2025, 12, 2), None]
