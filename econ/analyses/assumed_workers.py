"""The pools of a disaggregated run that states no worker counts, read within what the runs that state theirs used.

Most disaggregated rows of ``inferencex_train`` that no InferenceX launch settles (:mod:`econ.analyses.launch_layouts`)
state neither pool's workers, and many store the decode pool's layout as the prefill pool's too. Such a run is read
(:func:`assume`) with

- decode workers enough that no attention rank runs more than :data:`DECODE_RANK_BATCH` sequences, no more than the
  largest system a stated run used on the chip holds (:func:`largest_systems`), and at least enough for the decode
  pool's KV cache to hold every user (:func:`holding_every_user`, once the cache is sized);
- prefill workers at the stated rows' median prefill:decode chip ratio (:data:`PREFILL_CHIP_RATIO`), each no larger
  than the largest stated prefill worker of the chip.

The bounds are read from other rows' stated layouts (inputs, not measured times), as a user's file states them: the
calibration reads its own runs', ``econ predict --points`` the calibration's (``calibration_runs``).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.launch_layouts import CHOICES

DECODE_RANK_BATCH = 64.0
"""Sequences per decode attention rank of a run that states no workers: the upper quartile of the stated rows'
decode batch per rank (8 / 16 / 64)."""

PREFILL_CHIP_RATIO = ((4000.0, 0.5), (0.0, 0.2))
"""(prompt tokens at least, prefill chips per decode chip): the medians of the stated disaggregated rows (0.2 for
1k-token prompts, 0.5 for 4k and longer)."""

LARGEST_SYSTEM = "largest_system_chips"
LARGEST_PREFILL = "largest_prefill_worker_chips"


def largest_systems(runs: pl.DataFrame) -> pl.DataFrame:
    """(chip, :data:`LARGEST_SYSTEM`, :data:`LARGEST_PREFILL`): the most chips a disaggregated run that states its
    worker counts used on each chip, in all and in one prefill worker, from rows with ``mode``, ``workers_assumed``,
    ``system_chips`` and ``prefill_worker_chips`` (the calibration's configurations, or ``calibration_runs``'
    included rows) and :data:`~econ.analyses.launch_layouts.CHOICES` (a run read as the median of several launches'
    pools states none).

    Why: the measured file's stated systems hold at most 72 chips on GB200 and B200, 64 on H100 and 96 on H200, while
    64 sequences per rank alone assumed up to 1,632 GB200s for a run at 4,301 users, a system no run states, and read
    its TTFT and TPOT 2-5x too fast. No stated prefill worker holds more than 8 chips (16 on H100), while most runs
    without worker counts store their decode pool's layout as their prefill pool's too (39 of TensorRT-LLM's 71 on
    GB200, against 5 of the 130 that state their workers): a prefill worker of 36 GB200s that no launch ran."""
    several = pl.col(CHOICES).fill_null(1.0) > 1.0
    stated = runs.filter((pl.col("mode") == "disagg") & ~pl.col("workers_assumed") & ~several)
    return (
        stated.group_by("chip")
        .agg(
            pl.col("system_chips").max().alias(LARGEST_SYSTEM),
            pl.col("prefill_worker_chips").max().alias(LARGEST_PREFILL),
        )
        .sort("chip")
    )


def assume(c: pl.DataFrame, largest: pl.DataFrame | None = None) -> pl.DataFrame:
    """``c`` (configuration rows: ``chip``, ``concurrency``, ``input_tokens``, ``workers_assumed``, each pool's
    ``*_workers`` and degrees) with the workers and prefill layout of every row that states no workers, within
    ``largest`` (:func:`largest_systems`; None: read from ``c``'s own stated rows; a chip without one takes the
    largest of any chip). A stated row is returned as it came."""
    ratio = pl.when(pl.col("input_tokens") >= PREFILL_CHIP_RATIO[0][0]).then(PREFILL_CHIP_RATIO[0][1])
    ratio = ratio.otherwise(PREFILL_CHIP_RATIO[1][1])
    d_chips = pl.col("decode_tensor_parallel") * pl.col("decode_attention_data_parallel")
    p_chips = pl.col("prefill_tensor_parallel") * pl.col("prefill_attention_data_parallel")
    if largest is None:
        stated = (pl.col("prefill_workers") * p_chips + pl.col("decode_workers") * d_chips).alias("system_chips")
        largest = largest_systems(c.with_columns(stated, p_chips.alias("prefill_worker_chips")))
    bounds = (LARGEST_SYSTEM, LARGEST_PREFILL)
    c = c.join(largest.select("chip", *bounds), on="chip", how="left").with_columns(
        pl.col(b).fill_null(largest[b].max() if largest.height else np.inf) for b in bounds
    )
    c = _cut_prefill_worker(c, p_chips)
    d_workers = (pl.col("concurrency") / (pl.col("decode_attention_data_parallel") * DECODE_RANK_BATCH)).ceil().clip(1)
    fits = (pl.col(LARGEST_SYSTEM) / (d_chips * (1.0 + ratio))).floor().clip(1)
    assumed = pl.col("workers_assumed")
    c = c.with_columns(
        pl.when(assumed)
        .then(pl.min_horizontal(d_workers, fits))
        .otherwise(pl.col("decode_workers"))
        .alias("decode_workers")
    )
    p_workers = (ratio * pl.col("decode_workers") * d_chips / p_chips).round(0).clip(1)
    return c.with_columns(
        pl.when(assumed).then(p_workers).otherwise(pl.col("prefill_workers")).alias("prefill_workers")
    )


def _cut_prefill_worker(c: pl.DataFrame, p_chips: pl.Expr) -> pl.DataFrame:
    """A prefill worker larger than any stated on the chip (the decode pool's layout copied) cut to the largest: its
    attention data parallel degree, the experts spread over the chips left as before."""
    cut = c.select(pl.col("workers_assumed") & (p_chips > pl.col(LARGEST_PREFILL))).to_series()
    tp, dp, etp = (
        pl.col(f"prefill_{k}") for k in ("tensor_parallel", "attention_data_parallel", "expert_tensor_parallel")
    )
    fitted = (pl.col(LARGEST_PREFILL) / tp).floor().clip(1)
    c = c.with_columns(
        pl.when(cut).then(fitted).otherwise(dp).alias("prefill_attention_data_parallel"),
        pl.when(cut)
        .then((etp * fitted / dp).clip(1.0, tp * fitted))
        .otherwise(etp)
        .alias("prefill_expert_tensor_parallel"),
    )
    return c.with_columns(
        pl.when(cut).then(p_chips / etp).otherwise(pl.col("prefill_expert_parallel")).alias("prefill_expert_parallel")
    )


def holding_every_user(
    decode_workers: np.ndarray, users: np.ndarray, slots_per_worker: np.ndarray, assumed: np.ndarray
) -> np.ndarray:
    """Decode workers of each run: an assumed count raised until their KV caches hold every user
    (``ceil(users / slots)``), where a worker holds at least one sequence; a stated count as it is."""
    raise_it = np.asarray(assumed, dtype=bool) & (slots_per_worker >= 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(raise_it, np.maximum(decode_workers, np.ceil(users / slots_per_worker)), decode_workers)
