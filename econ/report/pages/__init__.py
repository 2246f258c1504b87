"""The site's pages, in navigation order.

Each entry of :data:`SITE` is a page module (``NAME``, ``TITLE``, ``SUMMARY``, ``REQUIRES``,
``render(ctx) -> PageContent``; see :mod:`econ.report.page`). A page whose required tables are
missing or empty is skipped and the index says which. Adding a page = writing its module and
listing it here.
"""

from __future__ import annotations

from econ.report.pages import (
    changes,
    context_pricing,
    fast_mode,
    fleet,
    inferences,
    io_cache,
    prices,
    serving,
    sources,
    training,
    validation,
)

SITE: tuple = (
    serving,
    validation,
    context_pricing,
    io_cache,
    fast_mode,
    inferences,
    training,
    fleet,
    changes,
    prices,
    sources,
)
