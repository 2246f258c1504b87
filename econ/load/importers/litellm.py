"""Normalise LiteLLM's ``model_prices_and_context_window.json`` into price-snapshot rows.

The map is one JSON object: entry key -> dict of per-token prices and capabilities
(https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json).
One entry gives rows for (variant, long-context tier):

* price keys ``<component>[_above_<N>k_tokens][_<suffix>]``, where component is
  ``input_cost_per_token``, ``output_cost_per_token``, ``cache_read_input_token_cost``,
  ``cache_creation_input_token_cost`` (5-minute write), ``…_above_1hr`` (1-hour write) or
  ``…_above_12hr`` (12-hour write); ``_above_<N>k_tokens`` is the tier billed once the
  prompt exceeds N x 1000 tokens (LiteLLM and the providers bill the whole request at the
  tier rate); the suffix picks the variant: ``_batches`` batch, ``_flex`` flex,
  ``_priority`` priority, ``_ultrafast`` fast (none: standard);
* ``tiered_pricing`` (DashScope and a few others): a list of ``{"range": [start, end],
  <component>: …}``, one tier row per range with ``tier_min_prompt_tokens = start``;
* ``provider_specific_entry.fast`` (Anthropic fast mode): a multiplier on every standard
  price, giving the ``fast`` variant (its published speed multiple is not in the map, so
  ``speed_ratio`` stays blank; hand-kept data/prices.csv has it).

Text generation means ``mode`` chat, completion or responses, or no mode at all with
per-token prices (LiteLLM leaves the mode out of a few price classes such as
``fireworks-ai-up-to-4b``); a mode-less entry whose provider is an embedding class
(``fireworks_ai-embedding-models``) counts as mode embedding. Every other mode (embedding,
image_generation, audio_*, realtime, rerank, moderation, ocr, search, video_generation, …)
is skipped with the reason ``mode <x> is not text generation``. Aliases (``alias_of``)
carry no prices of their own and are skipped; so are ``sample_spec`` and
``fallback_generalizations``, which are not models.

Price keys that no column holds (audio, image, per-second, search, ``_balanced``,
``_decisions``, explicit cache reads, off-peak windows, uplift multipliers…) are counted by
family in ``ignored_keys``, so nothing is dropped silently.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

from econ.load.ceilings import TOKENS
from econ.load.importers.common import (
    DUPLICATE_ROW,
    EXAMPLES,
    INVALID,
    MULTIPLIER_CEILING,
    NAME_TOO_LONG,
    PRICE_TOO_HIGH,
    TIER_TOO_HIGH,
    TOO_HIGH,
    USD_PER_TOKEN_CEILING,
    Normalised,
    RowCollector,
    name_reason,
    parse_price,
    parse_tokens,
    shown_name,
)

REPO_URL = "https://github.com/BerriAI/litellm/blob/main/model_prices_and_context_window.json"
NON_MODEL_KEYS = frozenset({"sample_spec", "fallback_generalizations"})
TEXT_MODES = frozenset({"chat", "completion", "responses"})

NOT_A_MODEL = "not a model entry"
ALIAS = "alias of another entry (no prices of its own)"
NO_PROVIDER = "no litellm_provider"
NO_PRICE = "no per-token text price"
INVALID_PRICE = "invalid price value"
PROBLEMS = (INVALID_PRICE, PRICE_TOO_HIGH, TIER_TOO_HIGH, NAME_TOO_LONG)
"""Skip reasons that are a problem of the input's values (the import names the first entries)."""

_COMPONENT = {
    "input_cost_per_token": "input",
    "output_cost_per_token": "output",
    "cache_read_input_token_cost": "cache_read",
    "cache_creation_input_token_cost": "cache_write_5m",
    "cache_creation_input_token_cost_above_1hr": "cache_write_1h",
    "cache_creation_input_token_cost_above_12hr": "cache_write_12h",
}
_VARIANT = {None: "standard", "batches": "batch", "flex": "flex", "priority": "priority", "ultrafast": "fast"}
_PRICE_KEY = re.compile(
    r"^(?P<component>input_cost_per_token|output_cost_per_token|cache_read_input_token_cost"
    r"|cache_creation_input_token_cost(?:_above_(?:1|12)hr)?)"
    r"(?:_above_(?P<k>\d+)k_tokens)?(?:_(?P<suffix>batches|flex|priority|ultrafast))?$"
)
# families of price keys no column holds, first match wins (a key matching none is its own family)
_IGNORED_FAMILIES = (
    ("off-peak pricing", re.compile(r"off_peak")),
    ("explicit cache", re.compile(r"explicit_cache")),
    ("_balanced variant", re.compile(r"_balanced$")),
    ("_decisions variant", re.compile(r"_decisions$")),
    ("search / grounding", re.compile(r"search|query|grounding|maps")),
    ("audio", re.compile(r"audio")),
    ("image", re.compile(r"image|pixel")),
    ("video", re.compile(r"video")),
    ("per second", re.compile(r"second")),
    ("per character", re.compile(r"character")),
    ("reasoning tokens", re.compile(r"reasoning")),
    ("cache hit (same as cache read)", re.compile(r"cache_hit")),
    ("Databricks DBU", re.compile(r"dbu")),
    ("uplift multiplier", re.compile(r"multiplier")),
    ("per page / credit", re.compile(r"page|credit")),
    (
        "per call / session / storage",
        re.compile(r"session|calls|per_gb|per_request|per_text_message|per_unit|computer_use|citation"),
    ),
)


@cache
def classify_key(key: str) -> tuple:
    """``("price", component, tier_tokens, variant)``, ``("ignored", family)`` or ``("other",)``.

    Only keys that name a cost, a pricing or a multiplier count as price keys.
    """
    m = _PRICE_KEY.match(key)
    if m:
        tier = int(m["k"]) * 1000 if m["k"] else 0
        return ("price", _COMPONENT[m["component"]], tier, _VARIANT[m["suffix"]])
    if "cost" in key or "pricing" in key or key.endswith("multiplier"):
        for family, pattern in _IGNORED_FAMILIES:
            if pattern.search(key):
                return ("ignored", family)
        return ("ignored", key)
    return ("other",)


def entry_mode(entry: dict) -> str | None:
    """The entry's mode; a mode-less entry of an embedding provider class counts as embedding."""
    mode = entry.get("mode")
    if mode is None:
        provider = entry.get("litellm_provider")
        if isinstance(provider, str) and "embedding" in provider:
            return "embedding"
    return mode


def normalise(obj: dict) -> Normalised:
    """Normalise a parsed LiteLLM map (entry key -> entry); see the module docstring.

    Parameters
    ----------
    obj : dict
        The parsed JSON object.

    Returns
    -------
    Normalised
        Rows in PRICE_SNAPSHOT order with prices in USD/MTok, and counts per skip reason.
    """
    rows = RowCollector()
    skipped: Counter = Counter()
    examples: dict[str, list[str]] = {}
    imported = 0
    for key, entry in obj.items():
        reason = _entry_reason(key, entry)
        if reason is None:
            reason = _add_entry(key, entry, rows)
            if reason is None:
                imported += 1
                continue
        skipped[reason] += 1
        if reason in PROBLEMS and len(examples.setdefault(reason, [])) < EXAMPLES:
            examples[reason].append(shown_name(key))
    frame = rows.frame()
    return Normalised(frame, len(obj), imported, dict(skipped), dict(rows.ignored), dict(rows.dropped), examples)


def _entry_reason(key: str, entry) -> str | None:
    """Why the entry is skipped before its prices are read, or None."""
    if key in NON_MODEL_KEYS or not isinstance(entry, dict):
        return NOT_A_MODEL
    if "alias_of" in entry:
        return ALIAS
    provider = entry.get("litellm_provider")
    if not isinstance(provider, str) or not provider.strip():
        return NO_PROVIDER
    reason = name_reason(key, provider)
    if reason is not None:
        return reason
    mode = entry_mode(entry)
    if mode is not None and (not isinstance(mode, str) or mode not in TEXT_MODES):
        return f"mode {mode} is not text generation"
    return None


def _add_entry(key: str, entry: dict, rows: RowCollector) -> str | None:
    """Collect one entry's rows; returns the skip reason, or None when it gave rows."""
    prices: dict[tuple[str, int], dict[str, float]] = {}
    entry_ignored: list[str] = []
    for name, value in entry.items():
        kind = classify_key(name)
        if kind[0] == "price":
            if kind[2] > TOKENS.value:
                return TIER_TOO_HIGH
            x = parse_price(value)
            if x is INVALID or x is TOO_HIGH:
                return INVALID_PRICE if x is INVALID else PRICE_TOO_HIGH
            if x is not None:
                prices.setdefault((kind[3], kind[2]), {})[kind[1]] = x
        elif kind[0] == "ignored" and name != "tiered_pricing" and value is not None:
            entry_ignored.append(kind[1])
    duplicates = 0
    tiers = entry.get("tiered_pricing")
    if tiers is not None:
        tier_prices, bad, tier_ignored, duplicates = _tiered(tiers)
        if bad:
            return bad
        entry_ignored += tier_ignored
        for tier, p in tier_prices.items():
            if ("standard", tier) in prices:
                duplicates += 1
            else:
                prices[("standard", tier)] = p
    fast, fast_ignored = _fast_multiplier(entry.get("provider_specific_entry"))
    entry_ignored += fast_ignored
    if fast is not None:
        if any(
            v * fast > USD_PER_TOKEN_CEILING
            for (variant, _), p in prices.items()
            if variant == "standard"
            for v in p.values()
        ):
            return PRICE_TOO_HIGH
        for (variant, tier), p in list(prices.items()):
            if variant != "standard" or not p:
                continue
            if ("fast", tier) in prices:
                duplicates += 1
            else:
                prices[("fast", tier)] = {c: v * fast for c, v in p.items()}
    if not any(prices.values()):
        return NO_PRICE
    source = entry.get("source")
    source_url = (
        source.strip() if isinstance(source, str) and source.strip() and name_reason(source) is None else REPO_URL
    )
    max_input = parse_tokens(entry.get("max_input_tokens"))
    if max_input is None and entry.get("max_input_tokens") is not None:
        entry_ignored.append("max_input_tokens (not a positive whole number)")
    n = rows.add_entry(entry["litellm_provider"].strip(), key, key, source_url, prices, max_input_tokens=max_input)
    if n == 0:
        return NO_PRICE
    if duplicates:
        rows.dropped[DUPLICATE_ROW] += duplicates
    rows.ignored.update(entry_ignored)
    return None


def _tiered(tiers) -> tuple[dict[int, dict[str, float]], str | None, list[str], int]:
    """DashScope-style ``tiered_pricing``.

    Returns {tier start: prices}, the skip reason of an invalid or too high price (None: all fine),
    the ignored key families and the number of ranges that repeat an earlier start (the first is kept).
    """
    out: dict[int, dict[str, float]] = {}
    ignored: list[str] = []
    duplicates = 0
    if not isinstance(tiers, list):
        return out, None, ["tiered_pricing (not a list of ranges)"], 0
    for item in tiers:
        start = _range_start(item.get("range")) if isinstance(item, dict) else None
        if start is None:
            ignored.append("tiered_pricing item without a token range")
            continue
        p: dict[str, float] = {}
        for name, value in item.items():
            kind = classify_key(name)
            if kind[0] == "price" and kind[2] == 0 and kind[3] == "standard":
                x = parse_price(value)
                if x is INVALID or x is TOO_HIGH:
                    return out, INVALID_PRICE if x is INVALID else PRICE_TOO_HIGH, ignored, duplicates
                if x is not None:
                    p[kind[1]] = x
            elif kind[0] == "price":
                ignored.append(f"tiered_pricing: {name}")
            elif kind[0] == "ignored":
                ignored.append(f"tiered_pricing: {kind[1]}")
        if start in out:
            duplicates += 1
            continue
        out[start] = p
    return out, None, ignored, duplicates


def _range_start(value) -> int | None:
    """The first number of a ``[start, end]`` range as whole tokens (start may be 0)."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    start = value[0]
    if isinstance(start, bool) or not isinstance(start, (int, float)):
        return None
    try:
        start = float(start)
    except OverflowError:
        return None
    if not 0 <= start <= TOKENS.value or not start.is_integer():
        return None
    return int(start)


def _fast_multiplier(entry) -> tuple[float | None, list[str]]:
    """Anthropic fast mode: ``provider_specific_entry.fast`` as a positive multiplier, and ignored families."""
    if not isinstance(entry, dict):
        return None, []
    ignored = ["regional uplift multiplier (provider_specific_entry.us)"] if "us" in entry else []
    if "fast" not in entry:
        return None, ignored
    x = parse_price(entry["fast"], ceiling=MULTIPLIER_CEILING)
    if x is INVALID or x is TOO_HIGH or x is None or x <= 0:
        return None, ignored + ["provider_specific_entry.fast (not a positive number)"]
    return x, ignored
