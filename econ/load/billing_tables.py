"""Specs of the billing tables: how each seller bills (``billing_rules``), its time-of-day prices
(``billing_windows``) and one worked request per rule (``billing_examples``).

Part of the contract between ``data/`` and the database (``econ.load.tables`` lists every table). The vocabulary of
the rules is :mod:`econ.billing_terms`; :mod:`econ.fits.billing_rules` applies them.
"""

from __future__ import annotations

import polars as pl

from econ.billing_terms import RULES, clock_minutes, day_set
from econ.errors import Problem
from econ.load import ceilings
from econ.load.price_tables import SOURCES, VARIANTS
from econ.load.requests import CACHE_TTLS, check_request_times
from econ.load.spec import FILE, LINE, Column, TableSpec, shift_in_key
from econ.load.time_zones import is_time_zone

_SOURCE = (
    Column("source_url", "str", "", "Page that states the rule (the seller's own page where one could be read)", True),
    Column("quote", "str", "", "The page's words that state the rule, verbatim (' || ' joins two passages)", True),
    Column("notes", "str", "", "Caveats: where the quote was read, what it does not say"),
)
_SCOPE = (
    Column(
        "provider",
        "str",
        "",
        "Seller the rule is about (providers.seller, so one row covers the seller's names in every price map); * for "
        "every seller",
        required=True,
    ),
    Column(
        "model",
        "str",
        "",
        "Models it covers: a canonical model or price-key name, * as a wildcard (gemini-*); blank for every model",
    ),
)


def _problem(row: dict, column: str, message: str, hint: str) -> Problem:
    return Problem(row[FILE], row[LINE], column, message, hint)


def _check_periods(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """to_date after from_date."""
    late = (
        pl.col("to_date").is_not_null() & pl.col("from_date").is_not_null() & (pl.col("to_date") <= pl.col("from_date"))
    )
    return [
        _problem(
            r, "to_date", f"to_date {r['to_date']} is not after from_date {r['from_date']}", "to_date is exclusive"
        )
        for r in frame.filter(late).to_dicts()
    ]


def _check_rule_values(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """Each rule's value is one the rule takes; one row per scope and rule at a time."""
    problems = []
    for row in frame.to_dicts():
        rule = RULES.get(row["rule"])
        if rule is None:
            problems.append(
                _problem(row, "rule", f"{row['rule']!r} is not a billing rule", f"use one of: {', '.join(RULES)}")
            )
            continue
        prefix, sep, argument = (row["value"] or "").partition(":")
        if not (row["value"] in rule.values or (sep and argument.strip() and prefix in rule.prefix_values)):
            shown = [*rule.values, *(f"{p}:<model>" for p in rule.prefix_values)]
            problems.append(
                _problem(
                    row, "value", f"{row['value']!r} is not a value of {rule.name}", f"use one of: {', '.join(shown)}"
                )
            )
    scope = ["provider", "model", "variant", "rule"]
    ordered = frame.sort([*scope, "from_date"], nulls_last=False).with_columns(
        shift_in_key("from_date", scope, -1).alias("_next_from"),
        shift_in_key("rule_id", scope, -1).alias("_next_id"),
        shift_in_key(LINE, scope, -1).alias("_next_line"),
    )
    overlap = pl.col("_next_id").is_not_null() & (
        pl.col("to_date").is_null() | pl.col("_next_from").is_null() | (pl.col("to_date") > pl.col("_next_from"))
    )
    for row in ordered.filter(overlap).to_dicts():
        problems.append(
            Problem(
                row[FILE],
                row["_next_line"],
                "from_date",
                f"rule {row['_next_id']} overlaps {row['rule_id']} (same provider, model, variant and rule)",
                f"end {row['rule_id']} (to_date) before {row['_next_id']} starts",
            )
        )
    return problems


def _check_windows(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """A known time zone, a day range, HH:MM times with start before end."""
    problems = []
    for row in frame.to_dicts():
        if not is_time_zone(row["timezone"]):
            problems.append(
                _problem(row, "timezone", f"{row['timezone']!r} is not a time zone", "use an IANA name such as UTC")
            )
        if day_set(row["days"]) is None:
            problems.append(
                _problem(
                    row, "days", f"{row['days']!r} is not a day range", "write all, a day (sat) or a range (mon-fri)"
                )
            )
        start, end = clock_minutes(row["start_time"]), clock_minutes(row["end_time"])
        for column, value in (("start_time", start), ("end_time", end)):
            if value is None:
                problems.append(
                    _problem(row, column, f"{row[column]!r} is not a time of day", "write HH:MM, 00:00 to 24:00")
                )
        if start is not None and end is not None and start >= end:
            problems.append(
                _problem(
                    row,
                    "end_time",
                    f"the window ends ({row['end_time']}) before it starts",
                    "split a window that crosses midnight in two rows (..-24:00 and 00:00-..)",
                )
            )
    return problems


BILLING_RULES = TableSpec(
    name="billing_rules",
    grain="one row per billing rule of a seller (or one of its models or variants) over a period",
    description="How each seller bills what its price list leaves open: the long-context threshold, cache writes "
    "without a listed price, zero prices in the maps, single-retention write prices, batch and cache discounts, "
    "retired models; each with the page that says so",
    key=("rule_id",),
    columns=(
        Column("rule_id", "str", "", "Name of the rule row (cited by worked examples and conformance cases)", True),
        *_SCOPE,
        Column("variant", "str", "", "Service variant it covers (blank: every variant)", allowed=VARIANTS),
        Column("rule", "str", "", "Rule name (econ.billing_terms.RULES)", required=True, allowed=tuple(RULES)),
        Column("value", "str", "", "The rule's value for this scope", required=True),
        Column("from_date", "date", "", "First day the rule applies (blank: always)"),
        Column("to_date", "date", "", "First day it no longer applies (exclusive; blank: still applies)"),
        *_SOURCE,
    ),
    checks=(_check_periods, _check_rule_values),
)

BILLING_WINDOWS = TableSpec(
    name="billing_windows",
    grain="one row per time-of-day price window of a seller (or model) over a period",
    description="Time-of-day prices: in the window the row's prices are multiplied by price_ratio (off-peak "
    "discounts); a request at another time pays the listed price",
    key=("window_id",),
    columns=(
        Column("window_id", "str", "", "Name of the window row", required=True),
        *_SCOPE,
        Column("from_date", "date", "", "First local day the window applies (in its time zone)", required=True),
        Column("to_date", "date", "", "First local day it no longer applies (exclusive; blank: still applies)"),
        Column("timezone", "str", "", "IANA time zone the days and times are read in", required=True),
        Column("days", "str", "", "Days it covers: all, one day (sat) or a range (mon-fri)", required=True),
        Column("start_time", "str", "", "Start, HH:MM local (inclusive)", required=True),
        Column("end_time", "str", "", "End, HH:MM local (exclusive; 24:00 = midnight)", required=True),
        Column(
            "price_ratio",
            "float",
            "ratio",
            "Multiplier on every price of the row inside the window",
            True,
            positive=True,
            max=10,
        ),
        *_SOURCE,
    ),
    checks=(_check_periods, _check_windows),
)

_TOKENS = dict(min=0, ceiling=ceilings.TOKENS)

BILLING_EXAMPLES = TableSpec(
    name="billing_examples",
    grain="one row per worked request (at least one per billing rule or window)",
    description="A request priced by hand for each billing rule, with the arithmetic; the build bills it with econ's "
    "rules and the report shows both",
    key=("example_id",),
    columns=(
        Column("example_id", "str", "", "Name of the example", required=True),
        Column("rule_id", "str", "", "The billing_rules.rule_id or billing_windows.window_id it illustrates", True),
        Column("provider", "str", "", "Seller billed (prices.provider or providers.seller)", required=True),
        Column("model", "str", "", "Model (canonical name or price key)", required=True),
        Column("variant", "str", "", "Service variant", required=True, allowed=VARIANTS),
        Column("source", "str", "", "Only this price source (blank: the one that holds)", allowed=SOURCES),
        Column("as_of", "date", "", "Date of the prices", required=True),
        Column("at", "str", "", "Time of the request, ISO 8601 with zone (blank: no time of day)"),
        Column("input_tokens", "int", "tokens", "Uncached prompt tokens", required=True, **_TOKENS),
        Column("cached_input_tokens", "int", "tokens", "Prompt tokens read from the cache", required=True, **_TOKENS),
        Column("cache_write_tokens", "int", "tokens", "Prompt tokens written to the cache", required=True, **_TOKENS),
        Column("cache_ttl", "str", "", "Retention of the writes", required=True, allowed=CACHE_TTLS),
        Column("output_tokens", "int", "tokens", "Output tokens", required=True, **_TOKENS),
        Column("expected_usd", "float", "USD", "The bill by hand (blank: the seller refuses the request)", min=0),
        Column("refusal", "str", "", "Why the seller refuses it (blank: billed)"),
        Column("arithmetic", "str", "", "The hand arithmetic, with the rates and where they are listed", True),
    ),
    checks=(check_request_times,),
)
