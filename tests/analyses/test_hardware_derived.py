"""hardware_derived on the fixture chips: the scaling book's critical ratios and the vendors' drain times."""

from __future__ import annotations

import pytest

from tests.analyses.helpers import q


def test_one_row_per_chip_and_format_with_a_peak(fixture_db):
    rows = q(
        fixture_db,
        "select chip, list(number_format order by format_order) as f from hardware_derived group by 1 order by 1",
    ).rows()
    assert rows == [("B200", ["bf16", "fp8", "fp4"]), ("H100", ["bf16", "fp8"]), ("TPU-v5e", ["bf16"])]


def test_published_figures(fixture_db):
    """TPU v5e R ~ 240 and H100 ~ 295 (scaling book, bf16); B200 drain 180 GB / 7.7 TB/s ~ 23 ms; W_eff = S*W."""
    r = dict(
        q(fixture_db, "select chip, critical_batch_ratio from hardware_derived where number_format = 'bf16'").rows()
    )
    assert r["TPU-v5e"] == pytest.approx(240, rel=0.01) and r["H100"] == pytest.approx(295, rel=0.01)
    b200 = q(fixture_db, "select * from hardware_derived where chip = 'B200' and number_format = 'fp4'").row(
        0, named=True
    )
    assert b200["hbm_drain_time_s"] == pytest.approx(180 / 7700)
    assert b200["weight_bytes_per_param"] == 0.5 and b200["critical_batch_ratio"] == pytest.approx(
        9e15 / 2 * 0.5 / 7.7e12
    )
    assert b200["scale_up_hbm_bandwidth_bytes_per_s"] == pytest.approx(8 * 7.7e12)
    h100 = q(fixture_db, "select * from hardware_derived where chip = 'H100' and number_format = 'bf16'").row(
        0, named=True
    )
    assert h100["scale_up_over_out_bandwidth_ratio"] == pytest.approx(9.0)  # 450 GB/s over 400 Gb/s, not the round 8
