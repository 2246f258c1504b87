"""Scale-up vs scale-out traffic of a pipelined MoE replica (lecture c.2, c.5).

Inside a pipeline stage each token goes to its activated experts and back on every MoE
layer (scale-up network); at a stage boundary it sends one activation vector to the next
rack (scale-out network). Both carry d_model-sized activations, so bytes cancel and only
counts and bandwidths remain. Bandwidths are per chip, one direction, from ``hardware``.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula


@formula("k_GPU = E_p·(1 − (1 − 1/E_p)^k)", "lecture c.5")
def distinct_chips_per_token(expert_parallel_chips, experts_per_token):
    """Expected number of distinct chips a token's k experts live on [chips] (lecture c.5 correction).

    k_GPU = E_p · (1 − (1 − 1/E_p)^k), experts spread evenly over E_p chips, chosen independently
    (the scaling book's ragged all-to-all count). k_GPU ≤ min(k, E_p).
    """
    ep = np.asarray(expert_parallel_chips, dtype=float)
    return ep * (1.0 - (1.0 - 1.0 / ep) ** np.asarray(experts_per_token, dtype=float))


@formula("t_up/t_out = 2·k_GPU·L_stage·W_out / W_up", "lecture c.5")
def scale_up_over_scale_out_time_ratio(
    chips_per_token, layers_per_stage, scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s
):
    """Scale-up time over scale-out time per token for one pipeline stage (lecture c.5) [ratio].

    t_up / t_out = 2 · k_GPU · L_stage · W_out / W_up   (≥ 1: the slow network is not the bottleneck)
    The 2 is dispatch and combine; the lecture's "factor of 8" is W_up/W_out, here per chip.
    """
    return (
        2.0
        * np.multiply(chips_per_token, layers_per_stage)
        * np.divide(scale_out_bandwidth_bytes_per_s, scale_up_bandwidth_bytes_per_s)
    )


@formula("L_stage = ⌈(W_up/W_out) / (2·k_GPU)⌉", "lecture c.5")
def min_layers_per_stage(chips_per_token, scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s):
    """Fewest MoE layers per stage for which scale-out is not the bottleneck [layers].

    L_stage ≥ (W_up / W_out) / (2 · k_GPU), rounded up to a whole layer.
    """
    return np.ceil(
        np.divide(scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s)
        / (2.0 * np.asarray(chips_per_token, dtype=float))
    )


@formula("E_p = min(2^⌊log₂ S⌋, E)", "lecture c.1")
def expert_parallel_chips(num_routed_experts, scale_up_domain_chips):
    """Chips used for expert parallelism inside one domain: the largest power of two ≤ S, at most E.

    Lecture c.1: 256 DeepSeek experts on a 72-GPU NVL72 rack use 64 GPUs ("not a power of two").
    """
    domain = np.asarray(scale_up_domain_chips, dtype=float)
    return np.minimum(2.0 ** np.floor(np.log2(domain)), np.asarray(num_routed_experts, dtype=float))


@formula("W_up / W_out", "lecture c.2")
def scale_up_over_out_bandwidth_ratio(scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s):
    """Scale-up over scale-out bandwidth per chip, one direction [ratio] (the lecture's round 8)."""
    return np.divide(scale_up_bandwidth_bytes_per_s, scale_out_bandwidth_bytes_per_s)


@formula("stages = ⌊MoE layers / L_stage⌋", "lecture c.5")
def max_pipeline_stages(moe_layers, min_layers_per_stage_):
    """Most pipeline stages whose scale-out hand-off stays under the scale-up traffic [stages]."""
    return np.floor(np.divide(moe_layers, min_layers_per_stage_))
