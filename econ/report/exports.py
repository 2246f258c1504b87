"""SVG and PNG exports of the site's figures: cached by content, rendered in parallel worker processes.

An export is a pure function of the figure's Vega-Lite spec, the Vega-Lite and vl-convert
versions and the PNG scale, so each is kept in the build cache under the SHA-256 of those
(the way :mod:`econ.report.assets` keeps the Vega bundle): a rebuild renders only the charts
whose data or spec changed. The others are rendered by worker processes
(``export_worker.py``, one per CPU up to :data:`MAX_WORKERS`) while the main process goes on
building pages; on a single CPU they are rendered in-process. vl-convert is deterministic, so
the files are byte-identical whichever process renders them or whether they come from the
cache. The cache is checked and best-effort: a cached file is used only if it matches the SHA-256
stored beside it (``econ.cachefiles``), and a cache that cannot be read or written never fails a
report. Exports draw time scales in UTC (:func:`utc_times`) and chart CSVs neutralise text cells
that a spreadsheet would run as formulas (:func:`write_csv`).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import vl_convert as vlc

from econ.cachefiles import read_checked, write_checked
from econ.errors import ReportError
from econ.report.figures import PNG_SCALE, Exporter, vegalite_version
from econ.report.html import json_for_script

MAX_WORKERS = 4
WORKER = Path(__file__).with_name("export_worker.py")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a text cell as a formula (OWASP, "CSV Injection")."""
SCALED_CHANNELS = ("x", "y", "color", "fill", "stroke", "size", "opacity", "shape", "theta", "radius")


def write_csv(frame: pl.DataFrame, path: Path) -> None:
    """Write a chart's or a table's data as CSV with every text cell that starts like a formula neutralised.

    OWASP's advice for CSV injection: a text cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage
    return gets a leading single quote, so a spreadsheet shows ``'=HYPERLINK(…)`` as text instead of running
    it. Numbers, dates and booleans are written as they are (a negative number is data, not a formula); only
    text columns are touched, and a text cell that does not start like a formula is unchanged.
    """
    pattern = "^[" + "".join("\\" + c if c in "-" else c for c in FORMULA_START) + "]"
    text = [name for name, dtype in frame.schema.items() if dtype == pl.String]
    safe = frame.with_columns(
        pl.when(pl.col(c).str.contains(pattern)).then(pl.lit("'") + pl.col(c)).otherwise(pl.col(c)).alias(c)
        for c in text
    )
    safe.write_csv(path)


def utc_times(spec):
    """A copy of a Vega-Lite spec whose temporal position and mark scales are UTC (``scale.type = "utc"``).

    Dates are written as ISO text (UTC midnight); a local-time scale turns them into the renderer's local
    time, so the ticks of an export moved with ``TZ`` even when ``SOURCE_DATE_EPOCH`` fixed everything else.
    """
    if isinstance(spec, list):
        return [utc_times(v) for v in spec]
    if not isinstance(spec, dict):
        return spec
    out = {}
    for key, value in spec.items():
        value = utc_times(value)
        if key in SCALED_CHANNELS and isinstance(value, dict) and value.get("type") == "temporal":
            if value.get("scale", {}) is not None:
                scale = dict(value.get("scale") or {})
                if scale.get("type", "time") == "time":
                    scale["type"] = "utc"
                value = {**value, "scale": scale}
        out[key] = value
    return out


def default_workers() -> int:
    """Worker processes to start: one per CPU this process may use (at most :data:`MAX_WORKERS`), none on one CPU."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return 0 if cpus <= 1 else min(cpus, MAX_WORKERS)


@dataclass
class _Job:
    title: str
    key: str
    svg: Path
    png: Path


class Exports:
    """Writes each figure's ``.svg`` and ``.png``: from the cache, else rendered (in workers when there are CPUs).

    Parameters
    ----------
    cache_dir
        Build cache; exports are kept in ``<cache_dir>/exports/`` (``None``: no cache).
    workers
        Worker processes (default :func:`default_workers`; 0 renders in this process).
    png_scale
        PNG pixels per SVG pixel.

    :meth:`submit` queues a figure; :meth:`finish` waits for every export and raises
    :class:`~econ.errors.ReportError` if one could not be rendered; :meth:`close` stops the
    workers (call it when the report fails).
    """

    def __init__(self, cache_dir: Path | None, *, workers: int | None = None, png_scale: float = PNG_SCALE):
        self.vl_version = vegalite_version()
        self.png_scale = png_scale
        self.cache = Path(cache_dir) / "exports" if cache_dir is not None else None
        self.workers = default_workers() if workers is None else workers
        self.rendered = 0
        self.cached = 0
        self._inline: Exporter | None = None
        self._procs: list[subprocess.Popen] = []
        self._tmp: tempfile.TemporaryDirectory | None = None
        self._jobs: dict[int, _Job] = {}

    def key(self, spec: dict) -> str:
        """SHA-256 of everything an export depends on: the spec, the renderer's versions and the PNG scale."""
        text = f"{json_for_script(spec)}\0{self.vl_version}\0{vlc.__version__}\0{self.png_scale!r}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def submit(self, spec: dict, title: str, svg: Path, png: Path) -> None:
        """Write ``svg`` and ``png`` for ``spec`` now (cache, or in-process) or queue them for a worker.

        Time scales are drawn in UTC (:func:`utc_times`), so an export does not depend on ``TZ``.
        """
        spec = utc_times(spec)
        key = self.key(spec)
        if self._from_cache(key, svg, png):
            self.cached += 1
            return
        self.rendered += 1
        if self.workers == 0:
            self._inline = self._inline or Exporter(png_scale=self.png_scale)
            text = self._inline.svg(spec)
            svg.write_text(text, encoding="utf-8")
            png.write_bytes(self._inline.png(text))
            self._store(key, svg, png)
            return
        self._start()
        job_id = len(self._jobs)
        spec_path = Path(self._tmp.name) / f"{job_id}.json"
        spec_path.write_text(json.dumps(spec, ensure_ascii=False, allow_nan=False), encoding="utf-8")
        self._jobs[job_id] = _Job(title, key, svg, png)
        line = json.dumps(
            {
                "id": job_id,
                "spec_path": str(spec_path),
                "svg": str(svg),
                "png": str(png),
                "vl_version": self.vl_version,
                "png_scale": self.png_scale,
            }
        )
        proc = self._procs[job_id % len(self._procs)]
        try:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
        except OSError:  # the worker died; finish() reports it with its stderr
            pass

    def finish(self) -> None:
        """Wait for every queued export; raise ReportError naming the charts that failed."""
        try:
            done: dict[int, str | None] = {}
            stderr = []
            for proc in self._procs:
                out, err = proc.communicate()
                for line in out.splitlines():
                    if line.strip():
                        reply = json.loads(line)
                        done[reply["id"]] = reply["error"]
                if err.strip():
                    stderr.append(err.strip().splitlines()[-1])
            problems = []
            for job_id, job in sorted(self._jobs.items()):
                if job_id not in done:
                    problems.append(
                        f"chart {job.title!r} was not rendered ({'; '.join(stderr) or 'the worker stopped'})"
                    )
                elif done[job_id] is not None:
                    problems.append(f"chart {job.title!r} could not be rendered: {done[job_id]}")
                else:
                    self._store(job.key, job.svg, job.png)
            if problems:
                raise ReportError(
                    "; ".join(problems), "check the chart's spec (and that vl-convert-python is installed)"
                )
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers and remove the queued specs (idempotent)."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        self._procs = []
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _start(self) -> None:
        if self._procs:
            return
        self._tmp = tempfile.TemporaryDirectory(prefix="econ-exports-")
        for _ in range(self.workers):
            self._procs.append(
                subprocess.Popen(
                    [sys.executable, str(WORKER)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    encoding="utf-8",
                )
            )

    def _paths(self, key: str) -> tuple[Path, Path]:
        return self.cache / f"{key}.svg", self.cache / f"{key}.png"

    def _from_cache(self, key: str, svg: Path, png: Path) -> bool:
        """Copy a cached export whose SVG and PNG match their stored hashes; False (a notice if one did not)."""
        if self.cache is None:
            return False
        cached_svg, cached_png = self._paths(key)
        svg_bytes = read_checked(cached_svg, what="chart export")
        png_bytes = read_checked(cached_png, what="chart export") if svg_bytes is not None else None
        if svg_bytes is None or png_bytes is None:
            return False
        svg.write_bytes(svg_bytes)
        png.write_bytes(png_bytes)
        return True

    def _store(self, key: str, svg: Path, png: Path) -> None:
        if self.cache is None:
            return
        cached_svg, cached_png = self._paths(key)
        for source, target in ((png, cached_png), (svg, cached_svg)):
            write_checked(target, source.read_bytes(), root=self.cache.parent)
