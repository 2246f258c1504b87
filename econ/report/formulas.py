"""The formulas the analyses use, each with the lecture section it comes from (shown on the Sources page).

Sections refer to ``reference/lecture-math.md`` (Reiner Pope, "The math behind how LLMs are
trained and served", 2026-04-29); the tag says how the formula relates to the lecture:
``S`` stated in it, ``R`` reconstructed from it, ``X`` from an external source it cites.
Chart captions quote them through :func:`cite`, so a caption and the Sources page agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from econ.errors import ReportError

LECTURE_URL = "https://www.dwarkesh.com/p/reiner-pope"


@dataclass(frozen=True)
class Formula:
    key: str
    quantity: str
    formula: str
    section: str  # lecture section, e.g. "a.2"
    tag: str  # S stated, R reconstructed, X external
    note: str = ""


FORMULAS: tuple[Formula, ...] = (
    Formula(
        "compute_time",
        "Compute time of a pass of ℓ tokens for B sequences on G chips",
        "t_compute = 2·B·ℓ·N_act / (G·F·mfu)",
        "a.2, f.3",
        "S",
        "2 FLOP per multiply-add; ℓ = 1 is a decode step, ℓ > 1 a prefill",
    ),
    Formula(
        "memory_time",
        "Memory time of one step",
        "t_mem = (N_tot·b_w + B·L·b_kv) / (G·W·mbu)",
        "a.2",
        "S",
        "weight fetch plus KV-cache fetch",
    ),
    Formula(
        "step_time",
        "Step time (roofline bounds)",
        "max(t_compute, t_mem) ≤ t_step ≤ t_compute + t_mem",
        "a.2, X.1",
        "S",
        "the lower bound is the lecture's; the scaling book's T_lower/T_upper",
    ),
    Formula(
        "latency_floor",
        "Latency floor",
        "t_step ≥ P·N_tot·b_w / (G·W·mbu)",
        "a.3, d.6",
        "S",
        "no price buys a step faster than one weight read; the lecture's N_tot·b_w/W with W the replica's "
        "aggregate bandwidth, P pipeline stages read one after another",
    ),
    Formula("cost_per_token", "Cost per token", "c = t_step·G·p / B", "a.4", "S", "p = $/chip-second"),
    Formula(
        "cost_floor",
        "Cost floor as B → ∞",
        "c_min = p·max(2·N_act/(F·mfu), L·b_kv/(W·mbu))",
        "a.4",
        "R",
        "the lecture's G·p·max(2·N_act/F, L·b_kv/W) with F and W the replica's aggregates; per chip the G cancels",
    ),
    Formula(
        "fast_mode",
        "Fast mode: price ratio × speed ratio",
        "m·s = (G₁/G₀)·(B₀/B₁)",
        "a.5",
        "R",
        "6× price at 2.5× speed on the same replica ⇒ a 15× smaller batch",
    ),
    Formula(
        "drain_time",
        "Drain time of a memory",
        "t_drain = C / W",
        "a.6, g.4",
        "S",
        "HBM ≈ 20 ms; DDR 1–10 s; flash ~1 min; disk ~1 h",
    ),
    Formula(
        "throughput",
        "Tokens per second of one replica",
        "tokens/s = B / t_step",
        "a.7",
        "S",
        "2,000 × 64 = 128,000 tokens/s per rack",
    ),
    Formula(
        "critical_batch",
        "Hardware balance constant R",
        "R = (F/2)·b_w / W",
        "b.1",
        "R",
        "F in FLOP/s (2 per multiply-add), b_w bytes per weight; ≈ 300 on most GPUs, not all",
    ),
    Formula("balance_batch", "Balance batch (weights only)", "B*₀ = R·N_tot / N_act", "b.1", "S", "“300 × sparsity”"),
    Formula(
        "sparsity",
        "Sparsity",
        "N_tot/N_act (parameters) vs E/k (experts)",
        "b.2",
        "S",
        "DeepSeek-V3: 671/37 ≈ 18 by parameters, 256/8 = 32 by experts; the lecture's 8 is neither",
    ),
    Formula("balance_batch_context", "Balance batch with the KV term", "B*(L) = B*₀ / (1 − L/L*)", "b.3", "R"),
    Formula(
        "critical_context",
        "Context above which decode is memory-bound at every batch",
        "L* = b_w·N_act / (R·b_kv)",
        "b.3",
        "R",
    ),
    Formula(
        "scale_up_out",
        "Scale-up vs scale-out time at a pipeline boundary",
        "t_up/t_out = (W_out/W_up)·2·k·L_stage ≥ 1",
        "c.5",
        "S",
        "the lecture's 2·k·L_stage ≥ 8 with W_up/W_out = 8",
    ),
    Formula("distinct_gpus", "Distinct GPUs a token is sent to", "k_GPU ≈ E_p·(1 − (1 − 1/E_p)^k)", "c.5", "R"),
    Formula(
        "memory_per_gpu",
        "Memory per GPU with expert and pipeline parallelism",
        "c_mem = N_tot·b_w/(E·P) + b·L·b_kv/E",
        "d.4",
        "S",
        "weights shrink with P, KV per GPU does not (“the Ps cancel”)",
    ),
    Formula("effective_bandwidth", "Weight bandwidth of a scale-up domain", "W_eff = S·W_gpu", "d.6", "S"),
    Formula(
        "training_costs",
        "Pre-training, RL and inference cost terms",
        "C_pre = 6·N·D_pre; C_RL = c_RL·N·D_RL/η_RL; C_inf = 2·N·D_inf/η_dec",
        "e.2",
        "S",
    ),
    Formula(
        "alpha_beta",
        "RL and inference cost per token relative to pre-training",
        "α = (c_RL/6)/(η_RL/η_pre); β = (2/6)/(η_dec/η_pre)",
        "e.3",
        "R",
        "the lecture's final α ≈ 1.5, β ≈ 1",
    ),
    Formula(
        "token_split", "Token balance from cost shares", "D_pre : D_RL : D_inf = s_pre : s_RL/α : s_inf/β", "e.3", "R"
    ),
    Formula(
        "inference_tokens",
        "Inference tokens per model",
        "D_inf = rate × deployment time / models per family × (1 − p_discard)",
        "e.4",
        "S",
        "5e8 tokens/s × 2 months / 10 ≈ 2.6e14",
    ),
    Formula(
        "over_training",
        "Over-training factor",
        "D_pre / (20·N_act)",
        "e.4",
        "S",
        "≈ 100 in the lecture; Chinchilla's N is dense",
    ),
    Formula(
        "equal_cost",
        "When the equal-cost heuristic is exact",
        "a·x^(−p) + b·x^q is minimal where cost ratio = q/p",
        "e.1",
        "R",
    ),
    Formula(
        "chinchilla_loss",
        "Chinchilla loss",
        "L(N, D) = E + A/N^α + B/D^β",
        "e.5",
        "X",
        "Hoffmann et al. 2022; Epoch's refit (Besiroglu et al. 2024)",
    ),
    Formula(
        "compute_optimal",
        "Compute-optimal model and data",
        "N_opt = G·(C/6)^a, D_opt = (C/6)^b / G, G = (αA/(βB))^(1/(α+β)), a = β/(α+β)",
        "e.5",
        "X",
    ),
    Formula(
        "sardana",
        "Inference-aware optimum",
        "min over N, D_tr of 6·N·D_tr + 2·N·D_inf subject to L(N, D_tr) = ℓ",
        "e.5",
        "X",
        "Sardana et al. 2024",
    ),
    Formula(
        "implied_kv_bytes",
        "KV bytes per token implied by a tier threshold",
        "b_kv = b_w·N_act / (R·L*)",
        "f.1",
        "S",
        "200k threshold, N_act = 1e11, R = 300, 1-byte weights ⇒ ≈ 1,667 B",
    ),
    Formula(
        "kv_layout",
        "KV bytes per token from the architecture",
        "b_kv = n_kv_layers·2·d_head·n_kv_heads·bytes",
        "f.2",
        "S",
        "1 × 2 × 128 × 8 = 2,048 B at one byte",
    ),
    Formula(
        "io_ratio",
        "Output over input price",
        "ρ = p_out / p_in ≈ B*₀/B + L/L*",
        "f.3",
        "R",
        "“3–5×” in the lecture; prefill is compute-bound, decode memory-bound",
    ),
    Formula(
        "tier_cost",
        "Cost of keeping a token's KV cache for T",
        "cost(T) = hold_rate·T + retrieve_cost, cheapest tier wins",
        "g.2",
        "R",
        "HBM hold = (b_kv/C_HBM)·p_GPU per second; recompute = 2·N_act/F · p_GPU",
    ),
    Formula(
        "attention_flops",
        "FLOPs per token with attention",
        "2·N_act + 4·n_glob·n_q·d_head·L",
        "h.1",
        "R",
        "attention overtakes the weights at L = N_act / (2·n_glob·n_q·d_head)",
    ),
)

BY_KEY = {f.key: f for f in FORMULAS}


def cite(key: str) -> str:
    """``formula (lecture §section)`` for a caption."""
    try:
        f = BY_KEY[key]
    except KeyError:
        raise ReportError(
            f"no formula {key!r}", f"add it to econ/report/formulas.py (known: {', '.join(sorted(BY_KEY))})"
        ) from None
    return f"{f.formula} (lecture §{f.section})"
