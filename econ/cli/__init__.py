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
from econ.cli.common import VARIANT_CHOICES, _date, _positive, _whole
from econ.cli.data import cmd_build, cmd_describe, cmd_report, cmd_sql, cmd_sweep, cmd_tables
from econ.cli.prices import cmd_cost, cmd_diff, cmd_import, cmd_refresh
from econ.cli.serving import cmd_fleet, cmd_predict
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

    de = sub.add_parser("describe", help="a table's or view's columns with their types, units and meanings")
    add_db(de)
    de.add_argument("name", help="table or view (econ tables lists them)")
    de.add_argument("--format", choices=FORMATS, default="table")
    de.set_defaults(func=cmd_describe)

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
        help="print what the price changes imply (inferred quantities that moved) instead of the price changes",
    )
    d.add_argument("--top", type=_positive, default=None, help="rows per list (default 20 in a table; csv/json: all)")
    d.add_argument("--provider", help="only this seller (prices.provider)")
    d.add_argument("--model", help="only this model (canonical_model in any spelling, or a price key)")
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

    c = sub.add_parser(
        "cost",
        help="what a request (or a workload of requests) costs at every seller of a model, cheapest first",
        description="Price a request as the sellers bill it: a long-context tier bills the whole request once the "
        "prompt (input + cache reads + cache writes) exceeds its threshold; cache reads and 5m/1h writes at the "
        "row's cache prices; a variant (batch, flex, priority, fast) at its own rows.",
    )
    add_db(c)
    c.add_argument("--model", required=True, help="canonical model (price_current.canonical_model) or a price key")
    c.add_argument("--provider", help="only this seller (prices.provider); default: every seller, cheapest first")
    c.add_argument("--source", choices=("hand", "litellm", "openrouter"), help="only prices from this source")
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
        "cache_ttl, cache_storage_hours, requests): prints each seller's total",
    )
    c.add_argument("--include-free", action="store_true", help="also list free tiers and placeholder ($0) prices")
    c.add_argument("--format", choices=FORMATS, default="table")
    c.add_argument("--as-of", type=_date, default=None, help="date of the prices (default: the build's date)")
    c.set_defaults(func=cmd_cost)

    i = sub.add_parser("import", help="import a LiteLLM or OpenRouter price map as a dated snapshot in data/")
    i.add_argument("source", choices=("litellm", "openrouter"))
    i.add_argument(
        "file", help="the JSON file (LiteLLM model_prices_and_context_window.json or OpenRouter /api/v1/models)"
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
