"""Which price rows a bill reads: the model's rows (canonical name in any spelling, else a price key), a retired
model's redirect to the model its seller bills in its place, one seller's or source's rows, and the rows in effect on a
date (:mod:`econ.analyses.billing` bills them)."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from functools import cached_property

import polars as pl

from econ.errors import EconError
from econ.fits import billing_rules as br
from econ.fits.model_identity import match_key, model_name


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
        return name_keys(self.prices)

    @classmethod
    def on_each_date(
        cls, history: pl.DataFrame, rules: pl.DataFrame, windows: pl.DataFrame, providers: pl.DataFrame
    ) -> Callable[[date], BillingTables]:
        """The tables of any date from one ``price_history``: its rows' name keys are read once, for every date (each
        date's are the rows in effect then), not once a date."""
        keys = name_keys(history)

        def at(on: date) -> BillingTables:
            in_effect = history.select(_in_effect(on)).to_series()
            tables = cls(history.filter(in_effect), rules, windows, providers, on)
            tables.__dict__["name_keys"] = keys.filter(in_effect)  # what the cached property gives on these rows
            return tables

        return at


def name_keys(prices: pl.DataFrame) -> pl.DataFrame:
    """Each price row's canonical model and key read as a name (match_key)."""
    return prices.select(
        match_key(pl.col("canonical_model")).alias("_canonical_key"),
        match_key(model_name(pl.col("model"))).alias("_model_key"),
    )


def _in_effect(on: date) -> pl.Expr:
    return (pl.col("from_date") <= on) & (pl.col("to_date").is_null() | (pl.col("to_date") > on))


def prices_at(history: pl.DataFrame, on: date) -> pl.DataFrame:
    """The rows of ``price_history`` in effect on ``on`` (what the view ``price_current`` gives for that date)."""
    return history.filter(_in_effect(on))


_READ: dict[str, tuple[str | None, str | None]] = {}
"""Each name asked for: (its normalised name, its match key), pure functions of the text, read once."""


def read_names(texts) -> None:
    """Read the normalised name and match key of every text not read yet, in one query (the worked examples bill ~40
    models: one query each took a tenth of their time)."""
    new = sorted({t for t in texts if t not in _READ})
    if not new:
        return
    if len(_READ) > 4096:
        _READ.clear()
    text = pl.col("text")
    got = pl.DataFrame({"text": new}, schema={"text": pl.String}).select(
        text, model_name(text).alias("name"), match_key(model_name(text)).alias("key")
    )
    _READ.update((t, (n, k)) for t, n, k in got.iter_rows())


def _name(text: str) -> str:
    read_names([text])
    return _READ[text][0] or text


def _key(model: str) -> str | None:
    """The match key of a name."""
    read_names([model])
    return _READ[model][1]


def _matching(tables: BillingTables, model: str) -> tuple[pl.DataFrame, str]:
    wanted = _key(model)
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
    in_force = [
        row
        for row in rules.filter(pl.col("rule") == "retired").iter_rows(named=True)
        if (row["from_date"] is None or row["from_date"] <= as_of)
        and (row["to_date"] is None or row["to_date"] > as_of)
        and row["model"]
    ]
    if not in_force:
        return []
    probe = pl.DataFrame({"seller": [None], "model": [model], "canonical_model": [_name(model)], "variant": [None]})
    named = probe.select(br.covers("*", row["model"]).alias(str(i)) for i, row in enumerate(in_force)).row(0)
    return [row for row, hit in zip(in_force, named, strict=True) if hit]


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


def seller_rows(
    tables: BillingTables, model: str, provider: str | None, source: str | None, variant: str
) -> tuple[pl.DataFrame, str]:
    """The rows a bill of ``model`` reads: at ``provider`` (seller or key provider) when given, from ``source``
    when given, of ``variant``, with their sellers, billing rules and effective prices, and the name they go by.
    A seller that sells none, a retirement and a variant not priced are errors saying what there is."""
    got = seller_rows_many([(tables, model, provider, source, variant)])[0]
    if isinstance(got, EconError):
        raise got
    return got


def _chosen(provider: str) -> pl.Expr:
    return (pl.col("provider") == provider) | (pl.col("seller") == provider)


def seller_rows_many(asks: list[tuple]) -> list[tuple[pl.DataFrame, str] | EconError]:
    """:func:`seller_rows` of each ask ``(tables, model, provider, source, variant)``, or the error it raises. The
    billing rules of every ask's rows are read in one query (each row at its ask's date) and so are their
    effective prices (a batch row's standard row looked up within its own ask): one query each per ask was most
    of the worked examples' time. The asks share one ``billing_rules`` frame; one ask (``econ cost``) is read
    untagged, as before."""
    out: list = [None] * len(asks)
    tag = _Tags(len(asks) > 1)
    found: dict[int, tuple[pl.DataFrame, str, list[str]]] = {}
    to_rule, rule_ids = [], []
    for i, (tables, model, provider, _, _) in enumerate(asks):
        if tables.rules is not asks[0][0].rules:
            raise ValueError("seller_rows_many: the asks read different billing_rules")
        try:
            rows, name = resolve(tables, model)
        except EconError as e:
            out[i] = e
            continue
        found[i] = (rows, name, sorted(set(rows["provider"])))
        if "redirect_note" not in rows.columns:  # else a retired model's rows at its target, already with rules
            rows = br.with_sellers(rows, tables.providers).with_columns(pl.lit(None, pl.String).alias("redirect_note"))
            rows = rows if provider is None else rows.filter(_chosen(provider))
            to_rule.append(tag.on(rows, i, tables.as_of))
            rule_ids.append(i)
    if to_rule:
        dates = {asks[i][0].as_of for i in rule_ids}
        ruled = br.with_rules(pl.concat(to_rule), asks[0][0].rules, on=dates.pop() if len(dates) == 1 else "_on")
        for i, part in tag.parts(ruled, rule_ids).items():
            tables, model = asks[i][:2]
            found[i] = (_redirect(tables, part, model), *found[i][1:])
    priced, price_ids = [], []
    for i, (rows, name, sellers) in found.items():
        tables, model, provider, source, _ = asks[i]
        if provider is not None:
            rows = rows.filter(_chosen(provider))
            if rows.height == 0:
                out[i] = _sells_none(tables, model, provider, name, sellers)
                continue
        if source is not None:
            rows = rows.filter(pl.col("source") == source)
        priced.append(tag.on(rows, i))
        price_ids.append(i)
    if priced:
        effective = br.effective_prices(pl.concat(priced, how="diagonal_relaxed"), by=tag.key)
        for i, rows in tag.parts(effective, price_ids).items():
            tables, _, _, _, variant = asks[i]
            name = found[i][1]
            variants = sorted(set(rows["variant"]))
            rows = rows.filter(pl.col("variant") == variant)
            out[i] = (
                (rows, name)
                if rows.height
                else EconError(
                    f"no {variant} price of {name} on {tables.as_of}",
                    f"variants priced: {', '.join(variants) or 'none'}",
                )
            )
    return out


@dataclass(frozen=True)
class _Tags:
    """Which ask (``_ask``) and date (``_on``) each row of several asks' rows is read for; with one ask, none."""

    many: bool

    @property
    def key(self) -> tuple[str, ...]:
        return ("_ask",) if self.many else ()

    def on(self, rows: pl.DataFrame, ask: int, day: date | None = None) -> pl.DataFrame:
        if not self.many:
            return rows
        return rows.with_columns(pl.lit(ask, pl.Int64).alias("_ask"), *([pl.lit(day).alias("_on")] if day else []))

    def parts(self, frame: pl.DataFrame, asks: list[int]) -> dict[int, pl.DataFrame]:
        """``frame``'s rows of each ask (in order; an ask without rows: none), without the tags."""
        frame = frame.drop("_on", strict=False)
        if not self.many:
            return {asks[0]: frame}
        parts = frame.partition_by("_ask", as_dict=True, include_key=False, maintain_order=True)
        empty = frame.clear().drop("_ask")
        return {i: parts.get((i,), empty) for i in asks}


def _sells_none(tables: BillingTables, model: str, provider: str, name: str, sellers: list[str]) -> EconError:
    """Why ``provider`` has no row of the model: it retired it (requests fail), or it never sold it."""
    for r in _retirements(tables.rules, model, tables.as_of):
        if r["provider"] == provider and r["value"] == "refused":
            return EconError(
                f"{name} was retired by {provider} on {r['from_date']}: requests fail (billing rule {r['rule_id']})",
                f"the rule quotes {r['source_url']}",
            )
    close = difflib.get_close_matches(provider, sellers, n=3, cutoff=0.5)
    hint = f"did you mean {', '.join(close)}?" if close else f"sellers of {name}: {', '.join(sellers)}"
    return EconError(f"{provider} sells no {name} on {tables.as_of}", hint)
