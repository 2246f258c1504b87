"""What the LiteLLM and OpenRouter importers share: JSON reading, value parsing, the row frame.

The normalisers (``litellm.normalise``, ``openrouter.normalise``) are pure: a parsed JSON
object in, a :class:`Normalised` out (a frame in ``PRICE_SNAPSHOT`` column order plus
per-reason counts). Reading the file, picking the snapshot date and writing the CSV live in
``econ.load.importers`` (the I/O edge).

Prices are collected per entry in USD per token, as both maps publish them, and converted
to USD per million tokens once, for the whole frame, with :func:`econ.units.usd_per_token_to_usd_per_mtok`;
the result is rounded to 12 significant digits, which removes the binary noise of the
multiplication (2.5e-08 x 1e6 = 0.024999999999999998) and nothing the maps publish.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import polars as pl

from econ import units
from econ.errors import DataError, Problem
from econ.files import read_bounded
from econ.load import ceilings
from econ.load.csv_text import decode_utf8, display_path
from econ.load.tables import PRICE_SNAPSHOT, VARIANTS

# price components, in PRICE_SNAPSHOT column order (the value of each is USD per token while collecting)
COMPONENTS = ("input", "output", "cache_read", "cache_write_5m", "cache_write_1h", "cache_write_12h")
PRICE_COLUMNS = {
    "input": "input_usd_per_mtok",
    "output": "output_usd_per_mtok",
    "cache_read": "cache_read_usd_per_mtok",
    "cache_write_5m": "cache_write_5m_usd_per_mtok",
    "cache_write_1h": "cache_write_1h_usd_per_mtok",
    "cache_write_12h": "cache_write_12h_usd_per_mtok",
}
SIGNIFICANT_DIGITS = 12
EXAMPLES = 3
KEY = ["provider", "model", "variant", "tier_min_prompt_tokens"]
DATED_COLUMNS = ("declared_from_date", "declared_to_date", "match_rule")
"""Columns of the price databases that keep their own dated history (genai-prices, llm-prices): the source's own
effective period of a row and, for genai-prices, the entry's match rule (see ``econ.load.price_tables``)."""

# row-level reasons (a row dropped from an entry that is otherwise imported)
DUPLICATE_ROW = "duplicate row (same provider, model, variant, tier; kept the first)"
ORPHAN_TIER = "long-context tier without a base-tier price in its variant"
MAX_BELOW_TIER = "max_input_tokens (not above a tier threshold; left blank)"

INVISIBLE = "name with a control or line-separator character"
MAX_NAME_CHARS = 1000
NAME_TOO_LONG = f"name longer than {MAX_NAME_CHARS:,} characters (model keys are at most ~150)"
TIER_TOO_HIGH = f"long-context tier above {ceilings.TOKENS.value:g} tokens ({ceilings.TOKENS.why})"
SHOWN_NAME_CHARS = 80
_INVISIBLE = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def name_reason(*names: str) -> str | None:
    """Why an entry's names (key, provider) cannot be a model's: a refused character or a runaway length; else None."""
    if has_invisible(*names):
        return INVISIBLE
    if any(isinstance(n, str) and len(n) > MAX_NAME_CHARS for n in names):
        return NAME_TOO_LONG
    return None


def shown_name(name) -> str:
    """A name as a message shows it: at most :data:`SHOWN_NAME_CHARS` characters."""
    text = str(name)
    return text if len(text) <= SHOWN_NAME_CHARS else f"{text[:SHOWN_NAME_CHARS]}… ({len(text):,} characters)"


def has_invisible(*texts: str) -> bool:
    """Whether a name holds a character the loader refuses in names (controls, U+0085, U+2028, U+2029)."""
    return any(_INVISIBLE.search(t) for t in texts if isinstance(t, str))


INVALID = object()
"""Sentinel returned by :func:`parse_price` for a value that is present but not a price."""
TOO_HIGH = object()
"""Sentinel returned by :func:`parse_price` for a price above its physical ceiling."""
USD_PER_TOKEN_CEILING = ceilings.USD_PER_MTOK.value / units.MTOK
"""The price ceiling of the snapshot spec in the maps' unit (USD per token): 0.1."""
MULTIPLIER_CEILING = ceilings.SPEED_RATIO.value
"""The largest price multiplier (fast mode) accepted."""
PRICE_TOO_HIGH = f"price above {ceilings.USD_PER_MTOK.value:g} USD/MTok ({ceilings.USD_PER_MTOK.why})"
MAX_JSON_BYTES = 64 * 2**20
"""Largest price map econ reads: LiteLLM's map is ~1.5 MB, OpenRouter's models response ~3 MB."""
MAX_JSON_DEPTH = 32
"""Deepest nesting of objects and lists accepted in a price map (the real maps nest 4 deep)."""


@dataclass
class Normalised:
    """The result of normalising one price map.

    ``frame`` has the PRICE_SNAPSHOT columns (prices in USD/MTok), sorted by provider, model,
    variant (in VARIANTS order) and tier. ``entries`` counts every entry of the map;
    ``imported`` those that gave at least one row; ``skipped`` maps a reason to the number
    of entries skipped for it, so ``imported + sum(skipped.values()) == entries``.
    ``ignored_keys`` counts, by family, the price keys (and unusable values) of imported
    entries that no column holds (audio, image, per-second, search…); ``dropped_rows``
    counts rows left out of an imported entry (duplicates, tiers without a base tier), by
    reason. ``examples`` names the first :data:`EXAMPLES` entries skipped for a problem of the
    input's values (an invalid or impossible price), so the import can report them.
    """

    frame: pl.DataFrame
    entries: int
    imported: int
    skipped: dict[str, int]
    ignored_keys: dict[str, int] = field(default_factory=dict)
    dropped_rows: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)  # problem reason -> first entry keys


class Tally:
    """The entry counts of one normalisation: every entry imported or skipped with a reason, the first
    :data:`EXAMPLES` names of each problem reason (``problems``)."""

    def __init__(self, problems: tuple[str, ...]):
        self.problems, self.entries, self.imported = problems, 0, 0
        self.skipped: Counter = Counter()
        self.examples: dict[str, list[str]] = {}

    def add(self, reason: str | None, name: str) -> None:
        """One entry: imported (``reason`` None) or skipped for ``reason``."""
        self.entries += 1
        if reason is None:
            self.imported += 1
            return
        self.skipped[reason] += 1
        if reason in self.problems and len(self.examples.setdefault(reason, [])) < EXAMPLES:
            self.examples[reason].append(name)

    def result(self, rows: RowCollector) -> Normalised:
        frame = rows.frame()
        return Normalised(
            frame,
            self.entries,
            self.imported,
            dict(self.skipped),
            dict(rows.ignored),
            dict(rows.dropped),
            self.examples,
        )


def parse_price(value, *, ceiling: float = USD_PER_TOKEN_CEILING):
    """A price as a float (USD per token), ``None`` when absent, :data:`INVALID` or :data:`TOO_HIGH`.

    Numbers and numeric strings (OpenRouter writes prices as strings) are accepted; booleans,
    containers, non-finite (also integers too large for a float) and negative values are invalid,
    and so is a non-zero value below the snapshot spec's smallest magnitude (``ceilings.TINY``
    USD/MTok: a subnormal is a typo the loader would refuse); a value above ``ceiling`` (the
    snapshot spec's 1e5 USD/MTok) is too high.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return INVALID
    try:
        if isinstance(value, (int, float)):
            x = float(value)
        elif isinstance(value, str):
            text = value.strip()
            if not text:
                return None
            x = float(text)
        else:
            return INVALID
    except (ValueError, OverflowError):
        return INVALID
    if not math.isfinite(x) or x < 0 or 0 < x * units.MTOK < ceilings.TINY:
        return INVALID
    return TOO_HIGH if x > ceiling else x


def parse_tokens(value) -> int | None:
    """A positive whole number of tokens up to the spec's ceiling (ints, integral floats, numeric strings), else
    ``None``."""
    if value is None or isinstance(value, bool):
        return None
    try:
        if isinstance(value, str):
            value = float(value.strip())
        if isinstance(value, int):
            value = float(value)
    except (ValueError, OverflowError):
        return None
    if isinstance(value, float) and math.isfinite(value) and 0 < value <= ceilings.TOKENS.value and value.is_integer():
        return int(value)
    return None


class RowCollector:
    """Collects the rows of one map: per entry, ``(variant, tier) -> {component: USD/token}``.

    Rows are appended as tuples (no per-row frames), and :meth:`frame` builds, converts and
    sorts the whole frame at once. ``dropped`` counts rows left out by reason; ``ignored``
    counts keys and values of imported entries that no column holds, by family.
    """

    def __init__(self, *, dated: bool = False):
        self.rows: list[tuple] = []
        self.dropped: Counter = Counter()
        self.ignored: Counter = Counter()
        self.dated = dated  # rows carry DATED_COLUMNS (a source with its own dated price history)

    def add_entry(
        self,
        provider: str,
        model: str,
        source_key: str,
        source_url: str,
        prices: dict[tuple[str, int], dict[str, float]],
        *,
        max_input_tokens: int | None,
        hugging_face_id: str | None = None,
        declared: tuple[date | None, date | None] = (None, None),
        match_rule: str | None = None,
    ) -> int:
        """Add the rows of one entry; returns how many were added (0: the entry has no price).

        ``declared`` is the source's own effective period of these prices (from inclusive, to exclusive; None: open)
        and ``match_rule`` the model names the entry prices; both only for a ``dated`` collector.

        A row without any price is not a row. A tier row whose variant has no base-tier
        (0) price is dropped and counted. When a tier starts at or above the entry's
        ``max_input_tokens`` the two contradict each other (LiteLLM lists Claude Sonnet 4.5
        on Bedrock with a 200k context and a >200k tier, the price of the 1M-context beta);
        the published tier price is kept and ``max_input_tokens`` is left blank and counted.
        """
        rows = []
        orphans = 0
        bases = {variant for (variant, tier), p in prices.items() if tier == 0 and p}
        for (variant, tier), p in prices.items():
            if not p:
                continue
            if tier > 0 and variant not in bases and not self.dated:  # a dated source's tiers are checked in frame()
                orphans += 1
                continue
            rows.append((provider, model, variant, tier, *(p.get(c) for c in COMPONENTS)))
        if not rows:
            return 0
        if orphans:
            self.dropped[ORPHAN_TIER] += orphans
        if max_input_tokens is not None and any(r[3] >= max_input_tokens for r in rows):
            self.ignored[MAX_BELOW_TIER] += 1
            max_input_tokens = None
        tail = (max_input_tokens, hugging_face_id, source_url, source_key)
        if self.dated:
            tail += (*declared, match_rule)
        self.rows.extend(r + tail for r in rows)
        return len(rows)

    def frame(self) -> pl.DataFrame:
        """All rows in PRICE_SNAPSHOT column order, USD/MTok, sorted, one row per key."""
        schema = {
            "provider": pl.String,
            "model": pl.String,
            "variant": pl.String,
            "tier_min_prompt_tokens": pl.Int64,
            **{PRICE_COLUMNS[c]: pl.Float64 for c in COMPONENTS},
            "max_input_tokens": pl.Int64,
            "hugging_face_id": pl.String,
            "source_url": pl.String,
            "source_key": pl.String,
        }
        key, columns = KEY, [c.name for c in PRICE_SNAPSHOT.columns]
        if self.dated:
            schema |= {"declared_from_date": pl.Date, "declared_to_date": pl.Date, "match_rule": pl.String}
            key, columns = [*KEY, "declared_from_date"], [*columns, *DATED_COLUMNS]
        raw = pl.DataFrame(self.rows, schema=schema, orient="row")
        before = raw.height
        raw = raw.unique(subset=key, keep="first", maintain_order=True)
        if raw.height < before:
            self.dropped[DUPLICATE_ROW] += before - raw.height
        if self.dated:  # a tier entry (llm-prices lists it apart) needs a base-tier row of its model and period
            group = ["provider", "model", "variant", "declared_from_date"]
            bases = raw.filter(pl.col("tier_min_prompt_tokens") == 0).select(group).unique()
            kept = raw.filter(pl.col("tier_min_prompt_tokens") == 0).vstack(
                raw.filter(pl.col("tier_min_prompt_tokens") > 0).join(bases, on=group, how="semi", nulls_equal=True)
            )
            if kept.height < raw.height:
                self.dropped[ORPHAN_TIER] += raw.height - kept.height
            raw = kept
        rank = pl.col("variant").replace_strict(list(VARIANTS), list(range(len(VARIANTS))), return_dtype=pl.Int32)
        converted = raw.with_columns(
            *[
                units.usd_per_token_to_usd_per_mtok(pl.col(PRICE_COLUMNS[c])).round_sig_figs(SIGNIFICANT_DIGITS)
                for c in COMPONENTS
            ],
            pl.lit(None, pl.Float64).alias("cache_storage_usd_per_mtok_hour"),
            pl.lit(None, pl.Float64).alias("speed_ratio"),
        )
        order = ["provider", "model", rank, "tier_min_prompt_tokens"] + (["declared_from_date"] if self.dated else [])
        return converted.sort(order, nulls_last=False).select(columns)


def read_json(path: Path):
    """Parse a JSON file; every way it can be unreadable becomes a :class:`DataError`.

    Not a regular file (a FIFO, a device), larger than :data:`MAX_JSON_BYTES`, empty, not UTF-8
    (a BOM is accepted), invalid/truncated JSON (with the line and column the parser stopped at),
    or nested deeper than :data:`MAX_JSON_DEPTH`.
    """
    shown = display_path(path)
    raw = read_bounded(
        Path(path),
        max_bytes=MAX_JSON_BYTES,
        shown=shown,
        what="a price map",
        hint="check the path of the file to import",
    )
    return parse_json(raw, shown)


def parse_json(raw: bytes, shown: str):
    """:func:`read_json` of bytes already read (``shown`` names them in errors)."""
    text = decode_utf8(
        raw,
        shown,
        empty_hint="is the file complete? download it again",
        utf8_hint="JSON files are UTF-8; download the file again or save it as UTF-8",
    )
    too_deep = DataError(
        [
            Problem(
                shown,
                None,
                None,
                f"is nested more than {MAX_JSON_DEPTH} levels deep (price maps nest 4)",
                "is this a price map? give LiteLLM's or OpenRouter's file",
            )
        ]
    )
    try:
        obj = json.loads(text)
    except RecursionError:
        raise too_deep from None
    except json.JSONDecodeError as e:
        raise DataError(
            [
                Problem(
                    shown, e.lineno, str(e.colno), f"invalid JSON ({e.msg})", "is the file complete? download it again"
                )
            ]
        ) from None
    if _depth(obj) > MAX_JSON_DEPTH:
        raise too_deep
    return obj


def _depth(obj) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_JSON_DEPTH:
            stack.extend((child, depth + 1) for child in children)
    return deepest


def shape_error(path: Path, what: str, hint: str) -> DataError:
    """The whole file has the wrong top-level shape for its source."""
    return DataError([Problem(display_path(path), None, None, what, hint)])
