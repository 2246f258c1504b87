"""Filesystem and reproducibility helpers shared by the build and the report."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, date, datetime
from pathlib import Path

from econ.errors import EconError


def source_date() -> date | None:
    """``SOURCE_DATE_EPOCH`` (reproducible builds) as a UTC date, or None when unset."""
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if raw is None or raw.strip() == "":
        return None
    try:
        return datetime.fromtimestamp(int(raw), tz=UTC).date()
    except (ValueError, OverflowError, OSError):
        raise EconError(
            f"SOURCE_DATE_EPOCH={raw!r} is not a Unix time", "set it to whole seconds since 1970-01-01 UTC, or unset it"
        ) from None


def swap_in(staged: Path, target: Path) -> None:
    """Replace the folder ``target`` by ``staged`` with two renames; the old folder is removed last."""
    old = target.with_name(f".{target.name}.old-{os.getpid()}")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    staged.rename(target)
    shutil.rmtree(old, ignore_errors=True)
