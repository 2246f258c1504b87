"""The layouts a pool may use, and the cheapest one under a service target (vectorised over cases × layouts × batch).

Grid (:func:`layout_grid`): replica sizes ``c`` = powers of two up to ``max_chips`` and 1, 2, 4 and 8 scale-up
domains; tensor parallelism TP ∈ {1, 2, 4, 8, 16} within a domain; pipeline stages PP ∈ {1, 2} for a replica larger
than one domain (inside a domain stages only re-read weights, lecture d.2); DP = c/(TP·PP).
A dense model uses DP = 1 (more DP ranks are more replicas). A MoE model spreads its routed experts over each
stage's TP·DP chips and, when DP > 1, replicates attention, shared experts, dense layers and embeddings on every
DP rank (DeepSeek's and SGLang's data-parallel attention): the common practice the issue names.

:func:`cheapest_meeting_target` picks, per group (model × chip × format × pool), the feasible point with the
lowest $/MTok; :func:`pareto_optimal` gives the frontier of throughput per chip against
speed per user.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics import sharding

TENSOR_PARALLEL = (1, 2, 4, 8, 16)
PIPELINE_PARALLEL = (1, 2)
DOMAIN_MULTIPLES = (1, 2, 4, 8)


@formula(
    "c ∈ {2^k ≤ c_max} ∪ {S, 2S, 4S, 8S}, TP ∈ {1, 2, 4, 8, 16} ≤ S, PP ∈ {1, 2} (c > S), DP = c/(TP·PP)", "this module"
)
def layout_grid(scale_up_domain_chips: int, *, moe: bool, max_chips: int = 512) -> dict[str, np.ndarray]:
    """Every layout of the grid for one scale-up domain size, as arrays keyed like ``deployment.LAYOUT_KEYS``."""
    domain = int(scale_up_domain_chips)
    sizes = {2**k for k in range(int(np.log2(max_chips)) + 1)} | {
        domain * m for m in DOMAIN_MULTIPLES if domain * m <= max_chips
    }
    rows = []
    for c in sorted(sizes):
        for tp in TENSOR_PARALLEL:
            for pp in PIPELINE_PARALLEL:
                if tp > domain or c % (tp * pp) or (pp > 1 and c <= domain):
                    continue
                dp = c // (tp * pp)
                if not moe and dp != 1:
                    continue
                rows.append((tp, dp, pp))
    tp, dp, pp = (np.array(x, dtype=float) for x in zip(*rows, strict=True))
    return _layout(tp, dp, pp)


@formula("c fixed (any size): TP ∈ {1, 2, 4, 8, 16} ≤ S dividing c, PP ∈ {1, 2, 4, 8}, DP = c/(TP·PP)", "this module")
def sized_layouts(scale_up_domain_chips: int, chips: int, *, moe: bool) -> dict[str, np.ndarray]:
    """Every layout of exactly ``chips`` chips per replica (a stated size off the grid: 3, 144, 48): the grid's
    tensor-parallel degrees that divide it within a domain, pipeline stages of what is left; a dense model keeps
    DP = 1 where some layout allows it, else DP ranks are replicas inside the replica."""
    domain, c = int(scale_up_domain_chips), int(chips)
    rows = [
        (tp, c // (tp * pp), pp)
        for tp in TENSOR_PARALLEL
        for pp in (1, 2, 4, 8)
        if tp <= max(domain, 1) and c % (tp * pp) == 0
    ]
    if not moe and any(dp == 1 for _, dp, _ in rows):
        rows = [r for r in rows if r[1] == 1]
    if not rows:
        rows = [(1, c, 1)]
    tp, dp, pp = (np.array(x, dtype=float) for x in zip(*rows, strict=True))
    return _layout(tp, dp, pp)


@formula("argmin $/MTok over fitting points with speed ≥ s_min and TTFT ≤ t_max", "this module")
def cheapest_meeting_target(group, usd_per_mtok, feasible) -> np.ndarray:
    """Boolean mask: per group, the one feasible point of lowest cost (ties: the first in input order).

    ``feasible`` already holds the target and memory conditions; a group with no feasible point has none marked.
    Groups numbered by non-negative integers take two scatter passes (``fmin.at`` of each group's lowest cost, then
    the first index at it) instead of a sort: the same mark, ~10x faster on the layout search's million points.
    """
    group = np.asarray(group)
    cost = np.where(np.asarray(feasible, dtype=bool), np.asarray(usd_per_mtok, dtype=float), np.inf)
    if group.dtype.kind in "iu" and group.size and 0 <= group.min() and group.max() <= 4 * group.size:
        return _cheapest_by_scatter(group, cost)
    order = np.lexsort((np.arange(cost.size), cost, group))
    first = np.ones(cost.size, dtype=bool)
    first[1:] = group[order][1:] != group[order][:-1]
    mark = np.zeros(cost.size, dtype=bool)
    mark[order[first]] = np.isfinite(cost[order[first]])
    return mark


def _cheapest_by_scatter(group: np.ndarray, cost: np.ndarray) -> np.ndarray:
    """:func:`cheapest_meeting_target` for integer groups: each group's lowest non-NaN cost, then its first point at
    that cost when finite (a NaN cost sorts last there, so is never chosen either)."""
    lowest = np.full(int(group.max()) + 1, np.inf)
    np.fmin.at(lowest, group, cost)
    at_lowest = np.flatnonzero((cost == lowest[group]) & np.isfinite(cost))
    first = np.full(lowest.size, cost.size, dtype=np.intp)
    np.minimum.at(first, group[at_lowest], at_lowest)
    mark = np.zeros(cost.size, dtype=bool)
    mark[first[first < cost.size]] = True
    return mark


@formula("no point as fast per user with more throughput per chip", "Pareto frontier")
def pareto_optimal(group, speed, throughput) -> np.ndarray:
    """True where no point of the same group is at least as fast and has more throughput (throughput >= 0).

    Sort by group, then speed descending; a point is optimal when its throughput beats the running
    maximum of every faster point of its group. One lexsort and one cumulative maximum over
    all groups at once: each group's throughputs are lifted by an offset larger than any throughput,
    so the running maximum never carries over from the group before.
    """
    group, speed, throughput = (np.asarray(x, dtype=float) for x in (group, speed, throughput))
    if not speed.size:
        return np.zeros(0, dtype=bool)
    candidate = _not_clearly_dominated(group, speed, throughput)
    if candidate is None:
        return _pareto_sorted(group, speed, throughput)
    optimal = np.zeros(speed.size, dtype=bool)  # a point another point beats outright is not optimal: sort the rest
    optimal[candidate] = _pareto_sorted(group[candidate], speed[candidate], throughput[candidate])
    return optimal


def _pareto_sorted(group: np.ndarray, speed: np.ndarray, throughput: np.ndarray) -> np.ndarray:
    """:func:`pareto_optimal` by one sort and a running maximum."""
    order = _frontier_order(group, speed, throughput)
    lift = group[order] * (2.0 * float(throughput.max()) + 1.0)
    lifted = throughput[order] + lift
    before = np.concatenate([[-np.inf], np.maximum.accumulate(lifted)[:-1]])
    optimal = np.empty(speed.size, dtype=bool)
    optimal[order] = lifted > np.maximum(before, lift - 1.0)
    return optimal


SPEED_BUCKETS = 64
"""Log-spaced speed buckets per group of :func:`_not_clearly_dominated`'s coarse frontier."""


def _not_clearly_dominated(group: np.ndarray, speed: np.ndarray, throughput: np.ndarray) -> np.ndarray | None:
    """Indices of the points no point of their group beats outright, from a coarse frontier (each group's best
    throughput in each of :data:`SPEED_BUCKETS` log-spaced speed buckets): a point is dropped where a faster bucket of
    its group holds more throughput, or its own bucket's best point is at least as fast with more throughput. Every
    point dropped is beaten, strictly in throughput, by a point that :func:`_frontier_order` puts before it, so it is
    not optimal, and the running maximum every kept point is compared with is the same without it (rounding after
    the group's lift is monotone): :func:`pareto_optimal` of the rest is the same mask. The layout search's
    150,000-point chunks keep ~1 point in 10. None where it does not apply: integer groups, finite positive values, a
    few thousand groups, more than ~1,000 points (else the sort alone is as quick)."""
    low = group.min()
    codes = group - low
    if speed.size < 1024 or not (
        np.isfinite(speed).all() and np.isfinite(throughput).all() and (speed > 0).all() and np.isfinite(low)
    ):
        return None
    if codes.max() >= 2**15 // SPEED_BUCKETS or np.any(codes != np.round(codes)):
        return None
    log_speed = np.log(speed)
    span = float(log_speed.max() - log_speed.min())
    if not span > 0:
        return None
    bucket = np.minimum(((log_speed - log_speed.min()) / span * SPEED_BUCKETS).astype(np.int64), SPEED_BUCKETS - 1)
    cell = codes.astype(np.int64) * SPEED_BUCKETS + bucket  # faster bucket, strictly faster point (log is monotone)
    order = np.argsort(cell.astype(np.int16), kind="stable")  # a radix sort of 16-bit codes
    sorted_cell = cell[order]
    starts = np.flatnonzero(np.concatenate([[True], sorted_cell[1:] != sorted_cell[:-1]]))
    cells = sorted_cell[starts]
    best = np.full(int(codes.max() + 1) * SPEED_BUCKETS, -np.inf)
    best[cells] = np.maximum.reduceat(throughput[order], starts)
    at_best = np.where(throughput[order] == best[sorted_cell], speed[order], -np.inf)
    fastest_best = np.full(best.size, -np.inf)  # the speed of the fastest point at its bucket's best throughput
    fastest_best[cells] = np.maximum.reduceat(at_best, starts)
    by_group = best.reshape(-1, SPEED_BUCKETS)
    above = np.maximum.accumulate(by_group[:, ::-1], axis=1)[:, ::-1]  # best of this bucket and every faster one
    faster = np.concatenate([above[:, 1:], np.full((by_group.shape[0], 1), -np.inf)], axis=1).ravel()
    beaten = (throughput < faster[cell]) | ((fastest_best[cell] >= speed) & (best[cell] > throughput))
    return np.flatnonzero(~beaten)


def _frontier_order(group: np.ndarray, speed: np.ndarray, throughput: np.ndarray) -> np.ndarray:
    """``np.lexsort((-throughput, -speed, group))``, the same permutation (ties keep input order) in ~60% of the
    time where the groups are a few thousand integers and every value is finite (the layout search's 150,000-point
    chunks): one stable sort of the complex key ``−speed − i·throughput`` (numpy orders complex numbers by real part,
    then imaginary), then a stable radix sort of the 16-bit group codes."""
    low = group.min()
    codes = group - low
    if not (
        np.isfinite(speed).all() and np.isfinite(throughput).all() and np.isfinite(low) and codes.max() < 2**15
    ) or np.any(codes != np.round(codes)):
        return np.lexsort((-throughput, -speed, group))
    order = np.argsort(-speed - 1j * throughput, kind="stable")
    return order[np.argsort(codes.astype(np.int16)[order], kind="stable")]


@formula(
    "MoE: DP-attention with EP over the largest power of two ≤ S (more domains if needed), the least TP that holds "
    "the weights and a sequence per rank; dense: the least TP ≤ S that does, else two stages",
    "lecture c.1, c.6 (EP over the scale-up domain); DeepSeek Day 6 (DP attention)",
)
def default_layout(
    model: dict, chip: dict, *, weight_bytes_per_param, context_tokens, kv_scale=1.0, hbm_reserve_frac=0.0
) -> dict[str, np.ndarray]:
    """The reference layout of every case (arrays keyed like ``deployment.LAYOUT_KEYS``): the one
    ``serving_curves`` and ``serving_summary`` use. The first candidate whose weights and one sequence per
    attention rank at ``context_tokens`` fit each chip within the HBM reserve; NaN degrees where none does.

    MoE candidates, in order: a replica of 1, 2, 4, 8 × the largest power of two ≤ S chips (NVL72: 64, the
    lecture's EP), each with TP = 1, 2, 4, 8, 16 (≤ S) and DP the rest, replicated per rank. Dense: TP = 1 … 16
    (≤ S), then the largest of those with two pipeline stages.
    """
    domain = np.asarray(chip["scale_up_domain_chips"], dtype=float)
    moe = ~np.isnan(np.asarray(model["num_routed_experts"], dtype=float))
    shape = np.broadcast_shapes(domain.shape, np.shape(moe))
    domain, moe = np.broadcast_to(domain, shape), np.broadcast_to(moe, shape)
    base = 2.0 ** np.floor(np.log2(np.maximum(domain, 1.0)))
    capacity = np.asarray(chip["hbm_capacity_bytes"], dtype=float) * (1.0 - np.asarray(hbm_reserve_frac, dtype=float))
    widest = np.max([np.where(t <= domain, t, 1.0) for t in TENSOR_PARALLEL], axis=0)
    candidates = [(True, m * base, t, 1.0) for m in DOMAIN_MULTIPLES for t in TENSOR_PARALLEL]
    candidates += [(False, np.full(shape, float(t)), t, 1.0) for t in TENSOR_PARALLEL]
    candidates += [(False, 2.0 * widest, widest, 2.0)]
    chosen = {k: np.full(shape, np.nan) for k in ("tensor_parallel", "attention_data_parallel", "pipeline_parallel")}
    for for_moe, chips, t, p in candidates:
        tp = np.broadcast_to(np.asarray(t, dtype=float), shape)
        layout = _layout(tp, chips / (tp * p), np.full(shape, p))
        one_per_rank = layout["attention_data_parallel"] * layout["pipeline_parallel"]
        with np.errstate(invalid="ignore", divide="ignore"):
            need = sharding.memory_per_chip_bytes(
                model,
                layout,
                one_per_rank,
                context_tokens,
                weight_bytes_per_param=weight_bytes_per_param,
                kv_scale=kv_scale,
            )
            fits = need <= capacity
        take = np.isnan(chosen["tensor_parallel"]) & fits & (moe == for_moe) & (tp <= domain)
        for k in chosen:
            chosen[k] = np.where(take, layout[k], chosen[k])
    return _layout(chosen["tensor_parallel"], chosen["attention_data_parallel"], chosen["pipeline_parallel"])


def _layout(tp, dp, pp) -> dict[str, np.ndarray]:
    replicate = np.asarray(dp) > 1
    return {
        "tensor_parallel": np.asarray(tp, dtype=float),
        "attention_data_parallel": np.asarray(dp, dtype=float),
        "pipeline_parallel": np.asarray(pp, dtype=float),
        "replicate_attention": replicate,
        "replicate_shared_experts": replicate,
        "replicate_dense": replicate,
        "replicate_embeddings": replicate,
        "redundant_expert_slots": np.zeros(np.shape(tp)),
    }
