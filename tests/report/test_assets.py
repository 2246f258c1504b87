"""Shared assets: the offline Vega bundle (cached, identical to a fresh one), the page script and styles."""

from __future__ import annotations

import re

import pytest

from econ.errors import EconNotice
from econ.report import assets


def test_bundle_defines_the_globals_the_page_script_uses_and_loads_nothing(asset_cache):
    bundle = assets.vega_bundle(asset_cache)
    assert all(f"window.{name}=" in bundle[-300:].replace(" ", "") for name in ("vegaEmbed", "vega", "vegaLite"))
    assert not re.search(r"^\s*import\s", bundle, flags=re.M)  # one self-contained script, no module imports


def test_cached_bundle_is_used_and_a_bad_cache_folder_does_not_fail(asset_cache, tmp_path):
    first = assets.vega_bundle(asset_cache)
    cached = list((asset_cache / "report").glob("vega-*.js"))  # (and its .sha256)
    assert len(cached) == 1 and cached[0].read_text(encoding="utf-8") == first
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    with pytest.warns(EconNotice, match="cannot be written"):
        assert assets.vega_bundle(blocked) == first  # bundled afresh, byte-identical, nothing written


def test_a_truncated_cached_bundle_is_never_published(tmp_path):
    """A cached vega.js cut short (no chart would draw) fails its hash: bundled again, with a notice."""
    first = assets.vega_bundle(tmp_path)
    (cached,) = (tmp_path / "report").glob("vega-*.js")
    cached.write_bytes(cached.read_bytes()[:1000])
    with pytest.warns(EconNotice, match=r"cached Vega bundle failed its check \(vega-.*\.js does not match its hash\)"):
        assert assets.vega_bundle(tmp_path) == first
    assert cached.read_text(encoding="utf-8") == first  # and the cache is whole again


def test_page_script_records_chart_status_and_errors():
    for needle in (
        "window.econReady",
        'setAttribute("data-status"',
        "g.role-mark > *",
        'addEventListener("error"',
        "table.sortable thead th",
    ):
        assert needle in assets.ECON_JS
    assert "http" not in assets.ECON_JS and "http" not in assets.ECON_CSS
