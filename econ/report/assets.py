"""The report's shared files in ``reports/assets/``: the Vega bundle, the page script and the style sheet.

``vega.js`` is Vega, Vega-Lite and Vega-Embed as released on npm (``econ/report/vendor/``, unmodified, with their
licences and hashes), one after the other: nothing is fetched from a CDN, and nothing is bundled at build time (the
bundler took ~2.3 s of every cold build and a 40 MB dependency).

``econ.js`` renders every chart of a page from its inline spec, records the outcome on the
chart's element (``data-status``, ``data-marks``) and in ``window.econReady`` (a promise the
browser check awaits), records load errors, and sorts tables by a click on a header.
"""

from __future__ import annotations

from pathlib import Path

VENDOR = Path(__file__).parent / "vendor"
BUNDLE_FILES = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")
"""In load order: each UMD build defines its global (``vega``, ``vegaLite``, ``vegaEmbed``) for the next."""

STATIC = Path(__file__).parent / "static"
"""The page script ``econ.js`` and style sheet ``econ.css``: econ's own, kept as files so they read (and lint) as
what they are."""


def vega_bundle() -> str:
    """Vega, Vega-Lite and Vega-Embed as one offline script: the vendored releases, in load order."""
    parts = [
        f"/* {name}: econ/report/vendor/README.md */\n" + (VENDOR / name).read_text(encoding="utf-8")
        for name in BUNDLE_FILES
    ]
    return "\n;\n".join(parts) + "\n"


def write_assets(folder: Path) -> dict[str, int]:
    """Write ``vega.js``, ``econ.js`` and ``econ.css`` into ``folder``; returns {file: bytes}."""
    folder.mkdir(parents=True, exist_ok=True)
    sizes = {}
    own = ((name, (STATIC / name).read_text(encoding="utf-8")) for name in ("econ.js", "econ.css"))
    for name, text in (("vega.js", vega_bundle()), *own):
        data = text.encode("utf-8")
        (folder / name).write_bytes(data)
        sizes[name] = len(data)
    return sizes
