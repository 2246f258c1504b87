"""Answers without the grid: log-spaced axes, and the frontier and argmin of many groups of points at once.

A sweep evaluates a block of groups × points (one group per draw × context of a model × chip × format; its
points the layouts × batches) and keeps only each group's answer. Each function here works on a ``(groups,
points)`` array with one vectorised sort or reduction per block, no loop per group, and breaks ties the way
:func:`econ.physics.layout_search.pareto_optimal` and :func:`~econ.physics.layout_search.cheapest_meeting_target`
break them over a flat frame (the first point in input order), so a frontier computed block by block equals the
frontier of the whole grid materialised.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula


@formula("x_i = round(x_min·(x_max/x_min)^(i/(n−1))), i = 0…n−1, duplicates dropped", "log-spaced grid")
def log_grid(low: float, high: float, points: int, *, whole: bool = True) -> np.ndarray:
    """``points`` values spaced evenly in log from ``low`` to ``high`` (both included), ascending; with ``whole``
    rounded to whole numbers (sequences, tokens) and duplicates dropped, so a dense low end has fewer points."""
    values = np.geomspace(float(low), float(high), int(points)) if points > 1 else np.array([float(low)])
    return np.unique(np.round(values)) if whole else values


@formula("per group: no point as fast per user with more throughput per chip", "Pareto frontier, block form")
def block_frontier(speed, throughput, valid) -> np.ndarray:
    """Boolean mask ``(groups, points)``: the valid points no valid point of the same row beats on both.

    Each row is sorted by speed descending, then throughput descending, then position; a point is optimal when
    its throughput exceeds the running maximum of every point before it (so of two equal points only the first
    stays, as in :func:`econ.physics.layout_search.pareto_optimal`). One ``lexsort`` along the rows.
    """
    speed, throughput = np.asarray(speed, dtype=float), np.asarray(throughput, dtype=float)
    valid = np.asarray(valid, dtype=bool)
    groups, points = speed.shape
    if not points:
        return np.zeros((groups, 0), dtype=bool)
    s = np.where(valid, speed, -np.inf)
    t = np.where(valid, throughput, -np.inf)
    position = np.broadcast_to(np.arange(points), (groups, points))
    order = np.lexsort((position, -t, -s), axis=-1)
    t_sorted = np.take_along_axis(t, order, axis=-1)
    before = np.empty_like(t_sorted)
    before[:, 0] = -np.inf
    np.maximum.accumulate(t_sorted[:, :-1], axis=-1, out=before[:, 1:])
    optimal = np.empty((groups, points), dtype=bool)
    np.put_along_axis(optimal, order, t_sorted > before, axis=-1)
    return optimal & valid


@formula("per group: argmin cost over eligible points (first on ties; −1 where none)", "argmin, block form")
def block_argmin(cost, eligible) -> np.ndarray:
    """Index of the lowest ``cost`` among the ``eligible`` points of each row of ``(groups, points)``, -1 where
    a row has none (ties: the first, as :func:`econ.physics.layout_search.cheapest_meeting_target`)."""
    cost = np.where(np.asarray(eligible, dtype=bool), np.asarray(cost, dtype=float), np.inf)
    if not cost.shape[1]:
        return np.full(cost.shape[0], -1)
    best = np.argmin(cost, axis=-1)
    return np.where(np.isfinite(cost[np.arange(cost.shape[0]), best]), best, -1)
