"""Report benchmark: a cold ``econ build`` beside the import of its dependencies, the site's size and render times.

One figure a line as ``name: value unit``. First, side by side in one run (best of three each, as subprocesses):
the time to ``import polars, duckdb, scipy.optimize, altair`` and a cold ``econ build`` with the report (empty
analysis cache and build cache, a new database and report folder), and their ratio (issue 17's target: ≤ 3).
Then the site alone (cold and warm bundle cache), every page's size, the whole report's size with the Vega bundle
(target ≤ 3 MB) and the time each page takes to draw all its charts in headless Chromium (skipped with a note
when Chromium is absent).

    python3 bench/report.py [--data DIR] [--as-of YYYY-MM-DD] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# A user's Python keeps the compiled modules between runs; a shell with PYTHONDONTWRITEBYTECODE set would have every
# process compile econ's ~240 modules again (~0.4 s), which no user pays after the first run.
USER_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
sys.path.insert(0, str(ROOT))

from econ import paths  # noqa: E402
from econ.build import build  # noqa: E402
from econ.db import connect_read_only  # noqa: E402
from econ.report.browser import check_pages, find_chromium  # noqa: E402
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


IMPORTS = "import polars, duckdb, scipy.optimize, altair"


def best_wall_s(argv: list[str], repeat: int, cwd: Path) -> float:
    """Best wall time of ``repeat`` runs of a subprocess (which must succeed)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, env=USER_ENV)
        best = min(best, time.perf_counter() - started)
    return best


def cold_build_s(data: Path, as_of: date, repeat: int, tmp: Path) -> float:
    """Best wall time of a cold ``econ build`` (report included) into fresh folders under ``tmp``."""
    best = float("inf")
    for i in range(repeat):
        run = tmp / f"cold-{i}"
        argv = [sys.executable, "-m", "econ", "build", "--data", str(data), "--db", str(run / "econ.duckdb")]
        argv += ["--reports", str(run / "reports"), "--cache", str(run / "cache"), "--as-of", as_of.isoformat()]
        started = time.perf_counter()
        subprocess.run(argv, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=USER_ENV)
        best = min(best, time.perf_counter() - started)
    return best


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=paths.DATA_DIR)
    parser.add_argument("--as-of", type=date.fromisoformat, default=date(2026, 11, 30))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="econ-bench-report-") as tmp:
        tmp = Path(tmp)
        import_s = best_wall_s([sys.executable, "-c", IMPORTS], args.repeat, ROOT)
        build_s = cold_build_s(args.data.resolve(), args.as_of, args.repeat, tmp)
        line("import_dependencies_s", import_s, "s")
        line("cold_build_with_report_s", build_s, "s")
        line("cold_build_over_import_ratio", build_s / import_s, "x")
        line("report_total_mb", folder_bytes(tmp / "cold-0" / "reports") / 1e6, "MB")

        db = tmp / "econ.duckdb"
        build(data_dir=args.data, db_path=db, cache_dir=tmp / "analysis-cache", reports_dir=None, as_of=args.as_of)
        with connect_read_only(db) as con:
            line("price_rows", con.sql("select count(*) from prices").fetchall()[0][0], "rows")

        cache = tmp / "build-cache"
        cold_s, _ = timed_site(db, tmp / "cold", as_of=args.as_of, cache_dir=cache)
        warm_s, result = timed_site(db, tmp / "site", as_of=args.as_of, cache_dir=cache)
        line("site_build_cold_s", cold_s, "s")
        line("site_build_s", warm_s, "s")
        for stage, seconds in result.timings_s.items():
            line(f"site_{stage}", seconds, "s")
        line("figures", result.figures, "charts")
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
