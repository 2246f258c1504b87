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

ECON_JS = r"""/* econ report: render inline Vega-Lite specs offline, record their status, sort tables. */
(function () {
  "use strict";
  var errors = [];
  window.econViews = {};  /* chart id -> Vega view, for scripting and checks */
  function record(message) {
    errors.push(String(message));
    document.documentElement.setAttribute("data-errors", String(errors.length));
  }
  window.addEventListener("error", function (event) {
    var target = event.target;
    if (target && target !== window && (target.src || target.href)) {
      record("failed to load " + (target.src || target.href));
    } else {
      record(event.message || "script error");
    }
  }, true);
  window.addEventListener("unhandledrejection", function (event) { record(event.reason); });

  function countMarks(element) {
    return element.querySelectorAll("svg g.role-mark > *").length;
  }

  function failed(element, id, reason) {
    var message = "chart " + id + " could not be drawn: " + reason;
    element.setAttribute("data-status", "error");
    element.textContent = message;
    console.error(message);
    return {id: id, status: "error", marks: 0, error: String(reason)};
  }

  function renderOne(element) {
    var id = element.getAttribute("data-spec");
    var spec;
    try {
      spec = JSON.parse(document.getElementById(id).textContent);
    } catch (err) {
      return Promise.resolve(failed(element, id, err));
    }
    if (typeof window.vegaEmbed !== "function") {
      return Promise.resolve(failed(element, id, "assets/vega.js did not load"));
    }
    /* the embed's own menu saves the chart as SVG or PNG in the reader's browser; no source or editor links */
    var options = {renderer: "svg", mode: "vega-lite",
                   actions: {export: true, source: false, compiled: false, editor: false}};
    return window.vegaEmbed(element, spec, options).then(function (result) {
      window.econViews[id] = result.view;
      var marks = countMarks(element);
      var status = marks > 0 ? "rendered" : "empty";
      element.setAttribute("data-status", status);
      element.setAttribute("data-marks", String(marks));
      return {id: id, status: status, marks: marks, error: null};
    }, function (err) {
      return failed(element, id, err);
    });
  }

  function renderAll() {
    var elements = Array.prototype.slice.call(document.querySelectorAll("[data-spec]"));
    return Promise.all(elements.map(renderOne)).then(function (charts) {
      document.documentElement.setAttribute("data-charts-done", String(charts.length));
      return {charts: charts, errors: errors.slice(), renderMs: performance.now()};
    });
  }

  window.econReady = new Promise(function (resolve) {
    function start() { renderAll().then(resolve); }
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", start);
    } else {
      start();
    }
  });

  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    return (cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent).trim();
  }

  function sortBy(th) {
    var table = th.closest("table");
    var body = table.tBodies[0];
    var headers = Array.prototype.slice.call(th.parentNode.children);
    var index = headers.indexOf(th);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var keyed = Array.prototype.slice.call(body.rows).map(function (row, i) {
      return {row: row, i: i, raw: cellValue(row, index)};
    });
    var numeric = keyed.every(function (k) {
      return k.raw === "" || isFinite(Number(k.raw.replace(/,/g, "")));
    });
    keyed.sort(function (a, b) {
      if (a.raw === "" || b.raw === "") { return (a.raw === "") - (b.raw === "") || a.i - b.i; }
      var c = numeric ? Number(a.raw.replace(/,/g, "")) - Number(b.raw.replace(/,/g, ""))
                      : a.raw.localeCompare(b.raw);
      return (ascending ? c : -c) || a.i - b.i;
    });
    keyed.forEach(function (k) { body.appendChild(k.row); });
  }

  document.addEventListener("click", function (event) {
    var th = event.target.closest ? event.target.closest("table.sortable thead th") : null;
    if (th) { sortBy(th); }
  });
  document.addEventListener("keydown", function (event) {
    var th = event.target.closest ? event.target.closest("table.sortable thead th") : null;
    if (th && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); sortBy(th); }
  });
  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable thead th"), function (th) {
      th.setAttribute("tabindex", "0");
    });
  });
})();
"""

ECON_CSS = """/* econ report */
:root { --ink: #1d2430; --muted: #5b6575; --line: #d9dee6; --bg: #ffffff; --tint: #f4f6f9; --accent: #1f5fa8; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: var(--bg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header.site { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; align-items: baseline;
  padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); background: var(--tint); }
header.site .brand { font-weight: 700; color: var(--ink); text-decoration: none; }
header.site nav { display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
header.site nav a { color: var(--accent); text-decoration: none; }
header.site nav a[aria-current="page"] { color: var(--ink); font-weight: 600; border-bottom: 2px solid var(--accent); }
main { max-width: 1180px; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
footer.site { max-width: 1180px; margin: 0 auto; padding: 1rem 1.5rem 2rem; color: var(--muted); font-size: .85rem;
  border-top: 1px solid var(--line); }
h1 { font-size: 1.7rem; margin: .75rem 0 .25rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .5rem; padding-top: .5rem; border-top: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.25rem 0 .4rem; }
p.lead { color: var(--muted); font-size: 1.05rem; margin-top: 0; }
a { color: var(--accent); }
a.src { word-break: break-all; }
.note { background: var(--tint); border-left: 3px solid var(--line); padding: .5rem .75rem; margin: .75rem 0; }
.note.pending { border-left-color: #c9a227; }
.table-wrap { overflow: auto; max-width: 100%; max-height: 34rem; margin: .5rem 0 1rem;
  border: 1px solid var(--line); border-radius: 4px; }
table.data { border-collapse: collapse; font-size: .88rem; font-variant-numeric: tabular-nums; }
table.data caption { caption-side: top; text-align: left; color: var(--muted); padding: .25rem .6rem; }
table.data th, table.data td { padding: .25rem .6rem; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; white-space: nowrap; }
table.data td.wrap { white-space: normal; width: 24rem; min-width: 14rem; max-width: 36rem; overflow-wrap: break-word; }
table.data th { background: var(--tint); font-weight: 600; white-space: nowrap; position: sticky; top: 0; z-index: 1; }
table.data .n { text-align: right; white-space: nowrap; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[aria-sort="ascending"]::after { content: " \\25B2"; font-size: .7em; }
table.sortable th[aria-sort="descending"]::after { content: " \\25BC"; font-size: .7em; }
ul.findings { list-style: none; padding: 0; margin: 1rem 0 1.5rem; }
li.finding { border-left: 4px solid var(--accent); background: var(--tint); padding: .5rem .75rem; margin: .5rem 0;
  overflow-wrap: anywhere; }
li.finding .num { font-weight: 650; }
li.finding .status { display: inline-block; font-size: .8rem; color: var(--muted); border: 1px solid var(--line);
  border-radius: 3px; padding: 0 .35rem; background: var(--bg); }
li.finding.status-weak, li.finding.status-not-identified, li.finding.status-not-validated {
  border-left-color: #c9a227; }
li.finding.status-bound { border-left-color: #8a94a6; }
li.finding a.evidence { font-size: .85rem; }
nav.toc { border: 1px solid var(--line); border-radius: 4px; padding: .5rem .9rem; margin: 1rem 0; font-size: .9rem; }
nav.toc ol { margin: .25rem 0 0; padding-left: 1.25rem; columns: 2 18rem; }
figure.chart { margin: 1.25rem 0 2rem; }
figure.chart .vega { min-height: 120px; max-width: 100%; overflow-x: auto; }
figure.chart div.vega.vega-embed { display: block; width: 100%; }  /* "container" width: the column's */
figure.chart figcaption { color: var(--muted); font-size: .88rem; max-width: 70rem; overflow-wrap: anywhere; }
figure.chart figcaption p { margin: .2rem 0; }
p, li { overflow-wrap: break-word; }
code, .formula { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .85em; }
ul.pages li { margin: .3rem 0; }
details.more { margin: .5rem 0 1rem; }
details.more > summary { cursor: pointer; color: var(--accent); }
.status-skipped { color: var(--muted); }
@media (max-width: 640px) { main, footer.site { padding-left: .75rem; padding-right: .75rem; }
  header.site { padding: .5rem .75rem; } h1 { font-size: 1.4rem; } }
@media print { header.site nav, .downloads, nav.toc { display: none; } .table-wrap { max-height: none; } }
"""


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
    for name, text in (("vega.js", vega_bundle()), ("econ.js", ECON_JS), ("econ.css", ECON_CSS)):
        data = text.encode("utf-8")
        (folder / name).write_bytes(data)
        sizes[name] = len(data)
    return sizes
