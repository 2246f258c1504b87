"""An audit hook that reports every file opened or folder listed beside the repository (not inside it).

Paths inside the checkout, in temporary folders, in the Python installation and elsewhere on the
machine are fine; what a user's clone lacks is whatever sits next to it (a sibling ``shared`` folder, say).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

EVENTS = {"open", "os.listdir", "os.scandir"}


def is_outside(path: str, repo: str) -> bool:
    """True for a path in the repository's parent folder that is not inside the repository itself."""
    full = os.path.abspath(path)
    parent = os.path.dirname(repo)
    return full.startswith(parent + os.sep) and not (full == repo or full.startswith(repo + os.sep))


def install(repo: str, report: Callable[[str], object]) -> None:
    """Call ``report(path)`` for each read beside ``repo`` from now on (re-entrant reports are ignored)."""
    repo = os.path.abspath(repo)
    busy = []

    def hook(event, args):
        if event not in EVENTS or busy or not args:
            return
        path = args[0]
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str) or not is_outside(path, repo):
            return
        busy.append(1)
        try:
            report(os.path.abspath(path))
        finally:
            busy.pop()

    sys.addaudithook(hook)
