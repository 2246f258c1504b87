"""The ``econ`` command: parses arguments, calls one function, prints, picks the exit code.

This package is the only code that prints or exits; library code raises :class:`EconError`,
which becomes ``Error: …`` on stderr and exit code 1 (no traceback).
"""

from __future__ import annotations

import argparse
import errno
import signal
import sys
import threading
import warnings
from pathlib import Path

from econ import paths
from econ.cli.common import HISTORY_CHOICES, PRICE_SOURCES, VARIANT_CHOICES, _date, _positive, _whole
from econ.cli.data import cmd_build, cmd_describe, cmd_report, cmd_sql, cmd_sweep, cmd_tables
from econ.cli.help import BUILD_DATE, subparser
from econ.cli.prices import cmd_cost, cmd_diff, cmd_history_replay, cmd_import, cmd_refresh
from econ.cli.serving import add_fleet, add_predict
from econ.errors import EconError, EconNotice
from econ.files import source_date
from econ.output import FORMATS


def parser() -> argparse.ArgumentParser:
    from econ import __version__

    p = argparse.ArgumentParser(prog="econ", description="LLM serving and training economics from public data.")
    p.add_argument("--version", action="version", version=f"econ {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add_db(sp):
        sp.add_argument("--db", type=Path, default=paths.DB_PATH, help="database file (default: build/econ.duckdb)")

    def add_quiet(sp):
        sp.add_argument("-q", "--quiet", action="store_true", help="print nothing but errors (no progress, no summary)")

    def add_wait(sp):
        sp.add_argument(
            "--wait",
            action="store_true",
            help="if another econ run is writing the same outputs, wait for it (default: fail)",
        )

    b = subparser(sub, "build", help="check data/, build the database, run the analyses, write the report")
    add_db(b)
    b.add_argument("--data", type=Path, default=paths.DATA_DIR, help="data folder (default: data/)")
    b.add_argument("--reports", type=Path, default=paths.REPORTS_DIR, help="report folder (default: reports/)")
    b.add_argument("--no-report", action="store_true", help="skip writing the HTML report")
    b.add_argument("--cache", type=Path, default=paths.CACHE_DIR, help="analysis cache folder (default: build/cache/)")
    b.add_argument(
        "--as-of",
        type=_date,
        default=None,
        help="date for 'current' prices (default: today, or the date of SOURCE_DATE_EPOCH when it is set)",
    )
    b.add_argument(
        "--force", action="store_true", help="rebuild even when nothing it reads changed since the last build"
    )
    add_wait(b)
    add_quiet(b)
    b.set_defaults(func=cmd_build)

    s = subparser(sub, "sql", help="run SQL on the database (read-only)")
    add_db(s)
    s.add_argument("query", nargs="?", help='SQL text, or "-" to read it from stdin')
    s.add_argument("-f", "--file", help="read the SQL from this file")
    s.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    s.add_argument("--as-of", type=_date, default=None, help=f"date for price_current (default: {BUILD_DATE})")
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

    w = subparser(sub, "sweep", help="evaluate a declared sweep (TOML spec) partition by partition into Parquet")
    add_db(w)
    w.add_argument("spec", help="the sweep spec (.toml; see docs/sweeps.md)")
    w.add_argument("--out", type=Path, default=None, help="output folder (default: build/sweeps/<spec name>/)")
    w.add_argument("--backend", choices=("local", "ray"), default="local", help="local processes (default) or Ray")
    w.add_argument("--workers", type=_whole, default=None, help="processes or Ray tasks at once (default: the cores)")
    w.add_argument("--ray-address", default=None, help="Ray cluster to connect to (default: RAY_ADDRESS or local)")
    w.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_wait(w)
    w.set_defaults(func=cmd_sweep)

    t = subparser(sub, "tables", help="list tables and views with row counts and descriptions")
    add_db(t)
    t.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    t.set_defaults(func=cmd_tables)

    de = subparser(
        sub, "describe", help="a table's or view's columns with their types, units and meanings, or what a model is"
    )
    add_db(de)
    de.add_argument("name", help="table or view (econ tables lists them, any case), or a model (any spelling)")
    de.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    de.set_defaults(func=cmd_describe)

    r = subparser(sub, "report", help="write the static HTML report from the built database")
    add_db(r)
    r.add_argument("--reports", type=Path, default=paths.REPORTS_DIR, help="report folder (default: reports/)")
    r.add_argument("--cache", type=Path, default=paths.CACHE_DIR, help="build cache folder (default: build/cache/)")
    add_wait(r)
    add_quiet(r)
    r.set_defaults(func=cmd_report)

    f = subparser(sub, "refresh", help="import a new price snapshot, rebuild, and print what changed")
    add_db(f)
    f.add_argument("file", nargs="?", help="the LiteLLM, OpenRouter, genai-prices or llm-prices JSON file")
    f.add_argument("--source", choices=PRICE_SOURCES, help="format of FILE (default: detected)")
    f.add_argument("--fetch", choices=PRICE_SOURCES, help="download the current public file instead of FILE")
    f.add_argument(
        "--as-of",
        type=_date,
        default=None,
        help="snapshot date of a file whose name carries none (default: the date in its name, else its modification "
        "time, with a notice)",
    )
    f.add_argument("--data", type=Path, default=paths.DATA_DIR, help="data folder (default: data/)")
    f.add_argument("--reports", type=Path, default=paths.REPORTS_DIR, help="report folder (default: reports/)")
    f.add_argument("--no-report", action="store_true", help="skip writing the HTML report")
    f.add_argument("--cache", type=Path, default=paths.CACHE_DIR, help="analysis cache folder (default: build/cache/)")
    f.add_argument("--top", type=_positive, default=None, help="rows per list of changes (default 20)")
    add_wait(f)
    add_quiet(f)
    f.set_defaults(func=cmd_refresh)

    d = subparser(sub, "diff", help="what changed in prices (and what it implies) between two snapshot dates")
    add_db(d)
    d.add_argument(
        "--from", dest="from_date", type=_date, default=None, help="older date (default: the snapshot before --to)"
    )
    d.add_argument("--to", dest="to_date", type=_date, default=None, help="newer date (default: the newest snapshot)")
    d.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    d.add_argument(
        "--implied",
        action="store_true",
        help="print what the price changes imply (inferred quantities that moved) instead of the price changes",
    )
    d.add_argument("--top", type=_positive, default=None, help="rows per list (default 20 in a table; csv/json: all)")
    d.add_argument("--provider", help="only this seller (prices.provider)")
    d.add_argument(
        "--model", help="only this model: its canonical name, models.model, repo or a price key, in any case"
    )
    d.set_defaults(func=cmd_diff)

    add_fleet(sub, add_db)
    add_predict(sub, add_db)

    c = subparser(
        sub,
        "cost",
        help="what a request (or a workload of requests) costs at every seller of a model, cheapest first",
        description="Price a request as the sellers bill it: a long-context tier bills the whole request once the "
        "prompt (input + cache reads + cache writes) exceeds its threshold (reaches it where the seller says so); "
        "cache reads and 5m/1h writes at the row's cache prices after the seller's billing rules "
        "(data/billing_rules.csv); a variant (batch, flex, priority, fast) at its own rows; one price per seller "
        "(by date, then by authority: hand-kept, LiteLLM, OpenRouter, genai-prices, llm-prices). A seller whose "
        "limit is below the prompt, or that retired the model, is left out with the reason (--all lists it).",
    )
    add_db(c)
    c.add_argument(
        "--model",
        required=True,
        help="model: its canonical name (price_current.canonical_model), models.model, repo or a price key, in any "
        "case",
    )
    c.add_argument("--provider", help="only this seller (prices.provider); default: every seller, cheapest first")
    c.add_argument("--source", choices=("hand", *PRICE_SOURCES), help="only prices from this source")
    c.add_argument("--input-tokens", type=_whole, help="uncached prompt tokens of the request")
    c.add_argument("--output-tokens", type=_whole, help="output tokens of the request")
    c.add_argument("--cached-input-tokens", type=_whole, help="prompt tokens read from the cache (default 0)")
    c.add_argument("--cache-write-tokens", type=_whole, help="prompt tokens written to the cache (default 0)")
    c.add_argument("--cache-ttl", choices=("5m", "1h"), default="5m", help="retention of the cache writes (default 5m)")
    c.add_argument(
        "--cache-storage-hours",
        type=float,
        default=0.0,
        help="hours the cached tokens are stored (Google explicit caches)",
    )
    c.add_argument("--variant", choices=VARIANT_CHOICES, default="standard", help="service variant (default standard)")
    c.add_argument(
        "--requests",
        help="CSV of requests (input_tokens, output_tokens, optional cached_input_tokens, cache_write_tokens, "
        "cache_ttl, cache_storage_hours, requests, at): prints each seller's total; a request with a time is priced on "
        "its own date unless --as-of is given",
    )
    c.add_argument(
        "--at",
        help="time of the request, ISO 8601 with a zone (2026-12-01T02:00Z): time-of-day prices; its date is the "
        "prices' date unless --as-of is given",
    )
    c.add_argument("--include-free", action="store_true", help="also list free tiers and placeholder ($0) prices")
    c.add_argument(
        "--all",
        action="store_true",
        dest="keep_all",
        help="also list the sellers that refuse the requests and the schedules another source supersedes (status)",
    )
    c.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    c.add_argument(
        "--as-of",
        type=_date,
        default=None,
        help="date of the prices of every request, any day since the first snapshot of the price history; without it a "
        f"request with a time (--at, or the at column) is priced on its own date (default: {BUILD_DATE})",
    )
    c.set_defaults(func=cmd_cost)

    i = subparser(
        sub,
        "import",
        help="import a LiteLLM, OpenRouter, genai-prices or llm-prices price map as a dated snapshot in data/",
    )
    i.add_argument("source", choices=PRICE_SOURCES)
    i.add_argument(
        "file",
        help="the JSON file (LiteLLM model_prices_and_context_window.json, OpenRouter /api/v1/models, genai-prices "
        "prices/data.json, llm-prices data/<vendor>.json or historical-v1.json)",
    )
    i.add_argument(
        "--as-of",
        type=_date,
        default=None,
        help="snapshot date of a file whose name carries none (default: the date in its name, else its modification "
        "time, with a notice)",
    )
    i.add_argument("--data", type=Path, default=paths.DATA_DIR, help="data folder (default: data/)")
    add_wait(i)
    i.set_defaults(func=cmd_import)

    h = subparser(sub, "history", help="price histories kept in git (genai-prices, llm-prices)")
    hs = h.add_subparsers(dest="history_command", required=True, metavar="ACTION")
    hr = hs.add_parser(
        "replay",
        help="replay a price database's git history into data/history/: every commit that changed its data "
        "becomes a dated snapshot",
    )
    hr.add_argument("source", choices=HISTORY_CHOICES)
    hr.add_argument(
        "--repo",
        type=Path,
        required=True,
        help="a local clone (bare or not) of github.com/pydantic/genai-prices or github.com/simonw/llm-prices",
    )
    hr.add_argument("--data", type=Path, default=paths.DATA_DIR, help="data folder (default: data/)")
    add_wait(hr)
    hr.set_defaults(func=cmd_history_replay)
    return p


def _notices():
    """A ``warnings.showwarning`` that prints each distinct warning once, as one line on stderr: ``notice: <what>``
    for a library notice (:class:`EconNotice`), ``notice: <what> (<kind>)`` for any other (a numerical warning
    the library did not handle where it arose), never a source path or a code line. The warning filters are left as
    they are, so ``python -W error -m econ …`` still stops at the first."""
    shown: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = str(message).splitlines()[0] if str(message) else category.__name__
        if not issubclass(category, EconNotice):
            text = f"{text} ({category.__name__})"
        if text not in shown:
            shown.add(text)
            sys.stderr.write(f"notice: {text}\n")

    return show


_SIGNALLED: list[int] = []
"""The signals (SIGINT, SIGTERM) this run received: whatever a library raises after one, the run exits as stopped."""


def _terminate(signum, frame) -> None:
    _SIGNALLED.append(signum)
    raise SystemExit(128 + signum)  # cleanup handlers run; exit 143 like a shell


def _interrupt(signum, frame) -> None:
    _SIGNALLED.append(signum)
    raise KeyboardInterrupt


_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def _stopped() -> int:
    """The exit of a run stopped by a signal: 130 with "interrupted" for Ctrl-C, 128 + N for another."""
    signum = _SIGNALLED[0]
    if signum == signal.SIGINT:
        sys.stderr.write("interrupted\n")
    return 128 + signum


def _failed(e: BaseException) -> int:
    """The exit code (and message on stderr) of a run that raised ``e``; anything unexpected is re-raised."""
    if isinstance(e, EconError):
        sys.stderr.write(f"Error: {e}\n")
        return 1
    if isinstance(e, KeyboardInterrupt) or (isinstance(e, RuntimeError) and str(e) == "Query interrupted"):
        sys.stderr.write("interrupted\n")  # (DuckDB's answer to Ctrl-C during a statement)
        return 130
    if isinstance(e, BrokenPipeError):
        return 0
    if isinstance(e, OSError):  # a file or folder that cannot be read or written (permissions, full disk)
        if e.errno in _FULL:
            where = f" while writing {e.filename}" if e.filename else " while writing the output"
            sys.stderr.write(
                f"Error: {e.strerror}{where} — free some disk space (or raise the file-size limit, ulimit -f) and "
                "run again; nothing was replaced\n"
            )
        else:
            sys.stderr.write(f"Error: {e} — check the path and its permissions\n")
        return 1
    raise e


def _flushed(code: int) -> int:
    """``code``, once what was printed is written: output that cannot be written (a full disk) is a failure."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        return code
    except OSError as e:
        return _failed(e)
    return code


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        _SIGNALLED.clear()
        handlers = {signal.SIGTERM: signal.signal(signal.SIGTERM, _terminate)}
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            handlers[signal.SIGINT] = signal.signal(signal.SIGINT, _interrupt)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", EconNotice)
            warnings.showwarning = _notices()
            source_date()  # numpy reads SOURCE_DATE_EPOCH when it is imported: check it before anything is
            return _flushed(args.func(args))
    except BaseException as e:  # noqa: BLE001 (every ending becomes an exit code; unexpected ones are re-raised)
        if _SIGNALLED:  # stopped: whatever a library made of the signal (DuckDB's interrupt, a half-read file)
            return _stopped()
        return _failed(e)
    finally:
        for signum, previous in handlers.items():
            signal.signal(signum, previous)


if __name__ == "__main__":
    raise SystemExit(main())
