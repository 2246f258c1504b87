"""Shared assets: the offline Vega bundle (the vendored releases), the page script and styles."""

from __future__ import annotations

import re

from econ.report import assets


def test_bundle_is_the_vendored_releases_in_load_order_and_loads_nothing():
    bundle = assets.vega_bundle()
    at = [bundle.index((assets.VENDOR / name).read_text(encoding="utf-8")) for name in assets.BUNDLE_FILES]
    assert at == sorted(at)  # each file whole and unmodified, vega before vega-lite before vega-embed
    for name in ("vega", "vegaLite", "vegaEmbed"):  # the UMD builds' globals, which econ.js uses
        assert f".{name}=" in bundle
    assert not re.search(r"^\s*import\s", bundle, flags=re.M)  # one self-contained script, no module imports


def test_the_vendored_vega_lite_is_the_version_altair_writes():
    """A newer Altair (the newest-versions job of .ci/run) that writes a newer Vega-Lite schema fails here: vendor
    the matching vega-lite release (econ/report/vendor/README.md)."""
    import altair as alt

    bundled = re.search(r'var n="(\d+\.\d+)\.\d+"', (assets.VENDOR / "vega-lite.min.js").read_text(encoding="utf-8"))
    assert bundled and bundled.group(1) == ".".join(alt.VEGALITE_VERSION.split(".")[:2])


def test_page_script_records_chart_status_and_errors():
    script = (assets.STATIC / "econ.js").read_text(encoding="utf-8")
    for needle in (
        "window.econReady",
        'setAttribute("data-status"',
        "g.role-mark > *",
        'addEventListener("error"',
        "table.sortable thead th",
    ):
        assert needle in script
    assert "http" not in script and "http" not in (assets.STATIC / "econ.css").read_text(encoding="utf-8")
