"""Fixtures for the report: a data set with thousands of real price rows and hostile names, built once.

``report_data`` is the tiny fixture data set plus the real LiteLLM (2025-09-01, 2026-11-20)
and OpenRouter (2026-08-19) price maps as snapshots, the replayed genai-prices and llm-prices histories shipped in
``data/history``, plus hand-kept price rows whose
provider, model and source URL try to break out of HTML and inline JSON. ``built_report``
is ``econ build`` of it (database and report) with ``SOURCE_DATE_EPOCH`` set.
"""

from __future__ import annotations

import os
import shutil
from datetime import date
from pathlib import Path

import pytest

from tests.conftest import shared_folder

from .price_maps import write_real_snapshots

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
AS_OF = date(2026, 11, 30)
SOURCE_DATE_EPOCH = "1796083200"  # 2026-12-01T00:00:00Z
GENERATED_ON = "2026-12-01"

XSS_MODEL = "<img src=x onerror=alert(1)>"
XSS_PROVIDER = "evil</script><script>alert(2)</script>"
XSS_URL = "javascript:alert(3)"
AMPERSAND_MODEL = "ampersand & 'quote' model"  # U+2028/U+2029 in a name are refused by the loader (tests/faults)
EARLIER_PERIOD = (
    "anthropic,claude-opus-4-6,standard,0,2025-11-01,2026-02-05,6,30,,,,,,,,"
    "https://example.org/synthetic,synthetic earlier period so the report has a first-party price history"
)
HOSTILE_ROWS = [
    f'"{XSS_PROVIDER}","{XSS_MODEL}",standard,0,2026-01-01,,1,3,,,,,,,,{XSS_URL},hostile names',
    f'acme,"{AMPERSAND_MODEL}",standard,0,2026-01-01,,2,8,,,,,,,,"https://example.org/""quoted""?a=1&b=2",ampersand',
]


def make_report_data(target: Path) -> Path:
    """The fixture data set + real snapshots + hostile rows, written to ``target``."""
    shutil.copytree(FIXTURE_DATA, target)
    prices = target / "prices.csv"
    text = prices.read_text(encoding="utf-8")
    prices.write_text(text.rstrip("\n") + "\n" + "\n".join([EARLIER_PERIOD, *HOSTILE_ROWS]) + "\n", encoding="utf-8")
    write_real_snapshots(target)
    shutil.copytree(Path(__file__).resolve().parents[2] / "data" / "history", target / "history")
    return target


@pytest.fixture(scope="session")
def report_data(tmp_path_factory) -> Path:
    """Made once for all xdist workers (only ever read)."""
    return shared_folder(tmp_path_factory, "report-data", lambda folder: make_report_data(folder / "data")) / "data"


@pytest.fixture(scope="session")
def asset_cache(tmp_path_factory) -> Path:
    """A build cache shared by the report tests (the Vega bundle is made once per session)."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _report_cache(asset_cache, monkeypatch):
    """Point the default build cache at the session's, so tests never write into the checkout."""
    import econ.paths

    monkeypatch.setattr(econ.paths, "CACHE_DIR", asset_cache)


def build_report(data_dir: Path, root: Path, *, cache_dir: Path) -> tuple[Path, Path]:
    """``econ build`` of ``data_dir`` into ``root`` (database and reports); returns (db, reports)."""
    import econ.paths
    from econ.build import build

    saved_env, saved_cache = os.environ.get("SOURCE_DATE_EPOCH"), econ.paths.CACHE_DIR
    os.environ["SOURCE_DATE_EPOCH"] = SOURCE_DATE_EPOCH
    econ.paths.CACHE_DIR = cache_dir
    try:
        build(
            data_dir=data_dir, db_path=root / "econ.duckdb", cache_dir=None, reports_dir=root / "reports", as_of=AS_OF
        )
    finally:
        econ.paths.CACHE_DIR = saved_cache
        if saved_env is None:
            os.environ.pop("SOURCE_DATE_EPOCH", None)
        else:
            os.environ["SOURCE_DATE_EPOCH"] = saved_env
    return root / "econ.duckdb", root / "reports"


@pytest.fixture(scope="session")
def built_report(report_data, tmp_path_factory) -> Path:
    """The reports folder of ``econ build`` on ``report_data``, built once for all xdist workers (~8 s; only ever read
    or copied)."""
    return (
        shared_folder(
            tmp_path_factory,
            "built-report",
            lambda folder: build_report(report_data, folder, cache_dir=folder / "cache"),
        )
        / "reports"
    )


@pytest.fixture(scope="session")
def built_db(built_report) -> Path:
    return built_report.parent / "econ.duckdb"
