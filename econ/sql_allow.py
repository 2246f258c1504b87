"""What ``econ sql`` runs: an allow-list of the statements, settings and table functions that reading needs.

Every statement of a query is checked before any runs; anything else is refused with the reason:

- ``SELECT`` (with ``FROM …``, ``WITH``, ``VALUES``, ``DESCRIBE``, ``SHOW``, ``SUMMARIZE``) and ``EXPLAIN``
  of one, calling only the table functions of :data:`TABLE_FUNCTIONS` (the catalog's ``duckdb_*`` views,
  ``range``, ``unnest``, ``pragma_table_info``, the file readers, which DuckDB's own setting keeps to the
  database unless ``--allow-files``…); ``query()``, ``enable_logging()``, ``checkpoint()`` and the like are
  refused;
- ``PRAGMA`` of what the database holds (:data:`PRAGMAS`), never ``PRAGMA name = value``;
- ``SET``/``RESET`` of a variable or of :data:`SETTINGS`, with ``threads`` at most the machine's cores and
  ``memory_limit`` at most its memory (a setting that multiplies resources is capped);
- ``COPY``, ``EXPORT``, ``ATTACH``, ``DETACH``, ``LOAD`` and ``INSTALL`` reach DuckDB, whose disabled file
  access refuses them unless ``--allow-files`` (and with ``--sweep`` they are refused here: the sweep's folder
  is readable).

Write statements are refused as such: the database is also opened read-only.
"""

from __future__ import annotations

import re

import duckdb

from econ.errors import EconError
from econ.machine import cores, memory_bytes

READ_ONLY_HINT = (
    "econ sql opens the database read-only; change data/*.csv or queries/*.sql and run econ build, "
    "or copy results out with --format csv > file.csv"
)
FILES_HINT = (
    "econ sql reads and writes nothing but the database; write results with --format csv > file.csv, "
    "or pass --allow-files to let this query read or write files"
)
READING = (
    "econ sql runs only what reading needs: SELECT (with DESCRIBE, SHOW, SUMMARIZE), EXPLAIN, the PRAGMAs that show "
    "what the database holds, and SET of a variable, threads, memory_limit, timezone, calendar or the orderings"
)
WRITES = ("INSERT", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "CREATE_FUNC", "MERGE_INTO", "VACUUM", "ANALYZE")
FILES = ("COPY", "EXPORT", "ATTACH", "DETACH", "LOAD", "INSTALL", "COPY_DATABASE")
PRAGMAS = frozenset(
    "table_info show show_tables show_tables_expanded show_databases database_list database_size storage_info "
    "metadata_info version platform collations functions user_agent".split()
)
SETTINGS = frozenset(
    "threads worker_threads memory_limit max_memory timezone calendar default_order default_null_order "
    "preserve_insertion_order".split()
)
TABLE_FUNCTIONS = frozenset(
    # the catalog and what DuckDB knows
    "duckdb_approx_database_count duckdb_available_metrics duckdb_columns duckdb_connection_count duckdb_constraints "
    "duckdb_coordinate_systems duckdb_databases duckdb_dependencies duckdb_dialects duckdb_extensions "
    "duckdb_functions duckdb_indexes duckdb_keywords duckdb_log_contexts duckdb_logs duckdb_logs_parsed duckdb_memory "
    "duckdb_optimizers duckdb_prepared_statements duckdb_schemas duckdb_sequences duckdb_settings duckdb_tables "
    "duckdb_temporary_files duckdb_types duckdb_variables duckdb_views duckdb_table_sample duckdb_triggers "
    "pragma_collations pragma_database_size pragma_metadata_info pragma_platform pragma_show pragma_storage_info "
    "pragma_table_info pragma_user_agent pragma_version icu_calendar_names pg_timezone_names test_all_types "
    "test_vector_types "
    # values
    "range generate_series unnest repeat repeat_row json_each json_tree summary histogram histogram_values "
    # files: DuckDB's disabled file access refuses them unless --allow-files (or inside a --sweep folder)
    "read_csv read_csv_auto read_json read_json_auto read_json_objects read_json_objects_auto read_ndjson "
    "read_ndjson_auto read_ndjson_objects read_parquet parquet_scan parquet_metadata parquet_schema "
    "parquet_file_metadata parquet_kv_metadata parquet_full_metadata parquet_page_index parquet_bloom_probe "
    "read_text read_blob glob sniff_csv".split()
)
_TABLE_FUNCTION_NAMES: frozenset[str] | None = None
_UNITS = {"b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def _table_functions() -> frozenset[str]:
    """Every table function this DuckDB has (the allow-list says which of them a query may call)."""
    global _TABLE_FUNCTION_NAMES
    if _TABLE_FUNCTION_NAMES is None:
        with duckdb.connect() as con:
            rows = con.execute(
                "select distinct lower(function_name) from duckdb_functions() "
                "where function_type in ('table', 'table_macro')"
            ).fetchall()
        _TABLE_FUNCTION_NAMES = frozenset(r[0] for r in rows)
    return _TABLE_FUNCTION_NAMES


def _refused(what: str, why: str = READING, hint: str = "run a SELECT; econ tables lists what you can query"):
    return EconError(f"{what} is refused: {why}", hint)


_COMMENTS = re.compile(r"--[^\n]*|/\*.*?\*/", re.S)
_CALL = re.compile(r"([A-Za-z_][A-Za-z0-9_$]*)\s*\(")
_SKIPPED = (duckdb.token_type.string_const, duckdb.token_type.comment)


def _code(text: str) -> str:
    """The statement without comments and string literals; quoted identifiers unquoted (``"f"(…)`` is ``f(…)``).

    DuckDB's own tokenizer finds where each literal ends (``$tag$…$tag$``, ``E'\\''``: a pattern of our own
    misread those, and a refused call behind them ran)."""
    try:
        tokens = duckdb.tokenize(text)
    except Exception as e:  # noqa: BLE001 (whatever the tokenizer raises is the statement's problem)
        raise _refused("a statement DuckDB cannot read", f"its tokenizer said: {e}") from None
    parts = []
    for i, (start, kind) in enumerate(tokens):
        piece = text[start : tokens[i + 1][0] if i + 1 < len(tokens) else len(text)].strip()
        if kind in _SKIPPED:
            piece = " "
        elif kind == duckdb.token_type.identifier and len(piece) > 1 and piece[0] == piece[-1] == '"':
            piece = piece[1:-1].replace('""', '"')
        parts.append(piece)
    return " ".join(parts)


def _check_calls(text: str) -> None:
    known = _table_functions()
    for name in _CALL.findall(_code(text)):
        lowered = name.lower()
        if lowered in known and lowered not in TABLE_FUNCTIONS:
            raise _refused(
                f"the table function {lowered}()",
                "it changes settings, writes files or runs SQL of its own; " + READING,
            )


def _first_words(text: str, n: int = 3) -> str:
    return " ".join(_code(text).split()[:n])


_SET = re.compile(
    r"^\s*(set|reset|pragma)\s+(?:(?:global|session|local)\s+)?(?:(variable)\s+)?([A-Za-z_][A-Za-z0-9_]*)"
    r"(?:\s*(?:=|\bto\b)\s*(.*?))?\s*;?\s*$",
    re.I | re.S,
)


def _check_set(text: str) -> None:
    m = _SET.match(_COMMENTS.sub(" ", text))
    if m is None:
        raise _refused(f"`{_first_words(text)}`", "econ sql uses the database as it is opened; " + READING)
    verb, variable, name, value = m.group(1).upper(), m.group(2), m.group(3).lower(), m.group(4)
    if variable:  # a variable's value is a query too: its calls are checked like any other
        _check_calls(text)
        return
    if name not in SETTINGS:
        raise _refused(f"{verb} {name}", READING, "drop the SET; the defaults read the database")
    if value is None or verb == "RESET":
        return
    raw = value.strip().strip("'\"").strip()
    if name in ("threads", "worker_threads"):
        limit = cores()
        if not raw.isdigit() or not 1 <= int(raw) <= limit:
            raise _refused(
                f"SET {name} = {raw[:40]}",
                f"econ sql runs at most one thread per core ({limit} here)",
                f"give a whole number from 1 to {limit}",
            )
    elif name in ("memory_limit", "max_memory"):
        m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)", raw, re.I)
        limit = memory_bytes()
        if m is None or not 0 < float(m.group(1)) * _UNITS[m.group(2).lower()] <= limit:
            raise _refused(
                f"SET {name} = {raw[:40]}",
                f"econ sql uses at most this machine's memory ({limit / 1e9:.3g} GB)",
                "give a size such as '4GB' up to that",
            )


_PRAGMA = re.compile(r"^\s*pragma\s+([A-Za-z_][A-Za-z0-9_]*)\s*(=)?", re.I)


def _check_pragma(text: str) -> None:
    m = _PRAGMA.match(text)
    name = m.group(1).lower() if m else _first_words(text)
    if m is None or m.group(2) or name not in PRAGMAS:
        raise _refused(
            f"PRAGMA {name}" + (" = …" if m and m.group(2) else ""),
            f"econ sql runs the PRAGMAs that show what the database holds ({', '.join(sorted(PRAGMAS))})",
        )
    _check_calls(text)


def check_query(sql: str, *, allow_files: bool = False, sweep: bool = False) -> None:
    """Raise :class:`EconError` unless every statement of ``sql`` is one reading needs (see the module docstring)."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as e:
        raise EconError(
            f"the query failed: {str(e).strip()}", "check the SQL; econ tables lists what you can query"
        ) from None
    for statement in statements:
        try:
            kind = statement.type.name
        except ValueError:  # a statement type the Python package does not know (UPDATE EXTENSIONS)
            raise _refused(f"`{_first_words(statement.query)}`") from None
        _check_statement(kind, statement.query, allow_files=allow_files, sweep=sweep)


EXPLAIN = r"^(?:\s+|--[^\n]*|/\*.*?\*/)*explain(?:\s+analy[sz]e\b)?(?:\s*\([^()]*\))?"
"""``EXPLAIN``, ``EXPLAIN ANALYZE`` and their options (``EXPLAIN (FORMAT JSON)``), before the query they explain."""


def _check_statement(kind: str, text: str, *, allow_files: bool, sweep: bool) -> None:
    if kind == "SELECT":
        _check_calls(text)
    elif kind == "EXPLAIN":
        inner = re.sub(EXPLAIN, "", text, count=1, flags=re.I | re.S)
        if inner.strip():
            check_query(inner, allow_files=allow_files, sweep=sweep)
    elif kind == "PRAGMA":
        _check_pragma(text)
    elif kind == "SET":
        _check_set(text)
    elif kind in FILES:
        if sweep and not allow_files:
            raise EconError(f"file access is refused: {kind} with --sweep", FILES_HINT)
    elif kind in WRITES:
        raise EconError(f"write statements are refused: {_first_words(text)} …", READ_ONLY_HINT)
    elif kind == "CALL":  # CALL f(…) is SELECT * FROM f(…): allowed for the functions a query may call
        m = re.match(r"^\s*call\s+(?:[A-Za-z_][A-Za-z0-9_]*\.)*\"?([A-Za-z_][A-Za-z0-9_]*)\"?\s*\(", text, re.I)
        if m is None or m.group(1).lower() not in TABLE_FUNCTIONS:
            name = m.group(1).lower() if m else _first_words(text, 2)
            raise _refused(f"CALL {name}(…)", "it changes settings, writes files or runs SQL of its own; " + READING)
        _check_calls(text)
    elif kind == "MULTI":  # a PIVOT whose columns DuckDB must find first: it runs several statements
        raise _refused(
            f"`{_first_words(text)}` (a PIVOT without its columns)",
            "DuckDB runs it as several statements, which econ sql does not run",
            "name the pivot's columns (PIVOT … ON column IN ('a', 'b') USING …): that is one SELECT",
        )
    else:
        raise _refused(f"{kind.replace('_', ' ')} (`{_first_words(text)}`)")
