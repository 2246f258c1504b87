"""The operating points a fast variant could be running at, per reference architecture: the deployment model's
decode at the scenario chip over layouts × batches × draft tokens, and which of them each explanation allows.

For every deployed open model and decode context:

- **baseline**: its default layout (:func:`econ.physics.layout_search.default_layout`), no speculation, the
  lecture's batch k·B*₀ (k = ``batch_multiple_over_balance_ratio``) capped by what fits;
- **smaller_batch**: the default layout, no speculation, any batch of the grid;
- **more_chips**: any layout of the search grid (:func:`econ.physics.layout_search.layout_grid`) with at least the
  default's chips, the baseline batch, no speculation;
- **speculation**: the default layout and baseline batch with 1–3 draft tokens at the scenario's acceptance rate;
- **any_combination**: every layout × batch × draft-token count.

Selection and array building only; the step terms are :func:`econ.physics.deployment.decode_terms`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.analyses.inference_serving import Serving
from econ.formula import formula
from econ.physics import deployment, fleet, layout_search, roofline
from econ.physics.fast_mode import EXPLANATIONS

BATCH = np.unique(np.round(np.geomspace(1.0, 65_536.0, 65)))
DRAFT_TOKENS = (0.0, 1.0, 2.0, 3.0)


@dataclass(frozen=True)
class Points:
    """Per reference model (rows of ``models``): speed [tokens/s per user] and cost [$/token] of every point, which
    points each explanation allows (``eligible[explanation]``, models × points), and the baseline."""

    models: list[str]
    speed: np.ndarray
    cost: np.ndarray
    eligible: dict[str, np.ndarray]
    baseline_speed: np.ndarray
    baseline_cost: np.ndarray
    baseline_batch: np.ndarray


def _decode(model, chip, layout, batch, context, draft, deployed: Serving, b_w) -> dict:
    s = dict(deployed.settings("decode", b_w))
    s["speculative_tokens"] = draft
    return deployment.decode_terms(model, chip, layout, batch, context, kv_scale=deployed.kv_scale, settings=s)


@formula("baseline: default layout, B0 = min(k·B*0, memory cap), no drafts; points: layouts × batches × drafts", "a.5")
def points(deployed: Serving, context_tokens: float) -> Points:
    """Every point of every deployed open model at ``context_tokens`` (module docstring), as flat arrays."""
    s = deployed.scenario
    names = deployed.cases["model"].to_list()
    _, model, chip, layout, b_w = deployed.rows(names)
    m = len(names)
    if m == 0:
        empty = np.zeros((0, 0))
        return Points([], empty, empty, {e: empty.astype(bool) for e in EXPLANATIONS}, *(np.zeros(0),) * 3)

    def col(d, extra):
        return {k: np.reshape(np.asarray(v, dtype=float), (-1,) + (1,) * extra) for k, v in d.items()}

    def lay(d, extra):
        return {k: np.reshape(np.asarray(v), (-1,) + (1,) * extra) for k, v in d.items()}

    draft = np.asarray(DRAFT_TOKENS)
    r = roofline.critical_batch_ratio(chip["peak_flop_per_s"], chip["hbm_bandwidth_bytes_per_s"], b_w)
    b_star = roofline.balance_batch(r, deployed.cases["params_total"].to_numpy(), model["params_active"])
    cap = deployment.max_batch_per_replica(
        model, layout, chip, context_tokens, weight_bytes_per_param=b_w, kv_scale=deployed.kv_scale,
        hbm_reserve_frac=s.hbm_reserve_frac,
    )  # fmt: skip
    b0 = np.maximum(
        np.minimum(np.round(fleet.balance_multiple_batch(b_star, s.batch_multiple_over_balance_ratio)), cap), 1
    )
    b_w2 = b_w[:, None, None]
    # default layout: batch grid x draft tokens (smaller_batch, speculation at the grid, any_combination)
    grid = _decode(
        col(model, 2), col(chip, 2), lay(layout, 2), BATCH[None, :, None], context_tokens, draft[None, None, :],
        deployed, b_w2,
    )  # fmt: skip
    # default layout at the baseline batch x draft tokens (baseline, speculation)
    at_b0 = _decode(
        col(model, 1), col(chip, 1), lay(layout, 1), b0[:, None], context_tokens, draft[None, :], deployed, b_w[:, None]
    )
    # the search grid of layouts (MoE grid: a dense model keeps DP = 1), at the baseline batch and at the batch grid
    domain = int(np.nanmax(chip["scale_up_domain_chips"]))
    g = layout_search.layout_grid(domain, moe=True, max_chips=int(s.max_replica_chips))
    is_moe = ~np.isnan(np.asarray(model["num_routed_experts"], dtype=float))
    allowed = is_moe[:, None] | (g["attention_data_parallel"][None, :] == 1)
    glay = {k: np.asarray(v)[None, :] for k, v in g.items()}
    chips_default = deployment.replica_chips(
        layout["tensor_parallel"], layout["attention_data_parallel"], layout["pipeline_parallel"]
    )
    more = deployment.replica_chips(g["tensor_parallel"], g["attention_data_parallel"], g["pipeline_parallel"])
    wide = _decode(col(model, 1), col(chip, 1), glay, b0[:, None], context_tokens, 0.0, deployed, b_w[:, None])
    full = _decode(
        col(model, 3), col(chip, 3), {k: v[:, :, None, None] for k, v in glay.items()}, BATCH[None, None, :, None],
        context_tokens, draft[None, None, None, :], deployed, b_w[:, None, None, None],
    )  # fmt: skip

    def flat(out, shape):
        v = np.broadcast_to(out["tokens_per_s_per_user"], shape).reshape(m, -1)
        c = np.broadcast_to(out["usd_per_mtok"] / 1e6, shape).reshape(m, -1)
        ok = np.broadcast_to(out["fits"] & np.isfinite(out["usd_per_mtok"]), shape).reshape(m, -1)
        return v, c, ok

    parts = [
        flat(grid, (m, BATCH.size, draft.size)),
        flat(at_b0, (m, draft.size)),
        flat(wide, (m, more.size)),
        flat(full, (m, more.size, BATCH.size, draft.size)),
    ]
    speed = np.concatenate([p[0] for p in parts], axis=1)
    cost = np.concatenate([p[1] for p in parts], axis=1)
    fits = np.concatenate([p[2] for p in parts], axis=1)
    sizes = [p[0].shape[1] for p in parts]
    offsets = np.cumsum([0, *sizes])

    def within(part, mask):
        out = np.zeros((m, offsets[-1]), dtype=bool)
        out[:, offsets[part] : offsets[part + 1]] = np.broadcast_to(mask, (m, sizes[part]))
        return out & fits

    no_draft_grid = np.broadcast_to((draft == 0)[None, None, :], (m, BATCH.size, draft.size)).reshape(m, -1)
    drafting = np.broadcast_to((draft > 0)[None, :], (m, draft.size))
    wider = allowed & (more[None, :] >= chips_default[:, None])
    full_ok = np.broadcast_to(allowed[:, :, None, None], (m, more.size, BATCH.size, draft.size)).reshape(m, -1)
    eligible = {
        "smaller_batch": within(0, no_draft_grid),
        "more_chips": within(2, wider),
        "speculation": within(1, drafting),
        "any_combination": within(0, True) | within(1, True) | within(2, allowed) | within(3, full_ok),
    }
    return Points(
        names,
        speed,
        cost,
        eligible,
        at_b0["tokens_per_s_per_user"][:, 0],
        at_b0["usd_per_mtok"][:, 0] / 1e6,
        b0,
    )
