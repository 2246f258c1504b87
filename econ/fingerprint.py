"""What identifies the code that built a database or a cached result: a hash of econ's source files."""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


_LAST: list[tuple[tuple, str]] = []
"""The last fingerprint and the (path, size, modification time) of every file it read: a refresh asks ~4 times (the
build, the report's stamp, the build record, the diff's check of the database), and reading and hashing the files
took 0.07-0.18 s each time."""


def code_fingerprint() -> str:
    """SHA-256 of every source file of the package (and the report's own and vendored JavaScript and CSS): a code
    change invalidates every cache and database. Hashed again only when a file was added, removed or touched."""
    report = PACKAGE_DIR / "report"
    paths = sorted([*PACKAGE_DIR.rglob("*.py"), *(report / "vendor").glob("*.js"), *(report / "static").glob("*")])
    stamp = tuple((path, st.st_size, st.st_mtime_ns) for path in paths for st in (path.stat(),))
    if _LAST and _LAST[0][0] == stamp:
        return _LAST[0][1]
    h = hashlib.sha256()
    for path in paths:
        h.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
        h.update(path.read_bytes())
    _LAST[:] = [(stamp, h.hexdigest())]
    return _LAST[0][1]
