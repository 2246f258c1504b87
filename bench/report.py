"""Report benchmark: site build time, page sizes and Chromium render time, one figure a line as ``name: value unit``.

Builds the database from ``data/`` (or ``--data``) into a temporary folder, then times the
site build three ways: cold (an empty build cache: the Vega bundle and every chart's SVG/PNG
export made afresh), after a data change (bundle cached, every export rendered again: the
worst case of a rebuild) and warm (bundle and exports from the cache: a rebuild whose charts
did not change); then the size of every page excluding the shared JavaScript, and the time
each page takes to draw all its charts in headless Chromium (skipped with a note when
Chromium is absent). Targets (issue 6): site < 3 s, every page < 300 KB, every page renders < 2 s.

    python3 bench/report.py [--data DIR] [--as-of YYYY-MM-DD]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from econ import paths  # noqa: E402
from econ.build import build  # noqa: E402
from econ.db import connect_read_only  # noqa: E402
from econ.report.browser import check_pages, find_chromium  # noqa: E402
from econ.report.exports import default_workers  # noqa: E402
from econ.report.site import build_site  # noqa: E402


def line(name: str, value: float | int | str, unit: str = "") -> None:
    text = f"{value:.3f}" if isinstance(value, float) else str(value)
    print(f"{name}: {text} {unit}".rstrip(), flush=True)


def timed_site(db: Path, out: Path, *, as_of: date, cache_dir: Path | None):
    with connect_read_only(db) as con:
        con.sql(f"set variable as_of = date '{as_of.isoformat()}'")
        started = time.perf_counter()
        result = build_site(con, out, as_of=as_of, cache_dir=cache_dir)
        return time.perf_counter() - started, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=paths.DATA_DIR)
    parser.add_argument("--as-of", type=date.fromisoformat, default=date(2026, 11, 30))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="econ-bench-report-") as tmp:
        tmp = Path(tmp)
        db = tmp / "econ.duckdb"
        build(data_dir=args.data, db_path=db, cache_dir=tmp / "analysis-cache", reports_dir=None, as_of=args.as_of)
        with connect_read_only(db) as con:
            line("price_rows", con.sql("select count(*) from prices").fetchall()[0][0], "rows")

        cache = tmp / "build-cache"
        cold_s, _ = timed_site(db, tmp / "cold", as_of=args.as_of, cache_dir=cache)
        shutil.rmtree(cache / "exports")  # as if every chart's data had changed
        changed_s, changed = timed_site(db, tmp / "changed", as_of=args.as_of, cache_dir=cache)
        warm_s, result = timed_site(db, tmp / "site", as_of=args.as_of, cache_dir=cache)
        line("site_build_cold_s", cold_s, "s")
        line("site_build_changed_s", changed_s, "s")
        line("site_build_s", warm_s, "s")
        for stage, seconds in changed.timings_s.items():
            line(f"site_changed_{stage}", seconds, "s")
        for stage, seconds in result.timings_s.items():
            line(f"site_{stage}", seconds, "s")
        line("figures", result.figures, "charts")
        line("export_workers", default_workers(), "processes")
        for page, size in sorted(result.pages.items()):
            line(f"page_size_{page.removesuffix('.html')}_kb", size / 1000, "KB")
        line("page_size_max_kb", max(result.pages.values()) / 1000, "KB")
        shared = sum(p.stat().st_size for p in (tmp / "site" / "assets").iterdir())
        line("shared_assets_kb", shared / 1000, "KB")

        if find_chromium() is None:
            print("# no Chromium found: render times skipped (apt-get install chromium)")
            return 0
        pages = [tmp / "site" / name for name in sorted(result.pages)]
        checks = check_pages(pages)
        for check in checks:
            line(f"render_{check.path.stem}_s", check.render_s, "s")
            if not check.ok:
                print(f"# {check.path.name}: " + "; ".join(check.problems()))
        line("render_max_s", max(c.render_s for c in checks), "s")
        line("pages_ok", sum(c.ok for c in checks), f"of {len(checks)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
