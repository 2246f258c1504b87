"""``econ cost``: the price of a request, or of a workload of requests, at every seller of a model (read-only).

The model is found by its canonical name (``price_current.canonical_model``, any spelling the naming rules read the
same way: ``claude-sonnet-4-5``, ``claude-sonnet-4.5``) or, for an unmapped key, by the key itself. The bill is
:func:`econ.analyses.billing.bill`: one price per seller (by date, then by authority), each seller's billing rules,
refusals (a prompt above the seller's limit, a retired model) with their reason. Free tiers and placeholders
(``is_free``) are left out unless asked for; refused and superseded schedules are listed only with ``keep_all``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import cached_property
from pathlib import Path

import polars as pl

from econ.analyses import cost_periods as cp
from econ.analyses.billing import COMPONENTS, Bill, bill
from econ.analyses.billing_rows import BillingTables
from econ.db import connect_read_only
from econ.errors import EconError
from econ.fits import request_cost as rc
from econ.load import ceilings
from econ.load.requests import REQUESTS, request_time
from econ.load.spec import FILE, LINE, read_table
from econ.names import resolve_model_in


@dataclass
class CostResult:
    """What ``econ cost`` prints: a summary line, the per-seller rows (cheapest first) and notes."""

    summary: str
    columns: list[str]
    rows: list[tuple]
    notes: list[str]


def _tokens(flag: str, value: int) -> int:
    if not 0 <= value <= ceilings.TOKENS.value:
        raise EconError(
            f"{flag} must be between 0 and {ceilings.TOKENS.value:g} (got {value:g})", "give a number of tokens"
        )
    return int(value)


def parse_at(text: str | None) -> datetime | None:
    """``--at``: an ISO 8601 time with a zone, as UTC (None when not given)."""
    if text is None:
        return None
    value = request_time(text)
    if value is None:
        hint = "write e.g. --at 2026-12-01T02:00Z"
        try:
            day = date.fromisoformat(text.strip())
        except ValueError:
            day = None
        if day is not None:  # a date alone: the prices of that day are --as-of's
            hint = f"for the prices of that day give --as-of {day}; for its time-of-day prices, --at {day}T02:00Z"
        raise EconError(f"--at {text!r} is not a time with a zone", hint)
    return value.astimezone(UTC)


def single_request(
    *,
    input_tokens: int,
    output_tokens: int,
    cached_input_tokens: int = 0,
    cache_write_tokens: int = 0,
    cache_ttl: str = "5m",
    cache_storage_hours: float = 0.0,
    at: datetime | None = None,
) -> pl.DataFrame:
    """One request as the frame :func:`cost_for` bills (the command line's token flags)."""
    if cache_ttl not in rc.TTLS:
        raise EconError(f"--cache-ttl {cache_ttl!r} is not a retention", f"use one of: {', '.join(rc.TTLS)}")
    if not (math.isfinite(cache_storage_hours) and 0 <= cache_storage_hours <= 24 * 366):
        raise EconError(f"--cache-storage-hours must be between 0 and {24 * 366} (got {cache_storage_hours:g})", "")
    counts = {
        "input_tokens": _tokens("--input-tokens", input_tokens),
        "cached_input_tokens": _tokens("--cached-input-tokens", cached_input_tokens),
        "cache_write_tokens": _tokens("--cache-write-tokens", cache_write_tokens),
        "output_tokens": _tokens("--output-tokens", output_tokens),
    }
    return pl.DataFrame(
        {
            "request": [0],
            **{k: [v] for k, v in counts.items()},
            "cache_ttl": [cache_ttl],
            "cache_storage_hours": [float(cache_storage_hours)],
            "requests": [1],
            "at": [at],
        },
        schema_overrides={k: pl.Int64 for k in (*counts, "request", "requests")} | {"at": pl.Datetime("us", "UTC")},
    )


def read_requests(path: Path) -> pl.DataFrame:
    """A workload file (:data:`econ.load.requests.REQUESTS`), checked cell by cell (errors name file, line, column)."""
    path = Path(path)
    if not path.is_file():
        raise EconError(f"no requests file at {path}", "give a CSV with input_tokens and output_tokens columns")
    frame = read_table(path, REQUESTS)
    if frame.height == 0:
        raise EconError(f"{path} has no requests", "add one row per request shape")
    times = (
        [None if t is None else request_time(t).astimezone(UTC) for t in frame["at"]] if "at" in frame.columns else None
    )
    return (
        frame.drop(FILE, *(["at"] if times is not None else []))
        .rename({LINE: "request"})
        .with_columns(
            pl.col("cached_input_tokens").fill_null(0),
            pl.col("cache_write_tokens").fill_null(0),
            pl.col("cache_ttl").fill_null("5m"),
            pl.col("cache_storage_hours").fill_null(0.0),
            pl.col("requests").fill_null(1),
            pl.Series("at", times if times is not None else [None] * frame.height, dtype=pl.Datetime("us", "UTC")),
        )
    )


@dataclass(frozen=True)
class BillingData:
    """What ``econ cost`` reads of a built database, once: every price row with its period, and the billing tables."""

    history: pl.DataFrame
    rules: pl.DataFrame
    windows: pl.DataFrame
    providers: pl.DataFrame
    built_for: date

    @cached_property
    def _tables_at(self):
        return BillingTables.on_each_date(self.history, self.rules, self.windows, self.providers)

    def on(self, day: date) -> BillingTables:
        """The tables a bill reads on ``day`` (the rows ``price_current`` gives for that date; the rows' name keys read
        once for every date, as the worked examples read them)."""
        return self._tables_at(day)


def read_billing(db_path: Path) -> BillingData:
    """The price history and billing tables of a built database (and the date it was built for)."""
    with connect_read_only(Path(db_path), current=True) as con:
        return BillingData(
            pl.DataFrame(con.sql("select * from price_history")),
            pl.DataFrame(con.sql("select * from billing_rules")),
            pl.DataFrame(con.sql("select * from billing_windows")),
            pl.DataFrame(con.sql("select provider, seller from providers")),
            con.sql("select as_of from build_info").fetchall()[0][0],
        )


def history_start(db_path: Path) -> date | None:
    """The first day any price snapshot holds (the replayed histories start in 2024-10): before it, no price."""
    with connect_read_only(Path(db_path), current=True) as con:
        return con.sql("select min(snapshot_date) from price_snapshots").fetchall()[0][0]


SHOWN = ["source", "provider", "model", "variant"]


def cost_for(
    db_path: Path,
    *,
    model: str,
    requests: pl.DataFrame,
    provider: str | None = None,
    source: str | None = None,
    variant: str = "standard",
    as_of: date | None = None,
    include_free: bool = False,
    keep_all: bool = False,
    data: BillingData | None = None,
) -> CostResult:
    """Bill ``requests`` (:func:`single_request` or :func:`read_requests`) at every seller of ``model``.

    One row per seller that would take the requests, cheapest first; ``keep_all`` adds the sellers that refuse them and
    the schedules another source supersedes (``status``). Prices are those of ``as_of`` when given; else each request
    with a time (``at``) is billed at the prices of its own date (:mod:`econ.analyses.cost_periods`) and one without
    at those of the date the database was built for. ``data`` (:func:`read_billing`) skips reading the database.
    """
    name = resolve_model_in(db_path, model)
    # A seller's own key (deepseek-chat) bills that key's rows: its canonical model moved (V3, then V3.1, V3.2), and
    # the billing resolver reads every spelling of a canonical name itself.
    model = name.price_key or name.priced_as
    data = data or read_billing(db_path)
    timed = "at" in requests.columns and requests["at"].is_not_null().any()
    days = (
        pl.Series([as_of or data.built_for] * requests.height, dtype=pl.Date)
        if as_of is not None or not timed
        else requests["at"].dt.date().fill_null(data.built_for)
    )
    periods = cp.period_starts(days, data.history, data.rules)
    kwargs = {"model": model, "provider": provider, "source": source, "variant": variant, "include_free": include_free}
    parts, bill_notes = [], []
    for period in periods.unique(maintain_order=True):
        mask = periods == period
        first, last = days.filter(mask).min(), days.filter(mask).max()
        # any day of a period bills alike: its first request's day, the one an error names
        try:
            result = _bill_on(db_path, data.on(first), requests.filter(mask), **kwargs)
        except EconError as e:
            if first == days.min() and last == days.max():
                raise
            span = first.isoformat() if first == last else f"{first}…{last}"
            raise EconError(f"{e.message} (the workload's requests of {span})", e.hint) from None
        parts.append((first, last, result.schedules))
        bill_notes += [n for n in result.notes if n not in bill_notes]
    out = parts[0][2] if len(parts) == 1 else cp.combine(parts, int(requests["requests"].sum()))
    first_day, last_day = days.min(), days.max()
    when = (
        f"prices as of {first_day}"
        if first_day == last_day
        else f"prices of each request's date, {first_day} to {last_day} ({len(parts)} price period"
        + ("s)" if len(parts) != 1 else ")")
    )
    shown = out if keep_all else out.filter(pl.col("status") == "billed")
    workload = requests.height > 1 or int(requests["requests"][0]) > 1
    columns = [*SHOWN]
    columns += ["requests", "cost_usd", "usd_per_request"] if workload else ["tier_min_prompt_tokens", "cost_usd"]
    columns += [*COMPONENTS, "is_first_party", "max_input_tokens", "price_row", "status", "refusal", "conflict", "note"]
    frame = shown.with_columns((pl.col("cost_usd") / pl.col("requests")).alias("usd_per_request")).select(columns)
    n = int(requests["requests"].sum())
    tokens = {c: int((requests[c] * requests["requests"]).sum()) for c in rc.TOKENS}
    summary = (
        f"{result.name} ({variant}), {when}: {n:,} request{'s' if n != 1 else ''} of "
        f"{tokens['input_tokens']:,} input + {tokens['cached_input_tokens']:,} cached + "
        f"{tokens['cache_write_tokens']:,} cache-write and {tokens['output_tokens']:,} output tokens"
    )
    billed = out.filter(pl.col("status") == "billed").height
    notes = [f"{billed} seller{'s' if billed != 1 else ''} billed, cheapest first"] if billed else []
    refused = out.filter(pl.col("status") == "refused")
    for (reason,), group in refused.group_by("refusal", maintain_order=True):
        who = ", ".join(f"{r['provider']} {r['model']} ({r['price_row']})" for r in group.iter_rows(named=True))
        notes.append(f"refused, {reason}: {who}")
    superseded = out.filter(pl.col("status") == "superseded").height
    if superseded and not keep_all:
        notes.append(
            f"{superseded} schedule{'s' if superseded != 1 else ''} of the same sellers superseded (--all lists them)"
        )
    if billed == 0 and not keep_all:
        notes.append("no seller takes these requests (--all lists every schedule with its reason)")
    if last_day > data.built_for:  # the database knows prices up to its own date, announced changes included
        notes.append(
            f"prices after {data.built_for}, the date the database was built for, are the ones known then (changes "
            "announced by that date included): not a forecast"
        )
    if as_of is not None and timed:
        notes.append(f"every request is priced as of {as_of} (--as-of); their times pick only time-of-day windows")
    elif timed and requests["at"].is_null().any():
        notes.append(f"requests without a time are priced as of {data.built_for}, the date the database was built for")
    return CostResult(summary, columns, frame.rows(), notes + bill_notes)


def _bill_on(db_path: Path, tables: BillingTables, requests: pl.DataFrame, **kwargs) -> Bill:
    """:func:`econ.analyses.billing.bill` on one date; before the price history starts, the error says so."""
    try:
        return bill(tables, requests=requests, **kwargs)
    except EconError:
        first = history_start(db_path)
        if first is not None and tables.as_of < first:
            raise EconError(
                f"no price of a model {kwargs['model']!r} on {tables.as_of}: the price history starts on {first}",
                f"give --as-of {first} or later (select min(snapshot_date) from price_snapshots)",
            ) from None
        raise
