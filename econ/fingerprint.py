"""What identifies the code that built a database or a cached result: a hash of econ's source files."""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent


def code_fingerprint() -> str:
    """SHA-256 of every source file of the package (and the report's own and vendored JavaScript and CSS): a code
    change invalidates every cache and database."""
    h = hashlib.sha256()
    report = PACKAGE_DIR / "report"
    for path in sorted([*PACKAGE_DIR.rglob("*.py"), *(report / "vendor").glob("*.js"), *(report / "static").glob("*")]):
        h.update(path.relative_to(PACKAGE_DIR).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()
