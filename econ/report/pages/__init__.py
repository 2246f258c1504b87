"""The site's pages, in navigation order.

Each entry of :data:`SITE` is a page module (``NAME``, ``TITLE``, ``SUMMARY``, ``REQUIRES``,
``render(ctx) -> PageContent``; see :mod:`econ.report.page`) or a :class:`Planned` page
whose module is not written yet: the index lists it with the tables it will need and
the headline figures it will supply. Adding a page = writing its module and replacing
its ``Planned`` entry here by the module.
"""

from __future__ import annotations

from dataclasses import dataclass

from econ.report.pages import changes, context_pricing, fast_mode, fleet, io_cache, prices, serving, sources, training


@dataclass(frozen=True)
class Planned:
    """A page the report will have once its analysis and page module exist."""

    name: str
    title: str
    summary: str
    requires: tuple[str, ...]
    headlines: tuple[tuple[str, str], ...] = ()  # (headline key, title) this page will supply


SITE: tuple = (
    serving,
    context_pricing,
    io_cache,
    fast_mode,
    training,
    fleet,
    changes,
    prices,
    sources,
)
