"""One name resolver for every command: which model, chip or table a user means (read-only, at a command's entry).

A model may be given as its canonical name (``model_catalog.canonical_model``), its architecture's name
(``models.model``), its Hugging Face repo (``models.hf_repo``) or a seller's price key (``prices.model``), in any
case and in any spelling the naming rules read as one model (:func:`econ.fits.model_identity.model_name` and
:func:`~econ.fits.model_identity.match_key`: ``DeepSeek-V3`` = ``deepseek-v3``, ``claude-4.5-sonnet`` =
``claude-sonnet-4.5``). A name that matches nothing is an error whose suggestions rank the nearest names first
(the given name starts or is inside them, else they are close by edit distance) and, among equally near ones, the
newest (highest version, then release date or first price), so ``claude-sonnet`` suggests the current Sonnets.
Chips and tables are matched in any case (and a chip without its dashes: ``tpu-v6e`` = ``TPU-v6e`` = ``tpuv6e``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

from econ.errors import EconError
from econ.fits.model_identity import match_key, model_name

SUGGESTIONS = 5
"""How many names an unknown-name error suggests."""
CLOSE_RATIO = 0.6
"""The least :class:`difflib.SequenceMatcher` ratio of two match keys for a name to be suggested by spelling."""


@dataclass(frozen=True)
class ModelName:
    """What a user's model name resolves to.

    ``canonical_model``: the canonical model (None for an architecture no price names, or a price key no rule maps);
    ``arch_model``: its ``models`` row (None for a closed model); ``price_key``: the ``prices.model`` the text names
    exactly (None unless it is one); ``shown``: the name to print (the canonical one where there is one).
    """

    given: str
    canonical_model: str | None
    arch_model: str | None
    price_key: str | None

    @property
    def shown(self) -> str:
        return self.canonical_model or self.arch_model or self.price_key or self.given

    @property
    def priced_as(self) -> str:
        """The name price rows go by: the canonical model, else the price key given, else the given text."""
        return self.canonical_model or self.price_key or self.given


def key_of(text: str) -> str | None:
    """The match key of a name as the naming rules read it (``Claude-4.5-Sonnet`` → ``claudesonnet4.5``)."""
    return pl.select(match_key(model_name(pl.lit(text, pl.String)))).item()


def _names(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """Every name a model goes by: ``name``, ``kind`` (canonical, models, hf_repo, price_key), ``canonical_model``,
    ``arch_model``, ``newest`` (release date or first price) and ``key`` (the match key)."""
    frame = pl.DataFrame(
        con.sql(
            """
        with first_price as (
            select k.canonical_model, min(p.from_date) as first_priced
            from prices p join price_keys k using (source, provider, model)
            where k.canonical_model is not null group by 1
        ), catalog as (
            select c.canonical_model, c.arch_model, greatest(c.release_date, f.first_priced) as newest
            from model_catalog c left join first_price f using (canonical_model)
        )
        select canonical_model as name, 'canonical' as kind, canonical_model, arch_model, newest from catalog
        union all
        select m.model, 'models', c.canonical_model, m.model, coalesce(c.newest, m.release_date)
        from models m left join catalog c on c.arch_model = m.model
        union all
        select m.hf_repo, 'hf_repo', c.canonical_model, m.model, coalesce(c.newest, m.release_date)
        from models m left join catalog c on c.arch_model = m.model where m.hf_repo is not null
        union all
        select distinct k.model, 'price_key', k.canonical_model, c.arch_model, c.newest
        from price_keys k left join catalog c using (canonical_model)
        """
        )
    )
    return frame.with_columns(match_key(model_name(pl.col("name"))).alias("key"))


def _one(hits: pl.DataFrame, given: str, *, price_key: str | None = None) -> ModelName:
    """The model of ``hits`` (rows of :func:`_names` that all name it): the first canonical model and architecture."""
    canonical = hits["canonical_model"].drop_nulls()
    arch = hits["arch_model"].drop_nulls()
    return ModelName(
        given=given,
        canonical_model=canonical.sort()[0] if canonical.len() else None,
        arch_model=arch.sort()[0] if arch.len() else None,
        price_key=price_key,
    )


def resolve_model(con: duckdb.DuckDBPyConnection, text: str, *, need: str = "any") -> ModelName:
    """The model ``text`` names (module docstring), else an error with the nearest and newest names.

    ``need``: ``any``; ``architecture`` (``econ fleet``, ``econ predict``: the model must have a ``models`` row, and
    the suggestions are models with one).
    """
    if need not in ("any", "architecture"):
        raise ValueError(f"need must be 'any' or 'architecture', not {need!r}")
    text = text.strip()
    if not text:
        raise EconError(
            "the model name is empty",
            'give a model (econ sql "select canonical_model from model_catalog" lists them)',
        )
    names = _names(con)
    lower = text.lower()
    exact = names.filter(pl.col("name").str.to_lowercase() == lower)
    found: ModelName | None = None
    for kind in ("canonical", "models", "hf_repo", "price_key"):
        hits = exact.filter(pl.col("kind") == kind)
        if hits.height:
            key = hits.filter(pl.col("name") == text)["name"] if kind == "price_key" else None
            price_key = (
                (key[0] if key is not None and key.len() else hits["name"].sort()[0]) if kind == "price_key" else None
            )
            found = _one(hits, text, price_key=price_key)
            break
    if found is None:
        key = key_of(text)
        kinds = pl.col("kind").is_in(["canonical", "models", "hf_repo"])
        hits = names.filter((pl.col("key") == key) & kinds) if key is not None else names.clear()
        if hits.height:
            found = _one(hits, text)
    if found is not None and (need == "any" or found.arch_model is not None):
        return found
    if found is not None:
        close = suggest(names.filter(pl.col("arch_model").is_not_null()), text, columns=("arch_model",))
        raise EconError(
            f"{found.shown} has no architecture in models (its weights are not public, or no config.json is kept)",
            _hint(close, 'econ sql "select model from models" lists the models with an architecture'),
        )
    if need == "architecture":
        with_arch = names.filter(pl.col("arch_model").is_not_null())
        close = suggest(with_arch, text, columns=("arch_model",))
        known = sorted(set(with_arch["arch_model"]))
        everything = (
            f"known: {', '.join(known)}"
            if len(known) <= 2 * SUGGESTIONS
            else 'econ sql "select model from models" lists the models with an architecture'
        )
        raise EconError(
            f"unknown model {text!r} (no models.model, canonical model or price key of that name with an architecture)",
            _hint(close, everything),
        )
    close = suggest(names, text)
    raise EconError(
        f"unknown model {text!r} (no canonical model, models.model or price key of that name)",
        _hint(close, 'econ sql "select canonical_model from model_catalog" lists them'),
    )


def resolve_model_in(db_path: Path, text: str, *, need: str = "any") -> ModelName:
    """:func:`resolve_model` on the built database at ``db_path`` (opened read-only)."""
    from econ.db import connect_read_only

    with connect_read_only(Path(db_path)) as con:
        return resolve_model(con, text, need=need)


def _hint(close: list[str], otherwise: str) -> str:
    return f"did you mean {', '.join(close)}?" if close else otherwise


def suggest(
    names: pl.DataFrame,
    text: str,
    *,
    columns: tuple[str, ...] = ("canonical_model", "arch_model"),
    n: int = SUGGESTIONS,
) -> list[str]:
    """Up to ``n`` names near ``text``, nearest first and, equally near, newest first.

    Near: the match key of ``text`` starts a name's key followed by no more than a version or a size (tier 0:
    ``claude-sonnet`` → ``claude-sonnet-4.5``, ``gpt-oss-120`` → ``gpt-oss-120b``), or by more (tier 1), or is inside
    it (tier 2), else the keys are close by spelling (tier 3, ratio at least :data:`CLOSE_RATIO`, higher first).
    Newest: the higher version number (release dates of closed models are unknown, and a first price is no older than
    the first snapshot), then the later release date or first price. The names are those with one of ``columns``
    (price keys no rule maps only when none is near), each shown as the first of ``columns`` it has.
    """
    wanted = key_of(text) or text.lower()
    names = names.filter(pl.col("key").is_not_null())
    named = names.filter(pl.any_horizontal(pl.col(c).is_not_null() for c in columns))
    return _nearest(named.with_columns(pl.coalesce(*columns).alias("_shown")), wanted, n) or _nearest(
        names.with_columns(pl.col("name").alias("_shown")), wanted, n
    )


def _nearest(rows: pl.DataFrame, wanted: str, n: int) -> list[str]:
    best: dict[str, tuple] = {}
    for name, key, newest in rows.select("_shown", "key", "newest").iter_rows():
        if key.startswith(wanted):
            tier, ratio = (0 if re.fullmatch(r"[\d.]*[a-z]?", key[len(wanted) :]) else 1), 1.0
        elif wanted in key:
            tier, ratio = 2, 1.0
        else:
            ratio = difflib.SequenceMatcher(None, wanted, key).ratio()
            if ratio < CLOSE_RATIO:
                continue
            tier = 3
        version = _version(name)
        rank = (tier, -ratio, not version, tuple(-v for v in version), -(newest or date.min).toordinal(), name)
        if name not in best or rank < best[name]:
            best[name] = rank
    return [name for name, _ in sorted(best.items(), key=lambda kv: kv[1])[:n]]


def _version(name: str) -> tuple[float, ...]:
    """The version numbers of a name (``claude-sonnet-4.5`` → (4.5,); sizes such as ``120b`` and ``8x7b`` are no
    versions): a higher one is a newer version."""
    versions = re.sub(r"\d+(?:\.\d+)?[bmk]\b|\d+x\d+", "", name.lower())
    return tuple(float(v) for v in re.findall(r"\d+(?:\.\d+)?", versions))


def _squash(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def resolve_chip(con: duckdb.DuckDBPyConnection, text: str) -> str:
    """The ``hardware.chip`` ``text`` names, in any case and with or without dashes (``gb200``, ``tpu-v6e``)."""
    known = [r[0] for r in con.sql("select chip from hardware order by 1").fetchall()]
    for match in (lambda c: c == text, lambda c: c.lower() == text.lower(), lambda c: _squash(c) == _squash(text)):
        hits = [c for c in known if match(c)]
        if len(hits) == 1:
            return hits[0]
    close = difflib.get_close_matches(_squash(text), [_squash(c) for c in known], n=3, cutoff=0.4)
    by_squash = {_squash(c): c for c in known}
    hint = f"did you mean {', '.join(by_squash[c] for c in close)}?" if close else f"known: {', '.join(known)}"
    raise EconError(f"unknown chip {text!r} (not in hardware)", hint)


MODEL_CARD = (  # (table, column, label, unit)
    ("model_catalog", "canonical_model", "canonical model", ""),
    ("model_catalog", "family", "family", ""),
    ("model_catalog", "version", "version", ""),
    ("model_catalog", "maker", "maker", ""),
    ("model_catalog", "open_weights", "open weights", ""),
    ("models", "model", "architecture (models.model)", ""),
    ("models", "hf_repo", "Hugging Face repo", ""),
    ("models", "release_date", "released", ""),
    ("models", "attention", "attention", ""),
    ("models", "params_total", "parameters", "params"),
    ("models", "params_active", "active parameters", "params"),
    ("model_derived", "kv_bytes_per_token", "KV cache per token", "bytes"),
    ("model_catalog", "price_key_count", "price keys", "keys"),
    ("model_catalog", "seller_count", "sellers", "sellers"),
    ("model_catalog", "first_party_seller_count", "first-party sellers", "sellers"),
)
"""What ``econ describe MODEL`` prints of a model: its identity, its architecture and who sells it."""


def describe_model(con: duckdb.DuckDBPyConnection, text: str) -> list[tuple[str, object, str]]:
    """(label, value, unit) rows of the model ``text`` names (:data:`MODEL_CARD`), with its cheapest current standard
    base-tier price and its maker's own (``price_current``); an unknown name is :func:`resolve_model`'s error."""
    found = resolve_model(con, text)
    rows: dict[str, dict] = {}
    for table, column, params in (
        ("model_catalog", "canonical_model", found.canonical_model),
        ("models", "model", found.arch_model),
        ("model_derived", "model", found.arch_model),
    ):
        frame = (
            pl.DataFrame(con.sql(f"select * from {table} where {column} = ?", params=[params]))
            if params
            else pl.DataFrame()
        )
        rows[table] = frame.row(0, named=True) if frame.height else {}
    yes_no = {True: "yes", False: "no"}
    out = [
        (label, yes_no.get(v, v) if isinstance(v, bool) else v, unit)
        for table, column, label, unit in MODEL_CARD
        if (v := rows[table].get(column)) is not None
    ]
    if found.canonical_model is not None or found.price_key is not None:
        column, value = (
            ("canonical_model", found.canonical_model) if found.canonical_model else ("model", found.price_key)
        )
        prices = con.execute(
            "select provider, model, input_usd_per_mtok, output_usd_per_mtok, is_first_party from price_current "
            f"where {column} = ? and variant = 'standard' and tier_min_prompt_tokens = 0 and not is_free "
            "and input_usd_per_mtok is not null order by input_usd_per_mtok + coalesce(output_usd_per_mtok, 0), "
            "provider, model",
            [value],
        ).fetchall()
        picks = [("cheapest seller now", prices[0] if prices else None)]
        picks.append(("maker's own price now", next((p for p in prices if p[4]), None)))
        for label, p in picks:
            if p is not None:
                out.append((label, f"{p[0]} {p[1]}: {p[2]:g} in / {p[3]:g} out", "USD/MTok"))
    if found.price_key is not None and found.canonical_model is None:
        out.insert(0, ("price key (no rule names its model)", found.price_key, ""))
    return out
