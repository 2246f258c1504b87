"""Result-table declarations: each is checked on its own, and the shipped data's build against every declaration —
the tables hold exactly the declared columns, declared keys are unique, declared identities hold, every column
carries its comment, and a column's unit agrees with the unit its name ends in."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from econ.analyses import declared_tables
from econ.formula import formula
from econ.results import Identity, ResultColumn, ResultTable, catalog

DECLARED = declared_tables()
IDS = [t.name for _, t in DECLARED]


@formula("y = 2·x", "a test")
def double(x):
    return 2 * x


TABLE = ResultTable(
    name="t",
    grain="thing",
    key=("k",),
    description="A test table",
    columns=(
        ResultColumn("k", "str", "", "key", "Key"),
        ResultColumn("y_s", "float", "s", "derived", "Twice x", double),
    ),
)


def test_comments_carry_meaning_formula_source_unit_and_kind():
    assert TABLE.column("y_s").comment == "Twice x; y = 2·x (a test) [s] — derived"
    assert TABLE.table_comment == "A test table. Grain: one row per thing. Key: k."


def test_conform_orders_and_casts_and_refuses_a_missing_or_undeclared_column():
    frame = pl.DataFrame({"y_s": [1], "k": ["a"]})
    assert TABLE.conform(frame).schema == {"k": pl.String, "y_s": pl.Float64}
    with pytest.raises(ValueError, match=r"missing: y_s; undeclared: z"):
        TABLE.conform(pl.DataFrame({"k": ["a"], "z": [1]}))


@pytest.mark.parametrize(
    ("columns", "key", "message"),
    [
        (
            (ResultColumn("a", "str", "", "key", "A"), ResultColumn("a", "str", "", "key", "A")),
            ("a",),
            "declared twice",
        ),
        ((ResultColumn("a", "str", "", "key", "A"),), ("b",), "key columns not declared: b"),
    ],
)
def test_a_bad_declaration_is_refused(columns, key, message):
    with pytest.raises(ValueError, match=message):
        ResultTable("t", "x", key, "d", columns)


@pytest.mark.parametrize(("dtype", "kind"), [("text", "key"), ("str", "guess")])
def test_unknown_types_and_kinds_are_refused(dtype, kind):
    with pytest.raises(ValueError):
        ResultColumn("a", dtype, "", kind, "A")


def test_catalog_frames():
    frames = catalog([("demo", TABLE)])
    assert frames["result_tables"].row(0) == ("t", "demo", "thing", "k", "A test table")
    row = frames["result_columns"].filter(pl.col("column_name") == "y_s").row(0, named=True)
    assert (row["function"], row["formula"], row["source"]) == (f"{__name__}.double", "y = 2·x", "a test")
    assert frames["formulas"].row(0) == (f"{__name__}.double", "y = 2·x", "a test", "t.y_s")


# ---------------------------------------------------------------------------- names and units

UNIT_OF_SUFFIX = (  # the unit a column's name promises, longest suffix first (units in every name)
    ("usd_per_mtok_per_mtok_context", ("USD/MTok per MTok of context",)),
    ("usd_per_mtok_hour", ("USD/MTok/hour",)),
    ("usd_per_mtok_s", ("USD/MTok/s",)),
    ("usd_per_mtok", ("USD/MTok",)),
    ("usd_per_gb_hour", ("USD/GB-hour",)),
    ("usd_per_chip_hour", ("USD/chip-hour",)),
    ("usd_per_hour", ("USD/hour",)),
    ("usd_per_day", ("USD/day",)),
    ("usd", ("USD",)),
    ("bytes_per_s", ("bytes/s",)),
    ("bytes_per_token", ("bytes/token",)),
    ("bytes_per_sequence", ("bytes",)),
    ("bytes_per_param", ("bytes/param",)),
    ("bytes", ("bytes",)),
    ("tokens_per_s", ("tokens/s",)),
    ("tokens_per_mwh", ("tokens/MWh",)),
    ("requests_per_s", ("requests/s",)),
    ("tokens", ("tokens",)),
    ("seqs", ("sequences",)),
    ("flop_per_s", ("FLOP/s",)),
    ("flop_per_token", ("FLOP/token",)),
    ("flop", ("FLOP",)),
    ("s", ("s",)),
    ("frac", ("",)),
    ("ratio", ("", "tokens/param", "FLOP/byte", "1/hour")),
    ("w", ("W",)),
    ("mwh", ("MWh",)),
    ("mwh_per_day", ("MWh/day",)),
    ("chips", ("chips",)),
    ("nats_per_token", ("nats/token",)),
)


def promised(name: str) -> tuple[str, ...] | None:
    for suffix, units in UNIT_OF_SUFFIX:
        if name == suffix or name.endswith("_" + suffix):
            return units
    return None


@pytest.mark.parametrize("table", [t for _, t in DECLARED], ids=IDS)
def test_a_columns_unit_is_the_one_its_name_ends_in(table):
    wrong = [(c.name, c.unit, units) for c in table.columns if (units := promised(c.name)) and c.unit not in units]
    assert not wrong


@pytest.mark.parametrize("table", [t for _, t in DECLARED], ids=IDS)
def test_every_computed_column_names_a_function_with_its_formula(table):
    computed = ("derived", "bound", "calibrated", "inference")
    lacking = [c.name for c in table.columns if c.kind in computed and c.formula is None]
    assert not lacking


# ---------------------------------------------------------------------------- the shipped data's build


@pytest.fixture(scope="module")
def con(real_db):
    with duckdb.connect(str(real_db), read_only=True) as c:
        yield c


@pytest.mark.parametrize("table", [t for _, t in DECLARED], ids=IDS)
def test_the_table_holds_exactly_its_declared_columns_with_comments(con, table):
    rows = con.execute(
        "select column_name, comment from duckdb_columns() where table_name = ? order by column_index", [table.name]
    ).fetchall()
    assert [r[0] for r in rows] == table.names
    assert [r[1] for r in rows] == [c.comment for c in table.columns]
    comment = con.execute("select comment from duckdb_tables() where table_name = ?", [table.name]).fetchall()[0][0]
    assert comment == table.table_comment


@pytest.mark.parametrize("table", [t for _, t in DECLARED if t.key], ids=[t.name for _, t in DECLARED if t.key])
def test_the_declared_key_is_unique(con, table):
    key = ", ".join(f'"{k}"' for k in table.key)
    dupes = con.execute(
        f'select {key}, count(*) from "{table.name}" group by all having count(*) > 1 limit 5'
    ).fetchall()
    assert not dupes


IDENTITIES = [(t, i) for _, t in DECLARED for i in t.identities]


@pytest.mark.parametrize(("table", "identity"), IDENTITIES, ids=[f"{t.name}:{i.lhs}" for t, i in IDENTITIES])
def test_declared_identities_hold(con, table, identity: Identity):
    bad, total = con.execute(
        f"select count(*) filter (where not (abs(({identity.lhs}) - ({identity.rhs})) <= {identity.rtol} * "
        f"abs({identity.rhs}) or ({identity.lhs}) is null or ({identity.rhs}) is null)), count(*) "
        f'from "{table.name}" where {identity.where}'
    ).fetchall()[0]
    assert total > 0 and bad == 0


def test_identities_are_declared_where_the_issue_names_them():
    names = {(t.name, i.lhs) for t, i in IDENTITIES}
    assert {("serving_curves", "output_usd_per_mtok"), ("fleet_plan", "usd_per_day")} <= names


def test_the_catalog_in_the_database_is_the_declarations(con):
    stored = con.execute("select table_name, column_name, unit, kind, function from result_columns").fetchall()
    expected = [(t.name, c.name, c.unit, c.kind, c.function_name) for _, t in DECLARED for c in t.columns]
    assert sorted(stored, key=str) == sorted(expected, key=str)
