"""Whether a name is a time zone, exactly as ``name in zoneinfo.available_timezones()`` answers, without listing them.

``available_timezones()`` walks every folder of ``zoneinfo.TZPATH`` and opens each of its ~600 files to read its
first four bytes: 7 to 14 ms of every load, to check the few zones that ``billing_windows.csv`` names. This looks
each name up where that walk would find it (tests/load/test_time_zones.py compares the two on every zone and on
names that are not zones).
"""

from __future__ import annotations

import functools
import os
import zoneinfo
from importlib import resources


@functools.cache
def _tzdata_zones() -> frozenset[str]:
    """The zones the tzdata package lists (none when it is not installed), the first source of the walk."""
    try:
        with resources.files("tzdata").joinpath("zones").open("r") as f:
            return frozenset(zone.strip() for zone in f if zone.strip())
    except (ImportError, FileNotFoundError):
        return frozenset()


def is_time_zone(name: str) -> bool:
    """``name in zoneinfo.available_timezones()``: a zone of tzdata, or a TZif file that ``os.walk`` finds at that
    relative path under a folder of TZPATH (not below its right/ and posix/ folders, nor through a linked folder),
    and never the special ``posixrules``."""
    if name == "posixrules":
        return False
    if name in _tzdata_zones():
        return True
    parts = name.split("/")
    if not all(parts) or any(part in (".", "..") for part in parts):
        return False
    if len(parts) > 1 and parts[0] in ("right", "posix"):
        return False
    return any(_found(root, parts) for root in zoneinfo.TZPATH)


def _found(root: str, parts: list[str]) -> bool:
    try:
        if not os.path.exists(root):
            return False
        folder = root
        for part in parts[:-1]:  # the walk enters listed folders that are not links
            if part not in os.listdir(folder):
                return False
            folder = os.path.join(folder, part)
            if not os.path.isdir(folder) or os.path.islink(folder):
                return False
        path = os.path.join(folder, parts[-1])
        if parts[-1] not in os.listdir(folder) or os.path.isdir(path):  # the walk lists a link to a folder as one
            return False
        with open(path, "rb") as f:
            return f.read(4) == b"TZif"
    except (OSError, ValueError):
        return False
