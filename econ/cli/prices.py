"""``econ import``, ``refresh``, ``diff`` and ``cost``: price snapshots, what changed, and what a request costs."""

from __future__ import annotations

import sys
import textwrap
from datetime import date
from pathlib import Path

from econ import paths
from econ.cli.common import _out
from econ.cli.progress import Progress
from econ.errors import EconError
from econ.output import render, render_fit, terminal_width


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


def cmd_history_replay(args) -> int:
    from econ.load.replay import replay_into

    result = replay_into(args.source, args.repo, data_dir=args.data, wait=args.wait)
    replayed, store = result.replayed, result.store
    first, last = store.commits.row(0, named=True), store.commits.row(-1, named=True)
    _out(
        f"replayed {len(replayed.snapshots)} snapshots of {args.source} from {replayed.commits_read} commits of "
        f"{args.repo} ({first['snapshot_date']} {first['commit'][:12]} to {last['snapshot_date']} "
        f"{last['commit'][:12]}): {store.changes.height:,} changed rows ({result.status})"
    )
    for path, size in result.files.items():
        _out(f"  {path}: {size:,} bytes")
    for commit, reason in replayed.skipped:
        _out(f"skipped {commit[:12]}: {reason}")
    return 0


DIFF_KEYS = ("provider", "model", "old_key", "new_key", "quantity", "reason")
"""Columns of econ diff's tables that say which row it is, and why a suspected data fix is one: never cut to fit the
terminal."""


def _print_diff(diff, fmt: str, *, top: int | None, provider: str | None, model: str | None, implied: bool) -> None:
    """A diff for people (table, markdown: summary, per provider, largest moves first, ``top`` rows a list, default
    20) or as one table (csv, json: every row unless ``top``); ``implied``: what the changes imply instead."""
    from econ.diff import filtered, implied_ordered, implied_section, nothing_implied, ordered, view

    changes, moved = filtered(diff.changes, diff.implied, diff.names, provider=provider, model=model)
    width = terminal_width()
    if fmt in ("csv", "json"):
        frame = implied_ordered(moved) if implied else ordered(changes)
        _out(render(frame.columns or ["quantity"], (frame.head(top) if top else frame).rows(), fmt=fmt))
        return
    top = top or 20
    drop = ("provider",) if provider else ()  # the heading names it

    def table(section):
        keep = [i for i, c in enumerate(section.columns) if c not in drop]
        columns, rows = [section.columns[i] for i in keep], [tuple(r[i] for i in keep) for r in section.rows]
        more = f" ({len(rows)} of {section.total:,}; --top N for more)" if section.total > len(rows) else ""
        _out("\n" + textwrap.fill(f"{section.heading}{more}:", width))
        if fmt == "markdown":
            _out(render(columns, rows, fmt="markdown"))
            return
        _out(render_fit(columns, rows, width=width, keys=DIFF_KEYS, count=False))

    if implied:
        section = implied_section(moved, top=top)
        _out(textwrap.fill(f"{section.total:,} inferred quantities moved" + nothing_implied(changes), width))
        if section.total:
            table(section)
        return
    v = view(changes, moved, top=top)
    _out(textwrap.fill(v.summary, width))
    if not changes.height:
        return
    for section in (v.by_provider, *v.sections):
        table(section)
    _out(
        "\n"
        + textwrap.fill(
            "window: when each change happened, as its source allows (after the last snapshot that had the old "
            "value, by the first that had the new one; one day where the source dates the price itself)",
            width,
        )
    )
    _out("csv and json list every change, largest first; --implied lists what they imply")


def cmd_refresh(args) -> int:
    progress = Progress("econ refresh", quiet=args.quiet)
    try:
        result = _refresh(args, progress)
    finally:
        progress.close()
    if args.quiet:
        return 0
    imp = result.imported
    _out(f"snapshot {imp.path.name}: {imp.status} ({imp.rows} price rows, dated {imp.as_of} from {imp.date_from})")
    if result.built is not None:
        statuses = list(result.built.analyses.values())
        _out(
            f"rebuilt {result.built.db_path} in {result.built.elapsed_s:.1f} s (analyses: {statuses.count('ran')} ran, "
            f"{statuses.count('kept')} kept from the previous database, {statuses.count('cached')} from the cache)"
        )
    else:
        current = f"{args.db}" + ("" if args.no_report else f" and {args.reports}")
        _out(f"nothing new: {current} {'is' if args.no_report else 'are'} current, nothing was rebuilt")
    if result.diff is None:
        if imp.status != "unchanged":
            _out(f"no snapshot before {imp.as_of}: nothing to compare it with")
        return 0
    d = result.diff
    _out(f"\nprice changes from {d.from_date} to {d.to_date} (econ diff --from {d.from_date} --to {d.to_date})")
    _print_diff(d, "table", top=args.top, provider=None, model=None, implied=False)
    return 0


def _refresh(args, progress: Progress):
    from econ.progress import reporting
    from econ.refresh import fetch, refresh

    if (args.file is None) == (args.fetch is None):
        raise EconError("give either a FILE or --fetch SOURCE", "econ refresh FILE, or econ refresh --fetch litellm")
    path = (
        fetch(args.fetch, paths.ROOT / "build" / "downloads", today=args.as_of or date.today())
        if args.fetch
        else Path(args.file)
    )
    with reporting(progress):
        return refresh(
            path,
            source=args.fetch or args.source,
            as_of=args.as_of,
            data_dir=args.data,
            db_path=args.db,
            cache_dir=args.cache,
            reports_dir=None if args.no_report else args.reports,
            wait=args.wait,
        )


def cmd_diff(args) -> int:
    from econ.diff import check_filters
    from econ.names import resolve_model_in
    from econ.refresh import diff_database

    args.model = resolve_model_in(args.db, args.model).priced_as if args.model else None
    diff = diff_database(args.db, from_date=args.from_date, to_date=args.to_date)
    check_filters(diff.names, provider=args.provider)
    if args.format in ("table", "markdown"):
        shown = "".join(f", {k} {v}" for k, v in (("provider", args.provider), ("model", args.model)) if v)
        _out(f"price changes from {diff.from_date} to {diff.to_date}{shown}")
    _print_diff(diff, args.format, top=args.top, provider=args.provider, model=args.model, implied=args.implied)
    return 0


TABLE_COST_COLUMNS = (
    "source",
    "provider",
    "model",
    "tier_min_prompt_tokens",
    "requests",
    "cost_usd",
    "usd_per_request",
    "price_row",
)
"""What econ cost shows as a table (csv and json add each component, the status, refusal, conflict and notes)."""


def cmd_cost(args) -> int:
    from econ.analyses.cost_command import cost_for, parse_at, read_requests, single_request

    at = parse_at(args.at)
    if args.requests is not None:
        given = [
            f
            for f in ("input_tokens", "output_tokens", "cached_input_tokens", "cache_write_tokens")
            if getattr(args, f)
        ]
        if given:
            flags = ", ".join("--" + f.replace("_", "-") for f in given)
            raise EconError(
                f"{flags} and --requests {'both' if len(given) == 1 else 'all'} give the tokens",
                "give the tokens per request or a file, not both",
            )
        if at is not None:
            raise EconError("--at and --requests both give the time", "put the time in the file's at column")
        requests = read_requests(Path(args.requests))
    else:
        if args.input_tokens is None or args.output_tokens is None:
            raise EconError(
                "give the request's --input-tokens and --output-tokens (or a workload with --requests FILE)",
                "econ cost --model claude-sonnet-4.5 --input-tokens 250000 --output-tokens 500",
            )
        requests = single_request(
            input_tokens=args.input_tokens,
            output_tokens=args.output_tokens,
            cached_input_tokens=args.cached_input_tokens or 0,
            cache_write_tokens=args.cache_write_tokens or 0,
            cache_ttl=args.cache_ttl,
            cache_storage_hours=args.cache_storage_hours,
            at=at,
        )
    result = cost_for(
        args.db,
        model=args.model,
        requests=requests,
        provider=args.provider,
        source=args.source,
        variant=args.variant,
        as_of=args.as_of,
        include_free=args.include_free,
        keep_all=args.keep_all,
    )
    if args.format != "table":
        _out(render(result.columns, result.rows, fmt=args.format))
        for line in result.notes:  # stdout stays the rows; what a table prints under them goes to stderr
            sys.stderr.write(f"note: {line}\n")
        return 0
    width = terminal_width()
    _out(textwrap.fill(result.summary, width))
    shown = [c for c in result.columns if c in TABLE_COST_COLUMNS] + (["status"] if args.keep_all else [])
    at_ = [result.columns.index(c) for c in shown]
    rows = [tuple(r[i] for i in at_) for r in result.rows]
    _out(render_fit(shown, rows, width=width, keys=("provider", "model")))
    named = [dict(zip(result.columns, r)) for r in result.rows]
    said: dict[str, list[str]] = {}  # one line per note, naming every seller it is about
    for r in named:
        for text in (r["note"] or "").split("; "):
            if text:
                said.setdefault(text, []).append(f"{r['provider']} {r['model']}")
    details = [f"{r['provider']} {r['model']}: {r['conflict']}" for r in named if r["conflict"]]
    details += [f"{text}: {', '.join(who)}" for text, who in said.items()]
    for line in [*result.notes, *details]:
        _out(textwrap.fill(line, width))
    return 0
