"""training_fleet: training tokens from the token balance, the fleet split between serving and training."""

from __future__ import annotations

import pytest

from tests.analyses.helpers import plan_row, q


def test_training_tokens_follow_the_token_balance(db):
    """Base shares are 1/3 each, so D_pre = beta x D_inf with beta = (2/6)/0.33 = 1.0101 (lecture e.3); the ratio is
    the token_balance table's (a second code path: the balance of the lab's traffic, not of this deployment)."""
    balance = dict(q(db, "select quantity, central_value from token_balance where scenario = 'base'").rows())
    ratio = balance["pretrain_tokens"] / balance["inference_tokens"]
    assert ratio == pytest.approx((2 / 6) / 0.33, rel=1e-3)
    from_table = (ratio,)
    rows = q(
        db, "select * from training_fleet where deployment = 'llama-70b-h100' and scenario = 'base' order by phase"
    )
    assert rows["phase"].to_list() == ["pretrain", "pretrain_reported", "rl"]
    pre = rows.row(0, named=True)
    inference = 0.05 * 5e8 * 2 * 30 * 86_400  # 2 months of 30 days, no discard
    assert pre["inference_tokens"] == pytest.approx(inference)
    assert pre["tokens"] == pytest.approx(from_table[0] * inference)
    assert pre["chip_hours"] == pytest.approx(6 * 70.6e9 * pre["tokens"] / (989.4e12 * 0.4) / 3600)
    reported = rows.row(1, named=True)
    assert reported["tokens"] == 15e12 and reported["tokens_source"] == "models.pretrain_tokens (reported)"
    assert reported["cost_low_usd"] == pytest.approx(reported["chip_hours"] * 2.35)  # market index, the cheaper kind
    assert reported["cost_high_usd"] == pytest.approx(reported["chip_hours"] * 2.99)


def test_fleet_split_uses_the_plan_and_the_peak(db):
    plan = plan_row(db, "llama-70b-h100")
    row = q(
        db,
        "select * from training_fleet where deployment = 'llama-70b-h100' and phase = 'pretrain' and scenario = 'base'",
    ).row(0, named=True)
    assert row["serving_peak_chips"] == pytest.approx(1.5 * plan["serving_mean_chips"])
    hours = q(
        db,
        "select sum(chip_hours) from training_fleet where deployment = 'llama-70b-h100' and scenario = 'base' "
        "and phase in ('pretrain', 'rl')",
    )[0, 0]
    period_h = 2 * 30 * 24
    assert row["fleet_chips_separate"] == pytest.approx(row["serving_peak_chips"] + hours / period_h)
    assert row["fleet_chips_time_shared"] <= row["fleet_chips_separate"]
