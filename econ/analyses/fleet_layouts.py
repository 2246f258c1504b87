"""``econ fleet``'s stated pool degrees: the tensor, attention-data, pipeline and expert degrees a user gives a pool,
checked as ``econ predict`` checks them, as the layouts the fleet's search may pick from.

The fleet plans every replica with its routed experts spread over all its chips (one slice per expert: the grid of
:mod:`econ.physics.layout_search`), so a stated ``--<pool>-etp`` other than 1, or an ``--<pool>-ep`` other than the
replica's tp x dp, is refused with why. Everything else a user can state of a pool in ``econ predict`` is honoured
or refused with the same messages (:func:`econ.analyses.predict_layouts.pool_layouts`).
"""

from __future__ import annotations

import dataclasses
import math

import polars as pl

from econ.analyses.predict_layouts import PoolSpec, check_spec, pool_layouts
from econ.errors import EconError
from econ.load.ceilings import CHIPS


def degree_keys(spec: PoolSpec, pool: str, layouts: pl.DataFrame, *, shape: dict) -> list[str] | None:
    """``"tp|dp|pp"`` of every layout ``spec`` allows the fleet (None: no degree stated, the search chooses).

    ``shape``: the model's heads and layers, whether it is MoE, the chip's scale-up domain and the largest replica
    (the keywords of :func:`econ.analyses.predict_layouts.pool_layouts`)."""
    degrees = (
        spec.tensor_parallel,
        spec.data_parallel,
        spec.pipeline_parallel,
        spec.expert_parallel,
        spec.expert_tensor_parallel,
    )
    if all(v is None for v in degrees):
        return None
    if spec.layout is not None:
        raise EconError(
            f"--{pool}-layout {spec.layout} sets the {pool} degrees: econ fleet takes it or the degrees, not both",
            f"leave out the {pool} degrees or --{pool}-layout",
        )
    if spec.expert_tensor_parallel not in (None, 1):
        raise EconError(
            f"--{pool}-etp {spec.expert_tensor_parallel:g}: econ fleet spreads each expert whole over a replica's "
            "chips (etp 1)",
            f"leave out --{pool}-etp, or use econ predict for a layout that splits experts",
        )
    found = [lay for lay in pool_layouts(spec, pool, layouts, **shape) if lay.expert_tensor_parallel == 1]
    if not found:
        raise EconError(
            f"no {pool} layout with etp 1 has the stated degrees (the fleet spreads each expert whole)",
            f"leave out --{pool}-ep, or give one equal to tp x dp",
        )
    return sorted({f"{lay.tensor_parallel}|{lay.data_parallel}|{lay.pipeline_parallel}" for lay in found})


def keep_degrees(rows: pl.DataFrame, pool: str) -> pl.Expr:
    """Rows of a pool's candidates whose degrees are among the case's stated ones (every row where none are)."""
    column = f"{pool}_degrees"
    if column not in rows.columns:
        return pl.lit(True)
    key = pl.concat_str(
        [pl.col(c).cast(pl.Int64) for c in ("tensor_parallel", "attention_data_parallel", "pipeline_parallel")],
        separator="|",
    )
    return pl.col(column).is_null() | key.is_in(pl.col(column).str.split(","))


def stated_pools(pools: dict, layouts: pl.DataFrame, *, shape: dict) -> tuple[dict, tuple]:
    """({pool: the degree keys it allows, or None}, (decode chips, prefill chips)) of ``pools`` = {pool: (its stated
    degrees or None, its stated replica chips or None, its named layout or None)}: a replica the degrees fix
    (tp x dp x pp) is planned at exactly that size; degrees that leave the pipeline stages open with no replica size
    are refused (the fleet plans one replica size a pool)."""
    keys, chips = {}, []
    for pool, (spec, size, name) in pools.items():
        spec = dataclasses.replace(spec or PoolSpec(), chips=size, layout=name)
        check_spec(spec, pool, CHIPS.value)  # a degree of 0 or 1e9 is refused as econ predict refuses it
        keys[pool] = degree_keys(spec, pool, layouts, shape=shape)
        sizes = {math.prod(int(x) for x in key.split("|")) for key in keys[pool] or ()}
        if size is None and len(sizes) > 1 and spec.tensor_parallel and spec.data_parallel:
            raise EconError(
                f"--{pool}-tp {spec.tensor_parallel} x --{pool}-dp {spec.data_parallel} leaves the pipeline stages "
                f"open: replicas of {', '.join(f'{n:,}' for n in sorted(sizes))} chips",
                f"give --{pool}-pp or --{pool}-chips",
            )
        chips.append(next(iter(sizes)) if size is None and len(sizes) == 1 else size)
    return keys, tuple(chips)
