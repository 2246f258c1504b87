"""``econ cost``: the price of a request, or of a workload of requests, at every seller of a model (read-only).

The model is found by its canonical name (``price_current.canonical_model``, any spelling the naming rules read the
same way: ``claude-sonnet-4-5``, ``claude-sonnet-4.5``) or, for an unmapped key, by the key itself. Each seller's
rows of the variant (every tier) are billed by :mod:`econ.fits.request_cost`, cheapest first; free tiers and
placeholders (``is_free``) are left out unless asked for.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import polars as pl

from econ.db import connect_read_only
from econ.errors import EconError
from econ.fits import request_cost as rc
from econ.fits import source_precedence as sp
from econ.fits.model_identity import match_key, model_name
from econ.load import ceilings
from econ.load.requests import REQUESTS
from econ.load.spec import FILE, LINE, read_table

SCHEDULE = ["source", "provider", "model", "variant"]
COMPONENTS = ("input_usd", "cached_input_usd", "cache_write_usd", "output_usd", "cache_storage_usd")


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


def single_request(
    *,
    input_tokens: int,
    output_tokens: int,
    cached_input_tokens: int = 0,
    cache_write_tokens: int = 0,
    cache_ttl: str = "5m",
    cache_storage_hours: float = 0.0,
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
        },
        schema_overrides={k: pl.Int64 for k in (*counts, "request", "requests")},
    )


def read_requests(path: Path) -> pl.DataFrame:
    """A workload file (:data:`econ.load.requests.REQUESTS`), checked cell by cell (errors name file, line, column)."""
    path = Path(path)
    if not path.is_file():
        raise EconError(f"no requests file at {path}", "give a CSV with input_tokens and output_tokens columns")
    frame = read_table(path, REQUESTS)
    if frame.height == 0:
        raise EconError(f"{path} has no requests", "add one row per request shape")
    return (
        frame.drop(FILE)
        .rename({LINE: "request"})
        .with_columns(
            pl.col("cached_input_tokens").fill_null(0),
            pl.col("cache_write_tokens").fill_null(0),
            pl.col("cache_ttl").fill_null("5m"),
            pl.col("cache_storage_hours").fill_null(0.0),
            pl.col("requests").fill_null(1),
        )
    )


def _resolve(prices: pl.DataFrame, model: str) -> tuple[pl.DataFrame, str]:
    """The price rows of ``model`` (canonical name in any spelling, else a price key) and the name they go by."""
    wanted = pl.select(match_key(model_name(pl.lit(model)))).item()
    canonical = prices.filter(match_key(pl.col("canonical_model")) == wanted)
    if canonical.height:
        return canonical, canonical["canonical_model"][0]
    keyed = prices.filter(
        (pl.col("model") == model)
        | (pl.col("canonical_model").is_null() & (match_key(model_name(pl.col("model"))) == wanted))
    )
    if keyed.height:
        return keyed, model
    names = sorted(set(prices["canonical_model"].drop_nulls()))
    close = difflib.get_close_matches(model_name_of(model), names, n=3, cutoff=0.6)
    hint = (
        f"did you mean {', '.join(close)}?"
        if close
        else "select distinct canonical_model from price_current lists them"
    )
    raise EconError(f"no current price for a model {model!r}", hint)


def _with_conflicts(frame: pl.DataFrame, conflicts: pl.DataFrame | None) -> pl.DataFrame:
    """``note`` plus, per schedule, what the sources left out say where they price it differently (``conflict:
    litellm 2026-11-20 says input 3, output 15``)."""
    if conflicts is None or conflicts.height == 0:
        return frame
    said = conflicts.group_by("source", "provider", "model", "variant").agg(
        pl.concat_str(
            pl.lit("conflict: "),
            pl.col("other_source"),
            pl.lit(" "),
            pl.col("other_evidence_date").cast(pl.String).fill_null(""),
            pl.lit(" says input "),
            pl.col("other_input_usd_per_mtok").round_sig_figs(6).cast(pl.String).fill_null("none"),
            pl.lit(", output "),
            pl.col("other_output_usd_per_mtok").round_sig_figs(6).cast(pl.String).fill_null("none"),
        )
        .sort()
        .str.join("; ")
        .alias("_conflict")
    )
    return (
        frame.join(said, on=["source", "provider", "model", "variant"], how="left")
        .with_columns(
            pl.concat_str([pl.col("note"), pl.col("_conflict")], separator="; ", ignore_nulls=True)
            .str.strip_chars("; ")
            .alias("note")
        )
        .drop("_conflict")
    )


def model_name_of(text: str) -> str:
    return pl.select(model_name(pl.lit(text))).item() or text


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
) -> CostResult:
    """Bill ``requests`` (:func:`single_request` or :func:`read_requests`) at every seller of ``model``.

    One row per seller's schedule (source, provider, price key, variant), cheapest first; a schedule missing a price
    the requests need has a blank cost and sorts last. ``as_of`` defaults to the date the database was built for.
    """
    with connect_read_only(Path(db_path), current=True) as con:
        as_of = as_of or con.sql("select as_of from build_info").fetchall()[0][0]
        con.execute(f"set variable as_of = date '{as_of.isoformat()}'")
        prices = con.sql("select * from price_current").pl()
        first = con.sql("select min(snapshot_date) from price_snapshots").fetchall()[0][0]
    try:
        rows, name = _resolve(prices, model)
    except EconError as e:
        if first is not None and as_of < first:
            raise EconError(
                f"no price of a model {model!r} on {as_of}: the price history starts on {first}",
                f"give --as-of {first} or later (select min(snapshot_date) from price_snapshots)",
            ) from None
        raise e
    if provider is not None:
        sellers = sorted(set(rows["provider"]))
        rows = rows.filter(pl.col("provider") == provider)
        if rows.height == 0:
            close = difflib.get_close_matches(provider, sellers, n=3, cutoff=0.5)
            hint = f"did you mean {', '.join(close)}?" if close else f"sellers of {name}: {', '.join(sellers)}"
            raise EconError(f"{provider} sells no {name} on {as_of}", hint)
    conflicts = None
    if source is not None:
        rows = rows.filter(pl.col("source") == source)
    else:  # one price per seller: the precedence stand-in (econ.fits.source_precedence), conflicts noted
        rows, conflicts = sp.one_source_per_seller(rows)
    variants = sorted(set(rows["variant"]))
    rows = rows.filter(pl.col("variant") == variant)
    if rows.height == 0:
        raise EconError(f"no {variant} price of {name} on {as_of}", f"variants priced: {', '.join(variants) or 'none'}")
    free = rows.filter(pl.col("is_free")).select(SCHEDULE).unique().height
    if not include_free:
        rows = rows.filter(~pl.col("is_free"))
    if rows.height == 0:
        raise EconError(f"every {variant} price of {name} on {as_of} is free or a placeholder", "pass --include-free")
    schedules = rows.with_columns(pl.concat_str(SCHEDULE, separator="|").alias("schedule"))
    billed = rc.request_costs(rc.billed_tier(requests, schedules))
    scaled = billed.with_columns(pl.col(c) * pl.col("requests") for c in (*COMPONENTS, "cost_usd"))
    totals = (
        scaled.group_by("schedule", *SCHEDULE, "is_first_party")
        .agg(
            pl.col("requests").sum(),
            pl.col("tier_min_prompt_tokens").max().alias("tier_max_tokens"),
            *(pl.col(c).sum() for c in COMPONENTS),
            pl.col("cost_usd").sum().alias("cost_usd"),
            pl.col("cost_usd").is_null().any().alias("_unpriced"),
            pl.col("note").filter(pl.col("note") != "").unique().sort().str.join("; ").alias("note"),
        )
        .with_columns(pl.when(pl.col("_unpriced")).then(None).otherwise(pl.col("cost_usd")).alias("cost_usd"))
        .sort(pl.col("cost_usd"), "provider", "model", nulls_last=True)
    )
    workload = requests.height > 1 or int(requests["requests"][0]) > 1
    columns = ["source", "provider", "model", "variant"]
    columns += ["requests", "cost_usd", "usd_per_request"] if workload else ["tier_min_prompt_tokens", "cost_usd"]
    columns += [*COMPONENTS, "is_first_party", "note"]
    frame = totals.with_columns(
        (pl.col("cost_usd") / pl.col("requests")).alias("usd_per_request"),
        pl.col("tier_max_tokens").alias("tier_min_prompt_tokens"),
        pl.when(pl.col("_unpriced"))
        .then(pl.concat_str([pl.lit("a price these requests need is not published"), pl.col("note")], separator="; "))
        .otherwise(pl.col("note"))
        .str.strip_chars("; ")
        .alias("note"),
    ).pipe(_with_conflicts, conflicts)
    frame = frame.select(columns)
    n = int(requests["requests"].sum())
    tokens = {c: int((requests[c] * requests["requests"]).sum()) for c in rc.TOKENS}
    summary = (
        f"{name} ({variant}), prices as of {as_of}: {n:,} request{'s' if n != 1 else ''} of "
        f"{tokens['input_tokens']:,} input + {tokens['cached_input_tokens']:,} cached + "
        f"{tokens['cache_write_tokens']:,} cache-write and {tokens['output_tokens']:,} output tokens"
    )
    notes = [f"{frame.height} seller{'s' if frame.height != 1 else ''}, cheapest first"]
    if free and not include_free:
        notes.append(f"{free} free or placeholder price{'s' if free != 1 else ''} left out (--include-free shows them)")
    return CostResult(summary, columns, frame.rows(), notes)
