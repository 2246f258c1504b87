"""genai-prices' match rules resolved to econ's price keys and canonical models (pure, vectorised per provider).

A genai-prices entry names the model ids it prices by a rule (https://github.com/pydantic/genai-prices, ``match``):
``equals``, ``starts_with``, ``ends_with``, ``contains`` (all on the lower-cased id) and ``regex`` (a search), combined
by ``or`` and ``and``. Its own ``id`` is often a moving alias (``claude-3-5-haiku-latest``) or a name the naming rules
cannot place (``claude-4-opus``); the rule says which ids it means. :func:`rule_matches` evaluates every entry's rule
against every price key the same seller sells in the other sources (the key and its last ``/`` segment), and
:func:`resolve` gives an entry the canonical model of the keys it matches when they are all one model (several
models: ambiguous, left as the naming rules had it; none: the rule names nothing econ knows).
"""

from __future__ import annotations

import json
from functools import cache

import polars as pl

from econ.formula import formula

CLAUSES = ("equals", "starts_with", "ends_with", "contains", "regex")


def compile_rule(rule, name: pl.Expr) -> pl.Expr:
    """A boolean polars expression: whether ``name`` (lower-cased) matches a parsed match rule (None: no match)."""
    if not isinstance(rule, dict) or len(rule) != 1:
        return pl.lit(False)
    (kind, value), = rule.items()  # fmt: skip
    if kind in ("or", "and") and isinstance(value, list) and value:
        parts = [compile_rule(r, name) for r in value]
        return pl.any_horizontal(parts) if kind == "or" else pl.all_horizontal(parts)
    if kind not in CLAUSES or not isinstance(value, str):
        return pl.lit(False)
    text = value if kind == "regex" else value.lower()
    if kind == "regex" and not _valid_regex(text):
        return pl.lit(False)  # a pattern the engine cannot compile names nothing (the rest of the rule still counts)
    return {
        "equals": lambda: name == text,
        "starts_with": lambda: name.str.starts_with(text),
        "ends_with": lambda: name.str.ends_with(text),
        "contains": lambda: name.str.contains(text, literal=True),
        "regex": lambda: name.str.contains(text),
    }[kind]()


@cache
def _valid_regex(pattern: str) -> bool:
    try:
        pl.select(pl.lit("").str.contains(pattern))
    except pl.exceptions.PolarsError:
        return False
    return True


def rule_matches(rules: pl.DataFrame, keys: pl.DataFrame) -> pl.DataFrame:
    """Every (rule key, price key) pair of one seller where the rule matches the key.

    ``rules``: ``provider``, ``model``, ``match_rule`` (compact JSON). ``keys``: ``source``, ``provider``, ``model``,
    ``canonical_model`` of the other sources. Both may carry ``seller``, the organisation running the provider
    (genai-prices' ``google`` sells what LiteLLM files under ``gemini`` and ``vertex_ai-…``); without it the provider
    is the seller. A key matches when its id or its last ``/`` segment does (lower-cased). Returns ``provider``,
    ``model`` (the rule's), ``matched_source``, ``matched_provider``, ``matched_model``, ``canonical_model``. A regex
    clause the engine cannot compile matches nothing (the rule's other clauses still count).
    """
    out = []
    rules, keys = (
        f if "seller" in f.columns else f.with_columns(pl.col("provider").alias("seller")) for f in (rules, keys)
    )
    rules = rules.with_columns(pl.coalesce("seller", "provider").alias("seller"))
    names = keys.with_columns(
        pl.coalesce("seller", "provider").alias("seller"), pl.col("model").str.to_lowercase().alias("_id")
    ).with_columns(pl.col("_id").str.split("/").list.last().alias("_tail"))
    for seller in sorted(set(rules["seller"]) & set(names["seller"])):
        candidates = names.filter(pl.col("seller") == seller)
        entries = rules.filter(pl.col("seller") == seller)
        exprs = {}
        for provider, model, text in zip(entries["provider"], entries["model"], entries["match_rule"]):
            try:
                rule = json.loads(text) if text else None
            except ValueError:
                continue
            exprs[(provider, model)] = compile_rule(rule, pl.col("_id")) | compile_rule(rule, pl.col("_tail"))
        if not exprs:
            continue
        hits = candidates.select(*(e.alias(f"r{i}") for i, e in enumerate(exprs.values())))
        rule_names = pl.DataFrame(
            {
                "_rule": [f"r{i}" for i in range(len(exprs))],
                "_provider": [p for p, _ in exprs],
                "_model": [m for _, m in exprs],
            }
        )
        index = ["source", "provider", "model", "canonical_model"]
        long = (
            pl.concat([candidates.select(index), hits], how="horizontal")
            .unpivot(index=index, variable_name="_rule", value_name="_hit")
            .filter(pl.col("_hit"))
            .join(rule_names, on="_rule")
        )
        out.append(
            long.select(
                pl.col("_provider").alias("provider"),
                pl.col("_model").alias("model"),
                pl.col("source").alias("matched_source"),
                pl.col("provider").alias("matched_provider"),
                pl.col("model").alias("matched_model"),
                "canonical_model",
            )
        )
    columns = ("provider", "model", "matched_source", "matched_provider", "matched_model", "canonical_model")
    schema = {c: pl.String for c in columns}
    return pl.concat(out) if out else pl.DataFrame(schema=schema)


@formula(
    "canonical(entry) = the one canonical model of the other sources' keys its match rule names at the same seller",
    "genai-prices match rules (econ.fits.match_rules)",
)
def resolve(rules: pl.DataFrame, keys: pl.DataFrame, *, pairs: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per rule key: ``matched_keys`` (how many price keys of its seller it names), ``matched_models`` (how many
    canonical models those are) and ``canonical_model`` (the one model, else null). ``pairs``: the rules' matches
    (:func:`rule_matches`) when the caller has them already."""
    pairs = rule_matches(rules, keys) if pairs is None else pairs
    per = pairs.group_by("provider", "model").agg(
        pl.len().alias("matched_keys"),
        pl.col("canonical_model").drop_nulls().n_unique().alias("matched_models"),
        pl.col("canonical_model").drop_nulls().unique().sort().first().alias("_only"),
    )
    return per.with_columns(
        pl.when(pl.col("matched_models") == 1).then(pl.col("_only")).otherwise(None).alias("canonical_model")
    ).drop("_only")


def with_sellers(rules: pl.DataFrame, mapping: pl.DataFrame, source: str) -> pl.DataFrame:
    """``rules`` with ``seller``: the organisation running each rule key's provider (``price_keys``)."""
    sellers = (
        mapping.filter(pl.col("source") == source)
        .select("provider", pl.col("seller_organisation").alias("seller"))
        .unique(subset="provider")
    )
    return rules.select("provider", "model", "match_rule").join(sellers, on="provider", how="left")


RESOLVABLE = ("unmapped", "moving_alias")
"""The naming rules' outcomes a genai-prices entry's match rule may resolve (an entry they map keeps its model)."""


def other_keys(mapping: pl.DataFrame, source: str = "genai_prices") -> pl.DataFrame:
    """The price keys of every other source, with their seller: what ``source``'s match rules are read against."""
    return mapping.filter(pl.col("source") != source).select(
        "source", "provider", "model", "canonical_model", pl.col("seller_organisation").alias("seller")
    )


def matches(mapping: pl.DataFrame, rules: pl.DataFrame, *, source: str = "genai_prices") -> pl.DataFrame:
    """:func:`rule_matches` of ``source``'s rules against the other sources' keys of ``mapping``. :func:`apply`
    changes only ``source``'s rows, so the matches read before it and after it are the same."""
    return rule_matches(with_sellers(rules, mapping, source), other_keys(mapping, source))


def apply(
    mapping: pl.DataFrame, rules: pl.DataFrame, *, source: str = "genai_prices", pairs: pl.DataFrame | None = None
) -> pl.DataFrame:
    """``price_keys`` rows (:func:`econ.fits.model_identity.map_price_keys`) with ``source``'s unmapped and
    moving-alias keys given the one canonical model their match rule names (``match_rule = 'genai_match'``), and
    ``rule_matched_keys`` (keys of the seller the entry's rule names; null for keys without a rule). ``pairs``:
    :func:`matches` of ``mapping`` when the caller has them already."""
    resolved = resolve(with_sellers(rules, mapping, source), other_keys(mapping, source), pairs=pairs).with_columns(
        pl.lit(source).alias("source")
    )
    out = mapping.join(
        resolved.select("source", "provider", "model", "matched_keys", pl.col("canonical_model").alias("_via_rule")),
        on=["source", "provider", "model"],
        how="left",
    )
    use = pl.col("match_rule").is_in(RESOLVABLE) & pl.col("_via_rule").is_not_null()
    has_rule = rules.select(pl.lit(source).alias("source"), "provider", "model").unique()
    out = out.join(has_rule.with_columns(pl.lit(True).alias("_ruled")), on=["source", "provider", "model"], how="left")
    return out.with_columns(
        pl.when(use).then(pl.col("_via_rule")).otherwise(pl.col("canonical_model")).alias("canonical_model"),
        pl.when(use).then(pl.lit("genai_match")).otherwise(pl.col("match_rule")).alias("match_rule"),
        pl.when(pl.col("_ruled")).then(pl.col("matched_keys").fill_null(0)).alias("rule_matched_keys"),
    ).drop("_via_rule", "matched_keys", "_ruled")
