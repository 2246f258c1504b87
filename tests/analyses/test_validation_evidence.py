"""Each price inference is validated once, by the analysis that reads it (econ.analyses.validation_evidence): the fit
rows keep the per-row evidence, the ``*_quantities`` tables the summary, its status and the reason in words.

Independent numbers: synthetic readings whose error is set by hand (a reading biased by a known factor is published
corrected by it, a noisy one loses to the no-price baseline); and a count of the validate calls a rerun of the
reading analyses makes on the shipped build (one per quantity).
"""

from __future__ import annotations

import shutil
from importlib import import_module

import duckdb
import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from econ.analyses import fit_io_prices
from econ.analyses.runner import run_analyses
from econ.analyses.validation_evidence import summary_frame
from econ.fits import validation
from tests.conftest import AS_OF

PREFILL = fit_io_prices.QUANTITY
READERS = ("fit_context_tiers", "fit_io_prices", "fit_markups", "markup_inversions")
SUMMARIES = (
    "fit_context_tier_quantities",
    "fit_io_price_quantities",
    "fit_markup_quantities",
    "markup_inversion_quantities",
)
VIEWS = ("inference_validation", "inference_quantities")


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


def validated(frame: pl.DataFrame) -> tuple[pl.DataFrame, dict]:
    """What fit_io_prices' analysis writes from these rows: the rows with their published values and evidence, and
    the reading's row of fit_io_price_quantities."""
    rows, summaries = fit_io_prices.with_validated(frame)
    summary = summary_frame(summaries, fit_io_prices.FIT_IO_PRICE_QUANTITIES, fit_io_prices.LABELS)
    assert summary.height == 1
    return rows, summary.row(0, named=True)


def test_a_reading_off_by_a_constant_factor_is_published_corrected_and_ok():
    """Twelve open models spanning three decades read x8 high with 10% noise: the bias is significant, each published
    value is divided by the other models' bias (close to the truth), the intervals beat the baseline and cover; a
    closed row is corrected by every open model's bias and carries no check evidence."""
    true = np.geomspace(1e9, 1e12, 12)
    noise = np.exp(np.random.default_rng(3).normal(0, 0.1, 12))
    models = [f"M{i:02d}" for i in range(12)]
    closed = io_rows([8e11], [None], [None])
    rows, s = validated(pl.concat([io_rows(list(8 * true * noise), list(true), models), closed], how="vertical"))
    mine = rows.filter(pl.col("prefill_flop_log_ratio").is_not_null()).sort("arch_model")
    assert mine["arch_model"].to_list() == models  # the closed row has no truth: not a checked row
    assert mine["prefill_flop_log_ratio"].to_list() == pytest.approx(list(np.log(8 * noise)))
    assert mine["prefill_flop_scenario_interval_covers_true"].not_().all()  # +-10% around x8: never the truth
    loo = np.array([np.delete(np.log(8 * noise), i).mean() for i in range(12)])  # the other models' bias
    published = mine["prefill_flop_published_per_input_token"].to_numpy()
    assert published == pytest.approx(8 * true * noise * np.exp(-loo))
    assert published / true == pytest.approx(noise, rel=0.05)  # only the noise is left
    shut = rows.filter(pl.col("arch_model").is_null()).row(0, named=True)
    assert shut["prefill_flop_log_ratio"] is None and shut["prefill_flop_interval_covers_true"] is None
    assert shut["prefill_flop_correction_factor_ratio"] == pytest.approx(np.exp(-np.log(8 * noise).mean()))
    assert (s["status"], s["bias_corrected"], s["n_models"]) == ("ok", True, 12)
    assert s["geometric_mean_ratio"] == pytest.approx(8, rel=0.1) and s["skill_score_frac"] > 0.5
    assert s["interval_width_ratio"] < 10 and s["coverage_groups_frac"] >= 0.75
    assert s["scenario_coverage_rows_frac"] == 0.0 and s["level_frac"] == validation.LEVEL
    assert (s["source_table"], s["unit"], s["role"]) == ("fit_io_prices", "FLOP/token", "reading")
    assert "left-out coverage" in s["status_reason"] and "baseline" in s["status_reason"]


def test_a_reading_noisier_than_the_truths_spread_is_uninformative_and_few_models_too_few():
    true = np.geomspace(1e10, 3e10, 12)
    noise = np.exp(np.random.default_rng(5).normal(0, 1.5, 12))
    _, s = validated(io_rows(list(true * noise), list(true), list("ABCDEFGHIJKL")))
    assert s["status"] == "uninformative" and "no skill" in s["status_reason"]
    _, s = validated(io_rows([1e10] * 4, [1e10] * 4, list("ABCD")))
    assert s["status"] == "too_few_open_models" and f"at least {validation.MIN_MODELS}" in s["status_reason"]
    assert s["scenario_coverage_rows_frac"] == 1.0  # +-10% around the exact truth covers it


def test_a_quantity_with_nothing_to_check_still_has_its_row_and_status():
    """No rows: the quantity is listed, with the status that says why (the inference_quantities view shows every
    quantity)."""
    s = summary_frame({}, fit_io_prices.FIT_IO_PRICE_QUANTITIES, fit_io_prices.LABELS).row(0, named=True)
    assert (s["quantity"], s["status"], s["n_models"]) == (PREFILL, "too_few_open_models", 0)
    assert f"at least {validation.MIN_MODELS}" in s["status_reason"]


def test_a_build_validates_each_quantity_once(real_db, tmp_path, monkeypatch):
    """One home per number: the analyses that read quantities from prices, rerun on a copy of the shipped build,
    call validate once per quantity (the summaries they keep: one row per call), and the inference_validation /
    inference_quantities views, which read what those calls left, come out as the build wrote them."""
    db = tmp_path / "econ.duckdb"
    shutil.copy(real_db, db)
    calls = []
    original = validation.validate

    def counted(frame, **kw):
        calls.append(frame.height)
        return original(frame, **kw)

    monkeypatch.setattr(validation, "validate", counted)
    with duckdb.connect(str(db)) as con:
        before = {t: con.sql(f"select * from {t} order by all").pl() for t in VIEWS}
        run_analyses(con, [import_module(f"econ.analyses.{n}") for n in READERS], as_of=AS_OF, cache_dir=None)
        kept = sum(con.sql(f"select count(*) from {t}").fetchall()[0][0] for t in SUMMARIES)
        after = {t: con.sql(f"select * from {t} order by all").pl() for t in VIEWS}
    assert len(calls) == kept == 13  # the quantities; the code before this issue made 26 calls here
    for t in VIEWS:
        assert_frame_equal(after[t], before[t])
