"""Read an HTML table of a generated page back into rows (for checking what a reader sees)."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[list[str]]] = {}
        self.headers: dict[str, list[str]] = {}
        self._current: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._in_head = False
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._depth += 1
            if self._depth == 1:
                self._current = attrs.get("id") or f"table-{len(self.tables)}"
                self.tables[self._current], self.headers[self._current] = [], []
        elif self._current is None:
            return
        elif tag == "thead":
            self._in_head = True
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self._depth -= 1
            if self._depth == 0:
                self._current = None
        elif self._current is None:
            return
        elif tag == "thead":
            self._in_head = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            (self.headers if self._in_head else self.tables)[self._current].extend(
                [self._row] if not self._in_head else self._row
            )
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def read_tables(path: Path) -> dict[str, list[dict[str, str]]]:
    """{table id: rows as {header text: cell text}} for every top-level table of the page."""
    parser = _Tables()
    parser.feed(Path(path).read_text(encoding="utf-8"))
    return {name: [dict(zip(parser.headers[name], row)) for row in rows] for name, rows in parser.tables.items()}


SI = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}


def number(text: str) -> float:
    """A number as a page shows it, read back: thousands separators, and an SI prefix after a space (``50 M``)."""
    text = text.replace(",", "").strip()
    value, _, prefix = text.partition(" ")
    return float(value) * SI[prefix] if prefix else float(value)
