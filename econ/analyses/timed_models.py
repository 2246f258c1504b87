"""Which models the serving model can time (a modelled KV cache and, for a MoE model, the size of an expert), and
why the others cannot be: one rule for the calibration, ``econ predict`` (one point or a file of runs) and ``econ
fleet``."""

from __future__ import annotations

from econ.errors import EconError

TIMED = "d.kv_bytes_per_token is not null and (d.params_per_expert is not null or d.num_routed_experts is null)"
"""The condition, over ``model_derived as d``."""

MODELS_SQL = f"""
select m.model, m.hf_repo, m.num_attention_heads, m.max_position_embeddings, d.* exclude (model)
from models as m join model_derived as d using (model)
where {TIMED}
"""
"""The models the serving model times, with their derived architecture."""

UNTIMED_SQL = f"""
select m.model, m.hf_repo,
       case when d.kv_bytes_per_token is null
            then format('its attention (''{{}}'') has no modelled KV cache', m.attention)
            else 'its routed experts have no size (model_derived.params_per_expert)' end as why
from models as m join model_derived as d using (model)
where not ({TIMED})
"""
"""The models of ``models`` the serving model cannot time, and why in words."""


def refuse_untimed(con, model: str) -> None:
    """An error saying why the serving model cannot time ``model`` (a ``models.model``); nothing where it can."""
    rows = con.execute(f"select why from ({UNTIMED_SQL}) where model = ?", [model]).fetchall()
    if rows:
        raise EconError(f"econ cannot time {model}: {rows[0][0]}", "pick a model whose KV cache econ models")
