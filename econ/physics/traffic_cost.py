"""Prefill and decode of a traffic mix under the deployment model: FLOPs, bytes and cost per token, and the decode
batch an output/input price ratio implies.

The mix is the fleet's (``econ.analyses.traffic``): prompts of L_k tokens with request shares w_k, a share h of
each prompt served from the prompt cache, decode at the mix's mean context L_dec = L̄ + n_out/2.

- **prefill**, per uncached prompt token: each prompt's (1 − h)·L_k new tokens after h·L_k cached ones
  (attention over the cached prefix included), weighted by new tokens w_k·(1 − h)·L_k. Cost at the cheapest
  prompts per pass of a grid that fits in memory (compute-bound throughput; no TTFT target);
- **decode**, per generated token at L_dec: FLOPs (weights and attention), the cache bytes read, and the cost on
  a batch grid up to what fits;
- the **implied batch**: the batch at which decode cost / prefill cost equals the published output/input ratio
  ρ (the margin cancels when both prices carry the same one), by log-linear interpolation on the grid.

Every function is vectorised over rows (one model × chip × layout each).
"""

from __future__ import annotations

import numpy as np

from econ.formula import formula
from econ.physics import deployment, sharding
from econ.physics.sequence import kv_bytes_read_per_sequence

PREFILL_PROMPTS = 2.0 ** np.arange(0, 9)
"""Prompts per attention rank per prefill pass searched for the cheapest per-token prefill (1 … 256)."""
DECODE_BATCH = np.unique(np.round(np.geomspace(1.0, 65_536.0, 97)))
"""Decode batches per replica searched for the implied batch (1 … 65,536 sequences)."""


def _row(d: dict, extra: int) -> dict:
    shape = (-1,) + (1,) * extra
    return {k: (np.reshape(np.asarray(v, dtype=float), shape) if np.ndim(v) else v) for k, v in d.items()}


def _layout(layout: dict, extra: int) -> dict:
    shape = (-1,) + (1,) * extra
    return {k: np.reshape(np.asarray(v), shape) for k, v in layout.items()}


@formula(
    "per new token: Σ_k w_k·(1 − h)·L_k·x_k / Σ_k w_k·(1 − h)·L_k at (cached h·L_k, new (1 − h)·L_k)",
    "traffic mix; deployment model",
)
def prefill_at_mix(model, chip, layout, contexts_tokens, shares_frac, hit_frac, *, kv_scale, settings) -> dict:
    """FLOPs and cost per uncached prompt token over the mix (module docstring): ``flop_per_token`` [FLOP/token] and
    its routed-expert and attention parts (``expert_flop_per_token``, ``attention_flop_per_token``), ``usd_per_token``
    [$/token] (cheapest fitting prompts per pass of :data:`PREFILL_PROMPTS` per bucket)."""
    contexts = np.asarray(contexts_tokens, dtype=float)[None, None, :]
    shares = np.asarray(shares_frac, dtype=float)
    new, cached = contexts * (1.0 - hit_frac), contexts * hit_frac
    ranks = np.asarray(layout["attention_data_parallel"], dtype=float) * np.asarray(layout["pipeline_parallel"])
    prompts = ranks[:, None, None] * PREFILL_PROMPTS[None, :, None]
    out = deployment.prefill_terms(
        _row(model, 2), _row(chip, 2), _layout(layout, 2), prompts, new, cached, kv_scale=kv_scale,
        settings={k: v for k, v in _row(settings, 2).items() if k not in ("speculative_tokens", "acceptance_frac")},
    )  # fmt: skip
    tokens = prompts * new
    flop = (out["weight_flop_per_chip"] + out["attention_flop_per_chip"]) * out["replica_chips"] / tokens
    expert = out["expert_flop_per_chip"] * out["replica_chips"] / tokens
    attention = out["attention_flop_per_chip"] * out["replica_chips"] / tokens
    cost = np.where(out["fits"], out["usd_per_mtok"] / 1e6, np.inf)
    cheapest = np.min(cost, axis=1)
    weights = shares * (1.0 - hit_frac) * np.asarray(contexts_tokens, dtype=float)
    weights = weights / weights.sum()
    with np.errstate(invalid="ignore"):
        usd = np.where(np.isfinite(cheapest).all(axis=1), (cheapest * weights).sum(axis=1), np.nan)
    return {
        "flop_per_token": (flop[:, 0, :] * weights).sum(axis=1),
        "expert_flop_per_token": (np.broadcast_to(expert, flop.shape)[:, 0, :] * weights).sum(axis=1),
        "attention_flop_per_token": (np.broadcast_to(attention, flop.shape)[:, 0, :] * weights).sum(axis=1),
        "usd_per_token": usd,
    }


@formula("per generated token at L_dec on the batch grid: FLOPs, cache bytes read, cost, fits", "deployment model")
def decode_at_context(model, chip, layout, context_tokens, *, kv_scale, settings, batch=DECODE_BATCH) -> dict:
    """Decode of every row at ``context_tokens`` over ``batch`` (axis 1): ``usd_per_token`` [$/token] (inf where
    the batch does not fit), ``flop_per_token`` (with its ``expert_`` and ``attention_`` parts, at the largest batch)
    and ``kv_read_bytes_per_token`` (batch-independent), ``batch``."""
    b = np.asarray(batch, dtype=float)[None, :]
    out = deployment.decode_terms(
        _row(model, 1), _row(chip, 1), _layout(layout, 1), b, float(context_tokens), kv_scale=kv_scale,
        settings=_row(settings, 1),
    )  # fmt: skip
    accepted = deployment.accepted_tokens_per_step(settings["speculative_tokens"], settings["acceptance_frac"])
    per_token = out["replica_chips"] / (b * accepted)
    flop = (out["weight_flop_per_chip"] + out["attention_flop_per_chip"]) * per_token
    expert = np.broadcast_to(out["expert_flop_per_chip"] * per_token, flop.shape)
    attention = np.broadcast_to(out["attention_flop_per_chip"] * per_token, flop.shape)
    cache = {k: np.asarray(model[k], dtype=float) for k in sharding.CACHE_KEYS}
    for k in (
        "kv_bytes_per_token",
        "kv_window_bytes_per_sequence",
        "kv_chunk_bytes_per_token",
        "state_bytes_per_sequence",
    ):
        cache[k] = cache[k] * kv_scale
    read = kv_bytes_read_per_sequence(
        float(context_tokens),
        sparse_topk_tokens=np.asarray(model["sparse_topk_tokens"], dtype=float),
        dense_attention_frac=np.asarray(model.get("dense_attention_frac", 0.0), dtype=float),
        **cache,
    )
    ok = np.asarray(out["fits"]) & np.isfinite(out["usd_per_mtok"])
    return {
        "usd_per_token": np.where(ok, out["usd_per_mtok"] / 1e6, np.inf),
        "flop_per_token": flop[:, -1],
        "expert_flop_per_token": expert[:, -1],
        "attention_flop_per_token": attention[:, -1],
        "kv_read_bytes_per_token": read,
        "batch": np.broadcast_to(b, ok.shape),
    }


@formula("B: decode cost(B)/prefill cost = ρ, log-linear between grid points", "lecture f.3; deployment model")
def implied_batch(price_ratio, decode_usd_per_token, prefill_usd_per_token, batch) -> tuple[np.ndarray, np.ndarray]:
    """(implied batch [sequences], where it lands): ``ok``, ``above_batch_1`` (decode priced dearer than a single
    sequence costs: no batch ≥ 1 is that slow), ``below_memory_cap`` (priced cheaper than the largest batch that
    fits costs), ``no_prefill_cost`` or ``rho_not_above_1``.

    ``decode_usd_per_token`` is (rows, batches), inf where a batch does not fit; the ratio falls with the batch.
    """
    rho = np.asarray(price_ratio, dtype=float)
    pre = np.asarray(prefill_usd_per_token, dtype=float)[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.asarray(decode_usd_per_token, dtype=float) / pre
    fits = np.isfinite(ratio)
    log_b = np.log(np.broadcast_to(np.asarray(batch, dtype=float), np.shape(decode_usd_per_token)))
    log_r = np.log(np.where(fits, ratio, np.nan))
    # cross: the first grid step where the ratio falls through rho
    target = np.log(np.where(rho > 0, rho, np.nan))[:, None]
    above = log_r >= target
    below = log_r < target
    step = above[:, :-1] & below[:, 1:]
    has = step.any(axis=1)
    i = np.argmax(step, axis=1)
    rows = np.arange(rho.size)
    x0, x1 = log_b[rows, i], log_b[rows, i + 1]
    y0, y1 = log_r[rows, i], log_r[rows, i + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        b = np.exp(x0 + (target[:, 0] - y0) * (x1 - x0) / (y1 - y0))
    first = np.where(fits.any(axis=1), log_r[:, 0], np.nan)
    last_index = fits.shape[1] - 1 - np.argmax(fits[:, ::-1], axis=1)
    last = np.where(fits.any(axis=1), log_r[rows, last_index], np.nan)
    where = np.select(
        [~np.isfinite(pre[:, 0]), rho <= 1.0, has, target[:, 0] > first, target[:, 0] < last],
        ["no_prefill_cost", "rho_not_above_1", "ok", "above_batch_1", "below_memory_cap"],
        default="no_prefill_cost",
    )
    return np.where(where == "ok", b, np.nan), where
