"""inference_validation / inference_quantities: the price inferences checked on open models whose truth is known.

Independent numbers: synthetic readings whose error is set by hand (a reading biased by a known factor is published
corrected by it, a noisy one loses to the no-price baseline), and on the shipped data the ratio implied/true
recomputed from the fit_context_tiers cost slopes (observed price slope over the deployment model's), a second path
to the same ratio, and the issue's checks: the crossover is falsified, no ok reading is wider than 10x or less
skilful than the baseline.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from fits.pricing_data import frames

from econ.analyses import inference_validation
from econ.analyses.inferred_changes import pricing_tables
from econ.fits import context_readings, validation

KV = context_readings.QUANTITIES["output"]
PREFILL = "prefill_flop_per_input_token"


def io_rows(implied, true, models, *, variant="standard"):
    """fit_io_prices-shaped rows: one schedule per model, scenario interval +-10%."""
    n = len(models)
    return pl.DataFrame(
        {
            "source": ["hand"] * n,
            "provider": [f"p{i}" for i in range(n)],
            "model": [(m or "closed").lower() for m in models],
            "variant": [variant] * n,
            "provider_kind": ["first_party"] * n,
            "arch_model": models,
            "prefill_flop_per_input_token": implied,
            "prefill_flop_scenario_low_per_input_token": [x / 1.1 if x else None for x in implied],
            "prefill_flop_scenario_high_per_input_token": [x * 1.1 if x else None for x in implied],
            "true_prefill_flop_per_input_token": true,
        }
    )


def test_a_reading_off_by_a_constant_factor_is_published_corrected_and_ok():
    """Twelve open models spanning three decades read x8 high with 10% noise: the bias is significant, each published
    value is divided by the other models' bias (close to the truth), the intervals beat the baseline and cover; a
    closed row is corrected by every open model's bias."""
    true = np.geomspace(1e9, 1e12, 12)
    noise = np.exp(np.random.default_rng(3).normal(0, 0.1, 12))
    models = [f"M{i:02d}" for i in range(12)]
    closed = io_rows([8e11], [None], [None])
    fits = {"fit_io_prices": pl.concat([io_rows(list(8 * true * noise), list(true), models), closed], how="vertical")}
    rows, summary = inference_validation.tables(fits)
    mine = rows.filter(pl.col("quantity") == PREFILL).sort("model")
    assert mine["model"].to_list() == models  # the closed row has no truth: not a validation row
    assert mine["implied_over_true_ratio"].to_list() == pytest.approx(list(8 * noise))
    loo = np.array([np.delete(np.log(8 * noise), i).mean() for i in range(12)])  # the other models' bias
    assert mine["published_value"].to_numpy() == pytest.approx(8 * true * noise * np.exp(-loo))
    assert mine["published_value"].to_numpy() / true == pytest.approx(noise, rel=0.05)  # only the noise is left
    s = summary.filter(pl.col("quantity") == PREFILL).row(0, named=True)
    assert (s["status"], s["bias_corrected"], s["n_models"]) == ("ok", True, 12)
    assert s["geometric_mean_ratio"] == pytest.approx(8, rel=0.1) and s["skill_score_frac"] > 0.5
    assert s["interval_width_ratio"] < 10 and s["coverage_groups_frac"] >= 0.75
    assert "left-out coverage" in s["status_reason"] and "baseline" in s["status_reason"]
    # quantities with no rows are listed, with the status that says why
    kv = summary.filter(pl.col("quantity") == KV).row(0, named=True)
    assert kv["status"] == "too_few_open_models" and kv["n_models"] == 0


def test_a_reading_noisier_than_the_truths_spread_is_uninformative_and_few_models_too_few():
    true = np.geomspace(1e10, 3e10, 12)
    noise = np.exp(np.random.default_rng(5).normal(0, 1.5, 12))
    _, summary = inference_validation.tables(
        {"fit_io_prices": io_rows(list(true * noise), list(true), list("ABCDEFGHIJKL"))}
    )
    s = summary.filter(pl.col("quantity") == PREFILL).row(0, named=True)
    assert s["status"] == "uninformative" and "no skill" in s["status_reason"]
    _, summary = inference_validation.tables({"fit_io_prices": io_rows([1e10] * 4, [1e10] * 4, list("ABCD"))})
    s = summary.filter(pl.col("quantity") == PREFILL).row(0, named=True)
    assert s["status"] == "too_few_open_models" and f"at least {validation.MIN_MODELS}" in s["status_reason"]


@pytest.fixture(scope="module")
def real():
    f = frames()
    fits = pricing_tables(f["price_current"], f["models"], f["memory_tiers"], f["assumptions"], f["serving"])
    fits["model_derived"] = f["models"]  # MODELS_SQL: each model's architecture_group
    return fits, *inference_validation.tables(fits)


def test_a_models_re_release_leaves_with_it_on_the_shipped_data(real):
    """A model and its re-release (GLM-5 and GLM-5.1: one architecture, one true value) are left out together, so
    every row of one architecture group gets one correction and one interval width (left out one at a time, each
    model's fold kept its twin and the two differed); the 5 is counted in groups."""
    _, rows, summary = real
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


def test_the_crossover_is_falsified_on_the_shipped_data(real):
    """Issue 24's check: the lecture's crossover reading misses the truth on open models beyond its own interval."""
    _, _, summary = real
    s = summary.filter(pl.col("quantity") == context_readings.CROSSOVER).row(0, named=True)
    assert s["n_models"] >= validation.MIN_MODELS
    assert (s["role"], s["status"], s["hypothesis_status"]) == ("hypothesis", "falsified", "falsified")
    assert s["geometric_mean_ratio"] < 0.1 and not s["bias_corrected"]


def test_no_ok_reading_is_wider_than_10x_or_less_skilful_than_the_baseline(real):
    """Issue 24's check: every ok reading beats the no-price baseline by the interval score and is at most 10x wide,
    with its left-out coverage stated. (On the shipped data with issue 23's serving model none of these readings is
    ok: prefill attention is 12x wide and the long-context input reading 10.6x; the rule says so rather than pass.)"""
    _, _, summary = real
    ok = summary.filter(pl.col("status") == "ok")
    assert (ok["interval_width_ratio"] <= validation.MAX_WIDTH_RATIO).all()
    assert (ok["interval_score_log"] < ok["baseline_interval_score_log"]).all()
    assert ok["coverage_groups_frac"].is_not_null().all() and (ok["n_models"] >= validation.MIN_MODELS).all()


def test_the_ratio_agrees_with_the_cost_slopes_of_fit_context_tiers(real):
    """implied/true here (reading / architecture) against fit_context_tiers' implied_over_true_ratio (observed cost
    slope over the deployment model's cost slope): the same number by two paths."""
    fits, rows, _ = real
    ctx = fits["fit_context_tiers"].filter(
        pl.col("default_rule") & ~pl.col("pooled") & (pl.col("quantity") == KV) & (pl.col("variant") == "standard")
    )
    joined = rows.filter(pl.col("quantity") == KV).join(
        ctx.select(
            pl.col("source").alias("price_source"),
            pl.col("provider").alias("price_provider"),
            pl.col("model").alias("price_model"),
            "implied_over_true_ratio",
        ),
        on=["price_source", "price_provider", "price_model"],
        suffix="_fit",
    )
    assert joined.height == rows.filter(pl.col("quantity") == KV).height
    assert joined["implied_over_true_ratio"].to_list() == pytest.approx(
        joined["implied_over_true_ratio_fit"].to_list(), rel=1e-6
    )


def test_the_fit_tables_carry_the_published_value_and_the_status(real):
    """One status everywhere: fit_io_prices and fit_context_tiers rows carry the status of inference_quantities and
    the published (corrected) value x*exp(-b) with b the other models' bias."""
    fits, rows, summary = real
    status = dict(zip(summary["quantity"], summary["status"]))
    io = fits["fit_io_prices"].filter(pl.col("prefill_flop_validation_status").is_not_null())
    assert set(io["prefill_flop_validation_status"]) == {status[PREFILL]}
    kv = fits["fit_context_tiers"].filter(pl.col("kv_read_validation_status").is_not_null())
    assert set(kv["kv_read_validation_status"]) == {status[KV]}
    open_rows = rows.filter(pl.col("quantity") == PREFILL)
    same = open_rows.join(  # the fit row's published value is this table's, its group left out alike
        fits["fit_io_prices"].select(
            pl.col("source").alias("price_source"),
            pl.col("provider").alias("price_provider"),
            pl.col("model").alias("price_model"),
            "variant",
            "prefill_flop_published_per_input_token",
        ),
        on=["price_source", "price_provider", "price_model", "variant"],
    )
    assert same.height == open_rows.height
    assert same["prefill_flop_published_per_input_token"].to_list() == pytest.approx(
        same["published_value"].to_list(), rel=1e-9
    )
    factor = (open_rows["published_value"] / open_rows["implied_value"]).to_numpy()
    assert factor == pytest.approx(open_rows["correction_factor_ratio"].to_numpy())
    assert math.isfinite(float(factor.mean()))
