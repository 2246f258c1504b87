"""Normalise pydantic's genai-prices data file (``prices/data.json``, or the v2 feed ``prices/new_data/v2/data.json``)
into price-snapshot rows.

The file is a JSON list of providers (https://github.com/pydantic/genai-prices, MIT). A provider has ``id``,
``pricing_urls`` (``pricing_url`` before 2025-07) and ``models``; a model has ``id``, ``match`` (``matches`` before
2025-07: the rule naming the model ids it prices), ``context_window`` (``max_tokens`` before 2025-07) and ``prices``.
``prices`` is one price set, or a list of conditional price sets of which "the last active one is used":

* no ``constraint``: always active;
* ``constraint.start_date``: active from that day (the file's own dated price change, such as OpenAI's gpt-5.6
  luna/terra cut of 2026-07-30); a set is in effect from its start until the next later start, which becomes the
  row's ``declared_from_date`` / ``declared_to_date``;
* ``constraint.start_time``/``end_time``: a time-of-day window. One covering most of the day (at least
  :data:`STANDARD_WINDOW_HOURS`, DeepSeek's 00:30-16:30 UTC) is the standard price and the set it overrides the
  off-peak discount; a shorter one is an off-peak discount. No column holds off-peak prices: counted in
  ``ignored_keys``.

A price set maps ``input_mtok``, ``output_mtok``, ``cache_read_mtok``, ``cache_write_mtok`` (the default, 5-minute
write) and ``cache_write_1h_mtok`` to the snapshot's columns, in USD per million tokens as published. A value is a
number or ``{"base": x, "tiers": [{"start": n, "price": y}]}``: "input tokens crossing a tier apply that rate to all
tokens of this type" (the schema's TieredPrices), which is econ's long-context tier: one row per tier start, billed
once the prompt exceeds ``start``, each component at its own highest tier at or below that start (the base where it
has none). Audio, image, video, reasoning, citation and per-request prices are counted by family in
``ignored_keys``. A model with no output price anywhere (embeddings, rerankers) is not text generation.

Providers are named as econ names sellers (:data:`PROVIDERS`: ``aws`` is ``bedrock``, ``x-ai`` is ``xai``, …); the
model key is the file's model ``id``, ``source_key`` is ``<provider id>:<model id>``, and ``match_rule`` keeps the
entry's match rule (compact JSON) so the analyses can resolve it to econ's price keys and canonical models
(:mod:`econ.fits.match_rules`). Hugging Face router providers (``huggingface_<host>``) name models by their
Hugging Face repo, kept as ``hugging_face_id``.
"""

from __future__ import annotations

import json
from datetime import date, datetime

from econ.load import ceilings
from econ.load.importers.common import (
    INVALID,
    INVISIBLE,
    PRICE_TOO_HIGH,
    TOO_HIGH,
    Normalised,
    RowCollector,
    Tally,
    has_invisible,
    parse_price,
    parse_tokens,
)

REPO_URL = "https://github.com/pydantic/genai-prices/blob/main/prices/data.json"
PROVIDERS = {
    "aws": "bedrock",
    "fireworks": "fireworks_ai",
    "moonshotai": "moonshot",
    "together": "together_ai",
    "x-ai": "xai",
    "x": "xai",
    "zhipuai": "bigmodel",
}
"""genai-prices provider id -> econ's seller name (data/providers.csv) where they differ; others keep their id."""
COMPONENTS = {
    "input_mtok": "input",
    "output_mtok": "output",
    "cache_read_mtok": "cache_read",
    "cache_write_mtok": "cache_write_5m",
    "cache_write_1h_mtok": "cache_write_1h",
}
USD_PER_MTOK_CEILING = ceilings.USD_PER_MTOK.value
PER_MTOK = 1e-6  # the file's USD per million tokens -> the collector's USD per token
STANDARD_WINDOW_HOURS = 12.0
"""A time-of-day price set covering at least this many hours a day is the standard price (the rest of the day is the
off-peak discount): genai-prices files DeepSeek's standard price as the 00:30-16:30 UTC window over an off-peak base."""

NOT_A_PROVIDER = "not a provider entry"
NOT_A_MODEL = "not a model entry"
NO_ID = "no model id"
DUPLICATE_ID = "duplicate model id in its provider (kept the first)"
NO_PRICE = "no per-token text price"
NOT_TEXT = "no output price (embedding, rerank or other input-only model)"
INVALID_PRICE = "invalid price value"
INVALID_DATE = "invalid start_date in a price constraint"
PROBLEMS = (INVALID_PRICE, PRICE_TOO_HIGH, INVALID_DATE)
"""Skip reasons that are a problem of the input's values (the import names the first entries)."""


def normalise(obj: list) -> Normalised:
    """Normalise a parsed genai-prices data file (a list of providers); see the module docstring.

    Entries are the models of every provider (a provider that is not an object counts as one skipped entry).
    """
    rows = RowCollector(dated=True)
    tally = Tally(PROBLEMS)
    for provider in obj:
        if not isinstance(provider, dict) or not isinstance(provider.get("id"), str):
            tally.add(NOT_A_PROVIDER, str(provider)[:40])
            continue
        models = provider.get("models")
        seen: set[str] = set()
        for model in models if isinstance(models, list) else []:
            reason = _model_reason(provider, model, seen)
            if reason is None:
                reason = _add_model(provider, model, rows)
            if reason is None:
                seen.add(model["id"])
            tally.add(reason, f"{provider['id']}:{model.get('id') if isinstance(model, dict) else model}")
    return tally.result(rows)


def provider_name(genai_id: str) -> str:
    """econ's name of a genai-prices provider (:data:`PROVIDERS`)."""
    return PROVIDERS.get(genai_id, genai_id)


def _model_reason(provider: dict, model, seen: set[str]) -> str | None:
    if not isinstance(model, dict):
        return NOT_A_MODEL
    mid = model.get("id")
    if not isinstance(mid, str) or not mid.strip():
        return NO_ID
    if has_invisible(mid, provider["id"]):
        return INVISIBLE
    if mid in seen:
        return DUPLICATE_ID
    return None


def _price_sets(prices, ignored: list[str]) -> tuple[list[tuple[date | None, date | None, dict]], str | None]:
    """The conditional price sets in effect at some date, as (declared from, declared to, price set), or a reason.

    "The last active price is used": a set is in effect from its start (None: always) until the earliest later
    start; a set that a later unconstrained set overrides is never in effect.
    """
    items = prices if isinstance(prices, list) else [{"prices": prices}]
    sets: list[tuple[date | None, dict]] = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("prices"), dict):
            ignored.append("prices item without a price set")
            continue
        constraint = item.get("constraint")
        if constraint is None:
            sets.append((None, item["prices"]))
        elif isinstance(constraint, dict) and "start_date" in constraint:
            try:
                start = date.fromisoformat(str(constraint["start_date"])[:10])
            except ValueError:
                return [], INVALID_DATE
            sets.append((start, item["prices"]))
        elif _window_hours(constraint) >= STANDARD_WINDOW_HOURS:
            # the price of most of the day (DeepSeek's 00:30-16:30 UTC): the standard price; the set it overrides
            # outside that window is the off-peak discount, which no column holds
            ignored.append("off-peak price (outside a time-of-day window)")
            sets.append((None, item["prices"]))
        else:
            ignored.append("off-peak price (constraint start_time/end_time)")
    out = []
    for i, (start, price_set) in enumerate(sets):
        later = [s for s, _ in sets[i + 1 :]]
        if any(s is None for s in later):
            continue  # an unconstrained later set is always active: this one never is
        ends = [s for s in later if start is None or s > start]
        end = min(ends) if ends else None
        if start is not None and any(s <= start for s in later):
            continue  # a later set starting no later overrides it from its start on
        out.append((start, end, price_set))
    return out, None


def _window_hours(constraint) -> float:
    """Hours of the day a time-of-day constraint covers (0 when it is not one)."""
    if not isinstance(constraint, dict):
        return 0.0
    try:
        start, end = (
            datetime.strptime(str(constraint[k]).rstrip("Z")[:8], "%H:%M:%S") for k in ("start_time", "end_time")
        )
    except (KeyError, ValueError):
        return 0.0
    return ((end - start).total_seconds() / 3600) % 24


def _component_prices(price_set: dict, ignored: list[str]) -> tuple[dict[int, dict[str, float]], str | None]:
    """{tier start: {component: USD/token}} of one price set (tier 0 = base), or a skip reason."""
    base: dict[str, float] = {}
    tiers: dict[str, list[tuple[int, float]]] = {}
    for name, value in price_set.items():
        component = COMPONENTS.get(name)
        if component is None:
            if value is not None:
                ignored.append(_family(name))
            continue
        if isinstance(value, dict):
            x = _value(value.get("base"))
            if x is INVALID or x is TOO_HIGH:
                return {}, INVALID_PRICE if x is INVALID else PRICE_TOO_HIGH
            steps = []
            for tier in value.get("tiers") or []:
                start = parse_tokens(tier.get("start")) if isinstance(tier, dict) else None
                y = _value(tier.get("price")) if isinstance(tier, dict) else INVALID
                if y is INVALID or y is TOO_HIGH:
                    return {}, INVALID_PRICE if y is INVALID else PRICE_TOO_HIGH
                if start is None or y is None:
                    ignored.append("tier without a positive start or a price")
                    continue
                steps.append((start, y))
            tiers[component] = sorted(steps)
        else:
            x = _value(value)
            if x is INVALID or x is TOO_HIGH:
                return {}, INVALID_PRICE if x is INVALID else PRICE_TOO_HIGH
        if x is not None:
            base[component] = x
    starts = sorted({s for steps in tiers.values() for s, _ in steps})
    out = {0: base}
    for start in starts:
        row = dict(base)
        for component, steps in tiers.items():
            below = [y for s, y in steps if s <= start]
            if below:
                row[component] = below[-1]
        out[start] = row
    return out, None


def _value(value):
    """A per-MTok price as USD per token, None (absent), INVALID or TOO_HIGH."""
    x = parse_price(value, ceiling=USD_PER_MTOK_CEILING)
    return x if x is None or x is INVALID or x is TOO_HIGH else x * PER_MTOK


def _family(name: str) -> str:
    for word in ("audio", "image", "video", "reasoning", "citation", "request", "search"):
        if word in name:
            return f"{word} prices"
    return name


def _add_model(provider: dict, model: dict, rows: RowCollector) -> str | None:
    """Collect one model's rows (one per declared period, variant standard, and tier); returns the skip reason."""
    ignored: list[str] = []
    sets, reason = _price_sets(model.get("prices"), ignored)
    if reason:
        return reason
    collected = []
    for start, end, price_set in sets:
        prices, reason = _component_prices(price_set, ignored)
        if reason:
            return reason
        collected.append((start, end, prices))
    if not any(p for _, _, prices in collected for p in prices.values()):
        return NO_PRICE
    if not any("output" in p for _, _, prices in collected for p in prices.values()):
        return NOT_TEXT
    pid, mid = provider["id"], model["id"]
    urls = provider.get("pricing_urls") or [provider.get("pricing_url")]
    url = urls[0] if isinstance(urls, list) and urls and isinstance(urls[0], str) and urls[0].strip() else None
    source_url = url.strip() if url and not has_invisible(url) else REPO_URL
    context = model.get("context_window", model.get("max_tokens"))
    max_input = parse_tokens(context)
    if max_input is None and context is not None:
        ignored.append("context_window (not a positive whole number)")
    rule = model.get("match", model.get("matches"))
    match_rule = json.dumps(rule, sort_keys=True, separators=(",", ":"), ensure_ascii=False) if rule else None
    hf = mid if pid.startswith("huggingface_") and mid.count("/") == 1 else None
    added = 0
    before = len(rows.rows)
    for start, end, prices in collected:
        added += rows.add_entry(
            provider_name(pid),
            mid,
            f"{pid}:{mid}",
            source_url,
            {("standard", tier): p for tier, p in prices.items()},
            max_input_tokens=max_input,
            hugging_face_id=hf,
            declared=(start, end),
            match_rule=match_rule,
        )
    if added == 0:
        del rows.rows[before:]
        return NO_PRICE
    rows.ignored.update(ignored)
    return None
