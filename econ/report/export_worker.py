"""Export worker: renders Vega-Lite specs to SVG and PNG with vl-convert, one job per input line.

Run as a script by :mod:`econ.report.exports` (it imports nothing from econ, so it starts in a
fraction of a second). Each stdin line is a JSON job ``{"id", "spec_path", "svg", "png",
"vl_version", "png_scale"}``; for each, one stdout line ``{"id": ..., "error": null | "message"}``.
"""

from __future__ import annotations

import json
import sys


def render(job: dict) -> None:
    import vl_convert as vlc

    with open(job["spec_path"], encoding="utf-8") as f:
        spec = json.load(f)
    svg = vlc.vegalite_to_svg(spec, vl_version=job["vl_version"])
    with open(job["svg"], "w", encoding="utf-8") as f:
        f.write(svg)
    png = vlc.svg_to_png(svg, scale=job["png_scale"])
    with open(job["png"], "wb") as f:
        f.write(png)


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        job = json.loads(line)
        try:
            render(job)
            error = None
        except Exception as e:  # vl-convert raises plain ValueError with the Vega message
            error = f"{type(e).__name__}: {e}"
        sys.stdout.write(json.dumps({"id": job["id"], "error": error}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
