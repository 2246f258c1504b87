"""The calibration on the shipped measured points: coverage, the held-out error targets, and what it feeds."""

from __future__ import annotations

import math

import pytest

from tests.analyses.helpers import q


def test_measured_points_cover_what_the_issue_asks(real_db):
    rows = q(
        real_db,
        "select p.*, h.vendor, m.num_routed_experts from measured_points p left join hardware h using (chip) "
        "left join models m on m.model = p.arch_model",
    )
    used = q(real_db, "select point_id from calibration_points where included")["point_id"].to_list()
    fitted = rows.filter(rows["point_id"].is_in(used))
    assert rows.height >= 30 and fitted.height >= 30
    assert rows["publisher"].n_unique() >= 4 and fitted["source"].n_unique() >= 4
    assert rows["chip"].n_unique() >= 5 and rows["vendor"].drop_nulls().n_unique() >= 2
    assert fitted["chip"].n_unique() >= 5 and fitted["vendor"].n_unique() >= 2
    assert fitted["arch_model"].n_unique() >= 5
    assert fitted.filter(fitted["num_routed_experts"].is_not_null())["arch_model"].n_unique() >= 2
    regimes = set(fitted["regime"].to_list())
    assert {"decode", "prefill", "single_stream", "offline"} <= regimes
    batches = q(real_db, "select decode_batch_per_replica b from calibration_points where included")["b"]
    assert batches.min() <= 1 and batches.max() >= 1024


def _overall(db, basis):
    return q(
        db,
        "select median_abs_log_ratio m, p90_abs_log_ratio p from calibration_errors "
        "where basis = ? and group_kind = 'overall'",
        [basis],
    ).row(0, named=True)


def test_leave_one_source_out_error_meets_the_targets(real_db):
    cv = _overall(real_db, "cv")
    assert cv["m"] <= math.log(1.3)
    assert cv["p"] <= math.log(2.0)
    assert _overall(real_db, "calibrated")["m"] <= cv["m"]  # in-sample is never worse than held-out
    assert _overall(real_db, "bound")["m"] > math.log(2.0)  # the roofline alone is far off


def test_calibrated_predictions_sit_below_the_bound(real_db):
    rows = q(real_db, "select * from calibration_points where included")
    assert (rows["calibrated_value"] <= rows["bound_value"] * (1 + 1e-9)).all()
    assert (rows["cv_value"] <= rows["bound_value"] * (1 + 1e-9)).all()
    assert rows["exclusion_reason"].null_count() == rows.height


def test_every_excluded_point_says_why(real_db):
    rows = q(real_db, "select * from calibration_points where not included")
    assert rows.height and rows["exclusion_reason"].null_count() == 0
    assert rows["calibrated_value"].null_count() == rows.height


def test_parameters_are_fractions_with_intervals(real_db):
    rows = q(real_db, "select * from calibration_parameters")
    fractions = rows.filter(rows["unit"] == "fraction")
    assert ((fractions["estimate"] > 0) & (fractions["estimate"] <= 1)).all()
    assert (rows["low"] <= rows["estimate"] * (1 + 1e-9)).all() and (
        rows["high"] >= rows["estimate"] * (1 - 1e-9)
    ).all()
    assert set(rows["family"].to_list()) >= {"", "Hopper", "Blackwell", "CDNA 3"}
    assert (rows["status"] == "ok").all()


def test_the_calibrated_fleet_needs_more_chips_than_the_bound(real_db):
    rows = q(
        real_db,
        "select scenario, efficiency_basis, deployment, decode_chips + prefill_chips as chips from fleet_plan "
        "where price_kind = 'scenario' and scenario in ('base', 'calibrated')",
    )
    assert set(rows["efficiency_basis"].to_list()) == {"bound", "calibrated"}
    wide = rows.pivot(on="scenario", index="deployment", values="chips")
    assert (wide["calibrated"] >= wide["base"]).all()


def test_the_frontier_has_both_bases_and_the_bound_is_above(real_db):
    rows = q(
        real_db,
        "select efficiency_basis, model, chip, number_format, max(tokens_per_s_per_chip) best from serving_frontier "
        "group by all",
    )
    wide = rows.pivot(on="efficiency_basis", index=["model", "chip", "number_format"], values="best")
    assert wide.height and (wide["bound"] >= wide["calibrated"]).all()


@pytest.mark.parametrize("table", ["calibration_points", "calibration_parameters", "calibration_errors"])
def test_fixture_build_writes_the_tables(db, table):
    assert q(db, f"select count(*) n from {table}")["n"][0] > 0
