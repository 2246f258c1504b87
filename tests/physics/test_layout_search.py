"""The layout grid, the cheapest layout under a target (against a brute-force loop), and the frontier."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from econ.physics import Chip, Model, decode_step, layout_search


@pytest.mark.parametrize(("domain", "moe"), [(8, True), (8, False), (72, True), (256, False)])
def test_grid_layouts_multiply_out_and_respect_the_domain(domain, moe):
    g = layout_search.layout_grid(domain, moe=moe, max_chips=512)
    chips = g["tensor_parallel"] * g["attention_data_parallel"] * g["pipeline_parallel"]
    assert np.all(g["tensor_parallel"] <= domain) and np.all(chips >= 1)
    assert np.all((g["pipeline_parallel"] == 1) | (chips > domain))  # stages only across domains
    if not moe:
        assert np.all(g["attention_data_parallel"] == 1)  # more DP ranks of a dense model are more replicas
    assert np.array_equal(g["replicate_attention"], g["attention_data_parallel"] > 1)
    assert len({tuple(x) for x in zip(chips, g["tensor_parallel"], g["pipeline_parallel"], strict=True)}) == chips.size


def test_pareto_optimal_keeps_the_upper_envelope():
    group = np.array([1, 1, 1, 1, 2, 2])
    speed = np.array([100.0, 50.0, 90.0, 40.0, 10.0, 5.0])
    throughput = np.array([10.0, 20.0, 5.0, 30.0, 1.0, 2.0])
    assert layout_search.pareto_optimal(group, speed, throughput).tolist() == [True, True, False, True, True, True]


@pytest.mark.parametrize("spread", ["ties", "continuous"])
def test_the_coarse_frontier_drops_only_points_that_are_not_optimal(spread):
    """Sorting only the points the coarse frontier does not beat outright gives the mask of sorting them all (ties
    and duplicates included: which of two equal points is optimal), and drops most points of a layout-search-like
    cloud."""
    rng = np.random.default_rng(11)
    n = 60_000
    group = rng.integers(7, 300, n).astype(float)
    if spread == "ties":
        speed, throughput = rng.integers(1, 40, n).astype(float), rng.integers(0, 40, n).astype(float) * 1e7
    else:
        batch = 2.0 ** rng.integers(0, 15, n)
        speed = 1e3 / (1.0 + batch * rng.uniform(0.01, 1.0, n))
        throughput = speed * batch / rng.choice([1.0, 2.0, 8.0, 72.0], n)
    kept = layout_search._not_clearly_dominated(group, speed, throughput)
    full = layout_search._pareto_sorted(group, speed, throughput)
    assert kept is not None and not full[np.setdiff1d(np.arange(n), kept)].any()
    assert np.array_equal(layout_search.pareto_optimal(group, speed, throughput), full)
    if spread == "continuous":
        assert kept.size < n / 4


@pytest.mark.parametrize("nan", [False, True])
def test_the_frontier_order_is_the_lexsort_ties_and_all(nan):
    """The complex-key and radix sort gives the permutation of ``lexsort((-throughput, -speed, group))``, ties in
    input order (which of two equal points is on the frontier), on integer groups with repeated speeds and
    throughputs; a NaN (or a group numpy cannot code in 16 bits) takes the lexsort itself."""
    rng = np.random.default_rng(5)
    group = rng.integers(3, 40, 5_000).astype(float)
    speed, throughput = rng.integers(0, 30, 5_000).astype(float), rng.integers(0, 30, 5_000).astype(float)
    speed[::7] = 0.0
    if nan:
        throughput[11] = np.nan
    got = layout_search._frontier_order(group, speed, throughput)
    assert np.array_equal(got, np.lexsort((-throughput, -speed, group)))
    assert np.array_equal(
        layout_search._frontier_order(group * 1e5, speed, throughput), np.lexsort((-throughput, -speed, group * 1e5))
    )


DENSE = Model("dense-70b", params_total=70.6e9, params_active=70.6e9, kv_bytes_per_token=327_680.0, num_kv_heads=8)
H100 = Chip(
    "H100", 80e9, 3.35e12, peak_bf16_flop_per_s=989.4e12, scale_up_domain_chips=8, scale_up_bandwidth_bytes_per_s=450e9
)
BATCH = 2.0 ** np.arange(0, 12)


def evaluated():
    """Every TP layout of one 8-GPU node x 12 batches at 8k context: speed, cost, fits (a small grid)."""
    grid = layout_search.layout_grid(8, moe=False, max_chips=8)
    rows = []
    for i in range(grid["tensor_parallel"].size):
        layout = {k: v[i] for k, v in grid.items()}
        step = decode_step(DENSE, H100, batch=BATCH, context_tokens=8192, layout=layout, usd_per_chip_hour=2.0)
        t = step.terms
        for j, b in enumerate(BATCH):
            rows.append((i, b, t["tokens_per_s_per_user"][j], t["usd_per_mtok"][j], bool(t["fits"][j])))
    return rows


ROWS = evaluated()


def brute_force(target):
    best = None
    for i, b, speed, cost, fits in ROWS:
        if fits and speed >= target and (best is None or cost < best[3]):
            best = (i, b, speed, cost)
    return best


@pytest.mark.parametrize("target", [5.0, 20.0, 50.0, 100.0, 1e4])
def test_cheapest_meeting_target_is_what_a_loop_over_the_grid_finds(target):
    speed = np.array([r[2] for r in ROWS])
    cost = np.array([r[3] for r in ROWS])
    fits = np.array([r[4] for r in ROWS])
    mark = layout_search.cheapest_meeting_target(np.zeros(len(ROWS)), cost, fits & (speed >= target))
    expected = brute_force(target)
    if expected is None:
        assert not mark.any()
    else:
        (chosen,) = np.flatnonzero(mark)
        assert cost[chosen] == expected[3] and ROWS[chosen][:2] == expected[:2]


COSTS = st.sampled_from([1.0, 2.0, 3.0, np.inf, np.nan, -np.inf])  # ties, never-finite and NaN costs


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), COSTS, st.booleans()), max_size=40))
def test_integer_groups_mark_what_the_sort_marks(points):
    """Integer groups take the scatter path; the same groups as floats take the sort: the marks agree, ties and NaN
    included."""
    group = np.array([p[0] for p in points], dtype=np.int64)
    cost = np.array([p[1] for p in points], dtype=float)
    feasible = np.array([p[2] for p in points], dtype=bool)
    by_scatter = layout_search.cheapest_meeting_target(group, cost, feasible)
    by_sort = layout_search.cheapest_meeting_target(group.astype(float), cost, feasible)
    assert by_scatter.tolist() == by_sort.tolist()


@settings(max_examples=60, deadline=None)
@given(st.floats(1.0, 300.0), st.floats(1.0, 300.0))
def test_a_tighter_speed_target_never_lowers_the_cheapest_cost(a, b):
    loose, tight = sorted((a, b))
    cheap_loose, cheap_tight = brute_force(loose), brute_force(tight)
    if cheap_tight is not None:
        assert cheap_loose is not None and cheap_loose[3] <= cheap_tight[3]


def test_the_shipped_frontier_trades_speed_for_throughput(real_db):
    """serving_frontier: along each model × chip × format, faster per user means no more throughput per chip."""
    import duckdb

    with duckdb.connect(str(real_db), read_only=True) as con:
        bad = con.execute(
            """
            select count(*) from (
                select tokens_per_s_per_chip - lag(tokens_per_s_per_chip) over (
                    partition by efficiency_basis, model, chip, number_format order by tokens_per_s_per_user) as rise
                from serving_frontier)
            where rise > 1e-9"""
        ).fetchall()[0][0]
        cases = con.execute("select count(distinct (model, chip, number_format)) from serving_frontier").fetchall()[0][
            0
        ]
    assert bad == 0 and cases > 500
