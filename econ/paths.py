"""Default locations, relative to the project folder (the one holding data/ and queries/)."""

from __future__ import annotations

import re
from pathlib import Path


def project_root() -> Path:
    """The checkout the package runs from; the working directory when installed elsewhere."""
    here = Path(__file__).resolve().parent.parent
    return here if (here / "queries").is_dir() else Path.cwd()


ROOT = project_root()
DATA_DIR = ROOT / "data"
QUERIES_DIR = ROOT / "queries"
DB_PATH = ROOT / "build" / "econ.duckdb"
CACHE_DIR = ROOT / "build" / "cache"
REPORTS_DIR = ROOT / "reports"

SNAPSHOT_DIR = "snapshots"
"""The folder of data/ that holds the imported price snapshots."""
SNAPSHOT_NAME = re.compile(r"^(?P<source>[a-z]+)_(?P<date>\d{4}-\d{2}-\d{2})\.csv$")
"""A snapshot's file name: ``<source>_<YYYY-MM-DD>.csv``."""
HISTORY_DIR = "history"
"""The folder of data/ that holds the replayed price histories (:mod:`econ.load.history`)."""
HISTORY_NAME = re.compile(r"^(?P<source>[a-z_]+)_(?:commits|changes)\.csv$")
"""A history's file name: ``<source>_commits.csv`` or ``<source>_changes.csv``."""
