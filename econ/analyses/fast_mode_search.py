"""The operating points a fast variant could be running at, per reference architecture: the deployment model's
decode at the scenario chip over the layout search grid × batches × draft tokens, and which of them each
explanation allows.

For every deployed open model and decode context, over :func:`econ.physics.layout_search.layout_grid` (a dense
model keeps DP = 1) × :data:`BATCH` × :data:`DRAFT_TOKENS`, points that fit in memory:

- **baseline** (the standard product): the cheapest point without speculation whose speed per user meets the
  scenario's ``user_speed_target_tokens_per_s`` (the fastest such point where none does);
- **smaller_batch**: the baseline's layout, no speculation, any batch;
- **more_chips**: any layout with at least the baseline's chips, the baseline's batch, no speculation;
- **speculation**: the baseline's layout and batch with 1–3 draft tokens at the scenario's acceptance rate;
- **any_combination**: every point.

Taking the baseline as the cheapest way to meet the standard speed (not a fixed layout and batch) keeps "any
combination" from being cheaper than standard merely because the baseline was suboptimal. Selection and array
building only; the step terms are :func:`econ.physics.deployment.decode_terms`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from econ.analyses.inference_serving import Serving
from econ.formula import formula
from econ.physics import deployment, layout_search, sharding
from econ.physics.fast_mode import EXPLANATIONS

BATCH = np.unique(np.round(np.geomspace(1.0, 65_536.0, 65)))
DRAFT_TOKENS = (0.0, 1.0, 2.0, 3.0)


@dataclass(frozen=True)
class Points:
    """Per reference model (rows of ``models``): speed [tokens/s per user] and cost [$/token] of every point, which
    points each explanation allows (``eligible[explanation]``, models × points), and the baseline (its speed, cost,
    batch [sequences], replica chips and layout)."""

    models: list[str]
    speed: np.ndarray
    cost: np.ndarray
    eligible: dict[str, np.ndarray]
    baseline_speed: np.ndarray
    baseline_cost: np.ndarray
    baseline_batch: np.ndarray
    baseline_chips: np.ndarray
    baseline_layout: dict


def _decode(model, chip, layout, batch, context, draft, deployed: Serving, names, shape=(-1,)) -> dict:
    s = dict(deployed.settings("decode", names, shape))
    s["speculative_tokens"] = draft
    return deployment.decode_terms(model, chip, layout, batch, context, kv_scale=deployed.kv_scale, settings=s)


@formula(
    "baseline: cheapest fitting point without drafts at ≥ the speed target; explanations: subsets of the grid", "a.5"
)
def points(deployed: Serving, context_tokens: float) -> Points:
    """Every point of every deployed open model at ``context_tokens`` (module docstring), as flat arrays."""
    s = deployed.scenario
    names = deployed.cases["model"].to_list()
    _, model, chip, _layout, _ = deployed.rows(names)
    m = len(names)
    if m == 0:
        empty = np.zeros((0, 0))
        no = np.zeros(0)
        return Points([], empty, empty, {e: empty.astype(bool) for e in EXPLANATIONS}, no, no, no, no, {})

    def col(d):
        return {k: np.reshape(np.asarray(v, dtype=float), (-1, 1, 1, 1)) for k, v in d.items()}

    draft = np.asarray(DRAFT_TOKENS)
    domain = int(np.nanmax(chip["scale_up_domain_chips"]))
    g = layout_search.layout_grid(domain, moe=True, max_chips=int(s.max_replica_chips))
    n_g, n_b, n_d = g["tensor_parallel"].size, BATCH.size, draft.size
    is_moe = ~np.isnan(np.asarray(model["num_routed_experts"], dtype=float))
    usable = is_moe[:, None] | (g["attention_data_parallel"][None, :] == 1)
    out = _decode(
        col(model), col(chip), {k: np.asarray(v)[None, :, None, None] for k, v in g.items()},
        BATCH[None, None, :, None], context_tokens, draft[None, None, None, :], deployed, names, (-1, 1, 1, 1),
    )  # fmt: skip
    shape = (m, n_g, n_b, n_d)
    v = np.broadcast_to(out["tokens_per_s_per_user"], shape)
    c = np.broadcast_to(out["usd_per_mtok"] / 1e6, shape)
    ok = np.broadcast_to(out["fits"] & np.isfinite(out["usd_per_mtok"]), shape) & usable[:, :, None, None]
    plain = ok & (draft == 0)[None, None, None, :]
    target = s.user_speed_target_tokens_per_s if s.user_speed_target_tokens_per_s is not None else 0.0
    meets = plain & (v >= target)
    flat_c = np.where(meets, c, np.inf).reshape(m, -1)
    flat_v = np.where(plain, v, -np.inf).reshape(m, -1)
    pick = np.where(np.isfinite(flat_c).any(axis=1), flat_c.argmin(axis=1), flat_v.argmax(axis=1))
    g0, b0, _ = np.unravel_index(pick, (n_g, n_b, n_d))
    rows = np.arange(m)
    chips = sharding.replica_chips(g["tensor_parallel"], g["attention_data_parallel"], g["pipeline_parallel"])
    same_g = np.arange(n_g)[None, :] == g0[:, None]
    same_b = np.arange(n_b)[None, :] == b0[:, None]
    wider = chips[None, :] >= chips[g0][:, None]
    no_draft, drafting = (draft == 0)[None, None, None, :], (draft > 0)[None, None, None, :]
    masks = {
        "smaller_batch": same_g[:, :, None, None] & no_draft,
        "more_chips": wider[:, :, None, None] & same_b[:, None, :, None] & no_draft,
        "speculation": same_g[:, :, None, None] & same_b[:, None, :, None] & drafting,
        "any_combination": np.ones(shape, dtype=bool),
    }
    eligible = {e: (np.broadcast_to(mask, shape) & ok).reshape(m, -1) for e, mask in masks.items()}
    has = plain.reshape(m, -1)[rows, pick]
    return Points(
        names,
        v.reshape(m, -1),
        c.reshape(m, -1),
        eligible,
        np.where(has, v[rows, g0, b0, 0], np.nan),
        np.where(has, c[rows, g0, b0, 0], np.nan),
        np.where(has, BATCH[b0], np.nan),
        np.where(has, chips[g0], np.nan),
        {k: np.asarray(val)[g0] for k, val in g.items()},
    )
