"""The spec of a workload file for ``econ cost --requests FILE``: one row per request shape (and how many of it).

Read and checked by the same validator as ``data/`` (:func:`econ.load.spec.read_table`), so a bad cell is an error
naming the file, line and column.
"""

from __future__ import annotations

from datetime import datetime

import polars as pl

from econ.errors import Problem
from econ.load import ceilings
from econ.load.spec import FILE, LINE, Column, TableSpec

CACHE_TTLS = ("5m", "1h")


def request_time(text: str) -> datetime | None:
    """The zone-aware time of an ISO 8601 string with a zone (``2026-12-01T02:00Z``, ``…+08:00``); None if it is not
    one."""
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo is not None else None


def check_request_times(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """A request time, when given, is an ISO time with its zone."""
    if "at" not in frame.columns:
        return []
    return [
        Problem(r[FILE], r[LINE], "at", f"{r['at']!r} is not a time with a zone", "write e.g. 2026-12-01T02:00Z")
        for r in frame.filter(pl.col("at").is_not_null()).to_dicts()
        if request_time(r["at"]) is None
    ]


REQUESTS = TableSpec(
    name="requests",
    grain="one row per request shape (requests counts how many requests have it)",
    description="A workload for econ cost: tokens per request and how many such requests",
    key=(),
    columns=(
        Column(
            "input_tokens",
            "int",
            "tokens",
            "Uncached prompt tokens per request",
            required=True,
            min=0,
            ceiling=ceilings.TOKENS,
        ),
        Column(
            "output_tokens", "int", "tokens", "Output tokens per request", required=True, min=0, ceiling=ceilings.TOKENS
        ),
        Column(
            "cached_input_tokens",
            "int",
            "tokens",
            "Prompt tokens read from the cache per request",
            optional=True,
            min=0,
            ceiling=ceilings.TOKENS,
        ),
        Column(
            "cache_write_tokens",
            "int",
            "tokens",
            "Prompt tokens written to the cache per request",
            optional=True,
            min=0,
            ceiling=ceilings.TOKENS,
        ),
        Column(
            "cache_ttl",
            "str",
            "",
            "Retention of the cache writes: 5m or 1h (blank: 5m)",
            optional=True,
            allowed=CACHE_TTLS,
        ),
        Column(
            "cache_storage_hours",
            "float",
            "hours",
            "Hours the cached tokens are stored (explicit caches billed per hour)",
            optional=True,
            min=0,
            max=24 * 366,
        ),
        Column(
            "requests",
            "int",
            "requests",
            "How many requests of this shape (blank: 1)",
            optional=True,
            positive=True,
            max=1e12,
        ),
        Column(
            "at",
            "str",
            "",
            "When the requests are made, ISO 8601 with a zone (2026-12-01T02:00Z): time-of-day prices (blank: none)",
            optional=True,
        ),
    ),
    checks=(check_request_times,),
)
