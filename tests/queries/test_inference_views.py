"""The inference_validation and inference_quantities views on the shipped build: they only put together what the
reading analyses stored (each quantity's status in one row of one ``*_quantities`` table), and the issue's checks on
the numbers they show.

Independent numbers: the ratio implied/true against fit_context_tiers' cost slopes (observed price slope over the
deployment model's), a second path to the same ratio; the crossover is falsified; no ok reading is wider than 10x or
less skilful than the baseline.
"""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from econ.fits import context_readings, validation

KV = context_readings.QUANTITIES["output"]
PREFILL = "prefill_flop_per_input_token"
SUMMARIES = (
    "fit_context_tier_quantities",
    "fit_io_price_quantities",
    "fit_markup_quantities",
    "markup_inversion_quantities",
)


@pytest.fixture(scope="module")
def shipped(real_db):
    with duckdb.connect(str(real_db), read_only=True) as con:
        kinds = dict(
            con.sql(
                "select table_name, table_type from information_schema.tables "
                "where table_name in ('inference_validation', 'inference_quantities')"
            ).fetchall()
        )
        stored = pl.concat([con.sql(f"select '{t}' as stored_in, quantity, status from {t}").pl() for t in SUMMARIES])
        fit = con.sql(
            "select source, provider, model, implied_over_true_ratio from fit_context_tiers "
            f"where default_rule and not pooled and quantity = '{KV}' and variant = 'standard'"
        ).pl()
        yield (
            kinds,
            con.sql("select * from inference_validation").pl(),
            con.sql("select * from inference_quantities").pl(),
            stored,
            fit,
        )


def test_the_two_names_are_views_with_one_row_and_one_stored_status_per_quantity(shipped):
    kinds, rows, summary, stored, _ = shipped
    assert kinds == {"inference_validation": "VIEW", "inference_quantities": "VIEW"}
    assert summary.height == summary["quantity"].n_unique() == stored.height == 13
    assert stored["quantity"].n_unique() == stored.height  # each status is stored in one row of one table
    joined = summary.join(stored, on="quantity", suffix="_stored")
    assert joined.height == 13 and (joined["status"] == joined["status_stored"]).all()
    assert set(rows["quantity"]) <= set(summary["quantity"])
    key = ["quantity", "model", "price_source", "price_provider", "price_model", "variant", "price_from_date"]
    assert rows.select([*key, "price_column"]).is_duplicated().sum() == 0
    assert rows["log_ratio"].is_not_null().all() and rows["unit"].is_not_null().all()


def test_a_models_re_release_leaves_with_it_on_the_shipped_data(shipped):
    """A model and its re-release (GLM-5 and GLM-5.1: one architecture, one true value) are left out together, so
    every row of one architecture group gets one correction and one interval width; the 5 is counted in groups."""
    _, rows, summary, _, _ = shipped
    per_group = rows.group_by("quantity", "architecture_group").agg(
        pl.col("model").n_unique().alias("models"),
        pl.col("correction_factor_ratio").round(12).n_unique().alias("corrections"),
        (pl.col("validated_high_value") / pl.col("published_value")).round(9).n_unique().alias("widths"),
        pl.col("baseline_value").round(6).n_unique().alias("baselines"),
    )
    twins = per_group.filter(pl.col("models") > 1)
    assert twins.height > 0 and set(twins["quantity"]) >= {KV, PREFILL}
    assert (twins["corrections"] == 1).all() and (twins["widths"] == 1).all() and (twins["baselines"] == 1).all()
    counted = rows.group_by("quantity").agg(pl.col("architecture_group").n_unique().alias("groups"))
    joined = summary.join(counted, on="quantity")
    assert (joined["n_architecture_groups"] == joined["groups"]).all()
    assert (joined["n_architecture_groups"] < joined["n_models"]).any()


def test_the_crossover_is_falsified_on_the_shipped_data(shipped):
    """Issue 24's check: the lecture's crossover reading misses the truth on open models beyond its own interval."""
    s = shipped[2].filter(pl.col("quantity") == context_readings.CROSSOVER).row(0, named=True)
    assert s["n_models"] >= validation.MIN_MODELS
    assert (s["role"], s["status"], s["hypothesis_status"]) == ("hypothesis", "falsified", "falsified")
    assert s["geometric_mean_ratio"] < 0.1 and not s["bias_corrected"]
    assert "misses the truth beyond its own interval" in s["status_reason"]


def test_no_ok_reading_is_wider_than_10x_or_less_skilful_than_the_baseline(shipped):
    """Issue 24's check: every ok reading beats the no-price baseline by the interval score and is at most 10x wide,
    with its left-out coverage stated."""
    ok = shipped[2].filter(pl.col("status") == "ok")
    assert (ok["interval_width_ratio"] <= validation.MAX_WIDTH_RATIO).all()
    assert (ok["interval_score_log"] < ok["baseline_interval_score_log"]).all()
    assert ok["coverage_groups_frac"].is_not_null().all() and (ok["n_models"] >= validation.MIN_MODELS).all()


def test_the_ratio_agrees_with_the_cost_slopes_of_fit_context_tiers(shipped):
    """implied/true here (reading / architecture) against fit_context_tiers' implied_over_true_ratio (observed cost
    slope over the deployment model's cost slope): the same number by two paths."""
    _, rows, _, _, fit = shipped
    mine = rows.filter(pl.col("quantity") == KV)
    joined = mine.join(
        fit.rename({"source": "price_source", "provider": "price_provider", "model": "price_model"}),
        on=["price_source", "price_provider", "price_model"],
        suffix="_fit",
    )
    assert joined.height == mine.height > 0
    assert joined["implied_over_true_ratio"].to_list() == pytest.approx(
        joined["implied_over_true_ratio_fit"].to_list(), rel=1e-6
    )
