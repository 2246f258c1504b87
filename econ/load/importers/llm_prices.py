"""Normalise Simon Willison's llm-prices data into price-snapshot rows.

https://github.com/simonw/llm-prices keeps one JSON file per vendor in ``data/`` (since 2025-10-10):
``{"vendor": v, "models": [{"id", "name", "price_history": [{"input", "output", "input_cached", "from_date",
"to_date"}]}]}``, prices in USD per million tokens, ``from_date`` inclusive and ``to_date`` exclusive (null: open),
which are the file's own dated price changes (``declared_from_date`` / ``declared_to_date``). The site publishes the
same records as ``historical-v1.json`` (``{"prices": [{"id", "vendor", "name", "input", "output", "input_cached",
"from_date", "to_date"}]}``) and the current ones as ``current-v1.json``. :func:`normalise` takes any of: one vendor
file, a list of vendor files (a commit's ``data/`` folder) or a published ``{"prices": [...]}`` file.

Before 2025-10-10 the prices lived in the page itself, as the JavaScript object ``presets`` of ``index.html``
(``'gpt-4o': { name: 'GPT-4o', input: 2.50, output: 10.00 }``, and one ``getPrice`` with a cutoff date for
DeepSeek's scheduled change of 2025-02-08): :func:`legacy_presets` reads that object into vendor files (vendor by
the id's prefix, :data:`LEGACY_VENDORS`), so the history from 2024-10 replays through the same normaliser.

A model whose id ends in ``-<N>k`` and whose name says ``>Nk`` (``gpt-5.5-272k``, "GPT-5.5 >272k") is the
long-context tier of the model without that suffix: a tier row with ``tier_min_prompt_tokens = N x 1000``. Image
generators ("(image gen)" in the name) are not text generation. Vendors are named as econ names sellers
(:data:`VENDORS`); ``input_cached`` is the cache-read price. The repository carries no licence file: econ keeps
only the price facts (ids, prices, dates), normalised, with the commit each came from.
"""

from __future__ import annotations

import re
from datetime import date

from econ.load import ceilings
from econ.load.importers.common import (
    INVALID,
    INVISIBLE,
    ORPHAN_TIER,
    PRICE_TOO_HIGH,
    TOO_HIGH,
    Normalised,
    RowCollector,
    Tally,
    has_invisible,
    parse_price,
)

SITE_URL = "https://www.llm-prices.com/"
VENDORS = {"amazon": "bedrock", "meta-ai": "meta", "moonshot-ai": "moonshot", "qwen": "alibaba"}
"""llm-prices vendor -> econ's seller name where they differ (Amazon's Nova prices are Bedrock's; Qwen's are Alibaba
Cloud Model Studio's)."""
LEGACY_VENDORS = (
    ("claude", "anthropic"),
    ("gpt", "openai"),
    ("chatgpt", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("text-davinci", "openai"),
    ("gemini", "google"),
    ("amazon-nova", "amazon"),
    ("deepseek", "deepseek"),
    ("grok", "xai"),
    ("mistral", "mistral"),
    ("pixtral", "mistral"),
    ("codestral", "mistral"),
    ("ministral", "mistral"),
    ("magistral", "mistral"),
    ("open-mi", "mistral"),
)
"""Id prefix -> vendor of the pre-2025-10 page (the vendor files of 2025-10-10 group the same ids this way)."""
TIER_ID = re.compile(r"^(?P<base>.+?)-{1,2}(?P<k>\d+)k$")
TIER_NAME = re.compile(r">\s*(?P<k>\d+)\s*k", re.I)

NOT_A_MODEL = "not a model entry"
NO_ID = "no model id"
DUPLICATE_ID = "duplicate model id in its vendor (kept the first)"
IMAGE = "image generation (not text generation)"
NO_PRICE = "no per-token text price"
INVALID_PRICE = "invalid price value"
INVALID_DATE = "invalid from_date or to_date"
PROBLEMS = (INVALID_PRICE, PRICE_TOO_HIGH, INVALID_DATE)
"""Skip reasons that are a problem of the input's values (the import names the first entries)."""


def vendor_files(obj) -> list[dict]:
    """The vendor files in ``obj`` (one vendor file, a list of them, or a published ``{"prices": [...]}``)."""
    if isinstance(obj, dict) and isinstance(obj.get("prices"), list):
        grouped: dict[tuple[str, str], dict] = {}
        files: dict[str, dict] = {}
        for record in obj["prices"]:
            if not isinstance(record, dict):
                files.setdefault("", {"vendor": "", "models": []})["models"].append(record)
                continue
            vendor = str(record.get("vendor") or "")
            key = (vendor, str(record.get("id")))
            if key not in grouped:
                grouped[key] = {"id": record.get("id"), "name": record.get("name"), "price_history": []}
                files.setdefault(vendor, {"vendor": vendor, "models": []})["models"].append(grouped[key])
            grouped[key]["price_history"].append(record)
        return list(files.values())
    return [obj] if isinstance(obj, dict) else list(obj)


def is_llm_prices(obj) -> bool:
    """Whether a parsed file has the shape of llm-prices data (a vendor file, a list of them, or ``{"prices"}``)."""
    if isinstance(obj, dict):
        return isinstance(obj.get("prices"), list) or ("vendor" in obj and isinstance(obj.get("models"), list))
    return isinstance(obj, list) and bool(obj) and all(isinstance(v, dict) and "vendor" in v for v in obj)


def normalise(obj) -> Normalised:
    """Normalise parsed llm-prices data (see the module docstring); entries are the models of every vendor."""
    rows = RowCollector(dated=True)
    tally = Tally(PROBLEMS)
    for vendor_file in vendor_files(obj):
        vendor = vendor_file.get("vendor") if isinstance(vendor_file, dict) else None
        models = vendor_file.get("models") if isinstance(vendor_file, dict) else None
        models = models if isinstance(models, list) else []
        names = {m.get("id") for m in models if isinstance(m, dict)}
        seen: set[str] = set()
        for model in models:
            reason = _reason(vendor, model, seen)
            if reason is None:
                reason = _add_model(str(vendor), model, names, rows)
            if reason is None:
                seen.add(model["id"])
            tally.add(reason, f"{vendor}:{model.get('id') if isinstance(model, dict) else model}")
    return tally.result(rows)


def _reason(vendor, model, seen: set[str]) -> str | None:
    if not isinstance(vendor, str) or not isinstance(model, dict):
        return NOT_A_MODEL
    mid = model.get("id")
    if not isinstance(mid, str) or not mid.strip():
        return NO_ID
    if has_invisible(mid, vendor):
        return INVISIBLE
    if mid in seen:
        return DUPLICATE_ID
    if "image gen" in str(model.get("name") or "").lower():
        return IMAGE
    return None


def tier_of(model_id: str, name: str, ids: set) -> tuple[str, int]:
    """(base model id, tier start in tokens) of a long-context tier entry, else (the id, 0)."""
    m, n = TIER_ID.match(model_id), TIER_NAME.search(name or "")
    if m and n and m["k"] == n["k"] and m["base"] in ids:
        return m["base"], int(m["k"]) * 1000
    if m and n and m["k"] == n["k"]:
        return m["base"], -1  # a tier whose base model is not listed
    return model_id, 0


def _day(value) -> date | None:
    return None if value is None else date.fromisoformat(str(value)[:10])


def _add_model(vendor: str, model: dict, ids: set, rows: RowCollector) -> str | None:
    history = model.get("price_history")
    history = history if isinstance(history, list) else [model]
    base, tier = tier_of(model["id"], str(model.get("name") or ""), ids)
    if tier < 0:
        rows.dropped[ORPHAN_TIER] += 1
        return NO_PRICE
    periods = []
    for record in history:
        if not isinstance(record, dict):
            continue
        prices = {}
        for name, component in (("input", "input"), ("output", "output"), ("input_cached", "cache_read")):
            x = parse_price(record.get(name), ceiling=ceilings.USD_PER_MTOK.value)
            if x is INVALID or x is TOO_HIGH:
                return INVALID_PRICE if x is INVALID else PRICE_TOO_HIGH
            if x is not None:
                prices[component] = x * 1e-6
        try:
            declared = (_day(record.get("from_date")), _day(record.get("to_date")))
        except ValueError:
            return INVALID_DATE
        if None not in declared and declared[1] <= declared[0]:  # a period that ends before it starts
            return INVALID_DATE
        if prices:
            periods.append((declared, prices))
    if not periods:
        return NO_PRICE
    provider = VENDORS.get(vendor, vendor)
    before, added = len(rows.rows), 0
    for declared, prices in periods:
        added += rows.add_entry(
            provider, base, f"{vendor}:{model['id']}", SITE_URL, {("standard", tier): prices},
            max_input_tokens=None, declared=declared,
        )  # fmt: skip
    if added == 0:
        del rows.rows[before:]
        return NO_PRICE
    return None


# ---------------------------------------------------------------------------- the page before 2025-10-10

_PRESETS = re.compile(r"const presets = \{")
_ENTRY = re.compile(r"'(?P<id>[^']+)'\s*:\s*\{")
_NUMBER = r"(\d+(?:\.\d*)?|\.\d+)"


def legacy_presets(page: str) -> list[dict]:
    """The ``presets`` object of the pre-2025-10 ``index.html`` as vendor files (empty when the page has none).

    Each entry ``'id': { name: '…', input: x, output: y }`` is one model with one price record; the one
    ``getPrice`` entry (DeepSeek's scheduled change) gives two records split at its ``cutoffDate`` (the first
    ``return`` before it, the second from that day). An id no :data:`LEGACY_VENDORS` prefix names is left out.
    """
    start = _PRESETS.search(page)
    if start is None:
        return []
    body = _balanced(page, start.end() - 1)
    files: dict[str, dict] = {}
    pos = 0
    while (m := _ENTRY.search(body, pos)) is not None:
        entry = _balanced(body, m.end() - 1)
        pos = m.end() - 1 + len(entry)
        vendor = next((v for prefix, v in LEGACY_VENDORS if m["id"].startswith(prefix)), None)
        if vendor is None:
            continue
        name = re.search(r"name:\s*'((?:[^'\\]|\\.)*)'", entry)
        model = {"id": m["id"], "name": name[1] if name else m["id"], "price_history": _legacy_history(entry)}
        files.setdefault(vendor, {"vendor": vendor, "models": []})["models"].append(model)
    return [files[v] for v in sorted(files)]


def _legacy_history(entry: str) -> list[dict]:
    def record(text: str, start=None, end=None) -> dict:
        out = {"from_date": start, "to_date": end, "input_cached": None}
        for key in ("input", "output"):
            m = re.search(rf"\b{key}:\s*{_NUMBER}", text)
            out[key] = float(m[1]) if m else None
        return out

    cutoff = re.search(r"new Date\('(\d{4}-\d{2}-\d{2})", entry)
    returns = re.findall(r"return\s*(\{[^}]*\})", entry)
    if cutoff and len(returns) == 2:
        return [record(returns[0], None, cutoff[1]), record(returns[1], cutoff[1], None)]
    return [record(entry)]


def _balanced(text: str, open_at: int) -> str:
    """``text`` from the brace at ``open_at`` to its matching closing brace (quotes respected)."""
    depth, quote, i = 0, None, open_at
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[open_at : i + 1]
        i += 1
    return text[open_at:]
