/* econ report: render inline Vega-Lite specs offline, record their status, sort tables. */
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
