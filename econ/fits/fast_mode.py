"""Fast mode and priority → implied batch ratio (lecture a.5), per published (price, speed) multiple.

For a fast variant priced at m × the standard output price and streaming s × faster,
the identity m · s = (G1/G0) · (B0/B1) gives the batch ratio on the same replica
(:func:`econ.physics.fast_mode.batch_ratio`; Claude Opus fast mode: 6 × 2.5 = 15). The
roofline solver (:func:`econ.physics.fast_mode.implied_batches_from_coefficients`) then
places both batches. With the step time in units of the weight-read time c = N_tot·b_w/(G·W·mbu)
and the batch in units of B̃ = c/a = B*₀·mfu/mbu (a = 2·N_act/(G·F·mfu)),

    t(B) = max(B/B̃, 1 + (L/L*)·(mfu/mbu)·B/B̃)          (lecture a.2)

so B0/B*₀ and B1/B*₀ depend only on m, s, L/L* and mfu/mbu — no parameter count is needed
for a closed model (decode's compute runs at the scenario's ``prefill_mfu_frac``, its memory
traffic at ``decode_mbu_frac``). L* is the architecture's for an open-weight model, else the model's first
long-context threshold (lecture f.1's reading), else the KV term is dropped (the lecture's
a.5 worked example). For open-weight models the batches are also given in sequences
(× B*₀ = R·N_tot/N_act). Assumptions: same replica for both modes (no speculative decoding,
no extra chips: the identity's G1 = G0), price tracks cost with the same margin in both.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits.io_prices import critical_context, critical_context_source
from econ.formula import formula
from econ.physics import fast_mode, roofline

VARIANTS = ("fast", "priority")


def with_standard_prices(variants: pl.DataFrame, prices: pl.DataFrame) -> pl.DataFrame:
    """Attach the standard price that applies at each variant row's tier (same source, provider and model).

    A schedule without a tier at that threshold bills its highest tier below it, so the standard price is the
    standard row with the largest ``tier_min_prompt_tokens`` ≤ the variant row's.
    """
    key = ["source", "provider", "model"]
    std = (
        prices.filter(pl.col("variant") == "standard")
        .select(
            *key,
            "tier_min_prompt_tokens",
            pl.col("tier_min_prompt_tokens").alias("standard_tier_min_prompt_tokens"),
            pl.col("input_usd_per_mtok").alias("standard_input_usd_per_mtok"),
            pl.col("output_usd_per_mtok").alias("standard_output_usd_per_mtok"),
        )
        .sort("tier_min_prompt_tokens")
    )
    return variants.sort("tier_min_prompt_tokens").join_asof(
        std, on="tier_min_prompt_tokens", by=key, strategy="backward", check_sortedness=False
    )


@formula("B0/B1 = m·s; baseline and fast batches from t(B0)/t(B0/(m·s)) = s", "lecture a.5")
def implied(frame: pl.DataFrame, assumptions) -> pl.DataFrame:
    """Identity batch ratio and the roofline's implied baseline and fast batches, with scenario intervals.

    ``frame``: variant rows with ``speed_ratio``, the standard prices (:func:`with_standard_prices`),
    ``tier_threshold_tokens`` and the architecture columns (may be null).
    """
    if frame.height == 0:
        return frame
    a, c = assumptions, assumptions.central
    m_out = (
        (frame["output_usd_per_mtok"] / frame["standard_output_usd_per_mtok"])
        .cast(pl.Float64)
        .fill_null(np.nan)
        .to_numpy()
    )
    m_in = (
        (frame["input_usd_per_mtok"] / frame["standard_input_usd_per_mtok"])
        .cast(pl.Float64)
        .fill_null(np.nan)
        .to_numpy()
    )
    s = frame["speed_ratio"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    tier_min = (
        frame["tier_min_prompt_tokens"].cast(pl.Float64).fill_null(0.0).to_numpy()
        if "tier_min_prompt_tokens" in frame.columns
        else np.zeros(frame.height)
    )
    cols = {
        "m": m_out,
        "s": s,
        "tier_min": tier_min,
        **{
            k: frame[k].cast(pl.Float64).fill_null(np.nan).to_numpy()
            for k in ("params_active", "params_total", "kv_bytes_per_token", "tier_threshold_tokens")
        },
    }

    def x_of(hw, cols, context_tokens, kv_scale):
        """L/L*, with a long-context tier's row read at a context inside its tier: max(scenario context, threshold)."""
        l_star = critical_context(
            cols["params_active"], cols["kv_bytes_per_token"], cols["tier_threshold_tokens"], hw, kv_scale
        )
        context = np.maximum(context_tokens, cols["tier_min"])
        return np.where(np.isfinite(l_star), np.divide(context, l_star), 0.0)

    def solve(m, s_, x, prefill_mfu_frac, decode_mbu_frac):
        """Batches over B*0 (the solver works in units of B*0 * mfu/mbu)."""
        eff = np.divide(prefill_mfu_frac, decode_mbu_frac)
        m, s_, x, eff = np.broadcast_arrays(m, s_, x, eff)
        out = fast_mode.implied_batches_from_coefficients(m, s_, 1.0, 1.0, x * eff)
        return out._replace(baseline_batch=out.baseline_batch * eff, fast_batch=out.fast_batch * eff)

    def draw(field):
        def fn(hw, cols, context_tokens, prefill_mfu_frac, decode_mbu_frac):
            x = x_of(hw, cols, context_tokens, hw["kv_scale"])
            return getattr(solve(cols["m"], cols["s"], x, prefill_mfu_frac, decode_mbu_frac), field)

        return fn

    hw0 = a.central_hardware
    x0 = x_of(hw0, cols, c["context_tokens"], a.kv_scale)
    central = solve(m_out, s, x0, c["prefill_mfu_frac"], c["decode_mbu_frac"])
    names = ("context_tokens", "prefill_mfu_frac", "decode_mbu_frac")
    base_mc = a.propagate_rows(draw("baseline_batch"), names, cols)
    fast_mc = a.propagate_rows(draw("fast_batch"), names, cols)
    b0 = roofline.balance_batch(hw0["critical_batch_ratio"], cols["params_total"], cols["params_active"])
    f = pl.Series
    return frame.with_columns(
        f("output_price_ratio", m_out),
        f("input_price_ratio", m_in),
        f("batch_ratio", fast_mode.batch_ratio(m_out, s)),
        f("critical_context_source", critical_context_source(frame)),
        f("context_used_tokens", np.maximum(c["context_tokens"], cols["tier_min"])),
        f("context_over_critical_ratio", x0),
        f("solved", np.asarray(central.solved, dtype=bool)),
        f("baseline_batch_over_balance_ratio", central.baseline_batch),
        f("baseline_batch_over_balance_scenario_low_ratio", base_mc.low),
        f("baseline_batch_over_balance_scenario_high_ratio", base_mc.high),
        f("fast_batch_over_balance_ratio", central.fast_batch),
        f("fast_batch_over_balance_scenario_low_ratio", fast_mc.low),
        f("fast_batch_over_balance_scenario_high_ratio", fast_mc.high),
        f("baseline_step_over_weight_read_ratio", central.baseline_step_time_s),
        f("fast_step_over_weight_read_ratio", central.fast_step_time_s),
        f("balance_batch_seqs", b0),
        f("baseline_batch_seqs", central.baseline_batch * b0),
        f("fast_batch_seqs", central.fast_batch * b0),
    ).with_columns(pl.col(pl.Float64).fill_nan(None))
