"""The decode batches measured systems run, and how far an implied batch is from them.

A price inference that implies a decode batch (the market's effective batch B_eff, a model's batch from its
output price) is compared with what real deployments serve: ``measured_points`` rows of regime decode with a
stated batch per replica, or DeepSeek's published online service when the database has none.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.formula import formula

MEASURED_DECODE_SEQUENCES = (12_100.0, 13_300.0)
"""Sequences one decode replica serves in DeepSeek's online V3/R1 service (Day 6 post, 2025-03-01): 14.8k output
tokens/s per H800 node at 20–22 tokens/s per user = 673–740 sequences per 8-GPU node, × 18 nodes of the EP144
decode unit (data/layouts.csv deepseek_decode_ep144). The fallback when the database has no measured decode
batch; the build reads ``measured_points`` (:class:`MeasuredDecode`)."""


@dataclass(frozen=True)
class MeasuredDecode:
    """The decode batches measured systems run: (low, high) sequences per replica and per chip, and what they are."""

    per_replica: tuple[float, float]
    per_chip: tuple[float, float]
    what: str


DEEPSEEK_DECODE = MeasuredDecode(
    MEASURED_DECODE_SEQUENCES,
    tuple(v / 144 for v in MEASURED_DECODE_SEQUENCES),
    "DeepSeek's online decode (Day 6 post)",
)


@formula("range of batch_per_replica and batch_per_replica / decode_replica_chips over measured decode points",
         "measured_points")  # fmt: skip
def measured_decode(points: pl.DataFrame) -> MeasuredDecode:
    """The measured decode batches of ``points`` (``measured_points`` rows: regime decode, batch_per_replica and
    decode_replica_chips stated), or :data:`DEEPSEEK_DECODE` when there are none."""
    rows = points.filter(
        (pl.col("regime") == "decode")
        & pl.col("batch_per_replica").is_not_null()
        & (pl.col("decode_replica_chips").fill_null(0) > 0)
    )
    if rows.height == 0:
        return DEEPSEEK_DECODE
    replica = rows["batch_per_replica"].cast(pl.Float64)
    chip = replica / rows["decode_replica_chips"].cast(pl.Float64)
    ids = ", ".join(sorted(rows["point_id"].to_list()))
    return MeasuredDecode(
        (float(replica.min()), float(replica.max())), (float(chip.min()), float(chip.max())), f"measured_points {ids}"
    )


FAR_FACTOR = 10.0
"""An implied batch more than this factor from the measured range is flagged."""


@formula("far when B is more than 10x outside the measured range", "DeepSeek Day 6 (measured decode batch)")
def batch_check(batch_seqs, measured=MEASURED_DECODE_SEQUENCES, far=FAR_FACTOR, *, what="per DeepSeek decode replica"):
    """Label of each implied batch against the measured range (vectorised; NaN: no label)."""
    lo, hi = measured
    b = np.asarray(batch_seqs, dtype=float)
    span = (f"{lo:,.0f}" if f"{lo:,.0f}" == f"{hi:,.0f}" else f"{lo:,.0f}-{hi:,.0f}") + f" sequences {what}"
    out = np.select(
        [np.isnan(b), np.isinf(b), b < lo / far, b > hi * far],
        ["", "not bounded: no weight term priced", f"far below measured systems ({span})", f"far above measured "
         f"systems ({span})"],
        default=f"within {far:g}x of measured systems ({span})",
    )  # fmt: skip
    return out if out.ndim else str(out)
