"""The smaller result tables of the serving analysis (sparsity, network, attention, memory tiers, fast mode).

Each function takes input frames and returns ``(frame, description, {column: meaning [unit]})``
for ``ctx.write``; the arithmetic is in :mod:`econ.physics`.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.errors import EconError
from econ.physics import attention, memory_tiers, network
from econ.physics.hardware import PEAK_COLUMN, drain_time_s
from econ.units import MEGA

LECTURE_R = 300.0
"""The lecture's round hardware ratio ("on most GPUs … around 300", b.1)."""

LECTURE_SPARSITY = {"deepseek-v3": (256, 32)}
"""What the lecture said per model (b.2): "I activate 32 out of 256 experts, so this would be 8 for DeepSeek"."""

HOLD_TIMES_S = np.unique(np.concatenate([10.0 ** np.arange(-3.0, 6.5, 0.5), [300.0, 3600.0]]))
"""Hold times of ``memory_tier_costs``: 1 ms … ~1 month on a half-decade grid, plus the 5-minute and 1-hour cache TTLs.
"""


def _np(frame: pl.DataFrame, name: str) -> np.ndarray:
    return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


def _col(name, values) -> pl.Series:
    return pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)


def sparsity_table(models: pl.DataFrame):
    """Sparsity by parameters, by experts, and the lecture's figure, with B*₀ at R = 300 for each."""
    lecture = {k: e / a for k, (e, a) in LECTURE_SPARSITY.items()}
    said = np.array([lecture.get(m.lower(), np.nan) for m in models["model"]])
    params_ratio = _np(models, "params_total") / _np(models, "params_active")
    expert_ratio = _np(models, "num_routed_experts") / _np(models, "experts_per_token")
    frame = models.select("model").with_columns(
        _col("sparsity_param_ratio", params_ratio),
        _col("sparsity_expert_ratio", expert_ratio),
        _col("lecture_sparsity_ratio", said),
        _col("balance_batch_param_r300_seqs", LECTURE_R * params_ratio),
        _col("balance_batch_expert_r300_seqs", LECTURE_R * expert_ratio),
        _col("balance_batch_lecture_r300_seqs", LECTURE_R * said),
    )
    columns = {
        "sparsity_param_ratio": "N_tot/N_act: the lecture's derivation is in parameters, so B*0 uses this",
        "sparsity_expert_ratio": "Routed experts / experts per token E/k (null for dense models)",
        "lecture_sparsity_ratio": "The figure said in the lecture (DeepSeek: '32 out of 256' -> 8; the config routes "
        "8 of 256)",
        "balance_batch_param_r300_seqs": "300 x N_tot/N_act [sequences]",
        "balance_batch_expert_r300_seqs": "300 x E/k [sequences]",
        "balance_batch_lecture_r300_seqs": "300 x the lecture's sparsity (2,400 for DeepSeek) [sequences]",
    }
    return (
        frame,
        "Sparsity by parameters vs by experts vs the lecture's figure, and the balance batch each gives at "
        "R = 300 (lecture b.2: DeepSeek-V3 is 18 by parameters, 32 by experts, 8 as said). "
        "Grain: one row per model.",
        columns,
    )


def network_table(models: pl.DataFrame, hardware: pl.DataFrame):
    """Scale-up vs scale-out time per pipeline stage for every MoE model × chip with both bandwidths."""
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
    ep = network.expert_parallel_chips(_np(frame, "num_routed_experts"), _np(frame, "scale_up_domain_chips"))
    k = _np(frame, "experts_per_token")
    k_gpu = network.distinct_chips_per_token(ep, k)
    up, out = _np(frame, "scale_up_bandwidth_bytes_per_s"), _np(frame, "scale_out_bandwidth_bytes_per_s")
    moe_layers = _np(frame, "num_layers") - np.nan_to_num(_np(frame, "num_dense_layers"))
    min_layers = network.min_layers_per_stage(k_gpu, up, out)
    frame = frame.with_columns(
        _col("expert_parallel_chips", ep),
        _col("distinct_chips_per_token", k_gpu),
        _col("scale_up_over_out_bandwidth_ratio", up / out),
        _col("time_ratio_one_layer_ratio", network.scale_up_over_scale_out_time_ratio(k_gpu, 1.0, up, out)),
        _col("time_ratio_one_layer_lecture_k_ratio", network.scale_up_over_scale_out_time_ratio(k, 1.0, up, out)),
        _col("moe_layers", moe_layers),
        _col("min_layers_per_stage", min_layers),
        _col("max_pipeline_stages", np.floor(moe_layers / min_layers)),
    )
    columns = {
        "expert_parallel_chips": "E_p: largest power of two <= scale-up domain, at most the expert count [chips]",
        "distinct_chips_per_token": "k_GPU = E_p*(1-(1-1/E_p)^k): chips a token's experts live on [chips]",
        "scale_up_over_out_bandwidth_ratio": "W_up/W_out per chip (the lecture's round 8)",
        "time_ratio_one_layer_ratio": "t_up/t_out = 2*k_GPU*L_stage*W_out/W_up at one MoE layer per stage (>= 1: "
        "scale-out not the bottleneck)",
        "time_ratio_one_layer_lecture_k_ratio": "The same with the expert count k instead of k_GPU (the lecture's "
        "first form)",
        "moe_layers": "MoE layers = layers - dense layers [layers]",
        "min_layers_per_stage": "Fewest MoE layers per stage with t_up >= t_out [layers]",
        "max_pipeline_stages": "MoE layers / min layers per stage: most stages scale-out bandwidth allows [stages]",
    }
    return (
        frame,
        "Scale-up vs scale-out time at a pipeline stage boundary (lecture c.5) from stored per-chip bandwidths. "
        "Grain: one row per MoE model x chip with both bandwidths.",
        columns,
    )


def _arch(models: pl.DataFrame) -> dict:
    names = (
        "attention",
        "num_layers",
        "num_attention_heads",
        "head_dim",
        "v_head_dim",
        "kv_lora_rank",
        "qk_rope_head_dim",
        "num_full_attention_layers",
        "num_sliding_window_layers",
        "num_linear_attention_layers",
        "sliding_head_dim",
    )
    return {n: (models[n].to_numpy() if n == "attention" else _np(models, n)) for n in names}


def attention_table(models: pl.DataFrame, hardware: pl.DataFrame, chip: str | None):
    """Attention vs weight FLOPs per token by architecture and the crossover context (lecture h.1–h.2)."""
    cols = _arch(models)
    full, window = attention.attention_slopes(cols)
    full_abs, window_abs = attention.attention_slopes(cols, mla_form="absorbed")
    n_act, w = _np(models, "params_active"), _np(models, "sliding_window_tokens")
    per = {
        f"attention_over_weight_flop_at_{label}_ratio": attention.attention_flop_per_token(ctx, full, window, w)
        / (2 * n_act)
        for label, ctx in (("8k", 8_192), ("128k", 131_072), ("1m", 1_048_576))
    }
    chip_row = hardware.filter(pl.col("chip") == chip) if chip else hardware.clear()
    if chip_row.height:
        kv_ratio = attention.kv_over_attention_time_ratio(
            _np(models, "kv_bytes_per_token"),
            full,
            float(chip_row["peak_bf16_flop_per_s"][0]),
            float(chip_row["hbm_bandwidth_bytes_per_s"][0]),
        )
    else:
        kv_ratio = np.full(models.height, np.nan)
    frame = models.select("model", "attention").with_columns(
        _col("full_attention_flop_per_context_token", full),
        _col("window_attention_flop_per_context_token", window),
        _col("sliding_window_tokens", w),
        _col("weight_flop_per_token", 2 * n_act),
        _col("crossover_context_tokens", attention.attention_crossover_tokens(n_act, full, window, w)),
        _col(
            "crossover_context_absorbed_mla_tokens",
            attention.attention_crossover_tokens(n_act, full_abs, window_abs, w),
        ),
        *(_col(k, v) for k, v in per.items()),
        pl.lit(chip).alias("chip"),
        _col("kv_over_attention_time_ratio", kv_ratio),
    )
    columns = {
        "full_attention_flop_per_context_token": "2*n_q*(d_k+d_v)*full layers: FLOPs per new token per cached token "
        "[FLOP/token]",
        "window_attention_flop_per_context_token": "The same for sliding-window layers, counted up to the window "
        "[FLOP/token]",
        "weight_flop_per_token": "2*N_act [FLOP/token]",
        "crossover_context_tokens": "Context where attention FLOPs per decode token equal weight FLOPs (MLA expanded "
        "form; inf if never) [tokens]",
        "crossover_context_absorbed_mla_tokens": "The same with MLA attention in the latent (decode kernels); = "
        "crossover for non-MLA [tokens]",
        "attention_over_weight_flop_at_8k_ratio": "Attention / weight FLOPs per decode token at 8,192 context",
        "attention_over_weight_flop_at_128k_ratio": "... at 131,072 context",
        "attention_over_weight_flop_at_1m_ratio": "... at 1,048,576 context",
        "chip": "Chip of kv_over_attention_time_ratio (scenario serving_chip)",
        "kv_over_attention_time_ratio": "(b_kv/W)/(attention slope/F) on that chip, F its bf16 peak, KV at the "
        "scenario's "
        "kv_cache_format: KV read vs attention compute per context token (lecture h.2)",
    }
    return (
        frame,
        "Attention FLOPs vs weight FLOPs per decode token by architecture (full, sliding-window up to the "
        "window, MLA, hybrid; linear layers not counted) and the context where they cross (lecture h.1). "
        "Grain: one row per model.",
        columns,
    )


def memory_tier_table(
    models: pl.DataFrame,
    hardware: pl.DataFrame,
    tiers: pl.DataFrame,
    *,
    chip: str,
    usd_per_chip_hour: float,
    mfu: float,
    number_format: str,
    kv_format: str = "bf16",
):
    """Retrieve and hold cost per token for recompute and every memory-tier device, over hold times (lecture
    g.2–g.4)."""
    chip_row = hardware.filter(pl.col("chip") == chip)
    if not chip_row.height:
        raise EconError(f"scenario serving_chip {chip!r} is not in hardware", "use a chip id from data/hardware.csv")
    peak = chip_row[PEAK_COLUMN[number_format]][0]
    if peak is None:
        raise EconError(
            f"scenario serving_chip {chip} has no {number_format} peak (the scenario's weight_format)",
            "set weight_format to a format the chip has a peak for in data/scenarios.csv",
        )
    models = models.filter(pl.col("kv_bytes_per_token").is_not_null())
    kv = _np(models, "kv_bytes_per_token")[:, None]
    tiers = tiers.sort("tier", "device")
    mechanisms = ["recompute", *tiers["tier"].to_list()]
    devices = [f"{chip} {number_format} forward pass", *tiers["device"].to_list()]
    cap, bw, usd = (_np(tiers, c)[None, :] for c in ("capacity_bytes", "bandwidth_bytes_per_s", "usd_per_hour"))
    remat = memory_tiers.recompute_usd_per_token(_np(models, "params_active"), float(peak), usd_per_chip_hour, mfu=mfu)[
        :, None
    ]
    stored = memory_tiers.tier_retrieve_usd_per_token(tiers["tier"].to_numpy()[None, :], kv, bw, usd)
    retrieve = np.concatenate([remat, stored], axis=1)
    hold = np.concatenate([np.zeros_like(remat), memory_tiers.hold_usd_per_token_s(kv, cap, usd)], axis=1)
    drain = np.concatenate([[np.nan], drain_time_s(_np(tiers, "capacity_bytes"), _np(tiers, "bandwidth_bytes_per_s"))])
    t = HOLD_TIMES_S[None, None, :]
    cost = memory_tiers.tier_cost_usd_per_token(retrieve[:, :, None], hold[:, :, None], t)
    cheapest = cost == cost.min(axis=1, keepdims=True)
    n_m, n_k, n_t = cost.shape
    frame = pl.DataFrame(
        {
            "model": np.repeat(models["model"].to_numpy(), n_k * n_t),
            "mechanism": np.tile(np.repeat(mechanisms, n_t), n_m),
            "device": np.tile(np.repeat(devices, n_t), n_m),
            "hold_time_s": np.tile(HOLD_TIMES_S, n_m * n_k),
            "retrieve_usd_per_mtok": np.repeat(retrieve.reshape(-1), n_t) * MEGA,
            "hold_usd_per_mtok_s": np.repeat(hold.reshape(-1), n_t) * MEGA,
            "cost_usd_per_mtok": cost.reshape(-1) * MEGA,
            "cheapest": cheapest.reshape(-1),
            "drain_time_s": np.tile(np.repeat(drain, n_t), n_m),
        }
    ).with_columns(pl.col("drain_time_s").fill_nan(None))
    columns = {
        "mechanism": "recompute, or the memory tier (hbm, ddr, flash, disk) of memory_tiers",
        "device": "The device the figures describe (recompute: the scenario's serving chip and format)",
        "hold_time_s": "How long the token's KV is kept before it is read back [s]",
        "retrieve_usd_per_mtok": "One-off cost to get the KV back: forward pass 2*N_act/F*p (recompute), b_kv/W*p "
        "(tiers), 0 (HBM) [USD/MTok]",
        "hold_usd_per_mtok_s": "Cost per second of holding: b_kv/C*p (0 for recompute) [USD/MTok/s]",
        "cost_usd_per_mtok": "retrieve + hold * hold time [USD/MTok]",
        "cheapest": "True for the cheapest mechanism at this model and hold time",
        "drain_time_s": "Device capacity / bandwidth: the hold time where its hold and retrieve costs are equal "
        "(lecture g.4) [s]",
    }
    return (
        frame,
        f"Keeping a token's KV cache for a hold time: retrieve + hold cost per mechanism, KV at {kv_format}, recompute "
        f"on {chip} {number_format} at ${usd_per_chip_hour:g}/chip-hour (lecture g.2-g.4). "
        f"Grain: one row per model x mechanism device x hold time.",
        columns,
    )


def fast_mode_table(prices: pl.DataFrame):
    """Price multiple × speed multiple = batch multiple for every current fast variant (lecture a.5, same replica)."""
    key = ["source", "provider", "model", "tier_min_prompt_tokens"]
    fast = prices.filter((pl.col("variant") == "fast") & pl.col("speed_ratio").is_not_null())
    standard = prices.filter(pl.col("variant") == "standard").select(
        *key,
        pl.col("input_usd_per_mtok").alias("standard_input_usd_per_mtok"),
        pl.col("output_usd_per_mtok").alias("standard_output_usd_per_mtok"),
    )
    frame = fast.select(*key, "input_usd_per_mtok", "output_usd_per_mtok", "speed_ratio").join(
        standard, on=key, how="inner"
    )
    frame = (
        frame.with_columns(
            (pl.col("input_usd_per_mtok") / pl.col("standard_input_usd_per_mtok")).alias("input_price_ratio"),
            (pl.col("output_usd_per_mtok") / pl.col("standard_output_usd_per_mtok")).alias("output_price_ratio"),
        )
        .with_columns((pl.col("output_price_ratio") * pl.col("speed_ratio")).alias("batch_ratio"))
        .sort(key)
    )
    columns = {
        "speed_ratio": "Published output speed of the fast variant over standard (s)",
        "input_price_ratio": "Fast / standard input price",
        "output_price_ratio": "Fast / standard output price (m)",
        "batch_ratio": "B0/B1 = m*s on the same replica: how much smaller the fast batch is (6 x 2.5 = 15)",
    }
    return (
        frame,
        "Fast mode identity price multiple x speed multiple = batch multiple (lecture a.5), for every current "
        "fast variant with a published speed ratio and a standard price. Grain: one row per source x provider x "
        "model x context tier.",
        columns,
    )
