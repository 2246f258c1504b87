"""HTML building blocks: escaping, inline JSON that cannot leave its ``<script>``, tables, the page shell.

Every string that comes from data goes through :func:`esc` (text and attribute values) or
:func:`json_for_script` (chart specs); :class:`Markup` marks text that is already HTML, so a
value is escaped exactly once. Links to sources are only made for ``http(s)://`` URLs: any
other ``source_url`` (``javascript:``, ``data:``) is shown as text.
"""

from __future__ import annotations

import html as _html
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import polars as pl


class Markup(str):
    """A string that is already safe HTML (built by this module from escaped parts).

    ``Markup + x`` escapes ``x`` unless it is Markup too (like markupsafe), so a literal tag
    appended to Markup must itself be wrapped: ``markup + Markup("</p>")``.
    """

    def __add__(self, other: str) -> Markup:
        return Markup(str(self) + str(esc(other)))


def esc(value: Any) -> Markup:
    """Escape ``value`` for HTML text or a quoted attribute; ``None`` becomes empty; Markup passes through.

    The line and paragraph separators U+2028/U+2029 become character references too, so no
    page holds them raw (they end a JavaScript string in older engines).
    """
    if isinstance(value, Markup):
        return value
    if value is None:
        return Markup("")
    text = _html.escape(str(value), quote=True)
    return Markup(text.replace("\u2028", "&#x2028;").replace("\u2029", "&#x2029;"))


def join(parts: Iterable[Any], sep: str = "") -> Markup:
    """Concatenate escaped parts (Markup parts are kept as they are)."""
    return Markup(esc(sep).join(esc(p) for p in parts))


def open_tag(name: str, **attrs: Any) -> Markup:
    """``<name attrs>`` with every attribute value escaped.

    Attribute names: a trailing underscore is dropped (``class_``) and ``_`` becomes ``-``
    (``data_v``); a value of ``None`` or ``False`` omits the attribute, ``True`` writes it bare.
    """
    rendered = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        rendered.append(f" {attr}" if value is True else f' {attr}="{esc(value)}"')
    return Markup(f"<{name}{''.join(rendered)}>")


def tag(name: str, content: Any = "", **attrs: Any) -> Markup:
    """``<name attrs>content</name>`` with every attribute value and the content escaped (see :func:`open_tag`)."""
    return Markup(f"{open_tag(name, **attrs)}{esc(content)}</{name}>")


_SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def json_for_script(obj: Any) -> Markup:
    """JSON safe to inline in ``<script type="application/json">``: no ``</script>``, ``<!--`` or line separators.

    ``<``, ``>``, ``&``, U+2028 and U+2029 are written as ``\\uXXXX`` escapes (still the same JSON
    value); keys are sorted and NaN/Infinity are refused, so the text is deterministic and valid.
    """
    text = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    for raw, escaped in _SCRIPT_ESCAPES.items():
        text = text.replace(raw, escaped)
    return Markup(text)


def is_web_url(url: Any) -> bool:
    """True for an absolute http(s) URL, the only kind of source link the report makes."""
    return (
        isinstance(url, str) and url.lower().startswith(("http://", "https://")) and not any(c.isspace() for c in url)
    )


def source_link(url: Any, text: Any = None) -> Markup:
    """A link to a source page (opens the URL); anything but an http(s) URL is shown as plain text."""
    if not is_web_url(url):
        return esc(text if text is not None else url)
    return tag("a", text if text is not None else url, href=url, rel="noopener noreferrer", class_="src")


# ---------------------------------------------------------------------------- numbers


SI_FROM, SI_UNTIL = 1e6, 1e18
"""Floats from a million up to (not including) 10¹⁸ read with an SI prefix; beyond, FLOP counts keep an exponent."""
SI_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"))


def fmt_num(value: Any, *, sig: int = 4) -> str:
    """Short, stable text for a number: thousands separators, ``sig`` significant digits, no float noise.

    ``None`` and NaN give ``""``; integers keep every digit; floats from :data:`SI_FROM` up take an SI prefix
    (``40 T``, ``17 G``); very small floats and those from :data:`SI_UNTIL` up use an exponent (``2.5e-7``,
    ``1e24``).
    """
    if value is None:
        return ""
    if isinstance(value, Decimal):
        value = float(value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if value == 0:
            return "0"
        magnitude = abs(value)
        if SI_FROM <= magnitude < SI_UNTIL:  # 4e13 -> 40 T, 1.7e10 -> 17 G (issue 26)
            for scale, prefix in SI_PREFIXES:
                if magnitude >= scale * (1 - 0.5 * 10 ** (1 - sig)):
                    return f"{fmt_num(value / scale, sig=sig)} {prefix}"
        if magnitude >= SI_UNTIL or magnitude < 1e-4:
            mantissa, exponent = f"{value:.{sig - 1}e}".split("e")
            mantissa = mantissa.rstrip("0").rstrip(".") if "." in mantissa else mantissa
            return f"{mantissa}e{int(exponent)}"
        decimals = max(0, sig - 1 - math.floor(math.log10(magnitude)))
        text = f"{value:,.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    return str(value)


def fmt_interval(low: Any, high: Any, *, sig: int = 3) -> str:
    """``low–high`` (an en dash); ``""`` when either end is unknown or both ends print the same."""
    lo, hi = fmt_num(low, sig=sig), fmt_num(high, sig=sig)
    if not lo or not hi or lo == hi:
        return ""
    return f"{lo}–{hi}"


# ---------------------------------------------------------------------------- tables


@dataclass(frozen=True)
class Col:
    """One column of an HTML table: the frame column, its header (with unit) and how a cell is shown.

    ``kind``: ``text``, ``num`` (right-aligned, sorted numerically), ``date`` or ``link`` (the cell is a
    URL shown as a source link). ``fmt`` turns a value into display text (default :func:`fmt_num`).
    ``title`` may carry a tooltip for the header via ``help``.
    """

    key: str
    title: str
    _: KW_ONLY
    kind: str = "text"
    fmt: Callable[[Any], str] | None = None
    help: str | None = None
    wrap: bool = False  # long prose (descriptions, rationale): wrap instead of keeping the cell on one line
    keep: int = 0  # the narrow view of a wide table hides this column last (the numbers a reader came for); a higher
    # level is hidden later (an old value, then the new one, then the change: what is left still reads)

    def cell(self, value: Any) -> Markup:
        """The ``<td>`` of ``value``, as :func:`tag` writes it (written out here: a report draws ~30,000 cells)."""
        if self.kind == "link":
            return tag("td", source_link(value, _short_url(value)) if value else "")
        if self.wrap:
            return tag("td", self.fmt(value) if self.fmt else fmt_num(value), class_="wrap")
        text = esc(self.fmt(value) if self.fmt else fmt_num(value))
        if self.kind == "num":
            # fmt_num's text sorts as shown; a custom format carries the number for the sorter (7 significant digits
            # order every value a table shows, in a third of the bytes; digits, '.', 'e', '+', '-': nothing to escape)
            if self.fmt and isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
                number = float(value)
                if math.isfinite(number):
                    return Markup(f'<td class="n" data-v="{number:.7g}">{text}</td>')
            return Markup(f'<td class="n">{text}</td>')
        return Markup(f"<td>{text}</td>")


def _classes(*names: str | None) -> str | None:
    return " ".join(n for n in names if n) or None


def _short_url(url: Any) -> str:
    """``example.org/path…`` for display; the full URL stays in the link."""
    text = str(url)
    for prefix in ("https://", "http://"):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :]
    text = text.removeprefix("www.")
    return text if len(text) <= 48 else text[:47] + "…"


MAX_KEYS = 3
"""Most leading columns a table pins as its key (they stay in view when the table scrolls sideways)."""


def key_columns(cols: Sequence[Col]) -> int:
    """How many leading columns name the row (text or dates, not prose or links), at most :data:`MAX_KEYS`."""
    n = 0
    for c in cols[:MAX_KEYS]:
        if c.kind not in ("text", "date") or c.wrap or c.keep:
            break
        n += 1
    return n


def drop_order(cols: Sequence[Col], keys: int, constant: Sequence[bool] = ()) -> list[int | None]:
    """Per column, when the page's script hides it to fit a narrow column (1 first; None: never, a key column):
    prose first, then source links, then columns that hold one value in every row, then the others from the right,
    the ``keep`` columns last (even one value in every row: a status the reader must see), the lower ``keep`` level
    first; the full view shows them all."""
    constant = list(constant) or [False] * len(cols)
    rest = [i for i in reversed(range(keys, len(cols)))]
    ranked = (
        [i for i in rest if cols[i].wrap]
        + [i for i in rest if cols[i].kind == "link" and not cols[i].wrap]
        + [i for i in rest if constant[i] and cols[i].kind != "link" and not cols[i].wrap and not cols[i].keep]
        + [i for i in rest if not constant[i] and cols[i].kind != "link" and not cols[i].wrap and not cols[i].keep]
        + sorted(  # stable: within a level, from the right
            (i for i in rest if cols[i].kind != "link" and not cols[i].wrap and cols[i].keep),
            key=lambda i: int(cols[i].keep),
        )
    )
    order: list[int | None] = [None] * len(cols)
    for rank, i in enumerate(ranked[: max(len(rest) - 1, 0)], start=1):  # one column besides the keys stays
        order[i] = rank
    return order


def table(
    frame: pl.DataFrame,
    cols: Sequence[Col],
    *,
    sortable: bool = True,
    caption: Any = None,
    id: str | None = None,
    keys: int | None = None,
) -> Markup:
    """An HTML table of ``frame`` showing ``cols`` (sortable by clicking a header when ``sortable``).

    The first ``keys`` columns (default :func:`key_columns`; their headers carry ``class="key"``) are the row's key:
    the page's script pins them when the table scrolls sideways. Where the table is wider than its column, the
    script hides the other columns in :func:`drop_order` until it fits (a button shows them all, another saves the
    table as CSV); print shows every column. Without the script the table scrolls in its box.
    """
    keys = key_columns(cols) if keys is None else keys
    constant = [frame.height > 1 and frame[c.key].n_unique() == 1 for c in cols]
    order = drop_order(cols, keys, constant)
    head = join(
        tag(
            "th",
            c.title,
            class_=_classes("n" if c.kind == "num" else None, "key" if i < keys else None),
            title=c.help,
            scope="col",
            data_drop=order[i],
        )
        for i, c in enumerate(cols)
    )
    rows = []
    for row in frame.select([c.key for c in cols]).iter_rows(named=True):
        rows.append("<tr>" + "".join(c.cell(row[c.key]) for c in cols) + "</tr>")
    body = Markup("\n".join(rows))
    cap = tag("caption", caption) if caption is not None else Markup("")
    opening = open_tag("table", class_="data sortable" if sortable else "data", id=id)
    return Markup(
        f'<div class="table-wrap">{opening}{cap}<thead><tr>{head}</tr></thead><tbody>\n{body}\n</tbody></table></div>'
    )


def details(summary: Any, content: Any, *, open: bool = False) -> Markup:
    """A collapsible block (``<details>``) with ``summary`` as its always-visible line."""
    return Markup(
        open_tag("details", class_="more", open=open) + tag("summary", summary) + esc(content) + Markup("</details>")
    )


# ---------------------------------------------------------------------------- page shell


@dataclass(frozen=True)
class NavItem:
    name: str  # file stem
    title: str


def page_shell(
    *, title: str, site_title: str, nav: Sequence[NavItem], current: str, body: Markup, footer: Markup, charts: bool
) -> str:
    """The complete HTML document of one page (assets are referenced relative to the page)."""
    links = join(
        tag("a", item.title, href=f"{item.name}.html", aria_current="page" if item.name == current else None)
        for item in nav
    )
    vega = '<script src="assets/vega.js" defer></script>\n' if charts else ""
    return (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)} · {esc(site_title)}</title>\n"
        '<link rel="icon" href="data:,">\n'
        '<link rel="stylesheet" href="assets/econ.css">\n'
        '<script src="assets/econ.js"></script>\n'
        f"{vega}"
        "</head>\n<body>\n"
        f'<header class="site"><a class="brand" href="index.html">{esc(site_title)}</a><nav>{links}</nav></header>\n'
        f"<main>\n{body}\n</main>\n"
        f'<footer class="site">{footer}</footer>\n'
        "</body>\n</html>\n"
    )
