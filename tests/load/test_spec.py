"""Bad input gets a clear error: file, line, column, value and what was expected; every bad row listed.

Each case edits one file of a copy of the fixture data set, runs ``econ build`` through the
CLI and pins the message (stderr), the exit code, and that no traceback is printed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from econ.cli import main

PRICE_HEADER = (
    "provider,model,variant,tier_min_prompt_tokens,from_date,to_date,input_usd_per_mtok,output_usd_per_mtok,"
    "cache_read_usd_per_mtok,cache_write_5m_usd_per_mtok,cache_write_1h_usd_per_mtok,cache_storage_usd_per_mtok_hour,"
    "max_input_tokens,speed_ratio,hugging_face_id,source_url,notes"
)
URL = "https://example.org/p"


def price_row(model="m", variant="standard", tier=0, start="2026-01-01", end="", inp="1", out="5", extra=""):
    return f"acme,{model},{variant},{tier},{start},{end},{inp},{out},,,,,{extra},,,{URL},"


def write_prices(data_dir: Path, *rows: str) -> None:
    (data_dir / "prices.csv").write_text("\n".join([PRICE_HEADER, *rows]) + "\n", encoding="utf-8")


def run_build(data_dir: Path, capsys) -> tuple[int, str]:
    code = main(["build", "--data", "data", "--db", "out.duckdb", "--no-report", "--cache", "cache"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err.strip()


CASES = [
    pytest.param(
        [price_row(model="a"), price_row(model="b", out="1O.0")],
        'Error: data/prices.csv:3: column output_usd_per_mtok: "1O.0" is not a number '
        "— write a plain decimal number such as 12.5 (no units, no thousands separators)",
        id="non-numeric",
    ),
    pytest.param(
        [price_row(model="a", inp="nan"), price_row(model="b", out="inf"), price_row(model="c", out="1e999")],
        "Error: 3 problems in the input data:\n"
        'data/prices.csv:2: column input_usd_per_mtok: "nan" is not a number '
        "— write a plain decimal number such as 12.5 (no units, no thousands separators)\n"
        'data/prices.csv:3: column output_usd_per_mtok: "inf" is not a number '
        "— write a plain decimal number such as 12.5 (no units, no thousands separators)\n"
        'data/prices.csv:4: column output_usd_per_mtok: "1e999" is not a number '
        "— write a plain decimal number such as 12.5 (no units, no thousands separators)",
        id="non-finite",
    ),
    pytest.param(
        [price_row(inp="-2")],
        'Error: data/prices.csv:2: column input_usd_per_mtok: "-2" is out of range — must be at least 0 USD/MTok',
        id="negative-price",
    ),
    pytest.param(
        [price_row(), price_row()],
        "Error: data/prices.csv:3: duplicate key (provider=acme, model=m, variant=standard, tier_min_prompt_tokens=0, "
        "from_date=2026-01-01), first on line 2 — merge or remove one row",
        id="duplicate-key",
    ),
    pytest.param(
        [price_row(start="2026-01-01", end="2026-03-01"), price_row(start="2026-02-01", inp="2")],
        "Error: data/prices.csv:3: column from_date: price period from 2026-02-01 overlaps the period from 2026-01-01 "
        "on line 2 — set to_date on line 2 to 2026-02-01 or earlier",
        id="overlapping-periods",
    ),
    pytest.param(
        [price_row(tier=0), price_row(tier=200000, inp="2"), price_row(tier=128000, inp="3")],
        "Error: data/prices.csv:4: column tier_min_prompt_tokens: tier threshold 128000 does not increase "
        "(previous tier: 200000) — list a model's tiers in increasing order of tier_min_prompt_tokens",
        id="tiers-not-increasing",
    ),
    pytest.param(
        [price_row(tier=200000)],
        "Error: data/prices.csv:2: column tier_min_prompt_tokens: m (standard) has tiers but no base tier "
        "— add the row with tier_min_prompt_tokens 0",
        id="no-base-tier",
    ),
    pytest.param(
        [price_row(variant="turbo")],
        'Error: data/prices.csv:2: column variant: "turbo" is not allowed — use one of: standard, batch, flex, '
        "priority, fast",
        id="allowed-values",
    ),
    pytest.param(
        [price_row(start="2026-13-01")],
        'Error: data/prices.csv:2: column from_date: "2026-13-01" is not a date — write the date as YYYY-MM-DD',
        id="bad-date",
    ),
]


@pytest.mark.parametrize(("rows", "expected"), CASES)
def test_price_file_errors(data_dir, capsys, rows, expected):
    write_prices(data_dir, *rows)
    code, err = run_build(data_dir, capsys)
    assert code == 1
    assert err == expected


def test_every_bad_row_is_listed(data_dir, capsys):
    write_prices(data_dir, price_row(model="a", out="x"), price_row(model="b", inp="-1"), price_row(model="c", out="y"))
    code, err = run_build(data_dir, capsys)
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == "Error: 3 problems in the input data:"
    assert [line.split(" column ")[0] for line in lines[1:]] == [
        "data/prices.csv:2:",
        "data/prices.csv:3:",
        "data/prices.csv:4:",
    ]


def test_problems_in_several_files_are_reported_together(data_dir, capsys):
    write_prices(data_dir, price_row(out="x"))
    rental = data_dir / "rental_prices.csv"
    rental.write_text(rental.read_text().replace("H100,Lambda", "H1000,Lambda"))
    code, err = run_build(data_dir, capsys)
    assert code == 1
    assert 'data/prices.csv:2: column output_usd_per_mtok: "x" is not a number' in err
    assert 'data/rental_prices.csv:2: column chip: unknown chip "H1000" (not in hardware) — did you mean H100?' in err


def test_unknown_chip_reference(data_dir, capsys):
    rental = data_dir / "rental_prices.csv"
    rental.write_text(rental.read_text().replace("H100,Lambda", "X9,Lambda"))
    code, err = run_build(data_dir, capsys)
    assert (code, err) == (
        1,
        'Error: data/rental_prices.csv:2: column chip: unknown chip "X9" (not in hardware) — add it to hardware first',
    )


def test_unknown_model_reference(data_dir, capsys):
    deployments = data_dir / "deployments.csv"
    deployments.write_text(deployments.read_text().replace(",DeepSeek-V3,B200,", ",DeepSeek-V9,B200,", 1))
    code, err = run_build(data_dir, capsys)
    assert (code, err) == (
        1,
        'Error: data/deployments.csv:2: column model: unknown model "DeepSeek-V9" (not in models) '
        "— did you mean DeepSeek-V3?",
    )


def test_missing_required_column(data_dir, capsys):
    hw = data_dir / "hardware.csv"
    lines = hw.read_text().splitlines()

    def cut(line):  # drop hbm_bandwidth_tb_per_s
        return ",".join(v for i, v in enumerate(line.split(",")) if i != 9)

    hw.write_text("\n".join(cut(line) for line in lines) + "\n")
    code, err = run_build(data_dir, capsys)
    assert (code, err) == (
        1,
        "Error: data/hardware.csv:1: column hbm_bandwidth_tb_per_s: missing column "
        "— add the hbm_bandwidth_tb_per_s column (HBM bandwidth per chip)",
    )


def test_unknown_column(data_dir, capsys):
    mt = data_dir / "memory_tiers.csv"
    text = mt.read_text().splitlines()
    text[0] = text[0].replace("capacity_gb", "capacity_gib")
    mt.write_text("\n".join(text) + "\n")
    code, err = run_build(data_dir, capsys)
    assert code == 1
    assert err.splitlines()[1:] == [
        "data/memory_tiers.csv:1: column capacity_gb: missing column — add the capacity_gb column (Capacity of one "
        "device)",
        "data/memory_tiers.csv:1: column capacity_gib: unknown column — did you mean capacity_gb?",
    ]


def test_empty_file(data_dir, capsys):
    (data_dir / "scenarios.csv").write_text("")
    code, err = run_build(data_dir, capsys)
    assert (code, err) == (
        1,
        "Error: data/scenarios.csv: the file is empty — it needs at least a header line of column names",
    )


@pytest.mark.parametrize("table", ["hardware", "models", "memory_tiers", "scenarios"])
def test_table_without_rows(data_dir, capsys, table):
    path = data_dir / f"{table}.csv"
    path.write_text(path.read_text().splitlines()[0] + "\n")
    code, err = run_build(data_dir, capsys)
    assert code == 1
    assert (
        f"data/{table}.csv: has 0 data rows; the analyses need at least 1 — data/README.md describes its columns" in err
    )


def test_non_utf8_file(data_dir, capsys):
    path = data_dir / "models.csv"
    raw = path.read_bytes().replace(b"fixture\nLlama", b"fixture\nLl\xe9ama", 1)
    path.write_bytes(raw)
    code, err = run_build(data_dir, capsys)
    assert (code, err) == (1, "Error: data/models.csv:3: is not valid UTF-8 (byte 0xe9) — save the file as UTF-8")


def test_wrong_field_count(data_dir, capsys):
    write_prices(data_dir, price_row() + ",extra")
    code, err = run_build(data_dir, capsys)
    assert (code, err) == (
        1,
        "Error: data/prices.csv:2: has 18 fields, the header has 17 — quote values that contain commas",
    )


def test_missing_table_file(data_dir, capsys):
    (data_dir / "memory_tiers.csv").unlink()
    code, err = run_build(data_dir, capsys)
    assert code == 1
    assert err.startswith("Error: data/memory_tiers.csv: is missing — create it with the columns of data/README.md")


def test_scenario_value_xor_text(data_dir, capsys):
    sc = data_dir / "scenarios.csv"
    text = sc.read_text()
    sc.write_text(text + "base,weird,1,B200,chip,,,,x,https://example.org\n")
    line = text.count("\n") + 1
    code, err = run_build(data_dir, capsys)
    assert (code, err) == (
        1,
        f"Error: data/scenarios.csv:{line}: column value: give either value (a number) or text (a choice), "
        "not both or neither — numbers go in value, categorical choices such as a chip id in text",
    )


def test_line_numbers_count_physical_lines(data_dir, capsys):
    """A quoted note spanning two lines moves every later row down by one line."""
    multi_line_note = price_row(model="a") + '"two\nlines"'
    write_prices(data_dir, multi_line_note, price_row(model="b", out="z"))
    code, err = run_build(data_dir, capsys)
    assert code == 1
    assert err.startswith('Error: data/prices.csv:4: column output_usd_per_mtok: "z" is not a number')


def test_cells_are_stripped_of_what_python_calls_whitespace():
    """Cells are stripped in polars with spec.WHITESPACE: the very characters ``str.strip()`` removes (so a value
    reads the same as when each cell was stripped in Python), and nothing else (a zero-width space is kept)."""
    import polars as pl

    from econ.load.spec import WHITESPACE

    assert set(WHITESPACE) == {chr(i) for i in range(0x110000) if chr(i).isspace()}
    cells = ["\x1c a\u3000b \u2028", "\u200b x \u200b", " \t ", "\xa0\x85y\x0b", "\ufeffz\r"]
    assert pl.Series(cells).str.strip_chars(WHITESPACE).to_list() == [c.strip() for c in cells]
