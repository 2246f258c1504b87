"""References between input tables that a single column's ``ref`` cannot state.

- A deployment's explicit price mapping (``price_provider``, ``price_model`` and, if given,
  ``price_source``) names a standard-variant price row of that source (hand-kept rows or an imported
  snapshot); one that matches nothing would silently fall back to the scenario's $/chip-hour.
- A categorical scenario value names something that exists: a chip (``unit = chip``) is a
  ``hardware.chip``, a number format (``unit = format``) one of the formats econ knows.
- A billing rule or time-of-day window does not name a misspelt seller (one spelt like a seller of ``providers``
  but not one: its rule applied to nobody, silently); a worked billing example names a rule or window that exists
  and gives either its bill or its refusal.

Each problem names the file, line and column of the reference and says how to fix it.
"""

from __future__ import annotations

import difflib
import warnings

import polars as pl

from econ.errors import EconNotice, Problem
from econ.load.spec import FILE, LINE
from econ.load.tables import NUMBER_FORMATS


def check_references(frames: dict[str, pl.DataFrame], snapshots: list[pl.DataFrame]) -> list[Problem]:
    """Problems of the references above; tables that failed their own checks are skipped (their problems are
    reported)."""
    problems = []
    if "deployments" in frames and "prices" in frames:
        problems += _price_mappings(frames["deployments"], frames["prices"], snapshots)
    if "scenarios" in frames:
        problems += _scenario_choices(frames["scenarios"], frames.get("hardware"))
    problems += _billing_references(frames)
    return problems


def _billing_references(frames: dict[str, pl.DataFrame]) -> list[Problem]:
    problems = []
    if "providers" in frames:
        sellers = sorted(
            set(frames["providers"]["provider"].drop_nulls()) | set(frames["providers"]["seller"].drop_nulls())
        )
        for table in ("billing_rules", "billing_windows"):
            if table not in frames:
                continue
            unknown = frames[table].filter((pl.col("provider") != "*") & ~pl.col("provider").is_in(sellers))
            for row in unknown.iter_rows(named=True):
                # a seller spelt like one that exists is a typo; one like none is a seller without prices here yet
                # (its rule waits for them, as in a data set that keeps a few sellers)
                close = difflib.get_close_matches(row["provider"], sellers, n=1, cutoff=0.6)
                if close:
                    problems.append(
                        Problem(
                            row[FILE],
                            row[LINE],
                            "provider",
                            f"names no seller of providers.csv ({row['provider']!r})",
                            f"did you mean {close[0]}? (or add the seller to providers.csv)",
                        )
                    )
    if "billing_examples" in frames:
        examples = frames["billing_examples"]
        known = set(frames["billing_rules"]["rule_id"]) if "billing_rules" in frames else set()
        known |= set(frames["billing_windows"]["window_id"]) if "billing_windows" in frames else set()
        if known:
            for row in examples.filter(~pl.col("rule_id").is_in(sorted(known))).iter_rows(named=True):
                close = difflib.get_close_matches(row["rule_id"], sorted(known), n=1)
                problems.append(
                    Problem(
                        row[FILE],
                        row[LINE],
                        "rule_id",
                        f"names no billing rule or window ({row['rule_id']!r})",
                        f"did you mean {close[0]}?" if close else "give a billing_rules.rule_id or window_id",
                    )
                )
        both = pl.col("expected_usd").is_null() == pl.col("refusal").is_null()
        for row in examples.filter(both).iter_rows(named=True):
            problems.append(
                Problem(
                    row[FILE],
                    row[LINE],
                    "expected_usd",
                    "gives both a bill and a refusal"
                    if row["refusal"] is not None
                    else "gives neither a bill nor a refusal",
                    "fill expected_usd for a billed request or refusal for a refused one, not both",
                )
            )
    return problems


def _price_mappings(deployments: pl.DataFrame, hand: pl.DataFrame, snapshots: list[pl.DataFrame]) -> list[Problem]:
    rows = [hand.select(pl.lit("hand").alias("source"), "provider", "model", "variant")]
    rows += [s.select("source", "provider", "model", "variant") for s in snapshots if s.height]
    offered = pl.concat(rows).filter(pl.col("variant") == "standard").unique()
    mapped = deployments.filter(pl.col("price_provider").is_not_null() & pl.col("price_model").is_not_null())
    problems, unpriced = [], []
    for row in mapped.iter_rows(named=True):
        source = row["price_source"]
        pool = offered if source is None else offered.filter(pl.col("source") == source)
        if pool.filter((pl.col("provider") == row["price_provider"]) & (pl.col("model") == row["price_model"])).height:
            continue
        if not pool.height:  # no price of that source at all (an empty prices.csv): nothing to match, not a typo
            unpriced.append(row)
            continue
        sold = pool.filter(pl.col("provider") == row["price_provider"])["model"].to_list()
        close = difflib.get_close_matches(row["price_model"], sold, n=1)
        where = f"{source} prices" if source else "any price source"
        hint = (
            f"did you mean price_model {close[0]}?"
            if close
            else "give a provider and model of prices.csv or a snapshot (standard variant), or leave price_provider "
            "and price_model blank to match models.hf_repo"
        )
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "price_model",
                f"the price mapping {row['price_provider']} / {row['price_model']} matches no standard price "
                f"in {where}",
                hint,
            )
        )
    if unpriced:
        where = ", ".join(f"{r[FILE]}:{r[LINE]}" for r in unpriced[:5]) + (", …" if len(unpriced) > 5 else "")
        sources = sorted({r["price_source"] or "any" for r in unpriced})
        warnings.warn(
            f"no {' or '.join(sources)} price is kept, so the price mappings of {where} match nothing: those "
            "deployments are planned without a list price to compare",
            EconNotice,
            stacklevel=2,
        )
    return problems


def _scenario_choices(scenarios: pl.DataFrame, hardware: pl.DataFrame | None) -> list[Problem]:
    known = {"format": list(NUMBER_FORMATS)}
    if hardware is not None:
        known["chip"] = hardware["chip"].to_list()
    problems = []
    for row in scenarios.filter(pl.col("text").is_not_null() & pl.col("unit").is_in(list(known))).iter_rows(named=True):
        choices = known[row["unit"]]
        if row["text"] in choices:
            continue
        close = difflib.get_close_matches(row["text"], choices, n=1)
        table = "hardware.chip" if row["unit"] == "chip" else "the number formats"
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "text",
                f'{row["name"]} "{row["text"]}" is not in {table}',
                f"did you mean {close[0]}?" if close else f"use one of: {', '.join(choices)}",
            )
        )
    return problems
