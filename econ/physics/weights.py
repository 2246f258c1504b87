"""Where a model's parameters live, and the weight bytes a step actually reads (MoE at small batch).

Parameters split into classes a layout treats differently (routed experts are sharded over expert-parallel
ranks; the rest may be replicated per attention data-parallel rank):

- routed experts: ``moe_layers · E · P_e`` with ``P_e = 3·d·d_ff,moe`` (a gated FFN: gate, up and down
  matrices, config.json ``moe_intermediate_size``);
- shared experts: ``moe_layers · n_shared · 3·d·d_ff,shared``;
- dense FFN layers: ``dense_layers · 3·d·d_ff`` (config.json ``intermediate_size``; every layer of a dense model);
- embeddings: ``vocab · d`` per table, two unless ``tie_word_embeddings``; a step reads the output head in full
  and only the input rows of its tokens;
- attention and the rest (norms, routers, linear-attention mixers): the reported total minus the above.

The reported active count is independent of this split, so :func:`active_params` recomputed from it is a check
of the architecture columns (tests/physics/test_weights.py).

A decode step of ``t`` tokens through one MoE layer touches, with top-k routing spread evenly over E experts,
``E·(1 − (1 − k/E)^t)`` distinct experts in expectation (each expert is missed by all t tokens with probability
(1 − k/E)^t). DeepSeek-V3 at batch 1 reads ≈ 37 GB of its 671 GB in FP8; at batch 16 ≈ 277 GB.
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula


def _f(x):
    return np.asarray(x, dtype=float)


def _nz(x, default=0.0):
    x = _f(x)
    return np.where(np.isnan(x), default, x)


@formula("P_e = 3·d·d_ff", "gated FFN (SwiGLU: gate, up, down)")
def ffn_params(hidden_size, intermediate_size):
    """Parameters of one gated FFN (an expert or a dense layer's MLP) = 3 · d · d_ff."""
    return 3.0 * _f(hidden_size) * _f(intermediate_size)


@formula("N_routed = moe_layers · E · P_e", "config.json n_routed_experts, moe_intermediate_size")
def routed_expert_params(moe_layers, num_routed_experts, params_per_expert):
    """Parameters of all routed experts [params]; 0 for a dense model (blank expert count)."""
    return _nz(moe_layers) * _nz(num_routed_experts) * _nz(params_per_expert)


@formula("N_shared = moe_layers · n_shared · 3·d·d_ff,shared", "config.json n_shared_experts")
def shared_expert_params(moe_layers, num_shared_experts, hidden_size, shared_intermediate_size):
    """Parameters of the shared (always active) experts [params]; 0 without shared experts."""
    return _nz(moe_layers) * _nz(num_shared_experts) * _nz(ffn_params(hidden_size, shared_intermediate_size))


@formula("N_emb = vocab · d · (1 if tied else 2)", "config.json vocab_size, tie_word_embeddings")
def embedding_params(vocab_size, hidden_size, tie_word_embeddings):
    """Parameters of the input embedding and output head [params] (one table when they are tied)."""
    tables = np.where(np.asarray(tie_word_embeddings, dtype=bool), 1.0, 2.0)
    return _f(vocab_size) * _f(hidden_size) * tables


@formula("N_rest = N_tot − N_routed − N_shared − N_dense − N_emb", "remainder of the reported total")
def attention_and_other_params(params_total, routed, shared, dense, embedding):
    """Attention, norms, routers and linear-attention mixers: what the reported total leaves [params]."""
    return _f(params_total) - _f(routed) - _f(shared) - _f(dense) - _f(embedding)


@formula("N_act = N_rest + N_shared + N_dense + N_emb + moe_layers · k · P_e", "top-k routing")
def active_params(rest, shared, dense, embedding, moe_layers, experts_per_token, params_per_expert):
    """Parameters one token uses, from the class split [params] (compare with the reported active count)."""
    return (
        _f(rest)
        + _f(shared)
        + _f(dense)
        + _f(embedding)
        + _nz(moe_layers) * _nz(experts_per_token) * _nz(params_per_expert)
    )


@formula("D(t) = E·(1 − (1 − k/E)^t)", "uniform top-k routing")
def distinct_experts(tokens, num_routed_experts, experts_per_token):
    """Expected distinct experts that ``tokens`` top-k routed tokens touch in one MoE layer [experts].

    D(t) = E · (1 − (1 − k/E)^t): an expert is missed by one token with probability 1 − k/E, by all t
    with (1 − k/E)^t (routing independent and uniform; real routers are skewed, which touches fewer).
    D(0) = 0, D(1) = k, D(∞) = E. NaN expert counts (dense models) give 0.
    """
    e, k = _f(num_routed_experts), _f(experts_per_token)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = e * (1.0 - np.power(1.0 - k / e, _f(tokens)))
    return np.where(np.isnan(d), 0.0, d)


@formula("bytes = (N_rest + N_shared + N_dense + N_head + moe_layers·D(t)·P_e)·b_w", "config split; D(t) above")
def weight_bytes_touched(
    tokens,
    *,
    rest,
    shared,
    dense,
    head,
    moe_layers,
    num_routed_experts,
    experts_per_token,
    params_per_expert,
    weight_bytes_per_param,
):
    """Weight bytes one forward pass of ``tokens`` tokens reads over the whole model, one copy [bytes].

    Everything but the routed experts is read once; of each MoE layer's experts, the D(t) distinct ones
    the tokens route to (:func:`distinct_experts`). ``head`` is the output embedding (read in full); the
    input embedding's rows are negligible.
    """
    touched = _nz(moe_layers) * distinct_experts(tokens, num_routed_experts, experts_per_token) * _nz(params_per_expert)
    return (_f(rest) + _f(shared) + _f(dense) + _f(head) + touched) * _f(weight_bytes_per_param)


@formula("moe_layers = num_moe_layers, else layers − dense layers (0 for a dense model)", "config.json")
def moe_layer_count(num_routed_experts, num_moe_layers, num_layers, num_dense_layers):
    """MoE layers of a model [layers]: given, else all but the leading dense ones; 0 without routed experts."""
    given = _f(num_moe_layers)
    derived = _f(num_layers) - _nz(num_dense_layers)
    return np.where(np.isnan(_f(num_routed_experts)), 0.0, np.where(np.isnan(given), derived, given))


def parameter_classes(columns: dict) -> dict[str, np.ndarray]:
    """The weight classes of every model from ``models`` columns (NaN = blank) [params, per class].

    Keys: ``moe_layers``, ``params_per_expert``, ``routed_expert_params``, ``shared_expert_params``,
    ``dense_ffn_params``, ``embedding_params``, ``head_params``, ``rest_params`` and ``active_params_from_split``
    (the check against the reported active count). A dense model's every layer is a dense FFN layer.
    """
    hidden = _f(columns["hidden_size"])
    matrices = np.where(np.isnan(_f(columns["expert_ffn_matrices"])), 3.0, _f(columns["expert_ffn_matrices"]))
    expert_width = np.where(np.isnan(_f(columns["expert_hidden_size"])), hidden, _f(columns["expert_hidden_size"]))
    moe = moe_layer_count(
        columns["num_routed_experts"], columns["num_moe_layers"], columns["num_layers"], columns["num_dense_layers"]
    )
    per_expert = matrices / 3.0 * ffn_params(expert_width, columns["moe_intermediate_size"])
    shared_width = np.where(
        np.isnan(_f(columns["shared_expert_intermediate_size"])),
        _f(columns["moe_intermediate_size"]),
        _f(columns["shared_expert_intermediate_size"]),
    )
    dense_model = np.isnan(_f(columns["num_routed_experts"]))
    dense_layers = np.where(dense_model, _f(columns["num_layers"]), _nz(columns["num_dense_layers"]))
    routed = routed_expert_params(moe, columns["num_routed_experts"], per_expert)
    shared = matrices / 3.0 * shared_expert_params(moe, columns["num_shared_experts"], hidden, shared_width)
    dense = np.where(dense_layers > 0, dense_layers * ffn_params(hidden, columns["intermediate_size"]), 0.0)
    embedding = np.nan_to_num(embedding_params(columns["vocab_size"], hidden, _nz(columns["tie_word_embeddings"])))
    head = np.nan_to_num(_f(columns["vocab_size"]) * hidden)
    rest = attention_and_other_params(columns["params_total"], routed, shared, dense, embedding)
    return {
        "moe_layers": moe,
        "params_per_expert": np.where(dense_model, np.nan, per_expert),
        "routed_expert_params": routed,
        "shared_expert_params": shared,
        "dense_ffn_params": dense,
        "embedding_params": embedding,
        "head_params": head,
        "rest_params": rest,
        "active_params_from_split": active_params(
            rest, shared, dense, embedding, moe, columns["experts_per_token"], per_expert
        ),
    }
