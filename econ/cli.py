"""The ``econ`` command: parses arguments, calls one function, prints, picks the exit code.

This is the only module that prints or exits; library code raises :class:`EconError`,
which becomes ``Error: …`` on stderr and exit code 1 (no traceback).
"""

from __future__ import annotations

import argparse
import errno
import math
import signal
import sys
import threading
import warnings
from datetime import date
from pathlib import Path

from econ import paths
from econ.errors import EconError, EconNotice
from econ.files import source_date
from econ.output import FORMATS, render, render_stream


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (use YYYY-MM-DD)") from None


def _whole(text: str) -> int:
    """A whole number, also written as 1e3 (the command checks its range and says what is allowed)."""
    try:
        value = float(text)
        if value.is_integer():
            return int(text) if text.strip().lstrip("+-").isdigit() else int(value)
    except (ValueError, OverflowError):
        pass
    raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")


def _out(text: str) -> None:
    sys.stdout.write(text + ("\n" if not text.endswith("\n") else ""))


# ---------------------------------------------------------------------------- commands


def cmd_build(args) -> int:
    from econ.build import build

    result = build(
        data_dir=args.data,
        db_path=args.db,
        queries_dir=paths.QUERIES_DIR,
        cache_dir=args.cache,
        reports_dir=None if args.no_report else args.reports,
        as_of=args.as_of,
        wait=args.wait,
    )
    tables = [o for o in result.objects if o[1] == "table"]
    views = [o for o in result.objects if o[1] == "view"]
    _out(f"built {result.db_path}: {len(tables)} tables, {len(views)} views in {result.elapsed_s:.2f} s")
    _out(render(["name", "kind", "rows"], [(n, k, r) for n, k, r, _ in result.objects]))
    if result.analyses:
        _out("analyses: " + ", ".join(f"{n} ({s})" for n, s in result.analyses.items()))
    if result.reports_dir is not None:
        _out(f"report: {Path(result.reports_dir) / 'index.html'}")
    return 0


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
    from econ.db import list_objects

    objects = list_objects(args.db)
    _out(render(["name", "kind", "rows", "description"], objects, fmt=args.format))
    return 0


def cmd_import(args) -> int:
    from econ.load.importers import import_file

    result = import_file(args.source, Path(args.file), data_dir=args.data, as_of=args.as_of, wait=args.wait)
    _out(
        f"imported {result.imported_entries} of {result.entries} {args.source} entries as {result.rows} price rows "
        f"-> {result.path} ({result.status}; dated {result.as_of} from {result.date_from})"
    )
    rows = [("imported", result.imported_entries)] + sorted(result.skipped.items(), key=lambda kv: (-kv[1], kv[0]))
    _out(render(["reason", "entries"], rows))
    for reason, keys in sorted(result.examples.items()):
        more = result.skipped.get(reason, len(keys)) - len(keys)
        _out(f"skipped for {reason}: " + ", ".join(keys) + (f" and {more} more" if more > 0 else ""))
    for title, counts in (
        ("price keys not imported (by family)", result.ignored_keys),
        ("rows left out", result.dropped_rows),
    ):
        if counts:
            _out(
                f"{title}: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
            )
    return 0


def cmd_report(args) -> int:
    from econ.build import report

    index = report(args.db, args.reports, cache_dir=args.cache, wait=args.wait)
    _out(f"report: {index}")
    return 0


def _print_changes(changes, implied, counts: dict[str, int], fmt: str, *, implied_only: bool = False) -> None:
    """Price changes, then what they imply: both, with counts, for people (table, markdown); one table for csv/json."""
    if fmt in ("csv", "json"):
        frame = implied if implied_only else changes
        _out(render(frame.columns, frame.rows(), fmt=fmt))
        return
    _out(
        f"{counts['models_added']} models added, {counts['models_removed']} removed, "
        f"{counts['prices_changed']} prices changed ({counts['components_changed']} components)"
    )
    _out(render(changes.columns, changes.rows(), fmt=fmt))
    _out(f"\nwhat they imply (scenario base): {implied.height} inferred quantities moved")
    _out(render(implied.columns, implied.rows(), fmt=fmt))


def cmd_refresh(args) -> int:
    from econ.refresh import fetch, refresh

    if (args.file is None) == (args.fetch is None):
        raise EconError(
            "give either a FILE or --fetch litellm|openrouter", "econ refresh FILE, or econ refresh --fetch litellm"
        )
    path = (
        fetch(args.fetch, paths.ROOT / "build" / "downloads", today=args.as_of or date.today())
        if args.fetch
        else Path(args.file)
    )
    result = refresh(
        path,
        source=args.fetch or args.source,
        as_of=args.as_of,
        data_dir=args.data,
        db_path=args.db,
        cache_dir=args.cache,
        reports_dir=None if args.no_report else args.reports,
        wait=args.wait,
    )
    imp = result.imported
    _out(f"snapshot {imp.path.name}: {imp.status} ({imp.rows} price rows, dated {imp.as_of} from {imp.date_from})")
    if result.built is not None:
        _out(
            f"rebuilt {result.built.db_path} in {result.built.elapsed_s:.2f} s; analyses: "
            + ", ".join(f"{n} ({s})" for n, s in result.built.analyses.items())
        )
    _print_changes(result.changes, result.implied, result.counts, "table")
    return 0


def cmd_diff(args) -> int:
    from econ.refresh import diff_database

    diff = diff_database(args.db, from_date=args.from_date, to_date=args.to_date)
    if args.format in ("table", "markdown"):
        _out(f"price changes from {diff.from_date} to {diff.to_date}")
    _print_changes(diff.changes, diff.implied, diff.counts, args.format, implied_only=args.implied)
    return 0


def cmd_fleet(args) -> int:
    from econ.analyses.fleet_command import plan_for

    columns, rows = plan_for(
        args.db,
        model=args.model,
        chip=args.chip,
        tokens_per_s=args.tokens_per_s,
        scenario=args.scenario,
        batch_policy=args.batch_policy,
        number_format=args.number_format,
        prefill_chips=args.prefill_chips,
        decode_chips=args.decode_chips,
        tokens_per_s_per_user=args.tokens_per_s_per_user,
        ttft_s=args.ttft_s,
        as_of=args.as_of,
    )
    _out(render(columns, rows, fmt=args.format))
    return 0


def cmd_predict(args) -> int:
    import json

    from econ.analyses.predict_command import predict_point, rows

    result = predict_point(
        args.db,
        model=args.model,
        chip=args.chip,
        decode_chips=args.decode_chips,
        prefill_chips=args.prefill_chips,
        input_tokens=args.input_tokens,
        output_tokens=args.output_tokens,
        batch=args.batch,
        tokens_per_s_per_user=args.tokens_per_s_per_user,
        number_format=args.number_format,
        cached_input_frac=args.cached_input_frac,
        scenario=args.scenario,
    )
    if args.format == "json":
        clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in result.items()}
        _out(json.dumps(clean, indent=2))
    else:
        columns, table = rows(result)
        _out(render(columns, table, fmt=args.format))
    return 0


# ---------------------------------------------------------------------------- parser


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="econ", description="LLM serving and training economics from public data.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add_db(sp):
        sp.add_argument("--db", type=Path, default=paths.DB_PATH, help="database file (default: build/econ.duckdb)")

    def add_wait(sp):
        sp.add_argument(
            "--wait",
            action="store_true",
            help="if another econ run is writing the same outputs, wait for it (default: fail)",
        )

    b = sub.add_parser("build", help="check data/, build the database, run the analyses, write the report")
    add_db(b)
    b.add_argument("--data", type=Path, default=paths.DATA_DIR, help="data folder (default: data/)")
    b.add_argument("--reports", type=Path, default=paths.REPORTS_DIR, help="report folder (default: reports/)")
    b.add_argument("--no-report", action="store_true", help="skip writing the HTML report")
    b.add_argument("--cache", type=Path, default=paths.CACHE_DIR, help="analysis cache folder (default: build/cache/)")
    b.add_argument("--as-of", type=_date, default=None, help="date for 'current' prices (default: today)")
    add_wait(b)
    b.set_defaults(func=cmd_build)

    s = sub.add_parser("sql", help="run SQL on the database (read-only)")
    add_db(s)
    s.add_argument("query", nargs="?", help='SQL text, or "-" to read it from stdin')
    s.add_argument("-f", "--file", help="read the SQL from this file")
    s.add_argument("--format", choices=FORMATS, default="table")
    s.add_argument("--as-of", type=_date, default=None, help="date for price_current (default: today)")
    s.add_argument(
        "--allow-files",
        action="store_true",
        help="let the query read and write files (COPY ... TO, read_csv, ATTACH); default: only the database",
    )
    s.add_argument(
        "--sweep",
        type=Path,
        default=None,
        help="also read this econ sweep output folder: its tables are views named like the database's",
    )
    s.set_defaults(func=cmd_sql)

    w = sub.add_parser("sweep", help="evaluate a declared sweep (TOML spec) partition by partition into Parquet")
    add_db(w)
    w.add_argument("spec", help="the sweep spec (.toml; see docs/sweeps.md)")
    w.add_argument("--out", type=Path, default=None, help="output folder (default: build/sweeps/<spec name>/)")
    w.add_argument("--backend", choices=("local", "ray"), default="local", help="local processes (default) or Ray")
    w.add_argument("--workers", type=_whole, default=None, help="processes or Ray tasks at once (default: the cores)")
    w.add_argument("--ray-address", default=None, help="Ray cluster to connect to (default: RAY_ADDRESS or local)")
    w.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_wait(w)
    w.set_defaults(func=cmd_sweep)

    t = sub.add_parser("tables", help="list tables and views with row counts and descriptions")
    add_db(t)
    t.add_argument("--format", choices=FORMATS, default="table")
    t.set_defaults(func=cmd_tables)

    r = sub.add_parser("report", help="write the static HTML report from the built database")
    add_db(r)
    r.add_argument("--reports", type=Path, default=paths.REPORTS_DIR, help="report folder (default: reports/)")
    r.add_argument("--cache", type=Path, default=paths.CACHE_DIR, help="build cache folder (default: build/cache/)")
    add_wait(r)
    r.set_defaults(func=cmd_report)

    f = sub.add_parser("refresh", help="import a new price snapshot, rebuild, and print what changed")
    add_db(f)
    f.add_argument("file", nargs="?", help="the LiteLLM or OpenRouter JSON file")
    f.add_argument("--source", choices=("litellm", "openrouter"), help="format of FILE (default: detected)")
    f.add_argument(
        "--fetch", choices=("litellm", "openrouter"), help="download the current public file instead of FILE"
    )
    f.add_argument("--as-of", type=_date, default=None, help="snapshot date (default: the file's own date)")
    f.add_argument("--data", type=Path, default=paths.DATA_DIR, help="data folder (default: data/)")
    f.add_argument("--reports", type=Path, default=paths.REPORTS_DIR, help="report folder (default: reports/)")
    f.add_argument("--no-report", action="store_true", help="skip writing the HTML report")
    f.add_argument("--cache", type=Path, default=paths.CACHE_DIR, help="analysis cache folder (default: build/cache/)")
    add_wait(f)
    f.set_defaults(func=cmd_refresh)

    d = sub.add_parser("diff", help="what changed in prices (and what it implies) between two snapshot dates")
    add_db(d)
    d.add_argument(
        "--from", dest="from_date", type=_date, default=None, help="older date (default: the snapshot before --to)"
    )
    d.add_argument("--to", dest="to_date", type=_date, default=None, help="newer date (default: the newest snapshot)")
    d.add_argument("--format", choices=FORMATS, default="table")
    d.add_argument(
        "--implied",
        action="store_true",
        help="with csv/json: print the inferred-quantity changes instead of the price changes (one table each)",
    )
    d.set_defaults(func=cmd_diff)

    fl = sub.add_parser(
        "fleet", help="size, power and cost the fleet serving a model on a chip at a traffic (read-only)"
    )
    add_db(fl)
    fl.add_argument("--model", required=True, help="model (models.model)")
    fl.add_argument("--chip", required=True, help="accelerator (hardware.chip)")
    fl.add_argument(
        "--tokens-per-s", type=float, required=True, help="traffic served, input + output tokens per second"
    )
    fl.add_argument(
        "--scenario",
        default="calibrated",
        help="scenario of the traffic mix and fleet assumptions: calibrated (efficiencies fitted to measured "
        "systems, the default) or base (the roofline bound), or another of data/scenarios.csv",
    )
    fl.add_argument(
        "--batch-policy",
        choices=("balance_multiple", "speed_target"),
        default="balance_multiple",
        help="decode batch: a multiple of the balance batch, or the largest meeting the speed target",
    )
    fl.add_argument(
        "--number-format",
        choices=("bf16", "fp8", "int8", "fp4"),
        default=None,
        help="format of the math and weights (default: the scenario's weight_format)",
    )
    fl.add_argument(
        "--decode-chips",
        type=_whole,
        default=None,
        help="chips per decode replica (default: the layout search chooses)",
    )
    fl.add_argument(
        "--prefill-chips",
        type=_whole,
        default=None,
        help="chips per prefill replica (default: the layout search chooses)",
    )
    fl.add_argument(
        "--tokens-per-s-per-user",
        type=float,
        default=None,
        help="decode speed each user must see (default: the scenario's; implies --batch-policy speed_target)",
    )
    fl.add_argument(
        "--ttft-s", type=float, default=None, help="time to first token each prompt must meet (default: the scenario's)"
    )
    fl.add_argument("--format", choices=FORMATS, default="table")
    fl.add_argument(
        "--as-of", type=_date, default=None, help="date for current list prices and rental quotes (default: today)"
    )
    fl.set_defaults(func=cmd_fleet)

    pr = sub.add_parser(
        "predict", help="predict one operating point: throughput, speed, step terms, TTFT, cost, error (read-only)"
    )
    add_db(pr)
    pr.add_argument("--model", required=True, help="model (models.model)")
    pr.add_argument("--chip", required=True, help="accelerator (hardware.chip)")
    pr.add_argument("--decode-chips", type=_whole, required=True, help="chips per decode replica")
    pr.add_argument("--prefill-chips", type=_whole, default=None, help="chips per prefill replica (default: as decode)")
    pr.add_argument("--input-tokens", type=float, required=True, help="prompt tokens per request")
    pr.add_argument("--output-tokens", type=float, required=True, help="output tokens per request")
    speed = pr.add_mutually_exclusive_group(required=True)
    speed.add_argument("--batch", type=float, help="sequences per decode replica")
    speed.add_argument("--tokens-per-s-per-user", type=float, help="decode speed each user must see (largest batch)")
    pr.add_argument(
        "--number-format",
        choices=("bf16", "fp8", "int8", "fp4"),
        default=None,
        help="format of the math and weights (default: the scenario's weight_format)",
    )
    pr.add_argument("--cached-input-frac", type=float, default=0.0, help="share of each prompt already cached")
    pr.add_argument(
        "--scenario",
        default="calibrated",
        help="scenario: calibrated (fitted to measured systems, the default) or base (the roofline bound)",
    )
    pr.add_argument("--format", choices=FORMATS, default="table")
    pr.set_defaults(func=cmd_predict)

    i = sub.add_parser("import", help="import a LiteLLM or OpenRouter price map as a dated snapshot in data/")
    i.add_argument("source", choices=("litellm", "openrouter"))
    i.add_argument(
        "file", help="the JSON file (LiteLLM model_prices_and_context_window.json or OpenRouter /api/v1/models)"
    )
    i.add_argument("--as-of", type=_date, default=None, help="snapshot date (default: the file's own date)")
    i.add_argument("--data", type=Path, default=paths.DATA_DIR, help="data folder (default: data/)")
    add_wait(i)
    i.set_defaults(func=cmd_import)
    return p


def _notices():
    """A ``warnings.showwarning`` that prints each distinct library notice (:class:`EconNotice`) once, as one line
    on stderr; other warnings as Python does."""
    shown: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        if not issubclass(category, EconNotice):
            sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))
            return
        text = str(message).splitlines()[0] if str(message) else ""
        if text not in shown:
            shown.add(text)
            sys.stderr.write(f"notice: {text}\n")

    return show


def _terminate(signum, frame) -> None:
    raise SystemExit(128 + signum)  # cleanup handlers run; exit 143 like a shell


_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    previous = (
        signal.signal(signal.SIGTERM, _terminate) if threading.current_thread() is threading.main_thread() else None
    )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", EconNotice)
            warnings.showwarning = _notices()
            source_date()  # numpy reads SOURCE_DATE_EPOCH when it is imported: check it before anything is
            return args.func(args)
    except EconError as e:
        sys.stderr.write(f"Error: {e}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except RuntimeError as e:
        if str(e) != "Query interrupted":  # DuckDB's answer to Ctrl-C during a statement
            raise
        sys.stderr.write("interrupted\n")
        return 130
    except OSError as e:  # a file or folder that cannot be read or written (permissions, missing folder, full disk)
        if e.errno in _FULL:
            where = f" while writing {e.filename}" if e.filename else ""
            sys.stderr.write(
                f"Error: {e.strerror}{where} — free some disk space (or raise the file-size limit, ulimit -f) and "
                "run again; nothing was replaced\n"
            )
        else:
            sys.stderr.write(f"Error: {e} — check the path and its permissions\n")
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    raise SystemExit(main())
