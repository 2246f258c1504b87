"""What every ``econ`` command shares: argument types and the one way to write to stdout."""

from __future__ import annotations

import argparse
import sys
from datetime import date

VARIANT_CHOICES = ("standard", "batch", "flex", "priority", "fast")
HISTORY_CHOICES = ("genai_prices", "llm_prices")
"""econ.load.price_tables.HISTORY_SOURCES, spelled here so parsing the command line loads no data library."""
PRICE_SOURCES = ("litellm", "openrouter", *HISTORY_CHOICES)
"""econ.load.importers.SOURCES (tests/test_cli.py checks they agree)."""


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (use YYYY-MM-DD)") from None


def _whole(text: str) -> int:
    """A whole number, also written as 1e3 (the command checks its range and says what is allowed)."""
    try:
        value = float(text)
        if value.is_integer():
            return int(text) if text.strip().lstrip("+-").isdigit() else int(value)
    except (ValueError, OverflowError):
        pass
    raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")


def _positive(text: str) -> int:
    n = _whole(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return n


def _out(text: str) -> None:
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))
