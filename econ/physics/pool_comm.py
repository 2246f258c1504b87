"""A serving pool's communication per step: tensor-parallel all-reduces, expert dispatch/combine, pipeline hand-offs.

Per chip and step, for a replica of ``TP·DP·PP`` chips whose routed experts spread over each stage's ``TP·DP``
chips as ``ETP`` tensor-parallel slices × ``EP = TP·DP/ETP`` expert-parallel ranks (AIConfigurator's
``moe_tp_size`` × ``moe_ep_size``; ETP = 1 unless a layout says otherwise):

- a TP all-reduce of the rank's activations after attention and after each TP-split FFN (a dense layer, or a
  MoE layer with shared experts or with its experts split ETP ways);
- per MoE layer, when EP > 1, dispatch + combine of each token to the ranks of its experts (the share of them
  outside the scale-up domain over the scale-out link);
- a pipeline hand-off per stage boundary.

Two readings of the same traffic: the times under the scaling book's ``max(α·hops, bytes/W)`` per collective
(the idealised bound's rule, with the settings' link fraction and latencies), and the α–β pieces a calibrated
step adds up — bandwidth time at full link and the count of latency-bearing hops (a ring all-reduce over N
ranks: 2·(N − 1); dispatch + combine: 2; a hand-off: 1).
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics import collectives


def _f(x):
    return np.asarray(x, dtype=float)


def _nz(x):
    x = _f(x)
    return np.where(np.isnan(x), 0.0, x)


def expert_parallel(layout: dict):
    """Expert-parallel ranks of a stage: TP·DP chips over ETP tensor-parallel slices of each expert."""
    stage = _f(layout["tensor_parallel"]) * _f(layout["attention_data_parallel"])
    etp = _f(layout.get("expert_tensor_parallel", 1.0))
    return np.maximum(stage / np.maximum(etp, 1.0), 1.0)


def _all_reduces(model: dict, layout: dict):
    """TP all-reduces per step of one micro-batch through the stage's layers (0 without TP); the experts' own
    reduction over their ETP slices is :func:`communication_times_s`' ``etp`` term."""
    tp = _f(layout["tensor_parallel"])
    moe_split = _nz(model["num_shared_experts"]) > 0
    ffn = _nz(model["num_dense_layers"]) + _nz(model["moe_layers"]) * moe_split
    dense_model = _nz(model["moe_layers"]) == 0
    count = _f(model["num_layers"]) + np.where(dense_model, _f(model["num_layers"]), ffn)
    return np.where(tp > 1, count, 0.0)


@formula(
    "t_comm = n_AR·T_AR(n_r·q·d·b_act) + moe_layers·T_EP + PP·T_PP;  hops = n_AR·2(TP − 1) + 2·moe_layers + PP − 1",
    "collectives: TP all-reduce, EP dispatch/combine, pipeline hand-off (α–β)",
)
def communication_times_s(model: dict, chip: dict, layout: dict, tokens_per_rank, settings: dict) -> dict:
    """Per chip and step: the TP, EP and PP communication times under the max rule [s], and the α–β pieces
    (``comm_peak_time_s``: bandwidth time at full link, no latency; ``collective_hops`` and
    ``collective_hops_scale_out``: latency-bearing hops inside and beyond the scale-up domain).

    ``tokens_per_rank`` are one attention rank's tokens per micro-batch.
    """
    tp, dp, pp = _f(layout["tensor_parallel"]), _f(layout["attention_data_parallel"]), _f(layout["pipeline_parallel"])
    stage = tp * dp
    ep_ranks = expert_parallel(layout)
    domain = _f(chip["scale_up_domain_chips"])
    up_full = _f(chip["scale_up_bandwidth_bytes_per_s"])
    out_full = _f(chip["scale_out_bandwidth_bytes_per_s"])
    frac = settings["link_frac"]
    a_up, a_out = settings["scale_up_latency_s"], settings["scale_out_latency_s"]
    d, b_act = _f(model["hidden_size"]), settings["activation_bytes"]
    message = _f(tokens_per_rank) * d * b_act
    tp_inside = tp <= domain
    all_reduces = _all_reduces(model, layout)

    def tp_time(link, latency):
        return all_reduces * collectives.all_reduce_time_s(message, tp, link, latency)

    tp_link = np.where(tp_inside, up_full, out_full)
    tp_s = tp_time(tp_link * frac, np.where(tp_inside, a_up, a_out))
    tp_peak = tp_time(tp_link, 0.0)
    tp_hops = all_reduces * 2.0 * np.maximum(tp - 1.0, 0.0)
    # experts split ETP ways: per MoE layer an all-reduce of the EP group's tokens over its ETP slices
    etp = np.maximum(_f(layout.get("expert_tensor_parallel", 1.0)), 1.0)
    moe_layers_all = np.where(etp > 1, _nz(model["moe_layers"]), 0.0)
    etp_message = _f(tokens_per_rank) * dp / ep_ranks * d * b_act
    etp_inside = etp <= domain
    etp_link = np.where(etp_inside, up_full, out_full)

    def etp_time(link, latency):
        return moe_layers_all * collectives.all_reduce_time_s(etp_message, etp, link, latency)

    tp_s = tp_s + etp_time(etp_link * frac, np.where(etp_inside, a_up, a_out))
    tp_peak = tp_peak + etp_time(etp_link, 0.0)
    etp_hops = moe_layers_all * 2.0 * (etp - 1.0)
    tp_hops = tp_hops + etp_hops

    tokens_per_chip = _f(tokens_per_rank) / tp
    remote = collectives.remote_chips_per_token(ep_ranks, model["experts_per_token"])
    with np.errstate(invalid="ignore", divide="ignore"):
        outside = np.where(stage > domain, (stage - domain) / np.maximum(stage - 1.0, 1.0), 0.0)
    dense_model = _nz(model["moe_layers"]) == 0
    moe_layers = _nz(model["moe_layers"])

    def ep(share, link, latency):
        return collectives.dispatch_combine_time_s(
            tokens_per_chip,
            remote * share,
            d,
            link,
            dispatch_bytes_per_value=settings["dispatch_bytes"],
            combine_bytes_per_value=b_act,
            latency_s=latency,
        )

    def ep_time(up, out, l_up, l_out):
        per_layer = np.maximum(ep(1.0 - outside, up, l_up), np.where(outside > 0, ep(outside, out, l_out), 0.0))
        return np.where(dense_model, 0.0, moe_layers * per_layer)

    ep_s = ep_time(up_full * frac, out_full * frac, a_up, a_out)
    ep_peak = ep_time(up_full, out_full, 0.0, 0.0)
    ep_hops = np.where(dense_model | (ep_ranks <= 1), 0.0, 2.0 * moe_layers)

    replica = stage * pp
    pp_inside = replica <= domain
    pp_link = np.where(pp_inside, up_full, out_full)

    def pp_time(link, latency):
        hop = collectives.pipeline_handoff_time_s(tokens_per_chip, d, link, activation_bytes=b_act, latency_s=latency)
        return np.where(pp > 1, pp * hop, 0.0)

    pp_s = pp_time(pp_link * frac, np.where(pp_inside, a_up, a_out))
    pp_peak = pp_time(pp_link, 0.0)
    pp_hops = np.where(pp > 1, pp - 1.0, 0.0)
    hops_out = (
        np.where(tp_inside, 0.0, tp_hops) + np.where(outside > 0, ep_hops, 0.0) + np.where(pp_inside, 0.0, pp_hops)
    )
    return {
        "tp_comm_time_s": tp_s,
        "ep_comm_time_s": ep_s,
        "pp_comm_time_s": pp_s,
        "comm_peak_time_s": tp_peak + ep_peak + pp_peak,
        "collective_hops": tp_hops + ep_hops + pp_hops - hops_out,
        "collective_hops_scale_out": hops_out,
    }
