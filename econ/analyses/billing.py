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

from econ.analyses.billing_rows import BillingTables, seller_rows
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
    rows, name = seller_rows(tables, model, provider, source, variant)
    free = rows.filter(pl.col("is_free")).select(SCHEDULE).unique().height
    if not include_free:
        rows = rows.filter(~pl.col("is_free"))
    if rows.height == 0:
        raise EconError(
            f"every {variant} price of {name} on {tables.as_of} is free or a placeholder", "pass --include-free"
        )
    rows = rows.with_columns(pl.concat_str(SCHEDULE, separator="|").alias("schedule"), sp.offer())
    schedules = _schedules(rows)
    limits = _offer_limits(schedules)
    rows, schedules = (_with_offer_limit(f, limits) for f in (rows, schedules))
    timed = "at" in requests.columns and requests["at"].is_not_null().any()
    reqs = (
        requests
        if "at" in requests.columns
        else requests.with_columns(pl.lit(None, pl.Datetime("us", "UTC")).alias("at"))
    )
    priced = rows.select(PAIR_COLUMNS)  # what a bill reads of a row (a workload repeats each row per request)
    keys = ["schedule", "request"] if by_request else ["schedule"]
    parts = [_totals(chunk, priced, tables.windows, keys) for chunk in reqs.iter_slices(CHUNK_REQUESTS)]
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
        out.join(_conflicts(out, keys[1:]), on=["offer", *keys[1:]], how="left")
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
    order = pl.col("status").replace_strict({"billed": 0, "refused": 1, "superseded": 2}, return_dtype=pl.Int8)
    out = out.sort(order, pl.col("cost_usd"), "provider", "model", nulls_last=True)
    notes = _window_note(rows, tables, timed)
    if free and not include_free:
        notes.append(f"{free} free or placeholder price{'s' if free != 1 else ''} left out (--include-free shows them)")
    return Bill(name, out, notes)


CHUNK_REQUESTS = 20_000
"""Requests billed at once: every request meets every price row of the model, so a workload of 100,000 requests took
1.6 GB in one piece; in pieces of this size the memory stays flat and the time is the same."""


def _totals(requests: pl.DataFrame, priced: pl.DataFrame, windows: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """Each schedule's (or schedule and request's) totals of ``requests``, its notes and windows as lists."""
    pairs = br.window_ratios(rc.billed_tier(requests, priced), windows)
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


def _conflicts(out: pl.DataFrame, per: list[str]) -> pl.DataFrame:
    """``offer`` (and ``per``), ``conflict``: what the superseded schedules of the offer would bill, where it differs
    from the holding one."""
    said = (
        pl.when(pl.col("refusal").is_not_null())
        .then(pl.concat_str([pl.lit("refused: "), pl.col("refusal")]))
        .otherwise(pl.format("${}", pl.col("cost_usd").round_sig_figs(6)))
    )
    date_said = pl.when(pl.col("source") == "hand").then(pl.col("from_date")).otherwise(pl.col("snapshot_date"))
    winner = out.filter(pl.col("offer_rank") == 1).select(
        "offer",
        *per,
        pl.col("cost_usd").alias("_w_cost"),
        pl.col("refusal").alias("_w_refusal"),
        pl.col("price_date").alias("_w_date"),
    )
    losers = (
        out.filter(pl.col("offer_rank") > 1)
        .join(winner, on=["offer", *per])
        .filter(
            (pl.col("refusal").is_null() != pl.col("_w_refusal").is_null())
            | (
                pl.col("refusal").is_null()  # both refuse: they agree, whatever they would have billed
                & ((pl.col("cost_usd") - pl.col("_w_cost")).abs() > 1e-9 * pl.col("_w_cost").abs() + 1e-12).fill_null(
                    pl.col("cost_usd").is_null() != pl.col("_w_cost").is_null()
                )
            )
        )
        .with_columns(
            pl.format(
                "conflict: {} {} says {} ({}); held by {}",
                pl.col("source"),
                date_said,
                said,
                pl.col("model"),
                pl.when(
                    pl.col("_w_date").is_not_null()
                    & (pl.col("price_date").is_null() | (pl.col("_w_date") > pl.col("price_date")))
                )
                .then(pl.lit("date"))
                .otherwise(pl.lit("authority")),
            ).alias("_c")
        )
        .group_by("offer", *per)
        .agg(pl.col("_c").sort().str.join("; ").alias("conflict"))
    )
    return losers


BILLED = ("cost_usd", "refusal", "price_row", "note")


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
    try:
        result = bill(
            tables, model=model, requests=requests, provider=provider, source=source, variant=variant, by_request=True
        )
    except EconError as e:
        return [dict.fromkeys(BILLED) | {"refusal": str(e)} for _ in range(requests.height)]
    held = result.schedules.filter(pl.col("offer_rank") == 1).with_columns(
        (pl.col("offer").str.split("|").list.get(1) != "").alias("_tagged")
    )
    main = held.filter(pl.col("offer") == held.sort("_tagged", "offer")["offer"][0])
    by_request = {r["request"]: r for r in main.iter_rows(named=True)}
    return [{k: by_request[i][k] for k in BILLED} for i in requests["request"]]
