"""inference_validation / inference_quantities: the price inferences checked on open models whose truth is known.

Independent numbers: synthetic readings whose error is set by hand (a reading biased by a known factor is published
corrected by it, a noisy one loses to the no-price baseline), and on the shipped data the ratio implied/true
recomputed from the fit_context_tiers cost slopes (observed price slope over the deployment model's), a second path
to the same ratio, and the issue's checks: the crossover is falsified, no ok reading is wider than 10x or less
skilful than the baseline.
"""

from __future__ import annotations

import shutil
from importlib import import_module

import duckdb
import numpy as np
import polars as pl
import pytest
from fits.pricing_data import frames
from polars.testing import assert_frame_equal

from econ.analyses import fit_io_prices, inference_validation
from econ.analyses.inference_validation import SUMMARIES
from econ.analyses.inferred_changes import pricing_tables
from econ.analyses.runner import run_analyses
from econ.analyses.validation_evidence import summary_frame
from econ.fits import context_readings, validation
from tests.conftest import AS_OF

KV = context_readings.QUANTITIES["output"]
PREFILL = "prefill_flop_per_input_token"
INFERENCE = ("inference_validation", "inference_quantities")


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


def validated(frame: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The tables fit_io_prices' analysis writes from these rows: the rows with their published values and evidence,
    and the reading's summary (the one validation inference_validation reshapes)."""
    rows, summaries = fit_io_prices.with_validated(frame)
    return {
        "fit_io_prices": rows,
        "fit_io_price_quantities": summary_frame(summaries, fit_io_prices.FIT_IO_PRICE_QUANTITIES),
    }


def test_a_reading_off_by_a_constant_factor_is_published_corrected_and_ok():
    """Twelve open models spanning three decades read x8 high with 10% noise: the bias is significant, each published
    value is divided by the other models' bias (close to the truth), the intervals beat the baseline and cover; a
    closed row is corrected by every open model's bias."""
    true = np.geomspace(1e9, 1e12, 12)
    noise = np.exp(np.random.default_rng(3).normal(0, 0.1, 12))
    models = [f"M{i:02d}" for i in range(12)]
    closed = io_rows([8e11], [None], [None])
    fits = validated(pl.concat([io_rows(list(8 * true * noise), list(true), models), closed], how="vertical"))
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
    _, summary = inference_validation.tables(validated(io_rows(list(true * noise), list(true), list("ABCDEFGHIJKL"))))
    s = summary.filter(pl.col("quantity") == PREFILL).row(0, named=True)
    assert s["status"] == "uninformative" and "no skill" in s["status_reason"]
    _, summary = inference_validation.tables(validated(io_rows([1e10] * 4, [1e10] * 4, list("ABCD"))))
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


def test_a_build_validates_each_quantity_once(real_db, tmp_path, monkeypatch):
    """One home per number: the analyses that read quantities from prices, rerun on a copy of the shipped build,
    call validate once per quantity (the summaries they keep: one row per call), and inference_validation /
    inference_quantities only reshape what those calls left, so they come out as the build wrote them. Before,
    inference_validation validated every quantity a second time (2 calls per quantity)."""
    db = tmp_path / "econ.duckdb"
    shutil.copy(real_db, db)
    calls = []
    original = validation.validate

    def counted(frame, **kw):
        calls.append(frame.height)
        return original(frame, **kw)

    monkeypatch.setattr(validation, "validate", counted)
    names = ("fit_context_tiers", "fit_io_prices", "fit_markups", "markup_inversions", "inference_validation")
    with duckdb.connect(str(db)) as con:
        before = {t: con.sql(f"select * from {t} order by all").pl() for t in INFERENCE}
        run_analyses(con, [import_module(f"econ.analyses.{n}") for n in names], as_of=AS_OF, cache_dir=None)
        kept = sum(con.sql(f"select count(*) from {t}").fetchall()[0][0] for t in SUMMARIES.values())
        after = {t: con.sql(f"select * from {t} order by all").pl() for t in INFERENCE}
    assert len(calls) == kept == len(inference_validation.QUANTITIES)  # the old code made 26 calls here
    for t in INFERENCE:
        assert_frame_equal(after[t], before[t])
