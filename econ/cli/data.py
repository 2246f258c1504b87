"""``econ build``, ``report``, ``sql``, ``tables``, ``describe`` and ``sweep``: the database and what is built
from it."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from econ import paths
from econ.cli.common import _out
from econ.cli.progress import Progress
from econ.errors import EconError
from econ.output import render, render_fit, render_stream, terminal_width


def cmd_build(args) -> int:
    progress = Progress("econ build", quiet=args.quiet)  # drawn before the heavy imports: the first second shows it
    try:
        from econ.build import build
        from econ.progress import reporting

        with reporting(progress):
            result = build(
                data_dir=args.data,
                db_path=args.db,
                queries_dir=paths.QUERIES_DIR,
                cache_dir=args.cache,
                reports_dir=None if args.no_report else args.reports,
                as_of=args.as_of,
                wait=args.wait,
                force=args.force,
            )
    finally:
        progress.close()
    if not args.quiet:
        for line in build_summary(result, progress):
            _out(line)
    return 0


def analyses_line(statuses: dict[str, str], progress: Progress) -> str:
    """How many analyses were kept from the previous database, came from the cache and ran; the ones that ran by
    name (the slowest three of more than five) with their seconds."""
    ran = [name for name, status in statuses.items() if status == "ran"]
    kept = sum(status == "kept" for status in statuses.values())
    cached = len(statuses) - len(ran) - kept
    parts = [f"{kept} kept from the previous database"] if kept else []
    parts += [f"{cached} from the cache"] if cached else []
    if ran:
        seconds = dict(progress.slowest("analyses", len(statuses)))
        shown = sorted(ran, key=lambda n: -seconds.get(n, 0.0))
        named = ", ".join(f"{n} {seconds.get(n, 0.0):.1f} s" for n in shown[: 3 if len(ran) > 5 else len(ran)])
        parts.append(f"{len(ran)} ran" + (f"; slowest: {named}" if len(ran) > 5 else f": {named}"))
    return ", ".join(parts)


def build_summary(result, progress: Progress) -> list[str]:
    """What a build wrote, where, how long it took, what took longest, and the next command to try."""
    db = "" if Path(result.db_path) == paths.DB_PATH else f" --db {result.db_path}"
    next_line = f'next: econ tables{db}  (then econ describe NAME, or econ sql "select ...")'
    if result.current:
        outputs = f"{result.db_path}" + ("" if result.reports_dir is None else f" and {result.reports_dir}/index.html")
        return [
            f"nothing changed since {outputs} were written (same code, date, data/, queries/ and libraries): "
            f"nothing was rebuilt ({result.elapsed_s:.1f} s; --force rebuilds)",
            next_line,
        ]
    size_mb = Path(result.db_path).stat().st_size / 1e6
    wrote = f"wrote {result.db_path} ({result.tables} tables, {result.views} views, {size_mb:,.1f} MB)"
    if result.reports_dir is not None:
        pages = len(list(Path(result.reports_dir).glob("*.html")))
        wrote += f" and {Path(result.reports_dir) / 'index.html'} ({pages} pages)"
    lines = [f"{wrote} in {result.elapsed_s:.1f} s"]
    if result.analyses:
        lines.append(f"analyses: {analyses_line(result.analyses, progress)}")
    lines.append(next_line)
    return lines


def _read_query(args) -> str:
    from econ.sql import MAX_SQL_BYTES, query_text, read_query_file

    if args.file:
        return read_query_file(Path(args.file))
    if args.query == "-":
        binary = getattr(sys.stdin, "buffer", None)  # a text stream without bytes beneath it (tests) is read as text
        raw = binary.read(MAX_SQL_BYTES + 1) if binary is not None else sys.stdin.read(MAX_SQL_BYTES + 1).encode()
        return query_text(raw, "stdin")
    if args.query:
        return args.query
    raise EconError("no query given", 'pass the SQL as an argument, "-" for stdin, or -f FILE.sql')


def cmd_sql(args) -> int:
    from econ.sql import open_query

    with open_query(
        args.db, _read_query(args), as_of=args.as_of, allow_files=args.allow_files, sweep=args.sweep
    ) as result:
        for piece in render_stream(result.columns, result.batches(), fmt=args.format):
            sys.stdout.write(piece)
    sys.stdout.write("\n")
    return 0


class _PlainBar:
    """The bar without tqdm (an environment that predates the dependency): one rewritten line on stderr."""

    def __init__(self, total: int):
        self.total, self.n, self.text, self.drawn = max(total, 1), 0, "", False

    def set_description_str(self, text: str, refresh: bool = True) -> None:
        self.text = text

    def refresh(self) -> None:
        sys.stderr.write(f"\r{100 * self.n / self.total:3.0f}% {self.text}")
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")


class _Bar:
    """The progress bar of ``econ sweep`` (tqdm on stderr, drawn from the first finished partition): partitions
    done, points/s of this run and the ETA."""

    def __init__(self):
        self.bar = None

    def __call__(self, p) -> None:
        if self.bar is None:
            try:
                from tqdm import tqdm
            except ImportError:
                self.bar = _PlainBar(p.points_total)
            else:
                self.bar = tqdm(total=p.points_total, bar_format="{percentage:3.0f}%|{bar}| {desc}")
        rate = p.points_this_run / p.elapsed_s if p.elapsed_s > 0 else 0.0
        eta = f"{(p.points_total - p.points_done) / rate:,.0f} s" if rate > 0 else "?"
        self.bar.n = p.points_done
        self.bar.set_description_str(
            f"{p.partitions_done:,}/{p.partitions_total:,} partitions, {rate:,.3g} points/s, ETA {eta}", refresh=False
        )
        self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def cmd_sweep(args) -> int:
    from econ.sweep.run import sweep

    bar = None if args.no_progress else _Bar()
    try:
        result = sweep(
            Path(args.spec),
            db_path=args.db,
            out_dir=args.out,
            backend=args.backend,
            workers=args.workers,
            ray_address=args.ray_address,
            wait=args.wait,
            progress=bar,
        )
    finally:
        if bar is not None:
            bar.close()
    rate = result.points_run / result.elapsed_s if result.elapsed_s > 0 else 0.0
    ran = (
        f"{result.points_run:,} points in {result.elapsed_s:.1f} s on {result.backend} with {result.workers} workers: "
        f"{rate:,.3g} points/s; peak worker memory {result.peak_rss_bytes / 1e6:,.0f} MB"
        if result.ran
        else "nothing left to run"
    )
    _out(
        f"swept {result.partitions:,} partitions of {result.points:,} points ({result.ran:,} run now, "
        f"{result.skipped:,} finished before): {ran}"
    )
    _out(render(["table", "rows"], sorted(result.rows.items())))
    _out(f'output: {result.folder}  (econ sql --sweep {result.folder} "select * from serving_frontier limit 5")')
    return 0


def cmd_tables(args) -> int:
    from econ.db.objects import list_objects

    objects = list_objects(args.db)
    columns = ["name", "kind", "rows", "description"]
    if args.format == "table":
        _out(render_fit(columns, objects, width=terminal_width(), flexible="description", keys=("name",)))
        _out("econ describe NAME: its columns, units and meanings")
    else:
        _out(render(columns, objects, fmt=args.format))
    return 0


def cmd_describe(args) -> int:
    from econ.db.objects import UnknownObject, describe

    try:
        name, kind, description, rows, columns = describe(args.db, args.name)
    except UnknownObject as unknown:
        return _describe_model(args, unknown)
    header = ["column", "type", "unit", "kind", "meaning"]
    if args.format != "table":
        _out(render(header, columns, fmt=args.format))
        return 0
    width = terminal_width()
    _out(f"{name} ({kind}, {rows:,} rows)")
    _out(textwrap.fill(description, width) if description else "")
    _out("")
    _out(render_fit(header, columns, width=width, flexible="meaning", keys=("column",), wrap=True, count=False))
    return 0


def _describe_model(args, unknown) -> int:
    """``econ describe MODEL``: a name that is no table or view, read as a model (:func:`econ.names.describe_model`)."""
    from econ.db import connect_read_only
    from econ.names import describe_model
    from econ.output import human

    with connect_read_only(args.db, current=True) as con:
        try:
            card = describe_model(con, args.name)
        except EconError as e:
            models = e.hint.removeprefix("did you mean ").removesuffix("?") if e.hint.startswith("did you") else ""
            tables = ", ".join(unknown.close)
            hint = (
                f"did you mean the table {tables} or the model {models}?"
                if tables and models
                else f"did you mean {tables or models}?"
                if tables or models
                else "econ tables lists the tables and views; model_catalog the models"
            )
            raise EconError(f"no table, view or model {args.name!r}", hint) from None
    if args.format != "table":
        _out(render(["quantity", "value", "unit"], card, fmt=args.format))
        return 0
    rows = [(q, human(v, u)) for q, v, u in card]
    _out(render_fit(["quantity", "value"], rows, width=terminal_width(), flexible="value", wrap=True, count=False))
    return 0


def cmd_report(args) -> int:
    progress = Progress("econ report", quiet=args.quiet)
    try:
        from econ.build import report
        from econ.progress import reporting

        with reporting(progress):
            index = report(args.db, args.reports, cache_dir=args.cache, wait=args.wait)
    finally:
        progress.close()
    if not args.quiet:
        _out(f"report: {index} ({len(list(index.parent.glob('*.html')))} pages); open it in a browser")
    return 0
