"""What a long-context tier's price slope k says, per component, with the physics that component bills.

Cost = price · (1 − margin) on both sides of a tier, so the cost slope is k·(1 − margin) [$/token per context token]:

- **output** → the bytes a decode step reads per context token (KV, or for sparse attention the indexer's keys
  plus the top-k entries, for hybrids only the softmax layers): b_read = k·(1 − margin)/c_byte, with c_byte the
  marginal cost of one byte read per generated token. For an open model c_byte is the deployment model's
  (:func:`econ.physics.context_cost.decode_kv_usd_per_token`: read(L)·(TP/TP_kv)·p/(W·mbu), the slope of the
  memory-bound decode cost, independent of the batch); for a closed model it is p/(W·mbu), the same with one
  read per byte (data-parallel attention, the open models' default layouts). Assumes the step is memory-bound at
  the tiers' contexts, the same layout and margin in both tiers and no speculative decoding in the scenario.
- **input** → the prefill attention FLOPs per prompt token per context token: f = k·(1 − margin)/c_flop, with
  c_flop the deployment model's marginal prefill cost per attention FLOP for an open model
  (:func:`econ.physics.context_cost.prefill_usd_per_token`; the KV a prompt writes is per token, flat in L, so
  it sits in a) and p/(F·mfu) for a closed one (compute-bound prefill).
- **cache read** → no cost: :func:`econ.fits.context_tiers.billing_rule`.
- **crossover** (the lecture's f.1 hypothesis, kept and labelled): the first threshold is the roofline crossover
  L* = b_w·N_act/(R·b_kv), so b_kv = b_w·N_act/(R·L*), with N_act from the architecture or the scenario's
  ``frontier_active_params``. Measured on open models it is biased low by orders of magnitude (thresholds follow
  product context limits); ``inference_quantities`` says by how much.

For an open model the true value is the architecture's: the least-squares slope over the tiers' contexts of
read(L) (output) or of A(L)/L (input), the same points the price slope is fitted at; implied/true is then the
observed cost slope over the deployment model's. The scenario interval varies p, margin, mbu or mfu, the chip ×
format and KV format, and α (through the slope fitted at each α of :data:`~econ.fits.context_tiers.EXPONENT_GRID`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits.context_tiers import EXPONENT_GRID
from econ.formula import formula
from econ.physics import context_cost, roofline
from econ.units import MEGA, SECONDS_PER_HOUR

QUANTITIES = {"output": "decode_kv_read_bytes_per_context_token", "input": "prefill_attention_flop_per_context_token"}
"""The quantity each component's slope is read as (cache reads: none)."""
CROSSOVER = "kv_bytes_per_token_crossover"
EFFICIENCY = {"output": "decode_mbu_frac", "input": "prefill_mfu_frac"}
HARDWARE = {"output": "hbm_bandwidth_bytes_per_s", "input": "peak_flop_per_s"}


@formula("c_byte = p/(W·mbu)", "lecture a.4")
def usd_per_token_per_kv_byte(usd_per_chip_hour, hbm_bandwidth_bytes_per_s, mbu):
    """What one byte read per generated token costs when each byte is read once [$/token per byte] (G cancels)."""
    return np.divide(usd_per_chip_hour, SECONDS_PER_HOUR) / np.multiply(hbm_bandwidth_bytes_per_s, mbu)


@formula("c_flop = p/(F·mfu)", "lecture f.3")
def usd_per_token_per_flop(usd_per_chip_hour, peak_flop_per_s, mfu):
    """What one FLOP per prompt token costs in compute-bound prefill [$/token per FLOP]."""
    return np.divide(usd_per_chip_hour, SECONDS_PER_HOUR) / np.multiply(peak_flop_per_s, mfu)


@formula("b_read = k·(1 − margin)·W·mbu/p", "lecture a.4, f.1")
def kv_bytes_from_slope(
    slope_usd_per_mtok_per_mtok_context, gross_margin_frac, usd_per_chip_hour, hbm_bandwidth_bytes_per_s, mbu
):
    """Bytes read per context token per generated token [bytes/token] from the output slope, one read per byte."""
    cost = np.divide(slope_usd_per_mtok_per_mtok_context, MEGA * MEGA) * np.subtract(1.0, gross_margin_frac)
    return cost / usd_per_token_per_kv_byte(usd_per_chip_hour, hbm_bandwidth_bytes_per_s, mbu)


@formula("b_kv = b_w·N_act / (R·L*)", "lecture f.1")
def kv_bytes_at_crossover(critical_ratio, weight_bytes_per_param, params_active, crossover_tokens):
    """The lecture's crossover reading: b_kv = b_w·N_act/(R·L*) [bytes/token] (a hypothesis; see module docstring).

    The roofline's L* = b_w·N_act/(R·b_kv) is symmetric in L* and b_kv, so it is evaluated by
    :func:`econ.physics.roofline.critical_context_tokens` with the threshold in b_kv's place.
    """
    return roofline.critical_context_tokens(critical_ratio, weight_bytes_per_param, params_active, crossover_tokens)


@formula("cost and true slopes = least squares over the tiers' contexts of the deployment model", "deployment model")
def deployment_slopes(
    model: dict, chip: dict, layout: dict, contexts: np.ndarray, component: str, *, kv_scale, settings
):
    """(cost slope [$/token per context token], true slope [bytes or FLOP per token per context token]) per row.

    ``contexts``: (rows, tiers) representative contexts, NaN-padded; each row's slopes are the least squares over
    its finite contexts of the deployment model's cost (decode KV part for output, prefill for input) and of the
    architecture's read(L) or A(L)/L.
    """
    ok = np.isfinite(contexts) & (contexts > 0)
    filled = np.where(ok, contexts, np.max(np.where(ok, contexts, 1.0), axis=1, keepdims=True))
    if component == "output":
        cost = context_cost.decode_kv_usd_per_token(model, chip, layout, filled, kv_scale=kv_scale, settings=settings)
        true = context_cost.decode_kv_bytes_read(model, filled, kv_scale=kv_scale)
    else:
        cost = context_cost.prefill_usd_per_token(model, chip, layout, filled, kv_scale=kv_scale, settings=settings)
        true = context_cost.prefill_attention_flop_per_token(model, filled)
    return _masked_slope(filled, cost, ok), _masked_slope(filled, true, ok)


def _masked_slope(x, y, ok):
    n = ok.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        xm = np.where(ok, x - np.where(ok, x, 0).sum(axis=1, keepdims=True) / n, 0.0)
        ym = np.where(ok, y - np.where(ok, y, 0).sum(axis=1, keepdims=True) / n, 0.0)
        return (xm * ym).sum(axis=1) / (xm * xm).sum(axis=1)


def _interp_grid(grid_rows: np.ndarray, exponent):
    """Each row's slope ratio at α (linear in α between the points of EXPONENT_GRID); α broadcasts."""
    g = np.asarray(EXPONENT_GRID)
    step = g[1] - g[0]
    pos = np.clip((np.asarray(exponent, dtype=float) - g[0]) / step, 0.0, g.size - 1 - 1e-9)
    i0 = np.floor(pos).astype(int)
    w = pos - i0
    rows = np.arange(grid_rows.shape[0])
    return grid_rows[rows, i0] * (1.0 - w) + grid_rows[rows, np.minimum(i0 + 1, g.size - 1)] * w


@formula("implied = k·(1 − margin)/c_unit; implied/true = observed over the deployment model's cost slope", "module")
def readings(fits: pl.DataFrame, assumptions) -> pl.DataFrame:
    """Add each row's reading, its fit and scenario intervals, the true value (open models) and implied/true.

    ``fits``: :func:`econ.fits.context_tiers.fit_schedules` rows with the architecture (``params_active``,
    ``kv_bytes_per_token``, null for closed models) and, for open models, ``deployment_cost_slope`` and
    ``deployment_true_slope`` (:func:`deployment_slopes`, per token per context token). Adds generic columns
    ``quantity``, ``implied``, ``implied_fit_low/high``, ``implied_scenario_low/high``, ``true_value``,
    ``implied_over_true_ratio`` (+ ``_scenario_low/high``), ``unit_cost_usd`` and the crossover columns. The unit
    cost is the deployment model's cost slope over the architecture's where that is positive, else the formula's
    (closed models; an open model whose per-request costs amortise faster than its attention grows).
    """
    if fits.height == 0:
        return fits
    a, c, hw = assumptions, assumptions.central, assumptions.central_hardware

    def col(name):
        return (
            fits[name].cast(pl.Float64).fill_null(np.nan).to_numpy()
            if name in fits.columns
            else np.full(fits.height, np.nan)
        )

    component = fits["component"].to_numpy()
    slope, s_lo, s_hi = (
        col(n)
        for n in (
            "slope_usd_per_mtok_per_mtok_context",
            "slope_fit_low_usd_per_mtok_per_mtok_context",
            "slope_fit_high_usd_per_mtok_per_mtok_context",
        )
    )
    grid = np.array(fits["_slope_ratio_grid"].to_list(), dtype=float)
    cost_slope, true_slope = col("deployment_cost_slope"), col("deployment_true_slope")
    is_out, is_in = component == "output", component == "input"
    formula_unit = np.where(
        is_out,
        usd_per_token_per_kv_byte(c["usd_per_chip_hour"], hw["hbm_bandwidth_bytes_per_s"], c["decode_mbu_frac"]),
        usd_per_token_per_flop(c["usd_per_chip_hour"], hw["peak_flop_per_s"], c["prefill_mfu_frac"]),
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        open_unit = cost_slope / true_slope
    has_true = np.isfinite(true_slope) & (true_slope > 0)
    # the deployment's marginal cost per unit where it grows with context; where per-request costs amortise faster
    # than a sparse attention grows (GLM-5's), its slope is not a cost of the context: the formula's unit
    unit = np.where(has_true & np.isfinite(open_unit) & (open_unit > 0), open_unit, formula_unit)
    correction = unit / formula_unit  # the deployment model over the one-read-per-unit formula (1 for closed)
    read = is_out | is_in

    def implied_at(k):
        return np.where(read, np.divide(k, MEGA * MEGA) * (1.0 - c["gross_margin_frac"]) / unit, np.nan)

    with np.errstate(invalid="ignore"):
        central, fit_lo, fit_hi = implied_at(slope), implied_at(s_lo), implied_at(s_hi)
    true = np.where(read & has_true, true_slope, np.nan)
    cols = {
        "slope": slope,
        "corr": correction,
        "out": is_out.astype(float),
        "true": true,
        **{f"g{i}": grid[:, i] for i in range(grid.shape[1])},
    }
    k_grid = grid.shape[1]
    kv0 = a.kv_scale

    def draw(hw, cols, ratio=False, **kw):
        g = np.column_stack([cols[f"g{i}"] for i in range(k_grid)])
        k = cols["slope"] * _interp_grid(g, kw["tier_context_density_exponent_ratio"])
        p, margin = kw["usd_per_chip_hour"], kw["gross_margin_frac"]
        unit_b = usd_per_token_per_kv_byte(p, hw["hbm_bandwidth_bytes_per_s"], kw["decode_mbu_frac"])
        unit_f = usd_per_token_per_flop(p, hw["peak_flop_per_s"], kw["prefill_mfu_frac"])
        value = k / (MEGA * MEGA) * (1.0 - margin) / np.where(cols["out"] > 0, unit_b, unit_f) * cols["corr"]
        if not ratio:
            return value
        truth = cols["true"] * np.where(cols["out"] > 0, hw["kv_scale"] / kv0, 1.0)
        return value / truth

    names = (
        "usd_per_chip_hour",
        "gross_margin_frac",
        "decode_mbu_frac",
        "prefill_mfu_frac",
        "tier_context_density_exponent_ratio",
    )
    mc = a.propagate_rows(draw, names, cols)
    mc_ratio = a.propagate_rows(lambda hw, cols, **kw: draw(hw, cols, **kw, ratio=True), names, cols)

    # the lecture's crossover hypothesis, per schedule (same on every component)
    arch_n_act, arch_kv, threshold = col("params_active"), col("kv_bytes_per_token"), col("crossover_threshold_tokens")
    has_arch = np.isfinite(arch_n_act)
    x_cols = {"n_act": arch_n_act, "kv": arch_kv, "threshold": threshold}

    def cross(hw, cols, frontier_active_params, ratio=False):
        n_act = np.where(np.isfinite(cols["n_act"]), cols["n_act"], frontier_active_params)
        b = kv_bytes_at_crossover(hw["critical_batch_ratio"], hw["weight_bytes_per_param"], n_act, cols["threshold"])
        return b / (cols["kv"] * hw["kv_scale"]) if ratio else b

    x_mc = a.propagate_rows(cross, ("frontier_active_params",), x_cols)
    x_ratio = a.propagate_rows(
        lambda hw, cols, **kw: cross(hw, cols, **kw, ratio=True), ("frontier_active_params",), x_cols
    )
    x_central = np.asarray(x_mc.central, dtype=float)
    true_kv = arch_kv * a.kv_scale
    f = pl.Series
    with np.errstate(invalid="ignore", divide="ignore"):
        return fits.with_columns(
            f("quantity", np.where(is_out, QUANTITIES["output"], np.where(is_in, QUANTITIES["input"], None))),
            f("implied", central),
            f("implied_fit_low", fit_lo),
            f("implied_fit_high", fit_hi),
            f("implied_scenario_low", np.where(read, mc.low, np.nan)),
            f("implied_scenario_high", np.where(read, mc.high, np.nan)),
            f("true_value", true),
            f("implied_over_true_ratio", central / true),
            f("implied_over_true_scenario_low_ratio", np.where(np.isfinite(true), mc_ratio.low, np.nan)),
            f("implied_over_true_scenario_high_ratio", np.where(np.isfinite(true), mc_ratio.high, np.nan)),
            f("unit_cost_usd", np.where(read, unit, np.nan)),
            f("kv_crossover_bytes_per_token", x_central),
            f("kv_crossover_scenario_low_bytes_per_token", x_mc.low),
            f("kv_crossover_scenario_high_bytes_per_token", x_mc.high),
            f("params_active_used", np.where(has_arch, arch_n_act, c["frontier_active_params"])),
            f("params_active_source", np.where(has_arch, "architecture", "scenario frontier_active_params")),
            f("kv_true_bytes_per_token", true_kv),
            f("kv_crossover_over_true_ratio", x_central / true_kv),
            f("kv_crossover_over_true_scenario_low_ratio", x_ratio.low),
            f("kv_crossover_over_true_scenario_high_ratio", x_ratio.high),
        ).with_columns(pl.col(pl.Float64).fill_nan(None))
