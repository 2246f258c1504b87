"""The input frames several analyses read: architectures with their KV bytes, model × chip × format cases.

Selection and joins only; every number comes from ``model_derived`` / ``hardware_derived`` or a physics
function (the replica rule, the KV format scaling).
"""

from __future__ import annotations

import polars as pl

from econ.physics import kv_cache, memory

MODELS_SQL = """
select m.*, d.kv_bytes_per_token, d.kv_window_bytes_per_sequence, d.architecture_group
from models as m join model_derived as d using (model)
order by m.model
"""
"""Every architecture with its KV bytes per token and window KV (at BF16, ``model_derived``) and its architecture
group (the models a cross-validation leaves out together)."""


def architecture_groups(models: pl.DataFrame) -> dict[str, str]:
    """model -> ``model_derived.architecture_group`` (empty where ``models`` has no such column: each model is then
    its own group)."""
    if "architecture_group" not in models.columns:
        return {}
    return dict(models.select("model", "architecture_group").iter_rows())


def architecture_of(groups: dict[str, str], column: str = "arch_model") -> pl.Expr:
    """Each row's architecture group (``groups`` of its ``column``; a model without an entry is its own group, a null
    model none): what leave-one-model-out leaves out together (DeepSeek-V3 with DeepSeek-R1, GLM-5 with GLM-5.1)."""
    return pl.col(column).replace_strict(groups, default=pl.col(column), return_dtype=pl.String)


def models_at(ctx, kv_format: str) -> pl.DataFrame:
    """``models`` with KV bytes per token and the window KV of a cache stored in ``kv_format``."""
    return with_kv_format(ctx.query(MODELS_SQL), kv_format)


def with_kv_format(models: pl.DataFrame, kv_format: str) -> pl.DataFrame:
    """The KV columns (BF16 in ``model_derived``) scaled to ``kv_format``
    (:func:`econ.physics.kv_cache.kv_bytes_in_format`)."""
    return models.with_columns(
        kv_cache.kv_bytes_in_format(pl.col("kv_bytes_per_token"), kv_format),
        kv_cache.kv_bytes_in_format(pl.col("kv_window_bytes_per_sequence"), kv_format),
    )


def cases_for(models: pl.DataFrame, hardware_derived: pl.DataFrame) -> pl.DataFrame:
    """Every model × chip × number format the chip has a peak for, with the replica (rule: memory.replica_chips)."""
    hw = hardware_derived.with_columns(pl.col("scale_up_domain_chips").fill_null(1).cast(pl.Float64))
    frame = (
        models.join(hw, how="cross")
        .sort("model", "chip", "format_order")
        .with_columns(
            pl.col("kv_window_bytes_per_sequence").fill_null(0.0).cast(pl.Float64),
            pl.col("sliding_window_tokens").cast(pl.Float64),
        )
    )
    chips, stages = memory.replica_chips(
        frame["params_total"].to_numpy(),
        frame["weight_bytes_per_param"].to_numpy(),
        frame["hbm_capacity_bytes"].to_numpy(),
        frame["scale_up_domain_chips"].to_numpy(),
    )
    return frame.with_columns(pl.Series("chips", chips), pl.Series("pipeline_stages", stages))
