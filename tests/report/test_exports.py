"""Exports: the same bytes whether rendered in a worker, in-process or read from the cache; failures name the chart."""

from __future__ import annotations

import hashlib

import pytest

from econ.errors import EconNotice, ReportError
from econ.report.exports import Exports, default_workers
from econ.report.figures import Exporter


def spec(title: str, n: int = 3) -> dict:
    return {
        "title": title,
        "width": 120,
        "height": 80,
        "mark": "point",
        "data": {"values": [{"x": i, "y": i * i} for i in range(1, n + 1)]},
        "encoding": {"x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"}},
    }


SPECS = [spec("one"), spec("two", 5), spec("three", 8)]


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export_all(tmp_path, name, *, cache, workers):
    out = tmp_path / name
    out.mkdir()
    exports = Exports(cache, workers=workers)
    for i, s in enumerate(SPECS):
        exports.submit(s, s["title"], out / f"{i}.svg", out / f"{i}.png")
    exports.finish()
    return {p.name: digest(p) for p in sorted(out.iterdir())}, exports


def test_workers_in_process_and_cache_give_the_same_bytes_as_the_plain_exporter(tmp_path):
    exporter = Exporter()
    expected = {}
    for i, s in enumerate(SPECS):
        svg = exporter.svg(s)
        expected[f"{i}.svg"] = hashlib.sha256(svg.encode("utf-8")).hexdigest()
        expected[f"{i}.png"] = hashlib.sha256(exporter.png(svg)).hexdigest()
    cache = tmp_path / "cache"
    in_workers, first = export_all(tmp_path, "workers", cache=cache, workers=2)
    assert in_workers == expected and (first.rendered, first.cached) == (3, 0)
    from_cache, second = export_all(tmp_path, "cached", cache=cache, workers=2)
    assert from_cache == expected and (second.rendered, second.cached) == (0, 3)
    in_process, third = export_all(tmp_path, "inline", cache=None, workers=0)
    assert in_process == expected and (third.rendered, third.cached) == (3, 0)
    # each export and its SHA-256, written last (econ.cachefiles)
    assert sorted(p.suffix for p in (cache / "exports").iterdir()) == [".png"] * 3 + [".sha256"] * 6 + [".svg"] * 3
    assert all(
        (cache / "exports" / f).read_bytes()[:4] == b"\x89PNG"
        for f in [p.name for p in (cache / "exports").iterdir() if p.suffix == ".png"]
    )


def test_the_cache_key_changes_with_the_spec_and_the_png_scale(tmp_path):
    a, b = Exports(tmp_path), Exports(tmp_path, png_scale=1.0)
    assert a.key(SPECS[0]) == a.key(dict(SPECS[0])) != a.key(SPECS[1])
    assert a.key(SPECS[0]) != b.key(SPECS[0])


def test_an_unreadable_cache_never_fails_a_report(tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("not a folder")  # <cache>/exports cannot be created
    with pytest.warns(EconNotice, match=r"^the cache .*cache cannot be written \(Not a directory\); going on without"):
        files, exports = export_all(tmp_path, "out", cache=blocker, workers=0)
    assert len(files) == 6 and exports.rendered == 3


@pytest.mark.parametrize("workers", [0, 2])
def test_a_chart_that_cannot_be_rendered_is_named(tmp_path, workers):
    bad = spec("broken chart")
    bad["transform"] = [{"calculate": "datum.x +* ) 2", "as": "z"}]  # Vega cannot parse the expression
    exports = Exports(None, workers=workers)
    with pytest.raises(ReportError, match="chart 'broken chart'"):
        exports.submit(bad, "broken chart", tmp_path / "b.svg", tmp_path / "b.png")
        exports.finish()
    exports.close()


def test_close_stops_the_workers_and_removes_the_queued_specs(tmp_path):
    exports = Exports(None, workers=2)
    exports.submit(SPECS[0], "one", tmp_path / "a.svg", tmp_path / "a.png")
    procs, queued = list(exports._procs), exports._tmp.name
    exports.close()
    assert all(p.poll() is not None for p in procs)
    assert not (tmp_path / queued).exists()
    exports.close()  # idempotent


def test_default_workers_is_zero_on_one_cpu(monkeypatch):
    import os

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert default_workers() == 0
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    assert default_workers() == 4


def test_a_cached_export_that_does_not_match_its_hash_is_rendered_again(tmp_path):
    cache = tmp_path / "cache"
    reference, _ = export_all(tmp_path, "first", cache=cache, workers=0)
    png = sorted((cache / "exports").glob("*.png"))[0]
    png.write_bytes(png.read_bytes()[:100])  # truncated
    with pytest.warns(EconNotice, match=r"cached chart export failed its check \(.*png does not match its hash\)"):
        again, exports = export_all(tmp_path, "second", cache=cache, workers=0)
    assert again == reference and (exports.rendered, exports.cached) == (1, 2)


def test_exports_draw_time_scales_in_utc_whatever_the_time_zone(tmp_path):
    """The ticks of a date axis must not move with TZ (vl-convert draws a local-time scale in the process's zone)."""
    import os
    import subprocess
    import sys

    dated = {
        "title": "dated",
        "mark": "line",
        "data": {"values": [{"d": "2025-09-01", "v": 1}, {"d": "2026-11-20", "v": 2}]},
        "encoding": {"x": {"field": "d", "type": "temporal"}, "y": {"field": "v", "type": "quantitative"}},
    }
    script = (
        "import json, sys; from econ.report.exports import Exports; e = Exports(None, workers=0); "
        "e.submit(json.loads(sys.argv[1]), 't', __import__('pathlib').Path(sys.argv[2]), "
        "__import__('pathlib').Path(sys.argv[3])); e.finish()"
    )
    svgs = []
    for zone in ("UTC", "America/Los_Angeles", "Asia/Tokyo"):
        svg, png = tmp_path / f"{zone.replace('/', '-')}.svg", tmp_path / f"{zone.replace('/', '-')}.png"
        env = {**os.environ, "TZ": zone, "SOURCE_DATE_EPOCH": "1796083200"}
        import json

        subprocess.run([sys.executable, "-c", script, json.dumps(dated), svg, png], env=env, check=True)
        svgs.append(svg.read_bytes())
    assert svgs[0] == svgs[1] == svgs[2]
