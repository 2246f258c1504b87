"""``network_ratios``: scale-up vs scale-out time at a pipeline stage boundary per MoE model × chip (lecture c.5).

The arithmetic is :mod:`econ.physics.network`; bandwidths are per chip, one direction (``hardware``).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.physics import model, network
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "network_ratios"
INPUTS = ("models", "hardware")

NETWORK_RATIOS = ResultTable(
    name="network_ratios",
    grain="MoE model x chip with both bandwidths",
    key=("model", "chip"),
    description="Scale-up vs scale-out time at a pipeline stage boundary (lecture c.5) from stored per-chip bandwidths",
    columns=(
        C("model", "str", "", "key", "Model (models.model)"),
        C("num_routed_experts", "int", "experts", "input", "Routed experts per MoE layer E (models)"),
        C("experts_per_token", "int", "experts", "input", "Experts each token is routed to k (models)"),
        C("num_layers", "int", "layers", "input", "Transformer blocks (models)"),
        C("num_dense_layers", "int", "layers", "input", "Leading dense layers (models)"),
        C("chip", "str", "", "key", "Accelerator (hardware.chip)"),
        C("scale_up_domain_chips", "int", "chips", "input", "Chips in one scale-up domain S (hardware)"),
        C("scale_up_bandwidth_bytes_per_s", "float", "bytes/s", "input", "Scale-up bandwidth per chip W_up (hardware)"),
        C(
            "scale_out_bandwidth_bytes_per_s",
            "float",
            "bytes/s",
            "input",
            "Scale-out bandwidth per chip W_out (hardware)",
        ),
        C(
            "expert_parallel_chips",
            "float",
            "chips",
            "derived",
            "E_p: largest power of two <= the scale-up domain, at most the expert count",
            network.expert_parallel_chips,
        ),
        C(
            "distinct_chips_per_token",
            "float",
            "chips",
            "derived",
            "Chips a token's experts live on",
            network.distinct_chips_per_token,
        ),
        C(
            "time_ratio_one_layer_ratio",
            "float",
            "",
            "bound",
            "Scale-up over scale-out time at one MoE layer per stage (>= 1: scale-out is not the bottleneck)",
            network.scale_up_over_scale_out_time_ratio,
        ),
        C(
            "time_ratio_one_layer_lecture_k_ratio",
            "float",
            "",
            "bound",
            "The same with the expert count k instead of k_GPU (the lecture's first form)",
            network.scale_up_over_scale_out_time_ratio,
        ),
        C("moe_layers", "float", "layers", "derived", "Layers with routed experts", model.moe_layers),
        C(
            "min_layers_per_stage",
            "float",
            "layers",
            "bound",
            "Fewest MoE layers per stage with t_up >= t_out",
            network.min_layers_per_stage,
        ),
        C(
            "max_pipeline_stages",
            "float",
            "stages",
            "bound",
            "Most stages the scale-out bandwidth allows",
            network.max_pipeline_stages,
        ),
    ),
)
TABLES = (NETWORK_RATIOS,)


def ratios(models: pl.DataFrame, hardware: pl.DataFrame) -> pl.DataFrame:
    moe = models.filter(pl.col("num_routed_experts").is_not_null() & pl.col("experts_per_token").is_not_null())
    hw = hardware.filter(
        pl.col("scale_up_bandwidth_bytes_per_s").is_not_null()
        & pl.col("scale_out_bandwidth_bytes_per_s").is_not_null()
        & pl.col("scale_up_domain_chips").is_not_null()
    )
    frame = (
        moe.select("model", "num_routed_experts", "experts_per_token", "num_layers", "num_dense_layers")
        .join(
            hw.select(
                "chip", "scale_up_domain_chips", "scale_up_bandwidth_bytes_per_s", "scale_out_bandwidth_bytes_per_s"
            ),
            how="cross",
        )
        .sort("model", "chip")
    )

    def a(name):
        return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()

    def f(name, values):
        return pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)

    ep = network.expert_parallel_chips(a("num_routed_experts"), a("scale_up_domain_chips"))
    k = a("experts_per_token")
    k_gpu = network.distinct_chips_per_token(ep, k)
    up, out = a("scale_up_bandwidth_bytes_per_s"), a("scale_out_bandwidth_bytes_per_s")
    moe_layers = model.moe_layers(a("num_layers"), a("num_dense_layers"))
    min_layers = network.min_layers_per_stage(k_gpu, up, out)
    return frame.with_columns(
        f("expert_parallel_chips", ep),
        f("distinct_chips_per_token", k_gpu),
        f("time_ratio_one_layer_ratio", network.scale_up_over_scale_out_time_ratio(k_gpu, 1.0, up, out)),
        f("time_ratio_one_layer_lecture_k_ratio", network.scale_up_over_scale_out_time_ratio(k, 1.0, up, out)),
        f("moe_layers", moe_layers),
        f("min_layers_per_stage", min_layers),
        f("max_pipeline_stages", network.max_pipeline_stages(moe_layers, min_layers)),
    )


def run(ctx) -> None:
    ctx.write(NETWORK_RATIOS, ratios(ctx.query("select * from models"), ctx.query("select * from hardware")))
