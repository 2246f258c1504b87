"""Input vs output prices → prefill vs decode (lecture f.3), per model.

**The lecture's closed form** (every priced model). Prefill is compute-bound and decode memory-bound (lecture
f.3). Per chip (G cancels), with the same margin on both prices so that it cancels in the ratio:

    c_in  = p · 2·N_act / (F · mfu)                                  (prefill, compute-bound)
    c_out = p · (N_tot·b_w / B + L·b_kv) / (W · mbu)                 (decode, memory-bound)
    ρ = c_out / c_in = (mfu/mbu) · (B*₀/B + L/L*)                     with B*₀ = R·N_tot/N_act, L* = b_w·N_act/(R·b_kv)

(R = (F/2)·b_w/W; the lecture's "ρ ≈ B*₀/B + L/L*" is the case mfu = mbu). Read backwards:

    B / B*₀ = 1 / (ρ·mbu/mfu − L/L*)          the implied decode batch relative to the balance batch
    mbu     = mfu · (1/m + L/L*) / ρ            the implied decode bandwidth efficiency at B = m·B*₀

at L = the fleet's mean decode context (``econ.analyses.traffic``). Decode does the same FLOPs per token as
prefill, so the roofline's ratio is max(1, ρ_mem); where ρ ≤ 1 neither B/B*₀ nor mbu is identified (NaN); where
ρ·mbu/mfu ≤ L/L* the KV read alone costs more than the observed ratio (implied mbu above 1: impossible,
flagged). L* comes from the architecture; a closed model has none (the first tier threshold is not L*: the
crossover reading fails on open models, ``inference_quantities``), so its KV term is dropped and B/B*₀ is a lower
bound.

**The deployment model** (open models, :mod:`econ.physics.traffic_cost`): the decode batch at which decode cost
per generated token over prefill cost per uncached prompt token, both at the traffic mix with attention and
communication, equals ρ; and the input price read as prefill FLOPs per token, f = p_in·(1 − margin)/c_flop with
c_flop = p/(F·mfu) (compute-bound prefill), against the architecture's FLOPs at the mix (attention included).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.formula import formula
from econ.physics import roofline
from econ.units import MEGA, SECONDS_PER_HOUR


@formula("ρ = max(1, (mfu/mbu)·(B*₀/B + L/L*))", "lecture f.3")
def price_ratio_roofline(batch_over_balance, context_over_critical, *, mfu, mbu):
    """ρ = max(1, (mfu/mbu)·(B*₀/B + L/L*)): output over input cost per token (lecture f.3, module docstring).

    The second term is a memory-bound decode's; decode never costs less than its compute, which is prefill's.
    """
    return np.maximum(
        1.0, np.divide(mfu, mbu) * (np.divide(1.0, batch_over_balance) + np.asarray(context_over_critical))
    )


@formula("B/B*₀ = 1 / (ρ·mbu/mfu − L/L*)", "lecture f.3")
def implied_batch_over_balance(price_ratio, context_over_critical, *, mfu, mbu):
    """B/B*₀ = 1/(ρ·mbu/mfu − L/L*); NaN where ρ ≤ 1 or the KV term alone exceeds ρ·mbu/mfu."""
    headroom = np.multiply(price_ratio, np.divide(mbu, mfu)) - np.asarray(context_over_critical)
    ok = (np.asarray(price_ratio) > 1.0) & (headroom > 0)
    return np.where(ok, 1.0 / np.where(ok, headroom, 1.0), np.nan)


@formula("mbu = mfu·(1/m + L/L*) / ρ", "lecture f.3")
def implied_decode_mbu(price_ratio, context_over_critical, batch_multiple, *, mfu):
    """mbu = mfu·(1/m + L/L*)/ρ: the bandwidth efficiency that makes ρ hold at B = m·B*₀; NaN where ρ ≤ 1.

    Above 1 no achievable efficiency reconciles ρ with the roofline at that batch and context (see
    :func:`mbu_check`); at ρ ≤ 1 decode is compute-bound or dearer than priced, and mbu is not identified.
    """
    rho = np.asarray(price_ratio, dtype=float)
    mbu = np.multiply(mfu, np.divide(1.0, batch_multiple) + np.asarray(context_over_critical)) / np.where(
        rho > 1.0, rho, 1.0
    )
    return np.where(rho > 1.0, mbu, np.nan)


MBU_CHECKS = (
    "within 0-1",
    "above 1: impossible, prices and roofline disagree at the scenario context and batch",
    "not identified (rho <= 1)",
)


@formula("implied mbu within (0, 1], above 1, or not identified", "physical range")
def mbu_check(implied_mbu) -> np.ndarray:
    """Label of an implied decode mbu (:data:`MBU_CHECKS`): an efficiency above 1 cannot be achieved."""
    v = np.asarray(implied_mbu, dtype=float)
    return np.where(np.isnan(v), MBU_CHECKS[2], np.where(v > 1.0, MBU_CHECKS[1], MBU_CHECKS[0]))


@formula("memory-bound, ρ ≤ 1, or KV alone exceeds ρ·mbu/mfu", "lecture f.3")
def regime(price_ratio, context_over_critical, *, mfu, mbu):
    """``memory_bound`` | ``rho_at_most_1`` (decode not dearer than prefill) | ``kv_alone_exceeds_rho``."""
    headroom = np.multiply(price_ratio, np.divide(mbu, mfu)) - np.asarray(context_over_critical)
    return np.where(
        np.asarray(price_ratio) <= 1.0, "rho_at_most_1", np.where(headroom <= 0, "kv_alone_exceeds_rho", "memory_bound")
    )


@formula("L* = b_w·N_act/(R·b_kv) from the architecture (none for a closed model)", "lecture b.3")
def critical_context(params_active, kv_bytes_per_token, hw: dict, kv_scale) -> np.ndarray:
    """L* per row [tokens] from the architecture, NaN without one (the KV term is then dropped).

    ``kv_bytes_per_token`` is at BF16 (``models``) and scaled by ``kv_scale`` to the cache format.
    """
    n_act, kv = np.asarray(params_active, dtype=float), np.asarray(kv_bytes_per_token, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        arch = roofline.critical_context_tokens(
            hw["critical_batch_ratio"], hw["weight_bytes_per_param"], n_act, kv * kv_scale
        )
    return np.where(np.isfinite(kv) & np.isfinite(n_act), arch, np.nan)


def critical_context_source(frame: pl.DataFrame) -> np.ndarray:
    arch = frame["kv_bytes_per_token"].is_not_null() & frame["params_active"].is_not_null()
    return np.where(arch.to_numpy(), "architecture", "none (KV term dropped: B/B*0 is a lower bound)")


@formula("ρ = p_out / p_in read through the roofline", "lecture f.3")
def model_ratios(frame: pl.DataFrame, assumptions, *, context_tokens: float) -> pl.DataFrame:
    """Per price row (base tier): ρ, implied B/B*₀ and decode mbu with scenario intervals, regime and the f.3 check.

    ``frame``: rows with ``input_usd_per_mtok``, ``output_usd_per_mtok`` (both > 0) and the architecture columns
    (may be null); ``context_tokens``: the decode context L (the traffic mix's mean, held in the interval).
    """
    if frame.height == 0:
        return frame
    a, c = assumptions, assumptions.central
    rho = (frame["output_usd_per_mtok"] / frame["input_usd_per_mtok"]).to_numpy()
    cols = {
        "rho": rho,
        **{k: frame[k].cast(pl.Float64).fill_null(np.nan).to_numpy() for k in ("params_active", "kv_bytes_per_token")},
    }
    names = ("prefill_mfu_frac", "decode_mbu_frac")

    def x_of(hw, cols):
        l_star = critical_context(cols["params_active"], cols["kv_bytes_per_token"], hw, hw["kv_scale"])
        return np.where(np.isfinite(l_star), np.divide(context_tokens, l_star), 0.0)

    def batch(hw, cols, prefill_mfu_frac, decode_mbu_frac):
        return implied_batch_over_balance(cols["rho"], x_of(hw, cols), mfu=prefill_mfu_frac, mbu=decode_mbu_frac)

    def mbu(hw, cols, prefill_mfu_frac, batch_multiple_over_balance_ratio):
        return implied_decode_mbu(cols["rho"], x_of(hw, cols), batch_multiple_over_balance_ratio, mfu=prefill_mfu_frac)

    def predicted(hw, cols, prefill_mfu_frac, decode_mbu_frac, batch_multiple_over_balance_ratio):
        return price_ratio_roofline(
            batch_multiple_over_balance_ratio, x_of(hw, cols), mfu=prefill_mfu_frac, mbu=decode_mbu_frac
        )

    l_star = critical_context(cols["params_active"], cols["kv_bytes_per_token"], a.central_hardware, a.kv_scale)
    x0 = np.where(np.isfinite(l_star), context_tokens / l_star, 0.0)
    b = a.propagate_rows(batch, names, cols)
    m = a.propagate_rows(mbu, ("prefill_mfu_frac", "batch_multiple_over_balance_ratio"), cols)
    pr = a.propagate_rows(predicted, (*names, "batch_multiple_over_balance_ratio"), cols)
    m_low = a.ranges["batch_multiple_over_balance_ratio"][0]
    central_b = np.asarray(b.central, dtype=float)
    reg = regime(rho, x0, mfu=c["prefill_mfu_frac"], mbu=c["decode_mbu_frac"])
    check = np.where(
        reg == "rho_at_most_1",
        "not identified (rho <= 1)",
        np.where(
            reg == "kv_alone_exceeds_rho",
            "no batch fits (the KV read alone exceeds rho)",
            np.where(central_b < m_low, "batch below the scenario's (f.3 inconsistency)", "consistent"),
        ),
    )
    central_m = np.asarray(m.central, dtype=float)
    f = pl.Series
    return frame.with_columns(
        f("output_over_input_ratio", rho),
        f("critical_context_tokens", l_star),
        f("critical_context_source", critical_context_source(frame)),
        f("context_over_critical_ratio", x0),
        f("regime", reg),
        f("batch_over_balance_ratio", central_b),
        f("batch_over_balance_scenario_low_ratio", b.low),
        f("batch_over_balance_scenario_high_ratio", b.high),
        f("implied_decode_mbu_frac", central_m),
        f("implied_decode_mbu_check", mbu_check(central_m)),
        f("implied_decode_mbu_scenario_low_frac", m.low),
        f("implied_decode_mbu_scenario_high_frac", m.high),
        f("predicted_output_over_input_ratio", np.asarray(pr.central, dtype=float)),
        f("predicted_output_over_input_scenario_low_ratio", pr.low),
        f("predicted_output_over_input_scenario_high_ratio", pr.high),
        f("lecture_f3_check", check),
    ).with_columns(pl.col(pl.Float64).fill_nan(None))


@formula("f_in = p_in·(1 − margin)·F·mfu/p", "lecture f.3 (compute-bound prefill)")
def prefill_flop_from_price(input_usd_per_mtok, gross_margin_frac, usd_per_chip_hour, peak_flop_per_s, mfu):
    """FLOPs per uncached prompt token an input price pays for in compute-bound prefill [FLOP/token]."""
    cost = np.divide(input_usd_per_mtok, MEGA) * np.subtract(1.0, gross_margin_frac)
    return cost * np.multiply(peak_flop_per_s, mfu) / np.divide(usd_per_chip_hour, SECONDS_PER_HOUR)


@formula("F_in = p_in·(1 − margin)·F·mfu/p; implied/true = F_in / the architecture's at the mix", "lecture f.3")
def prefill_reading(frame: pl.DataFrame, assumptions) -> pl.DataFrame:
    """Add the input price read as prefill FLOPs per token, its scenario interval, and implied/true where the row
    has ``true_prefill_flop_per_input_token`` (the deployment model at the traffic mix)."""
    a, c, hw = assumptions, assumptions.central, assumptions.central_hardware
    price = frame["input_usd_per_mtok"].cast(pl.Float64).to_numpy()
    true = (
        frame["true_prefill_flop_per_input_token"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        if "true_prefill_flop_per_input_token" in frame.columns
        else np.full(frame.height, np.nan)
    )
    names = ("usd_per_chip_hour", "gross_margin_frac", "prefill_mfu_frac")

    def draw(hw, cols, usd_per_chip_hour, gross_margin_frac, prefill_mfu_frac):
        return prefill_flop_from_price(
            cols["price"], gross_margin_frac, usd_per_chip_hour, hw["peak_flop_per_s"], prefill_mfu_frac
        )

    mc = a.propagate_rows(draw, names, {"price": price})
    central = prefill_flop_from_price(
        price, c["gross_margin_frac"], c["usd_per_chip_hour"], hw["peak_flop_per_s"], c["prefill_mfu_frac"]
    )
    f = pl.Series
    with np.errstate(invalid="ignore", divide="ignore"):
        return frame.with_columns(
            f("prefill_flop_per_input_token", central),
            f("prefill_flop_scenario_low_per_input_token", mc.low),
            f("prefill_flop_scenario_high_per_input_token", mc.high),
            f("prefill_flop_over_true_ratio", central / true),
        ).with_columns(pl.col(pl.Float64).fill_nan(None))
