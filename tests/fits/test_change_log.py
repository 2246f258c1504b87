"""The change log: every move dated to its window, classified; the first-party moves per source."""

from __future__ import annotations

from datetime import date

import polars as pl

from econ.fits.change_log import change_log, first_party_changes
from econ.fits.price_ratios import history

D = date


def prices(*rows) -> pl.DataFrame:
    """(source, model, from, to, input, output, snapshot_date, declared, source_commit, last_commit) rows of the
    first-party seller ``acme``'s model ``m`` (canonical ``m``), as ``price_history``."""
    return history(periods(*rows)).with_columns(
        pl.lit("m").alias("canonical_model"), pl.lit(True).alias("is_first_party")
    )


def periods(*rows) -> pl.DataFrame:
    """The same rows as ``prices`` periods of the seller ``acme``."""
    return pl.DataFrame(
        [
            {
                "source": s,
                "provider": "acme",
                "model": k,
                "variant": "standard",
                "tier_min_prompt_tokens": 0,
                "from_date": f,
                "to_date": t,
                "input_usd_per_mtok": i,
                "output_usd_per_mtok": o,
                "cache_read_usd_per_mtok": None,
                "cache_write_5m_usd_per_mtok": None,
                "cache_write_1h_usd_per_mtok": None,
                "snapshot_date": seen,
                "declared": dec,
                "source_commit": c1,
                "last_commit": c2,
            }  # fmt: skip
            for s, k, f, t, i, o, seen, dec, c1, c2 in rows
        ]
    )


def test_a_move_is_dated_between_the_last_snapshot_with_the_old_price_and_the_first_with_the_new():
    log = change_log(
        prices(
            ("llm_prices", "m", D(2026, 6, 26), D(2026, 7, 30), 1.0, 6.0, D(2026, 7, 24), False, "c1", "c3"),
            ("llm_prices", "m", D(2026, 7, 30), None, 0.2, 1.2, D(2026, 8, 6), False, "c4", "c9"),
            ("hand", "m", D(2026, 1, 1), D(2026, 7, 30), 1.0, 6.0, None, True, None, None),
            ("hand", "m", D(2026, 7, 30), None, 0.2, 1.2, None, True, None, None),
        )
    )
    rows = log.filter(pl.col("component") == "input").sort("source")
    assert rows.select(
        "source",
        "window_from_date",
        "window_to_date",
        "exact",
        "window_from_commit",
        "window_to_commit",
        "change_class",
    ).rows() == [  # fmt: skip
        ("hand", D(2026, 7, 30), D(2026, 7, 30), True, None, None, "price move down"),
        ("llm_prices", D(2026, 7, 24), D(2026, 7, 30), False, "c3", "c4", "price move down"),
    ]
    assert rows["change_frac"].to_list() == [-0.8, -0.8]
    merged = first_party_changes(log).filter(pl.col("component") == "input")
    assert merged["agreeing_sources"].to_list() == [2, 2]


def test_a_move_the_other_sources_contradict_is_a_data_fix():
    """genai-prices showed DeepSeek's chat at $0.014 for two weeks while llm-prices had $0.27 throughout: the move to
    $0.27 is genai-prices' own fix, not DeepSeek's price change."""
    log = change_log(
        prices(
            ("genai_prices", "m", D(2025, 6, 22), D(2025, 7, 4), 0.014, 0.028, D(2025, 7, 3), False, "a", "b"),
            ("genai_prices", "m", D(2025, 7, 4), None, 0.27, 1.1, D(2026, 8, 21), False, "c", "d"),
            ("llm_prices", "m", D(2025, 2, 8), None, 0.27, 1.1, D(2026, 8, 6), True, "e", "f"),
        )
    )
    fix = log.filter((pl.col("source") == "genai_prices") & (pl.col("component") == "input"))
    assert fix.select("contradicted", "change_class").rows() == [(True, "suspected data fix")]
    assert first_party_changes(log).filter(pl.col("source") == "genai_prices").height == 0


def test_a_lagging_source_is_not_a_contradiction():
    """A source that saw the cut later than another still saw the old price before it: a real move, dated wider."""
    log = change_log(
        prices(
            ("genai_prices", "m", D(2026, 1, 1), D(2026, 3, 10), 2.0, 8.0, D(2026, 3, 9), False, "a", "b"),
            ("genai_prices", "m", D(2026, 3, 10), None, 1.0, 4.0, D(2026, 8, 21), False, "c", "d"),
            ("litellm", "m", D(2025, 9, 1), D(2026, 3, 1), 2.0, 8.0, D(2025, 9, 1), False, None, None),
            ("litellm", "m", D(2026, 3, 1), None, 1.0, 4.0, D(2026, 11, 20), False, None, None),
        )
    )
    assert set(log["change_class"]) == {"price move down"} and not log["contradicted"].any()


def test_a_change_first_seen_at_a_format_switch_is_a_data_fix_unless_the_source_dates_it():
    """genai-prices' switch to its v2 feed (commit v2) changed what some columns mean, so an undated move first seen
    there is a suspected data fix; a price the new file dates itself (Sonnet 5's 2 -> 3 from 2026-09-01, old and new
    in the same file) is a real move."""
    rows = prices(
        ("genai_prices", "m", D(2026, 1, 1), D(2026, 7, 30), 2.0, 10.0, D(2026, 7, 25), False, "a", "v1"),
        ("genai_prices", "m", D(2026, 7, 30), None, 20.0, 10.0, D(2026, 8, 21), False, "v2", "z"),
        ("genai_prices", "n", D(2026, 1, 1), D(2026, 9, 1), 2.0, 10.0, D(2026, 8, 21), True, "a", "z"),
        ("genai_prices", "n", D(2026, 9, 1), None, 3.0, 15.0, D(2026, 8, 21), True, "v2", "z"),
    )
    log = change_log(rows, format_commits=["v2"]).filter(pl.col("component") == "input").sort("model")
    assert log.select("model", "exact", "format_change", "change_class").rows() == [
        ("m", False, True, "suspected data fix"),
        ("n", True, False, "price move up"),
    ]


def test_a_change_is_read_within_one_key_only_and_a_null_tier_is_one_key():
    """Two keys in a row (the second with a null tier): each key's first period has no previous one and its last no
    next one, so the only changes are each key's own moves, and a's 30x move is a move (read across keys, b's first
    price 1.0 would look like a's move being reverted: a suspected data fix)."""
    rows = prices(
        ("llm_prices", "a", D(2026, 1, 1), D(2026, 2, 1), 1.0, 2.0, D(2026, 1, 5), False, "c1", "c1"),
        ("llm_prices", "a", D(2026, 2, 1), None, 30.0, 2.0, D(2026, 2, 5), False, "c2", "c2"),
        ("llm_prices", "b", D(2026, 1, 1), D(2026, 2, 1), 1.0, 2.0, D(2026, 1, 5), False, "c1", "c1"),
        ("llm_prices", "b", D(2026, 2, 1), None, 1.0, 7.0, D(2026, 2, 5), False, "c2", "c2"),
    ).with_columns(pl.when(pl.col("model") == "b").then(None).otherwise(0).alias("tier_min_prompt_tokens"))
    log = change_log(rows)
    assert sorted(log.select("model", "component", "old_usd_per_mtok", "new_usd_per_mtok", "change_class").rows()) == [
        ("a", "input", 1.0, 30.0, "price move up"),
        ("b", "output", 2.0, 7.0, "price move up"),
    ]


def test_a_source_not_read_since_the_move_does_not_contradict_it():
    """LiteLLM cuts m on 2026-11-20; genai-prices, last read on 2026-08-21, still had the old price then: that says
    nothing of the days after, so the cut is a move. A hand-kept row (the maker's page, holding until changed) that
    still has the old price does contradict it, and so does a price a source dates itself."""
    base = [
        ("litellm", "m", D(2025, 9, 1), D(2026, 11, 20), 2.0, 8.0, D(2025, 9, 1), False, None, None),
        ("litellm", "m", D(2026, 11, 20), None, 1.0, 4.0, D(2026, 11, 20), False, None, None),
    ]
    genai = ("genai_prices", "m", D(2026, 1, 1), None, 2.0, 8.0, D(2026, 8, 21), False, "a", "b")
    hand = ("hand", "m", D(2026, 1, 1), None, 2.0, 8.0, None, True, None, None)
    dated = ("genai_prices", "m", D(2026, 1, 1), None, 2.0, 8.0, D(2026, 8, 21), True, "a", "b")

    def verdict(*others):
        log = change_log(prices(*base, *others)).filter(pl.col("source") == "litellm")
        return set(log.select("change_class", "fix_reason").rows())

    assert verdict(genai) == {("price move down", None)}
    assert verdict(genai, hand) == {("suspected data fix", "contradicted")}
    assert verdict(dated) == {("suspected data fix", "contradicted")}


def test_a_keys_moves_on_one_day_are_one_event():
    """genai-prices raises input and output on 2026-09-01; llm-prices shows the same input rise but lists no output
    price, and the hand-kept page still says the old output. The confirmed input rise makes the output rise a move
    too (one event of the seller); without llm-prices both are contradicted by the page, both data fixes."""
    genai = [
        ("genai_prices", "m", D(2026, 6, 1), D(2026, 9, 1), 2.0, 10.0, D(2026, 8, 21), True, "a", "b"),
        ("genai_prices", "m", D(2026, 9, 1), None, 3.0, 15.0, D(2026, 9, 2), True, "c", "d"),
        ("hand", "m", D(2026, 1, 1), None, 2.0, 10.0, None, True, None, None),
    ]
    llm = [
        ("llm_prices", "m", D(2026, 2, 1), D(2026, 9, 1), 2.0, None, D(2026, 8, 30), True, "e", "f"),
        ("llm_prices", "m", D(2026, 9, 1), None, 3.0, None, D(2026, 9, 3), True, "g", "h"),
    ]

    def classes(log):
        return dict(log.filter(pl.col("source") == "genai_prices").select("component", "change_class").rows())

    assert classes(change_log(prices(*genai, *llm))) == {"input": "price move up", "output": "price move up"}
    assert classes(change_log(prices(*genai))) == {"input": "suspected data fix", "output": "suspected data fix"}
