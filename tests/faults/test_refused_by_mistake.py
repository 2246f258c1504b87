"""What a user may do is never refused: a seller added to prices.csv (more sellers than a legend shows), the
smallest data set the README allows (one chip, one model, a header-only prices.csv, no measured points)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl
import pytest

from econ.cli import main
from econ.report.charts import LEGEND_PROVIDER, OTHER, fold_series
from econ.report.charts import prices as price_charts
from econ.report.charts import pricing as pricing_charts
from econ.report.figures import MAX_SERIES, Figure

pytestmark = pytest.mark.slow

SELLERS = ["anthropic", "openai", "google", "xai", "deepseek", "alibaba", "moonshot", "zai", "minimax"]


def prices(sellers: list[str]) -> pl.DataFrame:
    rows = [(s, f"{s}-model-{i}", "standard", 0, 1.0 + i, 5.0 + i, 5.0 / (1.0 + i)) for s in sellers for i in (0, 1)]
    columns = ["provider", "model", "variant", "tier_min_prompt_tokens", "input_usd_per_mtok", "output_usd_per_mtok"]
    return pl.DataFrame(rows, schema=[*columns, "output_over_input_ratio"], orient="row")


@pytest.mark.parametrize("added", [["mistral", "cohere"], [f"seller-{i}" for i in range(30)]], ids=["two", "thirty"])
def test_new_sellers_in_prices_never_fail_a_chart(added):
    """Hand-kept rows of two sellers not yet in prices.csv (mistral, cohere) failed the build with "io-scatter …
    11 series (at most 10)": the legend now keeps the sellers with most rows and draws the rest as "other", while
    every row keeps its own provider (tooltip, download)."""
    frame = fold_series(prices(SELLERS + added))
    Figure("io-scatter", price_charts.io_price_scatter(frame), frame, caption="c", formula="f", source="s")
    assert frame[LEGEND_PROVIDER].n_unique() == MAX_SERIES and OTHER in frame[LEGEND_PROVIDER].to_list()
    assert frame["provider"].n_unique() == len(SELLERS + added)
    batch = frame.with_columns(
        pl.col("output_over_input_ratio").alias("batch_over_balance_ratio"),
        (pl.col("output_over_input_ratio") / 2).alias("batch_over_balance_scenario_low_ratio"),
        (pl.col("output_over_input_ratio") * 2).alias("batch_over_balance_scenario_high_ratio"),
        pl.lit("architecture").alias("critical_context_source"),
        pl.lit("consistent").alias("lecture_f3_check"),
    )
    guides = pl.DataFrame({"label": ["B = B*0"], "batch_over_balance_ratio": [1.0]})
    Figure("io-batch", pricing_charts.io_batch(batch, guides), batch, caption="c", formula="f", source="s")


def test_up_to_the_legends_size_every_seller_keeps_its_own_colour():
    frame = fold_series(prices(SELLERS + ["mistral"]))
    assert frame[LEGEND_PROVIDER].to_list() == frame["provider"].to_list()


def keep_rows(path: Path, keep, change=lambda row: row) -> None:
    """Keep the rows ``keep`` accepts (as dicts), each through ``change``."""
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    kept = [change(dict(zip(rows[0], r))) for r in rows[1:] if keep(dict(zip(rows[0], r)))]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([rows[0]] + [[r[c] for c in rows[0]] for r in kept])
    path.write_text(out.getvalue(), encoding="utf-8")


def serve_on_h100(row: dict) -> dict:
    return {**row, "text": "H100", "alternatives": "H100"} if row["name"] == "serving_chip" else row


def test_the_smallest_data_set_builds(data_dir, capsys):
    """One chip, one model, a header-only prices.csv (the README allows an empty table) and no measured points: the
    build went down on the calibration's empty fit (a reshape of zero points) and on the deployments' price
    mappings; now it builds, and a notice says which deployments have no list price to compare."""
    keep_rows(data_dir / "hardware.csv", lambda r: r["chip"] == "H100")
    keep_rows(data_dir / "models.csv", lambda r: r["model"] == "Llama-3.1-70B")
    keep_rows(data_dir / "rental_prices.csv", lambda r: r["chip"] == "H100")
    keep_rows(data_dir / "deployments.csv", lambda r: r["chip"] == "H100" and r["model"] == "Llama-3.1-70B")
    keep_rows(data_dir / "measured_points.csv", lambda r: False)
    keep_rows(data_dir / "prices.csv", lambda r: False)
    keep_rows(data_dir / "scenarios.csv", lambda r: True, serve_on_h100)
    args = ["build", "--data", "data", "--db", "out.duckdb", "--no-report", "--cache", "cache", "--as-of", "2026-11-30"]
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == (
        "notice: no hand price is kept, so the price mappings of data/deployments.csv:2 match nothing: those "
        "deployments are planned without a list price to compare\n"
    )
    assert captured.out.startswith("wrote out.duckdb (")
