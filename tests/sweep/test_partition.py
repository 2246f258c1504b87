"""The partition function: its frontier and argmin equal those of the fully materialised grid (every point of every
draw × context through decode_terms one group at a time, then layout_search's flat functions), whatever the piece
size; a piece stays within its stated memory."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from econ.physics import deployment, layout_search
from econ.sweep import partition
from econ.sweep.run import load_plan
from econ.sweep.spec import read_spec


@pytest.fixture(scope="module")
def plan(fixture_db, tmp_path_factory):
    from tests.sweep.conftest import write_spec

    return load_plan(read_spec(write_spec(tmp_path_factory.mktemp("spec"))), fixture_db)


def table(data: bytes):
    return pq.read_table(pa.BufferReader(data)).to_pydict()


def materialised(task):
    """Every point of the task as flat columns, group by group: the grid a sweep need not hold."""
    lay = task.layouts
    n_layouts, n_batch = len(lay["layout"]), task.batch.size
    layout = {k: np.asarray(lay[k])[:, None] for k in deployment.LAYOUT_KEYS}
    cols = {k: [] for k in ("group", "draw", "context", "li", "bi", "speed", "thr", "cost", "ok", "valid", "meets")}
    for i, draw in enumerate(task.draws):
        settings = {k: (v[i] if np.ndim(v) else v) for k, v in task.settings.items()}
        for j, context in enumerate(task.context_tokens):
            with np.errstate(all="ignore"):
                out = deployment.decode_terms(
                    task.model,
                    task.chip,
                    layout,
                    task.batch[None, :],
                    context,
                    kv_scale=task.kv_scale[i],
                    settings=settings,
                )
            shape = (n_layouts, n_batch)
            speed = np.broadcast_to(out["tokens_per_s_per_user"], shape).ravel()
            fits = np.broadcast_to(out["fits"], shape) & np.isfinite(np.broadcast_to(out["step_time_s"], shape))
            ok = (fits & ~np.asarray(lay["idealised"], dtype=bool)[:, None]).ravel()
            cols["group"].append(np.full(speed.size, i * task.context_tokens.size + j))
            cols["draw"].append(np.full(speed.size, draw))
            cols["context"].append(np.full(speed.size, context))
            cols["li"].append(np.repeat(np.arange(n_layouts), n_batch))
            cols["bi"].append(np.tile(np.arange(n_batch), n_layouts))
            cols["speed"].append(speed)
            cols["thr"].append(np.broadcast_to(out["tokens_per_s_per_chip"], shape).ravel())
            cols["cost"].append(np.broadcast_to(out["usd_per_mtok"], shape).ravel())
            cols["ok"].append(ok)
            cols["valid"].append(fits.ravel())
            cols["meets"].append(speed >= task.speed_target_tokens_per_s[i])
    return {k: np.concatenate(v) for k, v in cols.items()}


def expected_rows(task):
    """(draw, context, layout, replica chips, TP, DP, PP, batch, speed, throughput) of the materialised frontier
    and of the materialised argmin."""
    m = materialised(task)
    ok = m["ok"]
    front = np.zeros(ok.size, dtype=bool)
    front[ok] = layout_search.pareto_optimal(m["group"][ok], m["speed"][ok], m["thr"][ok])
    cheapest = layout_search.cheapest_meeting_target(m["group"], m["cost"], ok & m["meets"])

    def rows(mask):
        lay = task.layouts
        return sorted(
            (
                int(m["draw"][i]),
                float(m["context"][i]),
                str(lay["layout"][m["li"][i]]),
                *(float(lay[k][m["li"][i]]) for k in partition.LAYOUT_COLUMNS),
                float(task.batch[m["bi"][i]]),
                float(m["speed"][i]),
                float(m["thr"][i]),
            )
            for i in np.flatnonzero(mask)
        )

    return rows(front), rows(cheapest)


def got_rows(cols):
    return sorted(
        zip(
            cols["draw"],
            cols["context_tokens"],
            cols["layout"],
            *(cols[k] for k in partition.LAYOUT_COLUMNS),
            cols["batch_per_replica"],
            cols["tokens_per_s_per_user"],
            cols["tokens_per_s_per_chip"],
        )
    )


@pytest.mark.parametrize("case", [0, 3])  # DeepSeek-V3 (MoE, grid and named layouts), Llama-3.1-70B (dense)
@pytest.mark.parametrize("max_points", [10**9, 1])  # one piece, or one draw × context group per piece
def test_frontier_and_argmin_equal_those_of_the_materialised_grid(plan, case, max_points):
    task = dataclasses.replace(plan.task(case, 1), max_points=max_points)
    result = partition.run_partition(task)
    frontier, cheapest = expected_rows(task)
    assert len(frontier) > 10 * task.draws.size and cheapest
    assert got_rows(table(result.files["serving_frontier"])) == frontier
    layouts = table(result.files["serving_layouts"])
    assert all(layouts["cheapest_meeting_target"]) and all(layouts["meets_target"])
    assert got_rows(layouts) == cheapest
    groups = task.draws.size * task.context_tokens.size
    assert result.pieces == (groups if max_points == 1 else 1)


def test_keeping_points_keeps_every_fitting_point_and_marks_the_argmin(plan):
    task = dataclasses.replace(plan.task(3, 0), keep=("points",))
    m = materialised(task)
    cols = table(partition.run_partition(task).files["serving_layouts"])
    assert len(cols["draw"]) == int(m["valid"].sum()) > 0
    assert sum(cols["cheapest_meeting_target"]) == len(expected_rows(task)[1])
    assert set(cols["pool"]) == {"decode"} and all(cols["fits"])


def test_the_same_task_gives_the_same_bytes(plan):
    task = plan.task(0, 2)
    assert partition.run_partition(task).files == partition.run_partition(task).files


@pytest.mark.parametrize("keep", [("frontier", "argmin"), ("points", "frontier")])
def test_a_piece_stays_within_its_stated_memory(plan, keep):
    task = dataclasses.replace(plan.task(0, 0), keep=keep, max_points=10**9)
    tracemalloc.start()
    try:
        partition.run_partition(task)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / task.points <= partition.bytes_per_point(keep), peak / task.points


def test_points_carry_the_flags_the_build_table_has(plan):
    """on_frontier and best_of_replica_size of every point equal the build's rules worked a second way on the rows
    (polars sorts and a pairwise dominance check, not the sweep's blocked arrays): a decode point of a non-idealised
    layout that no other such point of its draw x context beats on both speed per user and throughput per chip, and
    per draw x context x replica size x batch the first cheapest grid layout."""
    import polars as pl

    task = dataclasses.replace(plan.task(0, 1), keep=("points",))
    frame = pl.DataFrame(table(partition.run_partition(task).files["serving_layouts"])).with_row_index("_row")
    idealised = dict(zip(task.layouts["layout"], task.layouts["idealised"]))
    frame = frame.with_columns(
        (pl.col("draw") * 10**6 + pl.col("context_tokens").rank("dense")).alias("_group"),
        pl.col("layout").replace_strict(idealised, return_dtype=pl.Boolean).alias("_idealised"),
    )
    eligible = frame.filter((pl.col("pool") == "decode") & ~pl.col("_idealised"))
    speed, throughput = "tokens_per_s_per_user", "tokens_per_s_per_chip"
    other = eligible.select("_group", _r="_row", _s=speed, _t=throughput)
    pairs = eligible.select("_row", "_group", speed, throughput).join(other, on="_group")
    beaten = pairs.filter(  # another point as fast with as much throughput, better in one, or the same and earlier
        (pl.col("_s") >= pl.col(speed)) & (pl.col("_t") >= pl.col(throughput))
        & ((pl.col("_s") > pl.col(speed)) | (pl.col("_t") > pl.col(throughput)) | (pl.col("_r") < pl.col("_row")))
    )["_row"]  # fmt: skip
    frontier = set(eligible["_row"]) - set(beaten)
    assert frame["on_frontier"].to_list() == [r in frontier for r in frame["_row"]]
    cheapest = set(
        frame.filter((pl.col("layout") == "grid") & pl.col("usd_per_mtok").is_finite())
        .sort("usd_per_mtok", "_row")
        .group_by("_group", "replica_chips", "batch_per_replica", maintain_order=True)
        .first()["_row"]
    )
    assert frame["best_of_replica_size"].to_list() == [r in cheapest for r in frame["_row"]]
    assert 0 < frame["best_of_replica_size"].sum() < frame.height
