"""Reuse a page drawn by an earlier report when nothing it read changed (I/O edge).

A page is a function of what it reads from the database, the code that draws it and the report's settings. While a
page is drawn, its connection records every query (:class:`Recorder`); the tables and views those queries name are
its *reads*, kept per page in ``<cache>/pages/<page>/reads.json`` (the union over every drawing, so it only grows).
A page's key hashes the report's stamp (the code, ``as_of``, the printed date, the scenario, the library versions
and the list of objects with their comments) and, for each read, the relation's *version*: the key of the analysis
that wrote a result table (its content is a function of that key), a view's SQL with its reads' versions
(:func:`econ.db.views.view_versions`; ``as_of`` is in the stamp), else the hash of its contents
(:func:`econ.db.content_fingerprint`).

The entry ``<cache>/pages/<page>/<key>/`` holds the page's body (the HTML between the navigation and the footer,
which depend on the other pages and are written again), its title and findings (the index page shows them) and the
data files beside it, with the SHA-256 manifest of ``econ.cachefiles``: a damaged entry is drawn again. A query
that reads DuckDB's catalog functions (``duckdb_tables()``…) makes the page read everything. Since the key covers
everything the page read when it was drawn, and the same code reading the same contents draws the same page, a
reused page is byte for byte the page a fresh report draws (``tests/report/test_reuse.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import asdict
from pathlib import Path

import duckdb

from econ.cachefiles import begin_entry, cannot_store, commit_entry, verify
from econ.db import content_fingerprint
from econ.db.views import relations_named
from econ.files import remove
from econ.report.html import Markup
from econ.report.page import Finding

EVERYTHING = "*"
"""The read of a page whose query lists the catalog (it depends on every relation)."""
_CATALOG = re.compile(r"\b(duckdb_\w+|information_schema|pragma_\w+|pragma|query|query_table)\b", re.IGNORECASE)
BODY, META, FILES = "body.html", "meta.json", "files"


class Recorder:
    """A connection that records the SQL it runs (only ``sql``, ``execute`` and ``complete`` are offered, so a page
    cannot read past it)."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self._con, self.queries = con, []

    def sql(self, query: str, *args, **kwargs):
        self.queries.append(query)
        return self._con.sql(query, *args, **kwargs)

    def execute(self, query: str, *args, **kwargs):
        self.queries.append(query)
        return self._con.execute(query, *args, **kwargs)

    def complete(self) -> None:
        self._con.complete()

    def reads(self) -> set[str] | None:
        """The relations the recorded queries name (:func:`econ.db.views.relations_named`; names of common table
        expressions come along, harmlessly); None when one cannot be parsed (the page is not kept)."""
        names: set[str] = set()
        for query in set(self.queries):
            if _CATALOG.search(query):
                return {EVERYTHING}
            named = relations_named(self._con, query)
            if named is None:
                return None
            names |= named
        return names


class PageCache:
    """The stored pages under ``root`` (``<cache>/pages``), keyed for the database behind ``con``."""

    def __init__(self, root: Path, con: duckdb.DuckDBPyConnection, *, stamp: str, versions: dict[str, str]):
        self.root, self.con, self.stamp = Path(root), con, stamp
        self.versions = dict(versions)
        self.relations = {
            r[0]
            for r in con.execute(
                "select table_name from duckdb_tables() where database_name = current_database() union all "
                "select view_name from duckdb_views() where database_name = current_database() and not internal"
            ).fetchall()
        }

    def _version(self, name: str) -> str:
        if name not in self.relations:
            return "absent"
        if name not in self.versions:
            self.versions[name] = content_fingerprint(self.con, name)
        return self.versions[name]

    def reads(self, page: str) -> set[str] | None:
        try:
            names = json.loads((self.root / page / "reads.json").read_text(encoding="utf-8"))
            return set(names) if isinstance(names, list) and all(isinstance(n, str) for n in names) else None
        except (OSError, ValueError):
            return None

    def key(self, page: str, reads: set[str]) -> str:
        names = sorted(self.relations) if EVERYTHING in reads else sorted(reads)
        h = hashlib.sha256(f"{self.stamp}\0{page}\0{EVERYTHING in reads}".encode())
        for name in names:
            h.update(f"\0{name}={self._version(name)}".encode())
        return h.hexdigest()[:24]

    def load(self, page: str, out_dir: Path) -> tuple[str, Markup, list[Finding], int] | None:
        """(title, body, findings, figures) of the stored page whose reads are unchanged, its files copied into
        ``out_dir``; None when there is none (or it fails its check: the page is drawn again)."""
        reads = self.reads(page)
        if reads is None:
            return None
        entry = self.root / page / self.key(page, reads)
        if not entry.is_dir() or verify(entry) is not None:
            return None
        try:
            meta = json.loads((entry / META).read_text(encoding="utf-8"))
            body = Markup((entry / BODY).read_text(encoding="utf-8"))
            findings = [Finding(**{**f, "html": Markup(f["html"])}) for f in meta["findings"]]
            if (entry / FILES).is_dir():
                shutil.copytree(entry / FILES, out_dir, dirs_exist_ok=True)
            return meta["title"], body, findings, int(meta["figures"])
        except (OSError, ValueError, KeyError, TypeError):
            remove(Path(out_dir) / page)
            return None

    def store(
        self, page: str, reads: set[str], out_dir: Path, *, title: str, body: str, findings: list, figures: int
    ) -> None:
        """Keep a drawn page (its files are ``out_dir/<page>/``) under the key of what it read; a cache that cannot
        be written is a notice."""
        folder = self.root / page
        known = self.reads(page) or set()
        reads = reads | known
        staged = None
        try:
            staged = begin_entry(folder / self.key(page, reads))
            (staged / BODY).write_text(body, encoding="utf-8")
            meta = {"title": title, "figures": figures, "findings": [asdict(f) for f in findings]}
            (staged / META).write_text(json.dumps(meta, sort_keys=True), encoding="utf-8")
            if (Path(out_dir) / page).is_dir():
                shutil.copytree(Path(out_dir) / page, staged / FILES / page)
            commit_entry(staged, folder / self.key(page, reads))
            if reads != known:
                tmp = folder / f".reads.{os.getpid()}.tmp"
                tmp.write_text(json.dumps(sorted(reads)), encoding="utf-8")
                os.replace(tmp, folder / "reads.json")
        except OSError as e:
            if staged is not None:
                remove(staged)
            cannot_store(self.root.parent, e)
