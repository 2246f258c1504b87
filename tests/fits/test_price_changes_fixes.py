"""econ diff's classes (``price_changes.classify``) and the change log's (``price_change_log``) are one rule: on a
constructed history, the diff over each single step gives the log's class and reason, and a diff over several steps is a
data fix only when every step is one."""

from __future__ import annotations

from datetime import date, timedelta

import polars as pl

from econ.fits.change_log import change_log
from econ.fits.price_changes import price_changes
from econ.fits.price_ratios import history
from econ.price_values import PRICE_VALUE_COLUMNS
from tests.fits.test_change_log import periods

D = date
BLANK = [c for c in PRICE_VALUE_COLUMNS if c not in ("input_usd_per_mtok", "output_usd_per_mtok")]
ROWS = [  # source, model, from, to, input, output, snapshot_date, declared, source_commit, last_commit
    # DeepSeek-like: genai-prices showed $0.014 for two weeks while llm-prices had $0.27 throughout (contradicted)
    ("genai_prices", "c", D(2025, 6, 22), D(2025, 7, 4), 0.014, 0.028, D(2025, 7, 3), False, "a", "b"),
    ("genai_prices", "c", D(2025, 7, 4), None, 0.27, 1.1, D(2026, 8, 21), False, "c", "d"),
    ("llm_prices", "c", D(2025, 2, 8), None, 0.27, 1.1, D(2026, 8, 6), True, "e", "f"),
    # a move first seen at genai-prices' format switch (commit v2), undated
    ("genai_prices", "f", D(2026, 1, 1), D(2026, 7, 30), 2.0, 10.0, D(2026, 7, 25), False, "a", "v1"),
    ("genai_prices", "f", D(2026, 7, 30), None, 20.0, 10.0, D(2026, 8, 21), False, "v2", "z"),
    # a unit slip (x1000, with a price change: 3.2 per token read as per million) and a revert of more than 10x
    ("litellm", "s", D(2025, 9, 1), D(2026, 3, 1), 3.0, 15.0, D(2025, 9, 1), False, None, None),
    ("litellm", "s", D(2026, 3, 1), None, 3200.0, 15.0, D(2026, 11, 20), False, None, None),
    ("litellm", "r", D(2025, 9, 1), D(2026, 3, 1), 1.0, 4.0, D(2025, 9, 1), False, None, None),
    ("litellm", "r", D(2026, 3, 1), D(2026, 6, 1), 50.0, 4.0, D(2026, 3, 1), False, None, None),
    ("litellm", "r", D(2026, 6, 1), None, 1.0, 4.0, D(2026, 11, 20), False, None, None),
    # a real cut two sources show (one later: a lagging source is no contradiction), then a stale price one map
    # alone goes back to while the other keeps the cut (contradicted)
    ("genai_prices", "p", D(2026, 1, 1), D(2026, 3, 10), 2.0, 8.0, D(2026, 3, 9), False, "a", "b"),
    ("genai_prices", "p", D(2026, 3, 10), None, 1.0, 4.0, D(2026, 8, 21), False, "c", "d"),
    ("litellm", "p", D(2025, 9, 1), D(2026, 3, 1), 2.0, 8.0, D(2025, 9, 1), False, None, None),
    ("litellm", "p", D(2026, 3, 1), D(2026, 6, 1), 1.0, 4.0, D(2026, 3, 1), False, None, None),
    ("litellm", "p", D(2026, 6, 1), None, 2.0, 8.0, D(2026, 11, 20), False, None, None),
]


def _prices() -> pl.DataFrame:
    """The rows above as ``prices`` periods of the first-party seller ``acme`` (every value column, blank but two)."""
    return periods(*ROWS).with_columns(pl.lit(None, pl.Float64).alias(c) for c in BLANK)


def _log(prices: pl.DataFrame) -> pl.DataFrame:
    named = history(prices).with_columns(pl.col("model").alias("canonical_model"), pl.lit(True).alias("is_first_party"))
    return change_log(named, format_commits=["v2"])


NAMES = (
    pl.DataFrame({"source": ["genai_prices", "litellm", "llm_prices"]})
    .join(pl.DataFrame({"model": ["c", "f", "s", "r", "p"]}), how="cross")
    .with_columns(
        pl.lit("acme").alias("provider"), pl.col("model").alias("canonical_model"), pl.col("model").alias("model_name")
    )
)


def test_a_diff_over_one_step_gives_the_change_logs_class_and_reason():
    prices = _prices()
    log = _log(prices)
    assert set(log["fix_reason"].drop_nulls()) == {"contradicted", "format switch", "unit slip", "revert"}
    assert log.filter(pl.col("fix_reason").is_null()).height >= 4  # real moves are there too
    for step in log.iter_rows(named=True):
        day = step["change_date"]
        diff = price_changes(prices, day - timedelta(days=1), day, names=NAMES, log=log).filter(
            (pl.col("source") == step["source"])
            & (pl.col("model") == step["model"])
            & (pl.col("component") == step["component"] + "_usd_per_mtok")
        )
        assert diff.select("change_class", "fix_reason").rows() == [(step["change_class"], step["fix_reason"])], step


def test_a_diff_over_several_steps_is_a_data_fix_only_when_each_step_is_one():
    """litellm's p: a real cut (2 -> 1), then a stale price back (1 -> 2, contradicted by genai-prices' 1): from the
    cut to the end the diff is the stale step, a data fix; over both steps the endpoints are equal, and over the cut
    alone it is a move. genai's c over its contradicted step and nothing else: a data fix with its reason."""
    prices = _prices()
    log = _log(prices)

    def classes(start: date, end: date, model: str, source: str) -> list[tuple]:
        diff = price_changes(prices, start, end, names=NAMES, log=log)
        return (
            diff.filter((pl.col("model") == model) & (pl.col("source") == source) & (pl.col("change") == "changed"))
            .select("component", "change_class", "fix_reason")
            .sort("component")
            .rows()
        )

    assert classes(D(2026, 4, 1), D(2026, 9, 1), "p", "litellm") == [
        ("input_usd_per_mtok", "suspected data fix", "contradicted"),
        ("output_usd_per_mtok", "suspected data fix", "contradicted"),
    ]
    assert classes(D(2026, 1, 1), D(2026, 4, 1), "p", "litellm") == [
        ("input_usd_per_mtok", "price move down", None),
        ("output_usd_per_mtok", "price move down", None),
    ]
    assert classes(D(2025, 12, 1), D(2026, 9, 1), "p", "litellm") == []
    assert classes(D(2025, 6, 25), D(2026, 8, 1), "c", "genai_prices")[0][1:] == ("suspected data fix", "contradicted")
    # without the log only the slip and the revert are seen: the contradicted step reads as a price move
    no_log = price_changes(prices, D(2026, 4, 1), D(2026, 9, 1), names=NAMES).filter(
        (pl.col("model") == "p") & (pl.col("source") == "litellm")
    )
    assert set(no_log["change_class"]) == {"price move up"}
