"""The bill of a workload at every seller of a model, with the sellers' billing rules (frames in, frames out).

``econ cost``, the worked examples of the report (``billing_examples``) and the conformance suite call :func:`bill`
on the same frames: ``price_current`` at the date, ``billing_rules``, ``billing_windows`` and ``providers``. Steps:

1. the model's rows (canonical name, else price key); a model a seller retired and redirects (``billed_as``) is billed
   at the target's rows of that seller;
2. the rules of each row (:func:`econ.fits.billing_rules.with_rules`) and the prices they imply
   (:func:`~econ.fits.billing_rules.effective_prices`);
3. one schedule per offer holds (:func:`econ.fits.seller_precedence.rank_schedules`: by date, then by authority;
   the replayed histories of genai-prices and llm-prices are sources like the others);
4. each request is billed at each schedule (:mod:`econ.fits.request_cost`, with the time-of-day windows); a schedule
   that would refuse a request (prompt above ``max_input_tokens``, a retired model) is refused, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from econ.analyses.billing_conflicts import conflicts
from econ.analyses.billing_rows import BillingTables, seller_rows, seller_rows_many
from econ.errors import EconError
from econ.fits import billing_rules as br
from econ.fits import request_cost as rc
from econ.fits import seller_precedence as sp
from econ.formula import formula

SCHEDULE = ["source", "provider", "model", "variant"]
COMPONENTS = ("input_usd", "cached_input_usd", "cache_write_usd", "output_usd", "cache_storage_usd")
PAIR_COLUMNS = (
    "schedule",
    "seller",
    "model",
    "canonical_model",
    "tier_min_prompt_tokens",
    "max_input_tokens",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "cache_storage_usd_per_mtok_hour",
    "rule_tier_boundary",
    "rule_unlisted_cache_write",
    "rule_retired",
    "rule_retired_id",
)


@dataclass
class Bill:
    """Every schedule of the model with its status (billed, refused, superseded), cost and reasons; notes."""

    name: str
    schedules: pl.DataFrame
    notes: list[str]


def _price_row_label() -> pl.Expr:
    """Where a schedule's price is written: ``prices.csv:12 from 2026-04-30``, ``litellm 2026-11-20`` (the newest
    snapshot that carried it) or, for a replayed history, ``llm_prices 2026-08-06 b163763f`` (that snapshot's
    commit)."""
    hand = pl.concat_str(
        [
            pl.lit("prices.csv:"),
            pl.col("source_line").cast(pl.String),
            pl.lit(" from "),
            pl.col("from_date").cast(pl.String),
        ]
    )
    observed = pl.concat_str(
        [
            pl.col("source"),
            pl.lit(" "),
            pl.col("snapshot_date").cast(pl.String),
            pl.when(pl.col("last_commit").is_not_null()).then(pl.lit(" ") + pl.col("last_commit").str.slice(0, 8)),
        ],
        ignore_nulls=True,
    )
    return pl.when(pl.col("source") == "hand").then(hand).otherwise(observed).alias("price_row")


def _schedules(rows: pl.DataFrame) -> pl.DataFrame:
    first = rows.sort("tier_min_prompt_tokens")
    per = first.group_by("schedule", maintain_order=True).agg(
        *(
            pl.col(c).first()
            for c in (
                *SCHEDULE,
                "seller",
                "offer",
                "from_date",
                "snapshot_date",
                "source_line",
                "last_commit",
                "price_date",
                "is_first_party",
                "redirect_note",
                "rule_retired",
                "rule_retired_id",
                "derived_note",
            )
        ),
        pl.col("max_input_tokens").max(),
    )
    return sp.rank_schedules(per.with_columns(_price_row_label()))  # price_date: price_history's


def _offer_limits(schedules: pl.DataFrame) -> pl.DataFrame:
    """Per offer, the context limit of the first schedule by the rule that publishes one, and its source: the limit is
    the seller's, whichever source lists the price (the replayed histories list none)."""
    return (
        schedules.filter(pl.col("max_input_tokens").is_not_null())
        .sort("offer_rank")
        .group_by("offer", maintain_order=True)
        .agg(pl.col("max_input_tokens").first().alias("_limit"), pl.col("source").first().alias("_limit_source"))
    )


def _with_offer_limit(frame: pl.DataFrame, limits: pl.DataFrame) -> pl.DataFrame:
    """Rows of ``frame`` without a context limit take their offer's (:func:`_offer_limits`), said in ``limit_note``."""
    taken = pl.col("max_input_tokens").is_null() & pl.col("_limit").is_not_null()
    return (
        frame.join(limits, on="offer", how="left")
        .with_columns(
            pl.when(taken).then(pl.format("context limit from {}", "_limit_source")).alias("limit_note"),
            pl.coalesce("max_input_tokens", "_limit").alias("max_input_tokens"),
        )
        .drop("_limit", "_limit_source")
    )


def _refusal(pairs: pl.DataFrame) -> pl.Expr:
    limit = pl.col("max_input_tokens")
    over = limit.is_not_null() & (pl.col("prompt_tokens") > limit)
    retired = pl.col("rule_retired") == "refused"
    return (
        pl.when(retired)
        .then(pl.concat_str([pl.lit("retired (billing rule "), pl.col("rule_retired_id"), pl.lit(")")]))
        .when(over)
        .then(
            pl.format(
                "prompt of {} tokens is above the seller's limit of {} (max_input_tokens)",
                pl.col("prompt_tokens"),
                limit,
            )
        )
        .alias("refusal")
    )


def _window_note(rows: pl.DataFrame, tables: BillingTables, timed: bool) -> list[str]:
    """Which sellers of the rows bill time-of-day prices on the date, and whether the requests gave a time."""
    live = br.window_sellers(tables.windows, tables.as_of)
    how = (
        "each request is billed at its time"
        if timed
        else "the listed (peak) prices are billed; give --at (or an at column) for the time of day"
    )
    hit = {
        f"{p} bills time-of-day prices (billing_windows): {how}"
        for p, m in live.iter_rows()
        if rows.filter(br.covers(p, m)).height
    }
    return sorted(hit)


def bill(
    tables: BillingTables,
    *,
    model: str,
    requests: pl.DataFrame,
    provider: str | None = None,
    source: str | None = None,
    variant: str = "standard",
    include_free: bool = False,
    by_request: bool = False,
) -> Bill:
    """Bill ``requests`` (``econ.analyses.cost_command.single_request`` or ``read_requests``) at every schedule of
    ``model``; see the module docstring. One row per schedule with the workload's totals, or with ``by_request`` one
    per schedule and request (column ``request``). Raises :class:`EconError` for an unknown model, seller or
    variant."""
    rows, name, free = _billable(tables, model, provider, source, variant, include_free)
    rows = rows.with_columns(pl.concat_str(SCHEDULE, separator="|").alias("schedule"), sp.offer())
    timed = "at" in requests.columns and requests["at"].is_not_null().any()
    out = _billed(rows, requests, tables.windows, by_request)
    notes = _window_note(rows, tables, timed)
    if free and not include_free:
        notes.append(f"{free} free or placeholder price{'s' if free != 1 else ''} left out (--include-free shows them)")
    return Bill(name, out, notes)


def _billable(
    tables: BillingTables, model: str, provider: str | None, source: str | None, variant: str, include_free: bool
) -> tuple[pl.DataFrame, str, int]:
    """The rows a bill reads (:func:`~econ.analyses.billing_rows.seller_rows`, free ones left out unless asked for),
    the name they go by and how many free schedules were left out; an error where none is left."""
    rows, name = seller_rows(tables, model, provider, source, variant)
    return _without_free(rows, name, tables, variant, include_free)


def _without_free(
    rows: pl.DataFrame, name: str, tables: BillingTables, variant: str, include_free: bool
) -> tuple[pl.DataFrame, str, int]:
    free = rows.filter(pl.col("is_free")).select(SCHEDULE).unique().height
    if not include_free:
        rows = rows.filter(~pl.col("is_free"))
    if rows.height == 0:
        raise EconError(
            f"every {variant} price of {name} on {tables.as_of} is free or a placeholder", "pass --include-free"
        )
    return rows, name, free


def _billed(
    rows: pl.DataFrame, requests: pl.DataFrame, windows: pl.DataFrame, by_request: bool, ask: str | None = None
) -> pl.DataFrame:
    """Every schedule of ``rows`` (with ``schedule`` and ``offer``) with its status, cost and note for ``requests``
    (per request with ``by_request``). With ``ask`` (a column of both frames), several bills at once: a request meets
    only the rows of its own ask, whose schedule and offer ids the caller made distinct."""
    schedules = _schedules(rows)
    limits = _offer_limits(schedules)
    rows, schedules = (_with_offer_limit(f, limits) for f in (rows, schedules))
    reqs = (
        requests
        if "at" in requests.columns
        else requests.with_columns(pl.lit(None, pl.Datetime("us", "UTC")).alias("at"))
    )
    # what a bill reads of a row (a workload repeats each row per request)
    priced = rows.select(*PAIR_COLUMNS, *([ask] if ask else []))
    keys = ["schedule", "request"] if by_request else ["schedule"]
    parts = [_totals(chunk, priced, windows, keys, ask) for chunk in reqs.iter_slices(CHUNK_REQUESTS)]
    totals = pl.concat(parts)
    if len(parts) > 1 and not by_request:  # a request is in one chunk: only a schedule's totals span chunks
        totals = (
            totals.group_by(keys, maintain_order=True)
            .agg(
                *(pl.col(c).sum() for c in ("requests", *COMPONENTS, "cost_usd", "refused_requests")),
                pl.col("tier_min_prompt_tokens").max(),
                pl.col("_unpriced").any(),
                pl.col("refusal").drop_nulls().first(),
                pl.col("note", "windows").list.explode(keep_nulls=False, empty_as_null=False).unique(),
            )
            .select(parts[0].columns)
        )
    totals = totals.with_columns(
        pl.col("note").list.sort().list.join("; "), pl.col("windows").list.sort().list.join(", ")
    )
    out = schedules.join(totals, on="schedule", how="left").with_columns(
        pl.when(pl.col("_unpriced")).then(None).otherwise(pl.col("cost_usd")).alias("cost_usd"),
        pl.when(pl.col("offer_rank") > 1)
        .then(pl.lit("superseded"))
        .when(pl.col("refusal").is_not_null())
        .then(pl.lit("refused"))
        .otherwise(pl.lit("billed"))
        .alias("status"),
    )
    held = out.select(
        pl.col("schedule").alias("held_by"), pl.format("{} {}", "source", "price_row").alias("held_by_row")
    )
    out = out.join(held, on="held_by", how="left")
    out = (
        out.join(conflicts(out, keys[1:]), on=["offer", *keys[1:]], how="left")
        .with_columns(
            pl.when(pl.col("offer_rank") == 1).then(pl.col("conflict")).alias("conflict"),
            pl.when(pl.col("refusal").is_not_null()).then(None).otherwise(pl.col("cost_usd")).alias("cost_usd"),
            *(pl.when(pl.col("refusal").is_not_null()).then(None).otherwise(pl.col(c)).alias(c) for c in COMPONENTS),
        )
        .with_columns(
            pl.concat_str(
                [
                    pl.when(pl.col("_unpriced")).then(pl.lit("a price these requests need is not published")),
                    pl.when(pl.col("note") != "").then(pl.col("note")),
                    pl.when(pl.col("derived_note") != "").then(pl.col("derived_note")),
                    pl.when(pl.col("windows") != "").then(
                        pl.concat_str([pl.lit("time-of-day window "), pl.col("windows")])
                    ),
                    pl.col("redirect_note"),
                    pl.col("limit_note"),
                    pl.when(pl.col("max_input_tokens").is_null()).then(pl.lit("no published context limit")),
                    pl.when(pl.col("status") == "superseded").then(
                        pl.concat_str([pl.lit("superseded by "), pl.col("held_by_row")])
                    ),
                ],
                separator="; ",
                ignore_nulls=True,
            ).alias("note")
        )
    )
    out = out.with_columns(pl.col(c).round_sig_figs(MONEY_DIGITS) for c in ("cost_usd", *COMPONENTS))
    order = pl.col("status").replace_strict({"billed": 0, "refused": 1, "superseded": 2}, return_dtype=pl.Int8)
    return out.sort(order, pl.col("cost_usd"), "provider", "model", nulls_last=True)


MONEY_DIGITS = 12
"""Significant digits of a bill: a price times tokens in binary floating point carries noise past the 15th digit
(2,000 tokens at $24.75/MTok is 0.049499999999999995), which csv and json would print; 12 digits keep every cent of
any bill below $10^10 and drop it."""


CHUNK_REQUESTS = 20_000
"""Requests billed at once: every request meets every price row of the model, so a workload of 100,000 requests took
1.6 GB in one piece; in pieces of this size the memory stays flat and the time is the same."""


def _totals(
    requests: pl.DataFrame, priced: pl.DataFrame, windows: pl.DataFrame, keys: list[str], ask: str | None = None
) -> pl.DataFrame:
    """Each schedule's (or schedule and request's) totals of ``requests``, its notes and windows as lists."""
    pairs = br.window_ratios(rc.billed_tier(requests, priced, on=ask), windows)
    billed = rc.request_costs(pairs).with_columns(_refusal(pairs))
    scaled = billed.with_columns(pl.col(c) * pl.col("requests") for c in (*COMPONENTS, "cost_usd"))
    return scaled.group_by(keys, maintain_order=True).agg(
        pl.col("requests").sum(),
        pl.col("tier_min_prompt_tokens").max(),
        *(pl.col(c).sum() for c in COMPONENTS),
        pl.col("cost_usd").sum(),
        pl.col("cost_usd").is_null().any().alias("_unpriced"),
        pl.col("refusal").drop_nulls().first(),
        (pl.col("refusal").is_not_null().cast(pl.Int64) * pl.col("requests")).sum().alias("refused_requests"),
        pl.col("note").filter(pl.col("note") != "").unique(),
        pl.col("window_id").drop_nulls().unique().alias("windows"),
    )


BILLED = ("cost_usd", "refusal", "price_row", "note")


@dataclass(frozen=True)
class Ask:
    """One seller's bill of some requests (:func:`bill_each`'s arguments)."""

    tables: BillingTables
    provider: str
    model: str
    variant: str
    requests: pl.DataFrame
    source: str | None = None


@formula(
    "bill = Σ over the request's lines of tokens × the holding schedule's rate at the tier the prompt reaches, after "
    "the seller's billing rules and time-of-day windows; null with a reason where the seller refuses the request",
    "econ.analyses.billing (data/billing_rules.csv, data/billing_windows.csv, the sellers' pages they quote)",
)
def bill_each(
    tables: BillingTables, *, provider: str, model: str, variant: str, requests: pl.DataFrame, source: str | None = None
) -> list[dict]:
    """Each request at the holding schedule of one seller (its main offer: no region or tag): ``cost_usd`` (null when
    refused or unpriced), ``refusal``, ``price_row``, ``note``, in the order of ``requests``; a model the seller does
    not sell (or retired with no row left) is a refusal with the error's words."""
    return bill_asks([Ask(tables, provider, model, variant, requests, source)])[0]


def bill_asks(asks: list[Ask]) -> list[list[dict]]:
    """:func:`bill_each` of every ask, in one pass over their rows (the worked examples bill ~30 sellers' models, each
    on its own date: one pass of the bill's ~100 frame operations each was most of their time). Each ask's rows are
    its own (:func:`~econ.analyses.billing_rows.seller_rows_many`: at its date, with its rules), its schedule and
    offer ids prefixed by its place, and a request meets only its own ask's rows, so each bill is the one
    :func:`bill` gives alone. The asks share one ``billing_rules`` and one ``billing_windows`` frame."""
    got: list[list[dict] | None] = [None] * len(asks)
    rows, requests = [], []
    found = seller_rows_many([(a.tables, a.model, a.provider, a.source, a.variant) for a in asks])
    for i, (a, sold) in enumerate(zip(asks, found, strict=True)):
        if a.tables.windows is not asks[0].tables.windows:
            raise ValueError("bill_asks: the asks read different billing_windows")
        try:
            if isinstance(sold, EconError):
                raise sold
            mine, _, _ = _without_free(*sold, a.tables, a.variant, include_free=False)
        except EconError as e:
            got[i] = [dict.fromkeys(BILLED) | {"refusal": str(e)} for _ in range(a.requests.height)]
            continue
        rows.append(mine.with_columns(pl.lit(i).alias("_ask")))
        requests.append(a.requests.with_columns(pl.lit(i).alias("_ask")))
    if rows:
        place = pl.col("_ask").cast(pl.String)  # each ask's schedules and offers, named apart in one frame
        rows = (
            pl.concat(rows, how="diagonal_relaxed")
            .with_columns(pl.concat_str([place, *SCHEDULE], separator="|").alias("schedule"), sp.offer("_ask"))
            .with_columns(pl.concat_str([place, "offer"], separator="|").alias("offer"))
        )
        out = _billed(
            rows,
            pl.concat(requests, how="diagonal_relaxed"),
            asks[0].tables.windows,
            by_request=True,
            ask="_ask",
        )
        parts = pl.col("offer").str.split("|")  # the ask's place, then the offer: seller, region, model, variant
        held = out.filter(pl.col("offer_rank") == 1).with_columns(
            parts.list.first().cast(pl.Int64).alias("_ask"), (parts.list.get(2) != "").alias("_tagged")
        )
        main = held.sort("_ask", "_tagged", "offer").group_by("_ask", maintain_order=True).agg(pl.col("offer").first())
        kept = held.join(main, on=["_ask", "offer"])
        by_request = {(r["_ask"], r["request"]): r for r in kept.iter_rows(named=True)}
        for i, a in enumerate(asks):
            if got[i] is None:
                got[i] = [{k: by_request[i, r][k] for k in BILLED} for r in a.requests["request"]]
    return got
