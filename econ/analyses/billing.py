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

import difflib
from dataclasses import dataclass
from datetime import date
from functools import cached_property

import polars as pl

from econ.errors import EconError
from econ.fits import billing_rules as br
from econ.fits import request_cost as rc
from econ.fits import seller_precedence as sp
from econ.fits.model_identity import match_key, model_name
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


@dataclass(frozen=True)
class BillingTables:
    """What a bill reads: price rows in effect on ``as_of`` and the billing tables."""

    prices: pl.DataFrame
    rules: pl.DataFrame
    windows: pl.DataFrame
    providers: pl.DataFrame
    as_of: date

    @cached_property
    def name_keys(self) -> pl.DataFrame:
        """Each price row's canonical model and key read as a name (match_key), computed once per date."""
        return self.prices.select(
            match_key(pl.col("canonical_model")).alias("_canonical_key"),
            match_key(model_name(pl.col("model"))).alias("_model_key"),
        )


@dataclass
class Bill:
    """Every schedule of the model with its status (billed, refused, superseded), cost and reasons; notes."""

    name: str
    schedules: pl.DataFrame
    notes: list[str]


def _name(text: str) -> str:
    return pl.select(model_name(pl.lit(text))).item() or text


def _matching(tables: BillingTables, model: str) -> tuple[pl.DataFrame, str]:
    wanted = pl.select(match_key(model_name(pl.lit(model)))).item()
    keys = tables.name_keys
    canonical = tables.prices.filter(keys["_canonical_key"] == wanted)
    if canonical.height:
        return canonical, canonical["canonical_model"][0]
    keyed = tables.prices.filter(
        (tables.prices["model"] == model)
        | (tables.prices["canonical_model"].is_null() & (keys["_model_key"] == wanted))
    )
    return keyed, model


def _retirements(rules: pl.DataFrame, model: str, as_of: date) -> list[dict]:
    """The retirement rules that name ``model`` (by canonical name or key) and are in force on ``as_of``."""
    probe = pl.DataFrame({"seller": [None], "model": [model], "canonical_model": [_name(model)], "variant": [None]})
    return [
        row
        for row in rules.filter(pl.col("rule") == "retired").iter_rows(named=True)
        if (row["from_date"] is None or row["from_date"] <= as_of)
        and (row["to_date"] is None or row["to_date"] > as_of)
        and row["model"]
        and probe.select(br.covers("*", row["model"])).item()
    ]


def _billed_as(tables: BillingTables, seller: str, target: str, rule_id: str) -> pl.DataFrame:
    """``target``'s rows at ``seller`` (with their own rules), noted as billed in place of a retired model."""
    found, _ = _matching(tables, target)
    found = br.with_rules(br.with_sellers(found, tables.providers), tables.rules, on=tables.as_of)
    note = f"retired: {seller} bills it as {target} (billing rule {rule_id})"
    return found.filter(pl.col("seller") == seller).with_columns(pl.lit(note).alias("redirect_note"))


def resolve(tables: BillingTables, model: str) -> tuple[pl.DataFrame, str]:
    """The price rows of ``model`` (canonical name in any spelling, else a price key) and the name they go by; a
    model no seller lists any more but one bills as another (``retired`` ``billed_as``) is that model's rows there."""
    rows, name = _matching(tables, model)
    if rows.height:
        return rows, name
    retired = _retirements(tables.rules, model, tables.as_of)
    moved = [
        _billed_as(tables, r["provider"], r["value"].split(":", 1)[1], r["rule_id"])
        for r in retired
        if r["value"].startswith("billed_as:")
    ]
    if any(m.height for m in moved):
        return pl.concat(moved, how="diagonal_relaxed"), model
    if retired:
        r = retired[0]
        raise EconError(
            f"{model} was retired by {r['provider']} on {r['from_date']} (billing rule {r['rule_id']}) and no "
            f"seller lists it on {tables.as_of}",
            f"the rule quotes {r['source_url']}",
        )
    names = sorted(set(tables.prices["canonical_model"].drop_nulls()))
    close = difflib.get_close_matches(_name(model), names, n=3, cutoff=0.6)
    hint = (
        f"did you mean {', '.join(close)}?"
        if close
        else "select distinct canonical_model from price_current lists them"
    )
    raise EconError(f"no current price for a model {model!r}", hint)


def _redirect(tables: BillingTables, rows: pl.DataFrame, model: str) -> pl.DataFrame:
    """Sellers that retired the model and bill another in its place: their rows replaced by that model's rows there
    (also for a seller whose own rows of the model are gone)."""
    moved = {
        (r["provider"], r["value"].split(":", 1)[1], r["rule_id"])
        for r in _retirements(tables.rules, model, tables.as_of)
        if r["value"].startswith("billed_as:")
    }
    moved |= {
        (seller, value.split(":", 1)[1], rule_id)
        for seller, value, rule_id in rows.filter(pl.col("rule_retired").str.starts_with("billed_as:"))
        .select("seller", "rule_retired", "rule_retired_id")
        .unique()
        .iter_rows()
    }
    if not moved:
        return rows
    kept = rows.filter(~pl.col("seller").is_in([m[0] for m in moved]))
    return pl.concat([kept, *(_billed_as(tables, *m) for m in sorted(moved))], how="diagonal_relaxed")


def _rows(tables: BillingTables, model: str, provider: str | None, source: str | None, variant: str) -> tuple:
    rows, name = resolve(tables, model)
    sellers = sorted(set(rows["provider"]))
    chosen = pl.lit(True) if provider is None else (pl.col("provider") == provider) | (pl.col("seller") == provider)
    if "redirect_note" not in rows.columns:
        rows = br.with_sellers(rows, tables.providers).with_columns(pl.lit(None, pl.String).alias("redirect_note"))
        rows = br.with_rules(rows if provider is None else rows.filter(chosen), tables.rules, on=tables.as_of)
        rows = _redirect(tables, rows, model)
    if provider is not None:
        rows = rows.filter(chosen)
        if rows.height == 0:
            for r in _retirements(tables.rules, model, tables.as_of):
                if r["provider"] == provider and r["value"] == "refused":
                    raise EconError(
                        f"{name} was retired by {provider} on {r['from_date']}: requests fail (billing rule "
                        f"{r['rule_id']})",
                        f"the rule quotes {r['source_url']}",
                    )
            close = difflib.get_close_matches(provider, sellers, n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(close)}?" if close else f"sellers of {name}: {', '.join(sellers)}"
            raise EconError(f"{provider} sells no {name} on {tables.as_of}", hint)
    if source is not None:
        rows = rows.filter(pl.col("source") == source)
    rows = br.effective_prices(rows)
    variants = sorted(set(rows["variant"]))
    rows = rows.filter(pl.col("variant") == variant)
    if rows.height == 0:
        raise EconError(
            f"no {variant} price of {name} on {tables.as_of}", f"variants priced: {', '.join(variants) or 'none'}"
        )
    return rows, name


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
    rows, name = _rows(tables, model, provider, source, variant)
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


def prices_at(history: pl.DataFrame, on: date) -> pl.DataFrame:
    """The rows of ``price_history`` in effect on ``on`` (what the view ``price_current`` gives for that date)."""
    return history.filter((pl.col("from_date") <= on) & (pl.col("to_date").is_null() | (pl.col("to_date") > on)))


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


def bill_one(
    tables: BillingTables, *, provider: str, model: str, variant: str, requests: pl.DataFrame, source: str | None = None
) -> dict:
    """:func:`bill_each` of one request."""
    return bill_each(tables, provider=provider, model=model, variant=variant, requests=requests, source=source)[0]
