"""The spec of a workload file for ``econ cost --requests FILE``: one row per request shape (and how many of it).

Read and checked by the same validator as ``data/`` (:func:`econ.load.spec.read_table`), so a bad cell is an error
naming the file, line and column.
"""

from __future__ import annotations

from econ.load import ceilings
from econ.load.spec import Column, TableSpec

CACHE_TTLS = ("5m", "1h")

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
    ),
)
