"""The billing rules applied to price rows: which rule row covers a row (most specific wins, dates bound it), zero
prices read as unlisted, batch x cache stacking (Anthropic: a batch 1-hour write is 2 x the batch input rate, the
prompt-caching and batch pages), cache_wins (Google's batch tab, Vertex's batch guide), writes at the input price,
one write price for both retentions, and time-of-day windows in the window's time zone (DeepSeek's off-peak hours in
Beijing time). Rates are the sellers' (Sonnet 4.5 $3/$15, 5m $3.75, 1h $6, batch half; Gemini 2.5 Pro $1.25, cache
$0.125; DeepSeek V4 Pro peak $1.32)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import polars as pl
import pytest

from econ.fits import billing_rules as br


def rules(*rows) -> pl.DataFrame:
    keys = ("rule_id", "provider", "model", "variant", "rule", "value", "from_date", "to_date")
    return pl.DataFrame(
        [dict(zip(keys, r)) for r in rows], schema={k: pl.Date if "date" in k else pl.String for k in keys}
    )


def rows(**columns) -> pl.DataFrame:
    base = {
        "seller": ["anthropic"],
        "model": ["claude-sonnet-4-5"],
        "canonical_model": ["claude-sonnet-4.5"],
        "variant": ["standard"],
    }
    return pl.DataFrame(base | columns)


RULES = rules(
    ("all-exceed", "*", None, None, "tier_boundary", "exceeds", None, None),
    ("xai-reach", "xai", None, None, "tier_boundary", "reaches", None, None),
    ("ant-batch", "anthropic", None, "batch", "batch_cache", "stacks", None, None),
    ("gem-wins", "google", "gemini-*", "batch", "batch_cache", "cache_wins", None, None),
    ("retire", "anthropic", "claude-sonnet-4", None, "retired", "refused", date(2026, 6, 15), None),
)


@pytest.mark.parametrize(
    ("seller", "model", "variant", "on", "expected"),
    [
        ("xai", "grok-4.3", "standard", date(2026, 11, 30), {"tier_boundary": "reaches", "batch_cache": "listed"}),
        (
            "anthropic",
            "claude-sonnet-4-5",
            "batch",
            date(2026, 11, 30),
            {"tier_boundary": "exceeds", "batch_cache": "stacks"},
        ),
        ("google", "gemini-2.5-pro", "batch", date(2026, 11, 30), {"batch_cache": "cache_wins"}),
        ("google", "gemma-3", "batch", date(2026, 11, 30), {"batch_cache": "listed"}),  # the glob is gemini-*
        ("anthropic", "claude-sonnet-4", "standard", date(2026, 6, 15), {"retired": "refused"}),
        ("anthropic", "claude-sonnet-4", "standard", date(2026, 6, 14), {"retired": None}),  # not yet
        ("anthropic", "claude-sonnet-4-5", "standard", date(2026, 11, 30), {"retired": None}),  # a name, not a prefix
    ],
)
def test_the_most_specific_rule_in_force_covers_a_row(seller, model, variant, on, expected):
    frame = rows(seller=[seller], model=[model], canonical_model=[model], variant=[variant])
    got = br.with_rules(frame, RULES, on=on).row(0, named=True)
    assert {k: got[br.rule_column(k)] for k in expected} == expected


def test_rules_read_at_each_rows_own_date():
    frame = rows(
        model=["claude-sonnet-4"] * 2,
        canonical_model=["claude-sonnet-4"] * 2,
        seller=["anthropic"] * 2,
        variant=["standard"] * 2,
        from_date=[date(2026, 1, 1), date(2026, 7, 1)],
    )
    assert br.with_rules(frame, RULES, on="from_date")["rule_retired"].to_list() == [None, "refused"]


def test_a_zero_cache_price_beside_an_input_price_reads_as_unlisted():
    frame = rows(
        input_usd_per_mtok=[1.32, 0.0],
        cache_read_usd_per_mtok=[0.044, 0.0],
        cache_write_5m_usd_per_mtok=[0.0, 0.0],
        cache_write_1h_usd_per_mtok=[None, None],
        cache_write_12h_usd_per_mtok=[None, None],
        seller=["deepseek"] * 2,
        model=["a", "b"],
        canonical_model=["a", "b"],
        variant=["standard"] * 2,
    )
    out = br.read_zero_prices(
        br.with_rules(
            frame, rules(("z", "*", None, None, "zero_cache_price", "unlisted", None, None)), on=date(2026, 11, 30)
        )
    )
    assert out["cache_write_5m_usd_per_mtok"].to_list() == [None, 0.0]  # a free row (input 0) keeps its zeros
    assert out["cache_read_usd_per_mtok"].to_list() == [0.044, 0.0]


def schedule(variant_rows, rule_rows) -> pl.DataFrame:
    return br.effective_prices(ruled(variant_rows, rule_rows))


def ruled(variant_rows, rule_rows) -> pl.DataFrame:
    """One schedule's rows (variant, input, cache read, 5-minute and 1-hour write prices) with the rules read."""
    cols = (
        "variant",
        "input_usd_per_mtok",
        "cache_read_usd_per_mtok",
        "cache_write_5m_usd_per_mtok",
        "cache_write_1h_usd_per_mtok",
    )
    frame = pl.DataFrame([dict(zip(cols, r)) for r in variant_rows], schema_overrides={c: pl.Float64 for c in cols[1:]})
    frame = frame.with_columns(
        pl.lit("hand").alias("source"),
        pl.lit("anthropic").alias("provider"),
        pl.lit("anthropic").alias("seller"),
        pl.lit("claude-sonnet-4-5").alias("model"),
        pl.lit("claude-sonnet-4.5").alias("canonical_model"),
        pl.lit(0).alias("tier_min_prompt_tokens"),
        pl.lit(None, pl.Float64).alias("cache_write_12h_usd_per_mtok"),
    )
    return br.with_rules(frame, rule_rows, on=date(2026, 11, 30))


def test_batch_stacks_with_the_cache_multipliers():
    out = schedule([("standard", 3, 0.3, 3.75, 6), ("batch", 1.5, 0.15, 1.875, None)], RULES)
    batch = out.filter(pl.col("variant") == "batch").row(0, named=True)
    assert batch["cache_write_1h_usd_per_mtok"] == pytest.approx(3.0)  # 2 x the batch input rate ($1.50)
    assert batch["cache_write_5m_usd_per_mtok"] == 1.875 and "standard x batch discount" in batch["derived_note"]


def test_cache_wins_fills_only_a_batch_row_without_a_cache_price():
    wins = rules(("w", "anthropic", None, "batch", "batch_cache", "cache_wins", None, None))
    missing = schedule([("standard", 1.25, 0.125, None, None), ("batch", 0.625, None, None, None)], wins)
    listed = schedule([("standard", 0.75, 0.075, None, None), ("batch", 0.375, 0.0375, None, None)], wins)
    assert missing.filter(pl.col("variant") == "batch")["cache_read_usd_per_mtok"].item() == 0.125
    assert listed.filter(pl.col("variant") == "batch")["cache_read_usd_per_mtok"].item() == 0.0375


def test_several_bills_look_up_a_batch_rows_standard_row_within_their_own_bill():
    """Two bills of one schedule key at once (two dates: the input price doubled, the cache read did not), kept
    apart by ``by``: each batch row stacks on its own bill's standard row, as it does billed alone; without ``by``
    the later bill's batch row would read the earlier standard row."""
    early = ruled([("standard", 3, 0.3, 3.75, 6), ("batch", 1.5, None, None, None)], RULES)
    late = ruled([("standard", 6, 0.3, 7.5, 12), ("batch", 3.0, None, None, None)], RULES)
    alone = pl.concat([br.effective_prices(early), br.effective_prices(late)])
    both = pl.concat([early.with_columns(pl.lit(0).alias("_ask")), late.with_columns(pl.lit(1).alias("_ask"))])
    assert br.effective_prices(both, by=("_ask",)).drop("_ask").equals(alone)
    assert not br.effective_prices(both).drop("_ask").equals(alone)


def test_writes_at_the_input_price_and_one_write_price_for_both_retentions():
    as_input = schedule(
        [("standard", 2.5, 0.25, 0.25, None)],
        rules(("i", "anthropic", None, None, "cache_write_price", "input", None, None)),
    )
    assert as_input.row(0, named=True)["cache_write_5m_usd_per_mtok"] == 2.5
    single = schedule(
        [("standard", 2, 0.1, 2.5, None)], rules(("s", "anthropic", None, None, "write_ttl", "single", None, None))
    )
    assert single.row(0, named=True)["cache_write_1h_usd_per_mtok"] == 2.5
    both = schedule(
        [("standard", 3, 0.3, 3.75, 6)], rules(("s", "anthropic", None, None, "write_ttl", "single", None, None))
    )
    assert both.row(0, named=True)["cache_write_1h_usd_per_mtok"] == 6  # a listed price is never overwritten


WINDOWS = pl.DataFrame(
    {
        "window_id": ["weekday-evening", "weekend"],
        "provider": ["deepseek", "deepseek"],
        "model": [None, None],
        "from_date": [date(2026, 8, 17), date(2026, 8, 23)],
        "to_date": [None, None],
        "timezone": ["Asia/Shanghai", "Asia/Shanghai"],
        "days": ["mon-fri", "sat-sun"],
        "start_time": ["18:00", "00:00"],
        "end_time": ["24:00", "24:00"],
        "price_ratio": [0.5, 0.5],
    },
    schema_overrides={"model": pl.String},
)


@pytest.mark.parametrize(
    ("at", "ratio"),
    [
        (datetime(2026, 12, 1, 9, 59, tzinfo=UTC), 1.0),  # Tuesday 17:59 in Beijing
        (datetime(2026, 12, 1, 10, 0, tzinfo=UTC), 0.5),  # 18:00: the window starts
        (datetime(2026, 12, 1, 15, 59, tzinfo=UTC), 0.5),  # 23:59
        (datetime(2026, 11, 28, 3, 0, tzinfo=UTC), 0.5),  # Saturday 11:00: the weekend window
        (datetime(2026, 8, 22, 3, 0, tzinfo=UTC), 1.0),  # a Saturday before the weekend rule started
        (None, 1.0),  # no time given: the listed price
    ],
)
def test_windows_are_read_in_their_time_zone(at, ratio):
    pairs = rows(seller=["deepseek"], model=["deepseek-v4-pro"], canonical_model=["deepseek-v4-pro"]).with_columns(
        pl.Series("at", [at], dtype=pl.Datetime("us", "UTC"))
    )
    assert br.window_ratios(pairs, WINDOWS)["window_ratio"].item() == ratio
