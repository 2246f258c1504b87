"""Normalise an OpenRouter ``GET /api/v1/models`` response into price-snapshot rows.

The response is ``{"data": [model, …]}``; a model has ``id``, ``hugging_face_id``,
``context_length``, ``architecture.output_modalities`` and ``pricing`` with USD-per-token
prices written as strings: ``prompt``, ``completion``, ``input_cache_read``,
``input_cache_write`` (default, 5-minute retention) and ``input_cache_write_1h``
(https://openrouter.ai/docs/api-reference/models/get-models). Every row has provider
``openrouter`` (the seller of the tokens), model = ``id`` and variant ``standard``, except
that an id ending in ``:batch`` (OpenRouter's batch endpoint of a model, named
"… (batch)", at the batch discount) is the ``batch`` variant of the id without the
suffix, so it sits next to its standard row; ``source_key`` keeps the full id. Other
suffixes (``:free``, ``:thinking``) are separate offers with their own id.

``pricing.overrides`` holds two kinds of items in the real file: ``min_prompt_tokens``
items are long-context tiers (the same prices above that prompt length), imported as tier
rows with ``tier_min_prompt_tokens = min_prompt_tokens``; ``utc_start``/``utc_end`` items
are time-of-day (peak/off-peak) prices, which no column holds, so they are counted in
``ignored_keys``. A tier row holds only the prices its override gives (a price it leaves
out is blank, not inherited).

Models whose output is not text (image, embeddings, speech, transcription, video, rerank)
are skipped with ``output <modalities> is not text generation``. A negative price is
OpenRouter's mark for a router whose price depends on the model it picks (``openrouter/auto``
has -1): skipped as ``variable price (router)``. Free models (price 0) are imported.
"""

from __future__ import annotations

from collections import Counter

from econ.load.importers.common import (
    DUPLICATE_ROW,
    EXAMPLES,
    INVALID,
    NAME_TOO_LONG,
    PRICE_TOO_HIGH,
    TOO_HIGH,
    Normalised,
    RowCollector,
    name_reason,
    parse_price,
    parse_tokens,
    shown_name,
)

PROVIDER = "openrouter"
BATCH_SUFFIX = ":batch"
URL = "https://openrouter.ai/{id}"
PRICE_KEYS = {
    "prompt": "input",
    "completion": "output",
    "input_cache_read": "cache_read",
    "input_cache_write": "cache_write_5m",
    "input_cache_write_1h": "cache_write_1h",
}

NOT_A_MODEL = "not a model entry"
NO_ID = "no model id"
DUPLICATE_ID = "duplicate model id (kept the first)"
NO_PRICE = "no per-token text price"
INVALID_PRICE = "invalid price value"
VARIABLE_PRICE = "variable price (router)"
PROBLEMS = (INVALID_PRICE, PRICE_TOO_HIGH, NAME_TOO_LONG)
"""Skip reasons that are a problem of the input's values (the import names the first entries)."""


def normalise(obj: dict) -> Normalised:
    """Normalise a parsed OpenRouter models response; see the module docstring.

    Parameters
    ----------
    obj : dict
        The parsed JSON object, ``{"data": [model, …]}`` (the caller checks the shape).

    Returns
    -------
    Normalised
        Rows in PRICE_SNAPSHOT order with prices in USD/MTok, and counts per skip reason.
    """
    rows = RowCollector()
    skipped: Counter = Counter()
    seen: set[str] = set()
    examples: dict[str, list[str]] = {}
    imported = 0
    models = obj["data"]
    for model in models:
        reason = _model_reason(model, seen)
        if reason is None:
            reason = _add_model(model, rows)
        if reason is None:
            imported += 1
            seen.add(model["id"])
        else:
            skipped[reason] += 1
            if reason in PROBLEMS and len(examples.setdefault(reason, [])) < EXAMPLES:
                examples[reason].append(shown_name(model.get("id")))
    frame = rows.frame()
    return Normalised(frame, len(models), imported, dict(skipped), dict(rows.ignored), dict(rows.dropped), examples)


def _model_reason(model, seen: set[str]) -> str | None:
    """Why the model is skipped before its prices are read, or None."""
    if not isinstance(model, dict):
        return NOT_A_MODEL
    mid = model.get("id")
    if not isinstance(mid, str) or not mid.strip():
        return NO_ID
    reason = name_reason(mid)
    if reason is not None:
        return reason
    if mid in seen:
        return DUPLICATE_ID
    architecture = model.get("architecture")
    outputs = architecture.get("output_modalities") if isinstance(architecture, dict) else None
    if isinstance(outputs, list) and outputs and "text" not in outputs:
        return f"output {'+'.join(str(o) for o in outputs)} is not text generation"
    return None


def _prices(item: dict, ignored: list[str], prefix: str) -> tuple[dict[str, float], str | None]:
    """The mapped prices of a pricing dict or an override item (USD/token), or a skip reason."""
    p: dict[str, float] = {}
    for name, value in item.items():
        component = PRICE_KEYS.get(name)
        if component is None:
            if name not in ("overrides", "min_prompt_tokens", "utc_start", "utc_end") and value is not None:
                ignored.append(f"{prefix}{name}")
            continue
        x = parse_price(value)
        if x is TOO_HIGH:
            return p, PRICE_TOO_HIGH
        if x is INVALID:
            return p, VARIABLE_PRICE if _negative(value) else INVALID_PRICE
        if x is not None:
            p[component] = x
    return p, None


def _negative(value) -> bool:
    try:
        return not isinstance(value, bool) and float(value) < 0
    except (TypeError, ValueError):
        return False


def _add_model(model: dict, rows: RowCollector) -> str | None:
    """Collect one model's rows; returns the skip reason, or None when it gave rows."""
    pricing = model.get("pricing")
    if not isinstance(pricing, dict):
        return NO_PRICE
    ignored: list[str] = []
    base, reason = _prices(pricing, ignored, "")
    if reason:
        return reason
    prices = {("standard", 0): base}
    overrides = pricing.get("overrides")
    duplicates = 0
    if overrides is not None:
        for item in overrides if isinstance(overrides, list) else [overrides]:
            if not isinstance(item, dict):
                ignored.append("overrides: not an object")
                continue
            tier = parse_tokens(item.get("min_prompt_tokens"))
            if tier is None:
                window = "utc_start" in item or "utc_end" in item
                ignored.append(
                    "overrides: time-of-day window (utc_start/utc_end)"
                    if window
                    else "overrides: without min_prompt_tokens"
                )
                continue
            p, reason = _prices(item, ignored, "overrides: ")
            if reason:
                return reason
            if ("standard", tier) in prices:
                duplicates += 1
            else:
                prices[("standard", tier)] = p
    mid = model["id"]
    name, variant = (mid[: -len(BATCH_SUFFIX)], "batch") if mid.endswith(BATCH_SUFFIX) else (mid, "standard")
    prices = {(variant, tier): p for (_, tier), p in prices.items()}
    hf = model.get("hugging_face_id")
    hf = hf.strip() if isinstance(hf, str) and hf.strip() and name_reason(hf) is None else None
    max_input = parse_tokens(model.get("context_length"))
    if max_input is None and model.get("context_length") is not None:
        ignored.append("context_length (not a positive whole number)")
    n = rows.add_entry(PROVIDER, name, mid, URL.format(id=mid), prices, max_input_tokens=max_input, hugging_face_id=hf)
    if n == 0:
        return NO_PRICE
    if duplicates:
        rows.dropped[DUPLICATE_ROW] += duplicates
    rows.ignored.update(ignored)
    return None
