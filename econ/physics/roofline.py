"""The serving roofline (lecture sections a, b, f.3): step times, bounds, balance batch, cost per token.

Pure numpy; every argument broadcasts, so a scalar and an array give the same numbers.
Conventions (the lecture's §0.3, docs/formulas.md): FLOPs count 2 per multiply-add; ``G`` chips
serve one replica; ``F`` is the dense peak of the format the math runs in, ``W`` the HBM
bandwidth of one chip, ``b_w`` bytes per stored weight, ``b_kv`` KV bytes per context token.

Roofline results are bounds. A pass moves ``N_tot·b_w + B·L·b_kv`` bytes and does
``2·B·ℓ·N_act`` FLOPs; with perfect overlap it takes the larger of the two times
(``max`` — the lecture's t_step and the scaling book's T_lower: the **lower bound**, which is
what every ``*_step_time_s`` here reports), with no overlap their sum (T_upper, the **upper
bound**). The scaling book's own step-time form ``KV/W + max(compute, weights/W)`` lies
between the two.

Pipelining (lecture d.1–d.2, d.6): a replica of ``G`` chips in ``P`` pipeline stages runs
``P`` micro-batches of ``B/P`` sequences, and each stage reads its weights once per
micro-batch, so the weight bytes of one step are ``P·N_tot·b_w`` over ``G`` chips — the same
as ``N_tot·b_w`` over the ``G/P`` chips of one stage (W_eff = S·W): pipelining is
latency-neutral and buys only capacity. ``pipeline_stages=1`` is the issue's formula.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.units import SECONDS_PER_HOUR

# ---------------------------------------------------------------------------- hardware ratio, balance batch


@formula("R = (F/2)·b_w / W", "lecture b.1")
def critical_batch_ratio(peak_flop_per_s, hbm_bandwidth_bytes_per_s, weight_bytes_per_param):
    """R: the hardware's "≈300" (lecture b.1), dimensionless.

    R = (F / 2) · b_w / W  — multiplies per second times bytes per weight over bytes per second.
    With bf16 weights (b_w = 2) this is F / W, the scaling book's critical intensity (v5e: 240);
    int8 weights with bf16 math halve it (120).
    """
    return np.multiply(np.divide(peak_flop_per_s, 2.0), weight_bytes_per_param) / hbm_bandwidth_bytes_per_s


@formula("B*₀ = R·N_tot / N_act", "lecture b.1")
def balance_batch(critical_ratio, params_total, params_active):
    """B*₀ [sequences]: the decode batch where weight-fetch time equals compute time, KV ignored.

    B*₀ = R · N_tot / N_act  (lecture b.1: "≈ 300 × sparsity"). Pass the expert ratio E/k as
    ``params_total / params_active`` to get the expert-count version (b.2).
    """
    return np.multiply(critical_ratio, np.divide(params_total, params_active))


@formula("L* = b_w·N_act / (R·b_kv)", "lecture b.3, f.1")
def critical_context_tokens(critical_ratio, weight_bytes_per_param, params_active, kv_bytes_per_token):
    """L* [tokens]: the context above which decode is memory-bound at every batch (lecture b.3, f.1).

    L* = b_w · N_act / (R · b_kv)   (= 2·N_act·W/(F·b_kv)); inf for a model without a growing KV cache.
    """
    with np.errstate(divide="ignore"):
        return np.multiply(weight_bytes_per_param, params_active) / np.multiply(critical_ratio, kv_bytes_per_token)


@formula("B*(L) = B*₀ / (1 − L/L*)", "lecture b.3")
def balance_batch_at_context(balance_batch_0, context_tokens, critical_context):
    """B*(L) [sequences]: the balance batch with the KV term (lecture b.3); inf for L ≥ L*.

    B*(L) = B*₀ / (1 − L / L*)
    """
    headroom = 1.0 - np.divide(context_tokens, critical_context)
    with np.errstate(divide="ignore"):
        return np.where(headroom > 0, np.divide(balance_batch_0, np.where(headroom > 0, headroom, 1.0)), np.inf)


# ---------------------------------------------------------------------------- step times


@formula("t_compute = 2·B·ℓ·N_act / (G·F·mfu)", "lecture a.2, f.3")
def compute_time_s(batch, tokens_per_pass, params_active, chips, peak_flop_per_s, *, mfu=1.0):
    """Compute time of one forward pass [s] (lecture a.2, f.3; attention FLOPs ignored, see attention.py).

    t_compute = 2 · B · ℓ · N_act / (G · F · mfu)   — ℓ = 1 for decode, the prompt length for prefill.
    """
    return (
        2.0
        * np.multiply(np.multiply(batch, tokens_per_pass), params_active)
        / (np.multiply(np.multiply(chips, peak_flop_per_s), mfu))
    )


@formula("t_mem = (P·N_tot·b_w + B·(L·b_kv + kv_window(L))) / (G·W·mbu)", "lecture a.2, d.6")
def memory_time_s(
    batch,
    context_tokens,
    kv_bytes_per_token,
    params_total,
    weight_bytes_per_param,
    chips,
    hbm_bandwidth_bytes_per_s,
    *,
    mbu=1.0,
    pipeline_stages=1,
    kv_extra_bytes_per_sequence=0.0,
):
    """HBM time of one forward pass [s] (lecture a.2; d.6 for pipelining).

    t_mem = (P · N_tot · b_w + B · (L · b_kv + kv_extra)) / (G · W · mbu)
    ``kv_extra_bytes_per_sequence`` is KV not proportional to context (sliding-window layers,
    :func:`econ.physics.model.kv_window_bytes`); P = ``pipeline_stages`` (1: the lecture's formula).
    """
    weight_bytes = np.multiply(np.multiply(pipeline_stages, params_total), weight_bytes_per_param)
    kv_bytes = np.multiply(batch, np.multiply(context_tokens, kv_bytes_per_token) + kv_extra_bytes_per_sequence)
    return (weight_bytes + kv_bytes) / np.multiply(np.multiply(chips, hbm_bandwidth_bytes_per_s), mbu)


@formula("t_step = t_KV + max(t_compute, t_weights)", "scaling book, inference.md")
def book_step_time_s(compute_s, weight_memory_s, kv_memory_s):
    """The scaling book's decode step form (inference.md): t = KV/W + max(2·B·N/F, weights/W) [s].

    It overlaps the weight fetch with compute but not the KV fetch, so it lies between
    the lower bound max(t_c, t_m) and the upper bound t_c + t_m.
    """
    return np.add(kv_memory_s, np.maximum(compute_s, weight_memory_s))


@formula("t_floor = P·N_tot·b_w / (G·W·mbu)", "lecture a.3, d.6")
def weight_read_time_s(
    params_total, weight_bytes_per_param, chips, hbm_bandwidth_bytes_per_s, *, mbu=1.0, pipeline_stages=1
):
    """Latency floor [s]: no batch makes a step faster than reading the weights (lecture a.3).

    t_floor = P · N_tot · b_w / (G · W · mbu)  = N_tot·b_w / (W_eff·mbu) with W_eff = (G/P)·W.
    """
    return memory_time_s(
        0.0,
        0.0,
        0.0,
        params_total,
        weight_bytes_per_param,
        chips,
        hbm_bandwidth_bytes_per_s,
        mbu=mbu,
        pipeline_stages=pipeline_stages,
    )


# ---------------------------------------------------------------------------- throughput and cost


@formula("tokens/s = tokens per step / t_step", "lecture a.7")
def tokens_per_s(tokens_per_step, step_time_s):
    """Throughput of one replica [tokens/s] = tokens per step / step time (lecture a.7: B × ~64)."""
    return np.divide(tokens_per_step, step_time_s)


@formula("c = t_step·G·p / tokens per step", "lecture a.4")
def usd_per_token(step_time_s, tokens_per_step, chips, usd_per_chip_hour):
    """Cost per token [$/token] = t_step · G · p / tokens per step (lecture a.4; p in $/chip-hour)."""
    return (
        np.multiply(np.multiply(step_time_s, chips), np.divide(usd_per_chip_hour, SECONDS_PER_HOUR)) / tokens_per_step
    )


@formula("c_min = p·max(2·N_act/(F·mfu), (L·b_kv + kv_window(L))/(W·mbu))", "lecture a.4")
def decode_cost_floor_usd_per_token(
    context_tokens,
    kv_bytes_per_token,
    params_active,
    peak_flop_per_s,
    hbm_bandwidth_bytes_per_s,
    usd_per_chip_hour,
    *,
    mfu=1.0,
    mbu=1.0,
    kv_extra_bytes_per_sequence=0.0,
):
    """Cost floor of decode as B → ∞ [$/token] (lecture a.4, "Slow Mode"); independent of G.

    floor = p · max( 2·N_act / (F·mfu) ,  (L·b_kv + kv_extra) / (W·mbu) )
    """
    compute = 2.0 * np.divide(params_active, np.multiply(peak_flop_per_s, mfu))
    kv = (np.multiply(context_tokens, kv_bytes_per_token) + kv_extra_bytes_per_sequence) / np.multiply(
        hbm_bandwidth_bytes_per_s, mbu
    )
    return np.maximum(compute, kv) * np.divide(usd_per_chip_hour, SECONDS_PER_HOUR)


@formula("c_min = p·max(2·N_act/(F·mfu), b_kv/(W·mbu))", "lecture f.3")
def prefill_cost_floor_usd_per_token(
    kv_bytes_per_token,
    params_active,
    peak_flop_per_s,
    hbm_bandwidth_bytes_per_s,
    usd_per_chip_hour,
    *,
    mfu=1.0,
    mbu=1.0,
):
    """Cost floor of prefill per prompt token as the pass grows (B·ℓ → ∞) [$/token] (lecture f.3); independent of G.

    floor = p · max( 2·N_act / (F·mfu) ,  b_kv / (W·mbu) )   — the forward pass, or writing the token's KV
    """
    compute = 2.0 * np.divide(params_active, np.multiply(peak_flop_per_s, mfu))
    kv = np.divide(kv_bytes_per_token, np.multiply(hbm_bandwidth_bytes_per_s, mbu))
    return np.maximum(compute, kv) * np.divide(usd_per_chip_hour, SECONDS_PER_HOUR)
