"""The decode batches measured systems run, and how far an implied batch is from them."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.fits import measured_decode as md


def test_the_measured_decode_batch_comes_from_the_measured_points():
    """Decode points with a stated batch per replica give the range per replica and per chip (13,200 sequences on
    144 H800s = 91.7 per chip); points of other regimes or without a batch are ignored; none gives DeepSeek's."""
    points = pl.DataFrame(
        {
            "point_id": ["a", "b", "c", "d"],
            "regime": ["decode", "decode", "prefill", "decode"],
            "batch_per_replica": [13_200, 256, 4_096, None],
            "decode_replica_chips": [144, 8, 32, 8],
        }
    )
    m = md.measured_decode(points)
    assert m.per_replica == (256.0, 13_200.0)
    assert m.per_chip == pytest.approx((256 / 8, 13_200 / 144))
    assert m.what == "measured_points a, b"
    assert md.measured_decode(points.filter(pl.col("regime") == "prefill")) == md.DEEPSEEK_DECODE
    label = md.batch_check(np.array([10.0]), m.per_replica, what="per replica")[0]
    assert label.startswith("far below measured systems (256-13,200 sequences per replica")
