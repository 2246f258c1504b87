"""What this machine has: its cores and its memory (the caps of the settings that multiply resources)."""

from __future__ import annotations

import os


def cores() -> int:
    """The cores this process may run on."""
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def memory_bytes() -> float:
    """Physical memory in bytes."""
    return float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
