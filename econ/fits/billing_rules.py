"""How each seller bills what its price list leaves open: ``data/billing_rules.csv`` and ``data/billing_windows.csv``
applied to price rows (pure, vectorised over the rows; the loops run over the few rule rows).

A rule row covers a seller (``providers.seller``, so ``gemini`` and ``google`` are one), optionally a model (its
canonical name or the last segment of its price key, ``*`` a wildcard) and a variant. For each rule a price row takes
the value of the most specific row that covers it on the date (seller, then model, then variant beat ``*`` and blank),
else the rule's default (:data:`econ.billing_terms.RULES`). The rules' meanings are written there; what they do to a
row's prices is :func:`effective_prices`, to a request's price :func:`window_ratios`.
"""

from __future__ import annotations

import re
from datetime import date

import polars as pl
import polars.selectors as cs

from econ.billing_terms import RULES, clock_minutes, day_set
from econ.formula import formula

CACHE_PRICES = (
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "cache_write_12h_usd_per_mtok",
)
WRITE_PRICES = CACHE_PRICES[1:]
PRICES = ("input_usd_per_mtok", "output_usd_per_mtok", *CACHE_PRICES)


def rule_column(name: str) -> str:
    """The column that holds rule ``name``'s value for each row (``rule_tier_boundary``)."""
    return f"rule_{name}"


def with_sellers(rows: pl.DataFrame, providers: pl.DataFrame) -> pl.DataFrame:
    """Add ``seller``: the storefront a provider name sells through (``providers.seller``, else the name itself)."""
    sellers = providers.select("provider", pl.col("seller").alias("_seller"))
    return (
        rows.join(sellers, on="provider", how="left")
        .with_columns(pl.coalesce("_seller", "provider").alias("seller"))
        .drop("_seller")
    )


def _glob(pattern: str) -> str:
    return "^" + ".*".join(re.escape(part) for part in pattern.lower().split("*")) + "$"


def covers(provider: str, model: str | None, variant: str | None = None) -> pl.Expr:
    """Rows a rule or window row of this scope covers (needs ``seller``, ``model``, ``canonical_model`` and, when
    ``variant`` is given, ``variant``)."""
    cond = pl.lit(True) if provider == "*" else pl.col("seller") == provider
    if model:
        pattern = _glob(model)
        key = pl.col("model").str.to_lowercase().str.split("/").list.last()
        cond = cond & (
            pl.col("canonical_model").str.to_lowercase().str.contains(pattern).fill_null(False)
            | key.str.contains(pattern)
        )
    if variant:
        cond = cond & (pl.col("variant") == variant)
    return cond


def _in_period(row: dict, on: pl.Expr) -> pl.Expr:
    cond = pl.lit(True)
    if row["from_date"] is not None:
        cond = cond & (on >= pl.lit(row["from_date"]))
    if row["to_date"] is not None:
        cond = cond & (on < pl.lit(row["to_date"]))
    return cond


def with_rules(rows: pl.DataFrame, rules: pl.DataFrame, *, on: date | str) -> pl.DataFrame:
    """Add ``rule_<name>`` (the value) and ``rule_<name>_id`` (the rule row, null for a default) for every rule.

    ``on`` is the date the rules are read at: a date, or the name of a date column of ``rows`` (each row at its own
    date). ``rows`` needs ``seller``, ``model``, ``canonical_model`` and ``variant``.
    """
    when = pl.col(on) if isinstance(on, str) else pl.lit(on)
    sellers = rows["seller"].unique().to_list()
    rules = rules.filter(pl.col("provider").is_in(["*", *sellers]))  # only the rows that can cover these sellers
    if not isinstance(on, str):
        rules = rules.filter(
            (pl.col("from_date").is_null() | (pl.col("from_date") <= on))
            & (pl.col("to_date").is_null() | (pl.col("to_date") > on))
        )
    specific = rules.with_columns(
        (
            (pl.col("provider") != "*").cast(pl.Int8) * 4
            + pl.col("model").is_not_null().cast(pl.Int8) * 2
            + pl.col("variant").is_not_null().cast(pl.Int8)
        ).alias("_specificity")
    ).sort("_specificity", "rule_id")
    added = []
    for name, rule in RULES.items():
        value, which = pl.lit(rule.default, pl.String), pl.lit(None, pl.String)
        for row in specific.filter(pl.col("rule") == name).iter_rows(named=True):
            cond = covers(row["provider"], row["model"], row["variant"]) & _in_period(row, when)
            value = pl.when(cond).then(pl.lit(row["value"])).otherwise(value)
            which = pl.when(cond).then(pl.lit(row["rule_id"])).otherwise(which)
        added += [value.alias(rule_column(name)), which.alias(rule_column(name) + "_id")]
    return rows.with_columns(added)


@formula(
    "price = null where price = 0 and input > 0 and zero_cache_price = unlisted",
    "data/billing_rules.csv default-zero-unlisted (DeepSeek, Z.ai pages list no write price where LiteLLM writes 0)",
)
def read_zero_prices(rows: pl.DataFrame) -> pl.DataFrame:
    """Cache prices of 0 beside a non-zero input price read as not listed, where ``rule_zero_cache_price`` says so
    (needs :func:`with_rules`)."""
    unlisted = (pl.col(rule_column("zero_cache_price")) == "unlisted") & (pl.col("input_usd_per_mtok") > 0)
    return rows.with_columns(
        pl.when(unlisted & (pl.col(c) == 0)).then(None).otherwise(pl.col(c)).alias(c) for c in CACHE_PRICES
    )


@formula(
    "batch stacks: p_cache,batch = p_cache,std · p_in,batch / p_in,std (when the batch row lists none); "
    "cache_wins: p_read,batch = p_read,std (when the batch row lists none); write price input: p_write = p_in; "
    "single: p_write(5m) = p_write(1h) = the one listed",
    "data/billing_rules.csv (Anthropic, xAI batch pages; Google batch and caching pages; OpenAI prompt caching)",
)
def effective_prices(rows: pl.DataFrame, by: tuple[str, ...] = ()) -> pl.DataFrame:
    """The prices each row bills at after its rules (needs :func:`with_rules`); adds ``derived_note`` (what a rule
    filled or replaced, empty when nothing).

    A batch row's missing cache prices come from the standard row of the same schedule and tier (``source``,
    ``provider``, ``model``, ``tier_min_prompt_tokens``) when ``batch_cache`` is ``stacks`` (times the batch discount)
    and the standard cache-read price, undiscounted, when ``cache_wins`` (a price the batch row lists holds: Google's
    Batch tab prints it per model); ``cache_write_price`` ``input`` bills writes at the input price; ``write_ttl``
    ``single`` makes a row's one listed write price (5-minute or 1-hour) serve the other retention too.
    """
    key = [*by, "source", "provider", "model", "tier_min_prompt_tokens"]  # by: several bills' rows at once
    standard = (
        rows.filter(pl.col("variant") == "standard")
        .select(*key, *(pl.col(c).alias(f"_std_{c}") for c in ("input_usd_per_mtok", *CACHE_PRICES)))
        .unique(subset=key, keep="first")
    )
    out = rows.join(standard, on=key, how="left", nulls_equal=True)
    batch = pl.col("variant") == "batch"
    stacks = batch & (pl.col(rule_column("batch_cache")) == "stacks")
    wins = batch & (pl.col(rule_column("batch_cache")) == "cache_wins")
    discount = pl.col("input_usd_per_mtok") / pl.col("_std_input_usd_per_mtok")
    filled = [
        pl.when(stacks & pl.col(c).is_null()).then(pl.col(f"_std_{c}") * discount).otherwise(pl.col(c)).alias(c)
        for c in CACHE_PRICES
    ]
    notes = [
        pl.when(stacks & pl.col(c).is_null() & pl.col(f"_std_{c}").is_not_null()).then(
            pl.lit(f"batch {c.split('_usd')[0].replace('_', ' ')} = standard x batch discount")
        )
        for c in CACHE_PRICES
    ]
    out = out.with_columns(
        pl.concat_str(notes, separator="; ", ignore_nulls=True).alias("_stacked"),
        (pl.col("cache_read_usd_per_mtok").is_null() & pl.col("_std_cache_read_usd_per_mtok").is_not_null()).alias(
            "_std_read_filled"
        ),
        *filled,
    ).with_columns(
        pl.when(wins & pl.col("cache_read_usd_per_mtok").is_null())
        .then(pl.col("_std_cache_read_usd_per_mtok"))
        .otherwise(pl.col("cache_read_usd_per_mtok"))
        .alias("cache_read_usd_per_mtok")
    )
    as_input = pl.col(rule_column("cache_write_price")) == "input"
    single = pl.col(rule_column("write_ttl")) == "single"
    other = {
        "cache_write_5m_usd_per_mtok": "cache_write_1h_usd_per_mtok",
        "cache_write_1h_usd_per_mtok": "cache_write_5m_usd_per_mtok",
    }
    written = {c: pl.when(as_input).then(pl.col("input_usd_per_mtok")) for c in WRITE_PRICES}
    out = out.with_columns(
        (
            written[c].when(single).then(pl.coalesce(c, other[c])).otherwise(pl.col(c))
            if c in other
            else written[c].otherwise(pl.col(c))
        ).alias(c)
        for c in WRITE_PRICES
    )
    note = pl.concat_str(
        [
            pl.when(pl.col("_stacked") != "").then(pl.col("_stacked")),
            pl.when(wins & pl.col("_std_read_filled")).then(pl.lit("batch cache reads at the standard cache price")),
            pl.when(as_input).then(pl.lit("cache writes at the input price")),
        ],
        separator="; ",
        ignore_nulls=True,
    )
    return out.with_columns(note.alias("derived_note")).drop(cs.starts_with("_std_"), "_stacked")


def window_ratios(pairs: pl.DataFrame, windows: pl.DataFrame) -> pl.DataFrame:
    """Add ``window_ratio`` (the multiplier on every price of the row at the request's time ``at``; 1 outside every
    window or without a time) and ``window_id`` (the window that applied).

    ``pairs``: request x price rows with ``at`` (UTC datetime, null when not given), ``seller``, ``model``,
    ``canonical_model``. A window covers local days ``[from_date, to_date)`` and local times ``[start, end)`` in its
    time zone, on its days of the week.
    """
    timed = pairs.filter(pl.col("at").is_not_null())
    windows = windows.filter(pl.col("provider").is_in(["*", *timed["seller"].unique().to_list()]))
    if windows.height == 0:
        return pairs.with_columns(pl.lit(1.0).alias("window_ratio"), pl.lit(None, pl.String).alias("window_id"))
    # whether each distinct time falls in each window, read once (a workload repeats its times over every price row)
    local = {tz: pl.col("at").dt.convert_time_zone(tz) for tz in windows["timezone"].unique()}
    inside = []
    for row in windows.iter_rows(named=True):
        at = local[row["timezone"]]
        minutes = at.dt.hour().cast(pl.Int32) * 60 + at.dt.minute().cast(pl.Int32)
        inside.append(
            (
                _in_period(row, at.dt.date())
                & at.dt.weekday().is_in(list(day_set(row["days"]) or ()))
                & (minutes >= clock_minutes(row["start_time"]))
                & (minutes < clock_minutes(row["end_time"]))
            ).alias(f"_in_{row['window_id']}")
        )
    times = timed.select("at").unique().with_columns(inside)
    keys = ["seller", "model", "canonical_model"]  # and which rows each window covers, once per distinct key
    covered = (
        pairs.select(keys)
        .unique()
        .with_columns(
            covers(row["provider"], row["model"]).alias(f"_covers_{row['window_id']}")
            for row in windows.iter_rows(named=True)
        )
    )
    ratio, which = pl.lit(1.0), pl.lit(None, pl.String)
    for row in windows.iter_rows(named=True):
        cond = pl.col(f"_covers_{row['window_id']}") & pl.col(f"_in_{row['window_id']}")
        ratio = pl.when(cond).then(pl.lit(row["price_ratio"])).otherwise(ratio)
        which = pl.when(cond).then(pl.lit(row["window_id"])).otherwise(which)
    return (
        pairs.join(times, on="at", how="left")
        .join(covered, on=keys, how="left", nulls_equal=True)
        .with_columns(ratio.fill_null(1.0).alias("window_ratio"), which.alias("window_id"))
        .drop(times.columns[1:], covered.columns[3:])
    )


def window_sellers(windows: pl.DataFrame, on: date) -> pl.DataFrame:
    """(provider, model) scopes with a time-of-day window in force on ``on`` (to say that ``--at`` matters)."""
    live = windows.filter((pl.col("from_date") <= on) & (pl.col("to_date").is_null() | (pl.col("to_date") > on)))
    return live.select("provider", "model").unique()
