"""The decode and prefill pool of each deployment: its layout, batch and step, from the deployment model.

Decode (policy ``speed_target``): of every candidate layout × batch (a fine grid), the cheapest that gives each
user the scenario's speed; if none does, the fastest point, said so. Decode (``balance_multiple``): the
lecture's batch k·B*₀ on each candidate layout, capped by what fits, and the cheapest of those. Prefill: per
candidate layout and prompt-length bucket the largest pass (prompts per pass) whose time to first token meets
the target (or, where none does, stays within :data:`UNREACHABLE_SLACK` of the fastest), and the layout with the
fewest chip-seconds per request. Candidates are the named layout of the
pool when the deployment names one, else the search grid (of the given replica size, if any).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs as inputs
from econ.analyses.fleet_layouts import keep_degrees
from econ.analyses.scenario import Scenario
from econ.analyses.traffic import TrafficMix
from econ.physics import deployment, fleet, roofline, sharding

DECODE_BATCH = np.unique(np.round(np.geomspace(1.0, 65_536.0, 161)))
PREFILL_PROMPTS = 2.0 ** np.arange(0, 9)  # 1 … 256 prompts per pass
UNREACHABLE_SLACK = 0.1
"""Where no pass meets the TTFT target: batch as many prompts as keep the pass within 10% of the layout's fastest
(a data-parallel layout runs one prompt per rank at nearly one prompt's time; a stated policy, not a fit)."""


LAYOUT_COLUMNS = (*deployment.LAYOUT_KEYS, "overlap_comm", "expert_balanced")
"""A candidate row's layout for the deployment model: the degrees, what is replicated, and how the step runs (a
named layout's overlap, a stated expert balancer)."""


def candidates(cases: pl.DataFrame, models: pl.DataFrame, named: pl.DataFrame, pool: str, max_chips: int):
    """Deployment × layout rows of a pool: the named layout if the deployment gives one, else the grid of its
    chip (only the given replica size, if any)."""
    overlap = [c for c in models.columns if c in cases.columns and c not in ("model", "params_total", "params_active")]
    joined = cases.drop(overlap).join(models.drop("params_total", "params_active"), on="model", how="left")
    joined = joined.with_columns(pl.int_range(pl.len()).alias("_case"))
    rows = inputs.layouts_for(joined, named, pool, max_chips)
    rows = pl.concat([rows, inputs.sized_rows(joined, rows, pool)], how="vertical_relaxed")
    name, size = pl.col(f"{pool}_layout"), pl.col(f"{pool}_replica_chips")
    keep = (
        pl.when(name.is_not_null())
        .then(pl.col("layout") == name)
        .when(size.is_not_null())
        .then((pl.col("layout") == "grid") & (pl.col("replica_chips") == size.cast(pl.Float64)))
        .otherwise(pl.col("layout") == "grid")
    )  # an idealised named layout is used only where a deployment names it
    return rows.filter(keep & keep_degrees(rows, pool))


def _evaluate(rows: pl.DataFrame, s: Scenario, pool: str, batch, **kwargs) -> dict:
    def col(values):
        return np.asarray(values, dtype=float)[:, None]

    model = {k: col(v) for k, v in inputs.model_arrays(rows).items()}
    chip = {k: col(v) for k, v in inputs.chip_arrays(rows, s.kv_cache_format).items()}
    layout = {k: rows[k].to_numpy()[:, None] for k in LAYOUT_COLUMNS if k in rows.columns}
    run = inputs.settings(
        s,
        pool,
        col(rows["weight_bytes_per_param"].to_numpy()),
        rows["architecture"].to_numpy()[:, None],
        rows["attention"].to_numpy()[:, None],
    )
    scale = inputs.cache_scale(s)
    if pool == "decode":
        return deployment.decode_terms(model, chip, layout, batch, kwargs["context"], kv_scale=scale, settings=run)
    return deployment.prefill_terms(
        model, chip, layout, batch, kwargs["prompt"], kwargs["cached"], kv_scale=scale, settings=run
    )


def _pick(group: np.ndarray, cost: np.ndarray, ok: np.ndarray, n_groups: int) -> np.ndarray:
    """Index of the lowest ``cost`` among ``ok`` per group (-1 where none)."""
    cost = np.where(ok, cost, np.inf)
    best = np.full(n_groups, -1)
    order = np.lexsort((cost, group))
    first = np.ones(order.size, dtype=bool)
    first[1:] = group[order][1:] != group[order][:-1]
    chosen = order[first]
    finite = np.isfinite(cost[chosen])
    best[group[chosen][finite]] = chosen[finite]
    return best


def decode_choice(rows: pl.DataFrame, s: Scenario, t: TrafficMix, n_cases: int) -> dict[str, np.ndarray]:
    """Per deployment: the chosen decode layout row and batch, its step terms, and how the batch was set."""
    speed_policy = (rows["batch_policy"] == "speed_target").to_numpy()
    context = np.full((1, 1), t.decode_context_tokens)
    grid = _evaluate(rows, s, "decode", DECODE_BATCH[None, :], context=context)
    shape = grid["step_time_s"].shape
    fits = np.asarray(grid["fits"] & np.isfinite(grid["step_time_s"]))
    fast = grid["tokens_per_s_per_user"] >= s.user_speed_target_tokens_per_s
    group = np.repeat(rows["_case"].to_numpy(), shape[1])
    cost = grid["usd_per_mtok"].ravel()
    meets = _pick(group, cost, (fits & fast).ravel(), n_cases)
    fastest = _pick(group, -grid["tokens_per_s_per_user"].ravel(), fits.ravel(), n_cases)

    b_w = rows["weight_bytes_per_param"].to_numpy()
    r = roofline.critical_batch_ratio(
        rows["peak_flop_per_s"].to_numpy(), rows["hbm_bandwidth_bytes_per_s"].to_numpy(), b_w
    )
    b0 = roofline.balance_batch(r, rows["params_total"].to_numpy(), rows["params_active"].to_numpy())
    target = np.maximum(np.round(fleet.balance_multiple_batch(b0, s.batch_multiple_over_balance_ratio)), 1.0)
    model = inputs.model_arrays(rows)
    layout = {k: rows[k].to_numpy() for k in deployment.LAYOUT_KEYS}
    cap = sharding.max_batch_per_replica(
        model,
        layout,
        inputs.chip_arrays(rows, s.kv_cache_format),
        t.decode_context_tokens,
        weight_bytes_per_param=b_w,
        kv_scale=inputs.cache_scale(s),
        hbm_reserve_frac=s.hbm_reserve_frac,
    )
    lecture_batch = np.minimum(target, cap)
    lecture = _evaluate(rows, s, "decode", np.maximum(lecture_batch, 1.0)[:, None], context=context)
    lecture_ok = (lecture_batch >= 1) & lecture["fits"].ravel() & np.isfinite(lecture["step_time_s"].ravel())
    balance = _pick(rows["_case"].to_numpy(), lecture["usd_per_mtok"].ravel(), lecture_ok, n_cases)

    case_policy = np.zeros(n_cases, dtype=bool)
    case_policy[rows["_case"].to_numpy()] = speed_policy
    speed_at = np.where(meets >= 0, meets, fastest)  # flat index into the grid, -1: nothing fits
    valid = np.where(case_policy, speed_at >= 0, balance >= 0)
    row = np.where(case_policy, speed_at // shape[1], balance)
    row = np.where(valid, row, -1)

    def pick(key):
        on_grid = np.ravel(np.broadcast_to(grid[key], shape))[np.maximum(speed_at, 0)]
        on_lecture = np.ravel(lecture[key])[np.maximum(balance, 0)]
        return np.where(valid, np.where(case_policy, on_grid, on_lecture), np.nan)

    batch = np.where(
        valid,
        np.where(case_policy, DECODE_BATCH[np.maximum(speed_at, 0) % shape[1]], lecture_batch[np.maximum(balance, 0)]),
        np.nan,
    )
    status = np.select(
        [~valid, case_policy & (meets >= 0), case_policy, batch >= target[np.maximum(row, 0)]],
        [
            "not planned: nothing fits (weights and one sequence at the decode context)",
            "speed target",
            "speed target unreachable: the fastest layout and batch",
            "balance multiple",
        ],
        default="balance multiple, capped by memory",
    )
    out = {
        k: pick(k)
        for k in (
            "step_time_s",
            "compute_time_s",
            "memory_time_s",
            "comm_time_s",
            "comm_exposed_time_s",
            "tokens_per_s_per_user",
        )
    }
    out["tokens_per_s_per_replica"] = pick("tokens_per_s_per_chip") * pick("replica_chips")
    out.update(
        row=row,
        batch=batch,
        status=status,
        memory_max_batch=np.where(valid, cap[np.maximum(row, 0)], np.nan),
        balance_batch=_by_case(rows, b0, n_cases),
        critical_batch_ratio=_by_case(rows, r, n_cases),
        target=np.where(case_policy, batch, _by_case(rows, target, n_cases)),
    )
    return out


def _by_case(rows: pl.DataFrame, values: np.ndarray, n_cases: int) -> np.ndarray:
    out = np.full(n_cases, np.nan)
    out[rows["_case"].to_numpy()] = values
    return out


def prefill_choice(rows: pl.DataFrame, s: Scenario, t: TrafficMix, n_cases: int) -> dict[str, np.ndarray]:
    """Per deployment: the prefill layout row with the fewest chip-seconds per request, its prompts per pass by
    context bucket (the largest meeting the TTFT target, else 1), pass times and TTFTs."""
    contexts = np.asarray(t.contexts_tokens, dtype=float)
    shares = np.asarray(t.shares_frac, dtype=float)
    h = s.prompt_cache_hit_frac
    prompt = (contexts * (1.0 - h))[None, None, :]
    cached = (contexts * h)[None, None, :]
    b = PREFILL_PROMPTS[None, :, None]

    def col(values):
        return np.asarray(values, dtype=float)[:, None, None]

    model = {k: col(v) for k, v in inputs.model_arrays(rows).items()}
    chip = {k: col(v) for k, v in inputs.chip_arrays(rows, s.kv_cache_format).items()}
    layout = {k: rows[k].to_numpy()[:, None, None] for k in LAYOUT_COLUMNS if k in rows.columns}
    run = inputs.settings(
        s,
        "prefill",
        col(rows["weight_bytes_per_param"].to_numpy()),
        rows["architecture"].to_numpy()[:, None, None],
        rows["attention"].to_numpy()[:, None, None],
    )
    out = deployment.prefill_terms(model, chip, layout, b, prompt, cached, kv_scale=inputs.cache_scale(s), settings=run)
    ok = out["fits"] & np.isfinite(out["ttft_s"])
    fastest = np.min(np.where(ok, out["ttft_s"], np.inf), axis=1, keepdims=True)
    met = (ok & (out["ttft_s"] <= s.ttft_target_s)).any(axis=1)
    # the target, or where no pass meets it, within UNREACHABLE_SLACK of the layout's fastest pass
    allowed = np.where(met[:, None, :], s.ttft_target_s, fastest * (1.0 + UNREACHABLE_SLACK))
    meets = ok & (out["ttft_s"] <= allowed)
    pick = np.where(meets.any(axis=1), meets.shape[1] - 1 - np.argmax(meets[:, ::-1, :], axis=1), -1)
    best_meet = np.where(met, pick, -1)
    usable = (pick >= 0).all(axis=1)
    take = np.maximum(pick, 0)[:, None, :]
    pass_time = np.take_along_axis(out["step_time_s"], take, axis=1)[:, 0, :]
    prompts = PREFILL_PROMPTS[np.maximum(pick, 0)]
    ttft_met = (best_meet >= 0).all(axis=1)
    chips = rows["replica_chips"].to_numpy()
    seconds = fleet.prefill_replicas_needed(1.0, shares[None, :], pass_time, prompts)
    best = _pick(rows["_case"].to_numpy(), seconds * chips, usable, n_cases)
    res = {
        "row": best,
        "prompts_by_context": np.full((n_cases, contexts.size), np.nan),
        "pass_time_by_context": np.full((n_cases, contexts.size), np.nan),
        "ttft_met": np.zeros(n_cases, dtype=bool),
    }
    have = best >= 0
    res["prompts_by_context"][have] = prompts[best[have]]
    res["pass_time_by_context"][have] = pass_time[best[have]]
    res["ttft_met"][have] = ttft_met[best[have]]
    return res
