"""What-changed page: the same changes as a direct comparison of the two LiteLLM snapshot files, issue 7's
gemini-2.5-pro example, and a chart of every change over time."""

from __future__ import annotations

import csv

import polars as pl
import pytest

from ..html_tables import read_tables
from ..price_maps import LITELLM_NEW, LITELLM_OLD
from ..specs import by, figure_text, number

KEY = ("provider", "model", "variant", "tier_min_prompt_tokens")
COMPONENTS = (
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "cache_storage_usd_per_mtok_hour",
    "max_input_tokens",
    "speed_ratio",
)


def snapshot(data_dir, when) -> dict[tuple, dict]:
    with (data_dir / "snapshots" / f"litellm_{when.isoformat()}.csv").open(encoding="utf-8", newline="") as f:
        return {tuple(r[k] for k in KEY): r for r in csv.DictReader(f)}


def value(row: dict, component: str):
    return float(row[component]) if row.get(component) not in (None, "") else None


def expected_changes(data_dir) -> set[tuple]:
    old, new = snapshot(data_dir, LITELLM_OLD[1]), snapshot(data_dir, LITELLM_NEW[1])
    return {
        (*key[:3], int(key[3]), c.replace("_usd_per_mtok", ""))
        for key in old.keys() & new.keys()
        for c in COMPONENTS
        if value(old[key], c) != value(new[key], c)
    }


def test_changed_components_are_exactly_those_of_a_direct_comparison_of_the_snapshots(built_report, report_data):
    changed = pl.read_csv(built_report / "what-changed" / "changed-components.csv.gz", infer_schema_length=None)
    litellm = changed.filter(pl.col("source") == "litellm")
    got = set(litellm.select(*KEY, "component").iter_rows())
    expected = expected_changes(report_data)
    assert got == expected and len(expected) > 100  # unchanged models do not appear; every change does


def test_gemini_25_pro_cache_read_cut_is_listed_with_old_new_and_percent(built_report):
    """Issue 7: gemini-2.5-pro's cache read price went from 0.3125 to 0.125 USD/MTok between the two maps."""
    changed = pl.read_csv(built_report / "what-changed" / "changed-components.csv.gz", infer_schema_length=None)
    cut = changed.filter(
        (pl.col("model") == "gemini/gemini-2.5-pro")
        & (pl.col("component") == "cache_read")
        & (pl.col("tier_min_prompt_tokens") == 0)
    )
    assert cut.select("old_value", "new_value").row(0) == (0.3125, 0.125)
    assert cut["change_frac"][0] == pytest.approx(-0.6)
    largest = read_tables(built_report / "what-changed.html")["changed-imported"]
    assert len(largest) == 60 and all(r["Change (%)"] or r["Old"] == "" for r in largest)


def test_summary_counts_added_and_removed_models_like_the_snapshot_files(built_report, report_data):
    old, new = snapshot(report_data, LITELLM_OLD[1]), snapshot(report_data, LITELLM_NEW[1])
    added = {k[:2] for k in new.keys() - old.keys()}
    removed = {k[:2] for k in old.keys() - new.keys()}
    row = by(read_tables(built_report / "what-changed.html")["diff-summary"], "Source")["litellm"]
    assert (number(row["Models added"]), number(row["Models removed"])) == (len(added), len(removed))
    assert number(row["Components changed"]) == len(expected_changes(report_data))


def test_implied_output_over_input_ratios_are_those_of_the_snapshot_files(built_report, report_data):
    """ "This price cut implies …": each moved ρ = p_out/p_in, before and after, read from the two LiteLLM files."""
    old, new = snapshot(report_data, LITELLM_OLD[1]), snapshot(report_data, LITELLM_NEW[1])
    inferred = pl.read_csv(built_report / "what-changed" / "inferred-changes.csv.gz", infer_schema_length=None)
    moved = inferred.filter((pl.col("quantity") == "output_over_input_ratio") & (pl.col("source") == "litellm"))
    assert moved.height > 20
    for r in moved.iter_rows(named=True):
        key = (r["provider"], r["model"], r["variant"], "0")
        before = value(old[key], "output_usd_per_mtok") / value(old[key], "input_usd_per_mtok")
        after = value(new[key], "output_usd_per_mtok") / value(new[key], "input_usd_per_mtok")
        assert (r["old_value"], r["new_value"]) == pytest.approx((before, after), rel=5e-6), key  # 6 digits in CSV
    counts = by(read_tables(built_report / "what-changed.html")["inferred-counts"], "Column")
    assert (
        number(counts["output_over_input_ratio"]["Changed"])
        == inferred.filter(pl.col("quantity") == "output_over_input_ratio").height
    )


def test_changes_over_time_chart_holds_every_change_as_new_over_old(built_report):
    data = pl.read_csv(built_report / "what-changed" / "changes-over-time.csv.gz", infer_schema_length=None)
    ratio = data["new_usd_per_mtok"] / data["old_usd_per_mtok"]
    assert ((data["new_over_old_ratio"] - ratio).abs() / ratio).max() < 5e-6  # the CSV keeps 6 significant digits
    cut = data.filter(
        (pl.col("model") == "gemini/gemini-2.5-pro")
        & (pl.col("component") == "cache read")
        & (pl.col("tier_min_prompt_tokens") == 0)
    )
    assert cut.select("from_date", "new_over_old_ratio").row(0) == ("2026-11-20", pytest.approx(0.4))
    assert "Formula:" in figure_text(built_report / "what-changed.html", "changes-over-time")


def test_what_a_price_change_implies_is_listed_first_party_first_with_labels_and_blanks():
    """A synthetic inferred_changes table (the analysis's columns): a 20% cut, a tier category, a new reading."""
    from datetime import date

    import duckdb

    from econ.report.page import SiteContext
    from econ.report.pages.changes_inferred import inferred_section

    con = duckdb.connect()
    con.sql("""create table inferred_changes as select * from (values
        ('litellm', 'x', 'm1', 'standard', 'output', 'kv_read_bytes_per_context_token', 100.0, 300.0, 2.0, null, null),
        ('hand', 'openai', 'gpt', 'standard', 'output', 'kv_read_bytes_per_context_token', 62473.0, 49978.0, -0.2,
         null, null),
        ('hand', 'openai', 'gpt', 'standard', 'architecture', 'identified_tier', null, null, null, 'ddr', 'hbm'),
        ('hand', 'openai', 'gpt', 'batch', null, 'output_over_input_ratio', null, 5.0, null, null, null)
        ) as t (source, provider, model, variant, detail, quantity, old_value, new_value, change_frac, old_label,
        new_label)""")
    ctx = SiteContext(con=con, as_of=date(2026, 11, 30), generated_on=date(2026, 11, 30))
    section = inferred_section(ctx)
    html = "".join(str(b) for b in section.blocks if isinstance(b, str))
    tables = read_tables_from(html)
    listed = [
        (r["Source"], r["Implied quantity"], r["Before"], r["After"], r["Change (%)"])
        for r in tables["inferred-changes"]
    ]
    assert listed[0] == (
        "hand",
        "Decode KV bytes read per context token (output-price slope)",
        "62,473",
        "49,978",
        "-20.0%",
    )  # first party first
    assert (
        "hand",
        "Memory tier identified by the cache prices",
        "ddr",
        "hbm",
        "",
    ) in listed  # a category shows its labels
    assert ("hand", "Output/input price ratio", "—", "5", "") in listed  # newly inferable: nothing before
    assert listed[-1][0] == "litellm"
    counts = by(tables["inferred-counts"], "Column")
    assert (
        counts["kv_read_bytes_per_context_token"]["Changed"],
        counts["output_over_input_ratio"]["Newly inferable"],
    ) == (
        "2",
        "1",
    )


def test_every_quantity_the_analysis_compares_has_a_readable_name():
    from econ.analyses.inferred_changes import QUANTITIES
    from econ.report.pages.changes_inferred import QUANTITY_NAMES

    compared = {q for _, _, numeric, categorical in QUANTITIES.values() for q in (*numeric, *categorical)}
    assert set(QUANTITY_NAMES) == compared


def read_tables_from(html: str) -> dict:
    import tempfile
    from pathlib import Path

    from ..html_tables import read_tables as read

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "page.html"
        path.write_text(html, encoding="utf-8")
        return read(path)


def test_the_luna_cut_is_dated_to_its_commit_s_window(built_report):
    """simonw's llm-prices: gpt-5.6 luna's input went from $1 to $0.20 in the commit "Price drops for GPT-5.6 Luna and
    Terra" (b163763, 2026-07-30); the commit before (014a62d, 2026-07-24) last showed $1. The page dates the change to
    that window and links both commits."""
    page = built_report / "what-changed.html"
    table = read_tables(page)["first-party-changes"]
    rows = [
        r
        for r in table
        if r["Model"] == "gpt-5.6-luna" and r["Source"] == "llm_prices" and r["Component"] == "input"
        and r["Prompt above (tokens)"] == "0"
    ]  # fmt: skip
    assert [(r["When (window)"], r["Last old (commit)"], r["First new (commit)"]) for r in rows] == [
        ("2026-07-24…2026-07-30", "014a62da", "b163763f")
    ]
    html = page.read_text(encoding="utf-8")
    assert "https://github.com/simonw/llm-prices/commit/b163763f7dd81344478b3cd0b75aac8fc994c902" in html
    assert (
        "gpt: first-party list price over time" in figure_text(page, "family-gpt")
        or 'id="fig-what-changed-family-gpt"' in html
    )


def test_first_party_changes_and_conflicts_are_downloads(built_report):
    changes = pl.read_csv(built_report / "what-changed" / "first-party-changes.csv.gz", infer_schema_length=None)
    assert changes.height >= 30 and {"window_from_commit", "window_to_commit", "source"} <= set(changes.columns)
    assert changes.filter((pl.col("source") == "llm_prices") & (pl.col("canonical_model") == "gpt-5.6-luna")).height
    conflicts = pl.read_csv(built_report / "what-changed" / "price-conflicts.csv.gz", infer_schema_length=None)
    assert conflicts.height > 0 and {"source", "other_source"} <= set(conflicts.columns)


def test_the_first_party_table_shows_input_and_output_and_the_csv_every_component(built_report):
    """The caption says the page's table holds input and output prices and the CSV every component: a cache-read
    move is in the CSV and not on the page (the filter was declared and never applied until session 35)."""
    page = built_report / "what-changed.html"
    shown = {r["Component"] for r in read_tables(page)["first-party-changes"]}
    changes = pl.read_csv(built_report / "what-changed" / "first-party-changes.csv.gz", infer_schema_length=None)
    assert shown == {"input", "output"} and "cache_read" in set(changes["component"])
