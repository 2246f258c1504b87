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

  /* below NARROW_PX (a phone): legends under the plot, titles on several lines from the left, long category
     labels cut to leave the plot room */
  var NARROW_PX = 600;
  function walk(spec, visit) {
    if (!spec || typeof spec !== "object") { return; }
    visit(spec);
    ["layer", "hconcat", "vconcat", "concat"].forEach(function (key) {
      (spec[key] || []).forEach(function (child) { walk(child, visit); });
    });
    walk(spec.spec, visit);
  }
  function wrapTitle(title, chars) {  /* a title longer than the width, on as many lines as it needs */
    var text = title && typeof title === "object" ? title.text : title;
    if (typeof text !== "string") { return title; }
    var placed = {anchor: "start", frame: "bounds"};  /* from the chart's left edge, not centred on a narrow plot */
    if (text.length <= chars) { return Object.assign({}, typeof title === "object" ? title : {text: text}, placed); }
    var lines = [""];
    text.split(" ").forEach(function (word) {
      var last = lines[lines.length - 1];
      if (last && (last + " " + word).length > chars) {
        lines.push(word);
      } else {
        lines[lines.length - 1] = last ? last + " " + word : word;
      }
    });
    return Object.assign({}, typeof title === "object" ? title : {}, placed, {text: lines});
  }
  function adapt(spec, element) {
    var width = element.clientWidth || (element.parentNode && element.parentNode.clientWidth) || 0;
    if (!width) { return spec; }
    var narrow = width < NARROW_PX;
    if (narrow) {
      spec.config = spec.config || {};
      spec.config.legend = Object.assign({}, spec.config.legend || {},
        {orient: "bottom", direction: "vertical",
         layout: {bottom: {anchor: "start", direction: "vertical", margin: 4}}});  /* several legends: stacked */
      spec.title = wrapTitle(spec.title, Math.floor(width / 7.5));
      /* an x-axis title wider than a narrow plot ends at the plot's right edge, under the labels, not past it */
      spec.config.axisX = Object.assign({}, spec.config.axisX || {}, {titleAnchor: "end"});
      walk(spec, function (unit) {  /* long category labels leave the plot at least 60% of a phone's width */
        var row = unit.encoding && unit.encoding.row;  /* a row of panels names itself above, not beside */
        if (row && row.header !== null) {
          row.header = Object.assign({}, row.header || {}, {labelOrient: "top", labelAnchor: "start", labelAngle: 0,
                                                            labelAlign: "left", titleOrient: "top"});
        }
        var y = unit.encoding && unit.encoding.y;
        if (y && y.type !== "quantitative" && y.axis !== null) {
          var limit = Math.min((y.axis && y.axis.labelLimit) || 180, Math.round(width * 0.35));
          y.axis = Object.assign({}, y.axis || {}, {labelLimit: limit});
          if (y.axis.titleAngle === 0 && y.axis.titleX < 0) { y.axis.titleX = -limit; }  /* a title above them */
        }
      });
    }
    return spec;
  }

  /* a faceted chart drawn wider than its box: as many panel columns as the first drawing shows fit (a row x column
     grid becomes one panel per cell), and one narrowed panel a row where not even one fits */
  function csvFields(line) {
    var out = [];
    line.replace(/("(?:[^"]|"")*"|[^,]*)(,|$)/g, function (all, cell, sep) {
      if (all) { out.push(cell.charAt(0) === '"' ? cell.slice(1, -1).replace(/""/g, '"') : cell); }
      return "";
    });
    return out;
  }
  function csvRecords(text) {
    var lines = text.split("\n").filter(Boolean), names = csvFields(lines[0] || "");
    return lines.slice(1).map(function (line) {
      var cells = csvFields(line), row = {};
      names.forEach(function (name, i) { row[name] = cells[i]; });
      return row;
    });
  }
  function facetCount(spec, field) {
    var seen = {};
    Object.keys(spec.datasets || {}).forEach(function (name) {
      var rows = spec.datasets[name];
      if (typeof rows === "string") { rows = csvRecords(rows); }  /* the inline CSV */
      (rows || []).forEach(function (row) { if (field in row) { seen[row[field]] = true; } });
    });
    return Object.keys(seen).length;
  }
  function refit(spec, element) {
    var svg = element.querySelector("svg"), width = element.clientWidth;
    var inner = spec.spec, facet = spec.facet;
    if (!svg) { return null; }
    var drawn = svg.getBoundingClientRect().width;
    if (drawn <= width + 2) { return null; }
    if (spec.hconcat) {  /* side by side does not fit: one above the other */
      spec.vconcat = spec.hconcat;
      delete spec.hconcat;
      return spec;
    }
    if (spec.vconcat) {  /* stacked and still too wide: each plot narrower */
      var changed = false;
      spec.vconcat.forEach(function (child) {
        if (typeof child.width === "number" && child.width > 120) {
          child.width = Math.max(120, Math.floor(child.width - (drawn - width) - 4));
          changed = true;
        }
      });
      return changed ? spec : null;
    }
    if (!facet && typeof spec.width === "number" && spec.width > 120) {  /* rows or bands: a narrower plot */
      spec.width = Math.max(120, Math.floor(spec.width - (drawn - width) - 4));
      return spec;
    }
    if (!facet || !inner || typeof inner.width !== "number") { return null; }
    var legend = 0;  /* a legend to the right takes its width from every row of panels; one below, none */
    if (width >= NARROW_PX) {
      Array.prototype.forEach.call(svg.querySelectorAll("g.role-legend"), function (g) {
        legend = Math.max(legend, g.getBoundingClientRect().width);
      });
    }
    var columns;
    if (facet.row && facet.column) {
      columns = facetCount(spec, facet.column.field) || 2;
      spec.transform = (spec.transform || []).concat([{calculate: "datum[" + JSON.stringify(facet.row.field)
        + "] + ' · ' + datum[" + JSON.stringify(facet.column.field) + "]", as: "econ_panel"}]);
      var titles = [facet.row.title || facet.row.field, facet.column.title || facet.column.field];
      facet = {field: "econ_panel", type: "nominal", title: titles.join(" · ")};
    } else if (facet.row) {
      return null;
    } else {
      columns = facet.column ? facetCount(spec, facet.column.field) : spec.columns || facetCount(spec, facet.field);
      columns = columns || 2;
      facet = facet.column || facet;
    }
    var panel = (drawn - legend) / columns;
    var fits = Math.max(1, Math.min(columns - 1, Math.floor((width - legend) / panel)));
    spec.facet = facet;
    spec.columns = fits;
    if (fits === 1 && panel + legend > width) {
      inner.width = Math.max(120, Math.floor(inner.width - (panel + legend - width)));
    }
    return spec;
  }

  function renderOne(element) {
    var id = element.getAttribute("data-spec");
    var spec;
    try {
      spec = adapt(JSON.parse(document.getElementById(id).textContent), element);
    } catch (err) {
      return Promise.resolve(failed(element, id, err));
    }
    if (typeof window.vegaEmbed !== "function") {
      return Promise.resolve(failed(element, id, "assets/vega.js did not load"));
    }
    /* the embed's own menu saves the chart as SVG or PNG in the reader's browser; no source or editor links */
    var options = {renderer: "svg", mode: "vega-lite",
                   actions: {export: true, source: false, compiled: false, editor: false}};
    function draw(spec, attempt) {  /* each refit has fewer panel columns: at most a few drawings */
      return window.vegaEmbed(element, spec, options).then(function (result) {
        var again = attempt < 4 ? refit(spec, element) : null;
        if (!again) { return result; }
        result.finalize();
        return draw(again, attempt + 1);
      });
    }
    return draw(spec, 0).then(function (result) {
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
  /* tables: the key columns pinned when the table scrolls sideways; a table wider than its column hides the
     columns its headers rank (data-drop: 1 first) until it fits, with a button for every column and one that saves
     the table as CSV (every column, the numbers as data-v holds them); print shows every column */
  function cellsOf(table, index) {
    return Array.prototype.map.call(table.rows, function (row) { return row.cells[index]; }).filter(Boolean);
  }
  function pin(table) {  /* the first key column, and the next ones while they leave half the box for the rest */
    var left = 0, room = table.parentNode.clientWidth / 2;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var width = th.getBoundingClientRect().width;
      var pinned = th.classList.contains("key") && (left === 0 || left + width <= room);
      cellsOf(table, index).forEach(function (cell) {
        cell.classList.toggle("key", pinned);
        cell.style.left = pinned ? left + "px" : "";
      });
      if (pinned) { left += width; }
    });
  }
  function csvText(table) {
    function quote(text) {
      text = text.replace(/\s+/g, " ").trim();
      if (/^[=+\-@\t\r]/.test(text) && !isFinite(Number(text.replace(/,/g, "")))) { text = "'" + text; }
      return /[",\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
    }
    return Array.prototype.map.call(table.rows, function (row) {
      return Array.prototype.map.call(row.cells, function (cell) {
        return quote(cell.hasAttribute("data-v") ? cell.getAttribute("data-v") : cell.textContent);
      }).join(",");
    }).join("\n") + "\n";
  }
  function setupTable(table) {
    var wrap = table.parentNode;
    if (!table.tHead || !wrap.classList.contains("table-wrap")) { return; }
    var head = table.tHead.rows[0].cells;
    var drops = Array.prototype.filter.call(head, function (th) { return th.hasAttribute("data-drop"); })
      .sort(function (a, b) { return Number(a.getAttribute("data-drop")) - Number(b.getAttribute("data-drop")); });
    if (table.caption) {  /* the caption above the box, so a table that scrolls does not carry it off */
      var caption = document.createElement("p");
      caption.className = "table-caption";
      caption.textContent = table.caption.textContent;
      wrap.parentNode.insertBefore(caption, wrap);
      table.caption.classList.add("moved");
    }
    var tools = document.createElement("p");
    tools.className = "table-tools";
    var toggle = document.createElement("button"), save = document.createElement("button");
    toggle.type = save.type = "button";
    save.textContent = "Save as CSV";
    tools.appendChild(toggle);
    tools.appendChild(save);
    wrap.parentNode.insertBefore(tools, wrap.nextSibling);
    var full = false;
    function fit() {
      drops.forEach(function (th) {
        cellsOf(table, th.cellIndex).forEach(function (c) { c.classList.remove("col-hidden"); });
      });
      var hidden = 0;
      for (var k = 0; !full && k < drops.length && wrap.scrollWidth > wrap.clientWidth + 1; k++) {
        cellsOf(table, drops[k].cellIndex).forEach(function (c) { c.classList.add("col-hidden"); });
        hidden++;
      }
      toggle.hidden = !full && hidden === 0;
      toggle.textContent = full ? "Show fewer columns" : "Show all " + head.length + " columns (" + hidden + " hidden)";
      table.setAttribute("data-hidden-columns", String(hidden));
      pin(table);
    }
    toggle.addEventListener("click", function () { full = !full; fit(); });
    save.addEventListener("click", function () {
      var link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([csvText(table)], {type: "text/csv"}));
      link.download = (table.id || "table") + ".csv";
      document.body.appendChild(link);
      link.click();
      link.remove();
    });
    fit();
    var timer = null;
    window.addEventListener("resize", function () { clearTimeout(timer); timer = setTimeout(fit, 100); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable thead th"), function (th) {
      th.setAttribute("tabindex", "0");
    });
    Array.prototype.forEach.call(document.querySelectorAll("table.data"), setupTable);
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
table.data td.wrap { white-space: normal; min-width: 16rem; max-width: 36rem; overflow-wrap: break-word; }
table.data th { background: var(--tint); font-weight: 600; white-space: nowrap; position: sticky; top: 0; z-index: 2; }
table.data .col-hidden { display: none; }
table.data td.key { position: sticky; background: var(--bg); z-index: 1; }
table.data th.key { left: 0; z-index: 3; }
p.table-tools { margin: -.6rem 0 1rem; font-size: .82rem; }
p.table-caption { color: var(--muted); font-size: .88rem; margin: .75rem 0 -.25rem; }
table.data caption.moved { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
p.table-tools button { font: inherit; color: var(--accent); background: none; border: 0; padding: 0; margin-right: 1rem;
  cursor: pointer; text-decoration: underline; }
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
@page { size: A4 landscape; margin: 12mm; }  /* a wide table keeps its columns on a wide page */
@media print {
  header.site nav, .downloads, nav.toc, p.table-tools, .vega-embed details { display: none; }
  main { max-width: none; padding: 0; }
  .table-wrap { max-height: none; overflow: visible; border: 0; }
  table.data { width: 100%; font-size: 7.5pt; }
  table.data th, table.data td { white-space: normal; overflow-wrap: break-word; position: static !important;
    padding: .1rem .25rem; }
  table.data .col-hidden { display: table-cell !important; }
  table.data td.wrap { min-width: 0; }
  figure.chart .vega { overflow: visible; }
  figure.chart svg { max-width: 100%; height: auto; }
  li.finding, figure.chart, tr { break-inside: avoid; }
}
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
