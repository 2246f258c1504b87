"""fast_mode_identity on the fixture prices: the lecture's Claude fast mode."""

from __future__ import annotations

import pytest

from tests.analyses.helpers import q


def test_fast_mode_identity_for_claude(fixture_db):
    """Lecture a.5: Claude Opus 4.6 fast mode, 6x price x 2.5x speed = 15x smaller batch."""
    row = q(fixture_db, "select * from fast_mode_identity where model = 'claude-opus-4-6'").row(0, named=True)
    assert (row["output_price_ratio"], row["speed_ratio"], row["batch_ratio"]) == pytest.approx((6.0, 2.5, 15.0))
