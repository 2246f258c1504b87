"""Progress of a long command: library code says what it is doing (:func:`step`); the CLI draws it.

A step names its stage (``load``, ``analyses``, ``report``, ``commit``), the item it starts and how many of the
stage's ``total`` items are done before it. Nothing is drawn unless a caller installed a reporter with
:func:`reporting` (``econ.cli.progress`` does, for commands run on a terminal or piped), so the library stays
silent in tests, notebooks and the benchmarks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Reporter = Callable[[str, str, int, int], None]
"""``(stage, item, done, total)``: ``item`` starts now, ``done`` of the stage's ``total`` items are finished."""

_REPORTER: ContextVar[Reporter | None] = ContextVar("econ_progress", default=None)


def step(stage: str, item: str, done: int, total: int) -> None:
    """Say that ``item`` of ``stage`` starts, with ``done`` of ``total`` finished (no-op without a reporter)."""
    reporter = _REPORTER.get()
    if reporter is not None:
        reporter(stage, item, done, total)


def took(stage: str, item: str, seconds: float) -> None:
    """Say how long ``item`` of ``stage`` took, where items overlap (analyses run side by side) and the time between
    two :func:`step` calls is not one item's (no-op without a reporter, or one that does not record it)."""
    record = getattr(_REPORTER.get(), "took", None)
    if record is not None:
        record(stage, item, seconds)


@contextmanager
def reporting(reporter: Reporter) -> Iterator[None]:
    """Send every :func:`step` inside the block to ``reporter``."""
    token = _REPORTER.set(reporter)
    try:
        yield
    finally:
        _REPORTER.reset(token)
