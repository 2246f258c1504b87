"""fleet_pareto: the cost-speed frontier over 1,026 batches, from the latency floor, never dominated."""

from __future__ import annotations

import math

import duckdb
import polars as pl
import pytest

from econ.analyses.fleet_pareto import PARETO_BATCH
from tests.analyses.helpers import q


def test_frontier_covers_every_case_with_more_than_a_thousand_batches(db):
    assert len(PARETO_BATCH) >= 1000 and PARETO_BATCH[0] == 1 and PARETO_BATCH[-1] == 65_536
    cases = q(
        db, "select count(distinct (model, chip, number_format)) as n, min(batch_seqs) as b from fleet_pareto"
    ).row(0)
    assert cases == (18, 1)  # 3 models x (H100 bf16/fp8, B200 bf16/fp8/fp4, v5e bf16)
    # the kept points are exactly the batches that fit in the replica's HBM at the context
    row = q(
        db,
        "select * from fleet_pareto where model = 'Llama-3.1-70B' and chip = 'H100' and number_format = 'bf16' "
        "order by batch_seqs",
    )
    g, context = row["replica_chips"][0], q(db, "select decode_context_tokens from fleet_plan limit 1")[0, 0]
    fits = math.floor((g * 80e9 - 2 * 70.6e9) / (context * 327_680))
    assert row["batch_seqs"].max() == max(b for b in PARETO_BATCH if b <= fits)


def test_frontier_starts_at_the_latency_floor(db):
    row = q(
        db,
        "select * from fleet_pareto where model = 'Llama-3.1-70B' and chip = 'H100' and number_format = 'bf16' "
        "and batch_seqs = 1",
    ).row(0, named=True)
    context = q(db, "select decode_context_tokens from fleet_plan limit 1")[0, 0]
    floor_s = (2 * 70.6e9 + context * 327_680) / (row["replica_chips"] * 3.35e12)  # weights + one sequence's KV
    assert row["tokens_per_s_per_user"] == pytest.approx(1 / floor_s, rel=1e-12)


def test_pareto_points_are_not_dominated(db):
    frame = q(db, "select * from fleet_pareto where model = 'DeepSeek-V3' and chip = 'B200'")
    optimal = frame.filter(pl.col("pareto_optimal"))
    dominated = frame.filter(~pl.col("pareto_optimal"))
    assert optimal.height and dominated.height
    pairs = optimal.join(optimal, how="cross", suffix="_o").filter(
        (pl.col("tokens_per_s_per_user_o") >= pl.col("tokens_per_s_per_user"))
        & (pl.col("tokens_per_s_per_chip_o") > pl.col("tokens_per_s_per_chip") * (1 + 1e-12))
    )
    assert pairs.height == 0


@pytest.mark.slow
def test_the_frontier_covers_every_model_chip_and_format_of_the_data(real_db):
    """Every model with KV bytes x every chip x every format with a peak (hardware_derived lists those), each
    with at least one feasible batch and a Pareto front."""
    counts = q(
        real_db,
        "select count(distinct (model, chip, number_format)) as cases, count(distinct (model, chip)) as pairs, "
        "count(distinct (model, chip)) filter (where pareto_optimal) as fronts from fleet_pareto",
    ).row(0)
    with duckdb.connect(str(real_db), read_only=True) as con:
        models = con.sql("select count(*) from model_derived where kv_bytes_per_token is not null").fetchall()[0][0]
        chip_formats, chips = con.sql("select count(*), count(distinct chip) from hardware_derived").fetchall()[0]
    assert counts == (models * chip_formats, models * chips, models * chips)
    assert (models, chips) == (31, 16)
