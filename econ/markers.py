"""How econ knows a path is its own output before it replaces or cleans it (I/O edge).

- A report folder carries :data:`REPORT_MARKER` (a report written before the marker existed is
  recognised by its ``assets/econ.js`` and ``index.html``).
- A cache folder carries :data:`CACHE_MARKER`; inside it econ drops only the entries it wrote (folders
  holding a ``manifest.json``).
- A database is a DuckDB file holding econ's ``build_info`` table (a DuckDB file that cannot be opened
  is a damaged database of econ's: a build replaces it).

Everything else is the user's: econ refuses to replace it and never removes it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

REPORT_MARKER = ".econ-report"
REPORT_MARKER_TEXT = (
    "This folder is written by econ (econ build, econ report) and replaced whole by every run.\n"
    "Keep no files of your own here: they would be removed with it.\n"
)
CACHE_MARKER = ".econ-cache"
CACHE_MARKER_TEXT = (
    "This folder is econ's build cache (econ build --cache): econ replaces its entries as inputs change.\n"
    "Keep no files of your own here.\n"
)
_LEGACY_SCRIPT = "/* econ report: "  # first line of assets/econ.js in every report econ has written
DUCKDB_MAGIC = b"DUCK"
_MAGIC_AT = 8  # a DuckDB file starts with an 8-byte checksum, then the magic bytes


def is_our_report(folder: Path) -> bool:
    """Whether ``folder`` is a report folder econ wrote (it has the marker, or the script of an older econ)."""
    folder = Path(folder)
    if (folder / REPORT_MARKER).is_file():
        return True
    try:
        with open(folder / "assets" / "econ.js", encoding="utf-8") as f:
            return f.read(len(_LEGACY_SCRIPT)) == _LEGACY_SCRIPT and (folder / "index.html").is_file()
    except (OSError, UnicodeDecodeError):
        return False


def write_report_marker(folder: Path) -> None:
    """Mark a staged report folder as econ's."""
    (Path(folder) / REPORT_MARKER).write_text(REPORT_MARKER_TEXT, encoding="utf-8")


def is_duckdb_file(path: Path) -> bool:
    """Whether ``path`` is a regular file that starts like a DuckDB database."""
    try:
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):
            return False
        with open(path, "rb") as f:
            head = f.read(_MAGIC_AT + len(DUCKDB_MAGIC))
    except OSError:
        return False
    return head[_MAGIC_AT:] == DUCKDB_MAGIC


def database_owner(path: Path) -> str | None:
    """None when ``path`` is econ's database (or a damaged DuckDB file a build may replace); else why it is not."""
    if not is_duckdb_file(path):
        return "it is not a DuckDB database"
    import duckdb

    try:
        with duckdb.connect(str(path), read_only=True) as con:
            found = con.execute(
                "select count(*) from duckdb_tables() where table_name = 'build_info' and schema_name = 'main'"
            ).fetchall()[0][0]
    except duckdb.Error:  # damaged blocks or a stray write-ahead log: a DuckDB file a rebuild replaces
        return None
    return None if found else "it is a DuckDB database without econ's build_info table"
