"""Block reductions against the flat functions of layout_search (a second method) and the log grid against numbers
written out by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.physics import layout_search
from econ.physics.reductions import block_argmin, block_frontier, log_grid


@pytest.mark.parametrize(
    ("low", "high", "points", "expected"),
    [
        (1, 16384, 15, [2.0**k for k in range(15)]),  # the build's decode batches, powers of two
        (1024, 131072, 8, [1024.0 * 2**k for k in range(8)]),
        (1, 4, 10, [1.0, 2.0, 3.0, 4.0]),  # rounded to whole sequences, duplicates dropped
        (7, 7, 1, [7.0]),
    ],
)
def test_log_grid(low, high, points, expected):
    assert log_grid(low, high, points).tolist() == expected


def test_log_grid_not_whole_is_geometric():
    grid = log_grid(10.0, 1000.0, 3, whole=False)
    assert grid == pytest.approx([10.0, 100.0, 1000.0], rel=1e-12)


def flat_frontier(speed, throughput, valid):
    """The frontier of each row by layout_search.pareto_optimal over the flattened valid points."""
    groups, points = speed.shape
    g = np.repeat(np.arange(groups), points).astype(float)
    keep = valid.reshape(-1)
    mask = np.zeros(groups * points, dtype=bool)
    mask[np.flatnonzero(keep)] = layout_search.pareto_optimal(
        g[keep], speed.reshape(-1)[keep], throughput.reshape(-1)[keep]
    )
    return mask.reshape(groups, points)


values = st.integers(0, 6).map(float)  # few distinct values: many ties, equal points and dominated ones


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(1, 9), st.data())
def test_block_frontier_is_pareto_optimal_row_by_row(groups, points, data):
    n = groups * points
    speed = np.array(data.draw(st.lists(values, min_size=n, max_size=n))).reshape(groups, points)
    throughput = np.array(data.draw(st.lists(values, min_size=n, max_size=n))).reshape(groups, points)
    valid = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))).reshape(groups, points)
    assert np.array_equal(block_frontier(speed, throughput, valid), flat_frontier(speed, throughput, valid))


def test_block_frontier_by_hand():
    speed = np.array([[100.0, 50.0, 90.0, 40.0, 50.0]])
    throughput = np.array([[10.0, 20.0, 5.0, 30.0, 20.0]])  # the second 50/20 equals the first: only the first stays
    valid = np.array([[True, True, True, True, True]])
    assert block_frontier(speed, throughput, valid).tolist() == [[True, True, False, True, False]]
    valid[0, 3] = False  # without the 40/30 point nothing else changes
    assert block_frontier(speed, throughput, valid).tolist() == [[True, True, False, False, False]]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.integers(1, 9), st.data())
def test_block_argmin_is_cheapest_meeting_target_row_by_row(groups, points, data):
    n = groups * points
    cost = np.array(data.draw(st.lists(values, min_size=n, max_size=n))).reshape(groups, points)
    eligible = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n))).reshape(groups, points)
    best = block_argmin(cost, eligible)
    mark = layout_search.cheapest_meeting_target(
        np.repeat(np.arange(groups), points), cost.reshape(-1), eligible.reshape(-1)
    ).reshape(groups, points)
    for row in range(groups):
        chosen = np.flatnonzero(mark[row])
        assert (best[row] == -1 and chosen.size == 0) or chosen.tolist() == [best[row]]
