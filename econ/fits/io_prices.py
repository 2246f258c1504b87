"""Input vs output prices → prefill vs decode (lecture f.3), per model and across the open-weight market.

**Per model.** Prefill is compute-bound and decode memory-bound (lecture f.3). Per chip
(G cancels), with the same margin on both prices so that it cancels in the ratio:

    c_in  = p · 2·N_act / (F · mfu)                                  (prefill, compute-bound)
    c_out = p · (N_tot·b_w / B + L·b_kv) / (W · mbu)                 (decode, memory-bound)
    ρ = c_out / c_in = (mfu/mbu) · (B*₀/B + L/L*)                     with B*₀ = R·N_tot/N_act, L* = b_w·N_act/(R·b_kv)

(R = (F/2)·b_w/W; the lecture's "ρ ≈ B*₀/B + L/L*" is the case mfu = mbu). Read backwards:

    B / B*₀ = 1 / (ρ·mbu/mfu − L/L*)          the implied decode batch relative to the balance batch
    mbu     = mfu · (1/m + L/L*) / ρ            the implied decode bandwidth efficiency at B = m·B*₀

Decode does the same FLOPs per token as prefill, so its cost is at least prefill's and the
roofline's ratio is max(1, ρ_mem) with ρ_mem the memory-bound expression above. Where ρ ≤ 1
decode is priced at or below prefill's compute cost: the roofline puts it at or past the
balance batch, and neither B/B*₀ nor mbu is identified (NaN). Where ρ·mbu/mfu ≤ L/L* the
KV read alone costs more than the observed ratio: no batch fits, and the implied mbu comes
out above 1 — physically impossible, so the prices and the roofline at the scenario's
context and batch disagree (typically small-N_act open models with a large KV cache,
L* of a few hundred tokens); ``implied_decode_mbu_check`` flags it and the value is kept as
the factor by which the roofline over-prices decode. L* comes from the architecture
(open-weight models), else from the model's first long-context threshold (the lecture's f.1
reading), else the KV term is dropped, which makes B/B*₀ a lower bound. The lecture's
consistency warning (f.3: ρ = 5 with L* = 200k needs B ≈ 0.2·B*₀, not the 2–3·B*₀ of b.2)
shows as an implied batch below the scenario's ``batch_multiple_over_balance_ratio`` range.

**Market.** Across open-weight models with known architecture and several providers, the
stacked regression (relative errors)

    input  ≈ c_flop · 2·N_act
    output ≈ c_flop · 2·N_act + c_byte · (N_tot·b_w / B_eff + L·b_kv)

is linear in (c_flop, c_byte/B_eff, c_byte) at the scenario's context L and formats (fitted
twice: weights 1/price, then 1/fitted price), and
gives the market's $ per FLOP, $ per byte moved and effective decode batch. Changing L or
the KV format only rescales the KV column, so c_byte ∝ 1/L and B_eff ∝ b_w/L exactly: the
scenario interval needs no refit.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from scipy.special import stdtrit

from econ.fits.wrapper import fit
from econ.formula import formula
from econ.physics import roofline
from econ.physics.model import kv_window_bytes
from econ.units import MEGA, SECONDS_PER_HOUR

LEVEL = 0.9


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


@formula("L* = b_w·N_act/(R·b_kv), else the first tier threshold", "lecture b.3, f.1")
def critical_context(params_active, kv_bytes_per_token, tier_threshold_tokens, hw: dict, kv_scale) -> np.ndarray:
    """L* per row [tokens]: architecture (b_w·N_act/(R·b_kv)), else the tier threshold, else NaN (KV term dropped).

    ``kv_bytes_per_token`` is at BF16 (``models``) and scaled by ``kv_scale`` to the cache format.
    """
    n_act, kv = np.asarray(params_active, dtype=float), np.asarray(kv_bytes_per_token, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        arch = roofline.critical_context_tokens(
            hw["critical_batch_ratio"], hw["weight_bytes_per_param"], n_act, kv * kv_scale
        )
    return np.where(np.isfinite(kv) & np.isfinite(n_act), arch, np.asarray(tier_threshold_tokens, dtype=float))


def critical_context_source(frame: pl.DataFrame) -> np.ndarray:
    arch = frame["kv_bytes_per_token"].is_not_null() & frame["params_active"].is_not_null()
    tier = frame["tier_threshold_tokens"].is_not_null()
    return np.where(
        arch.to_numpy(),
        "architecture",
        np.where(tier.to_numpy(), "price_tier_threshold", "none (KV term dropped: B/B*0 is a lower bound)"),
    )


@formula("ρ = p_out / p_in read through the roofline", "lecture f.3")
def model_ratios(frame: pl.DataFrame, assumptions) -> pl.DataFrame:
    """Per price row (base tier): ρ, implied B/B*₀ and decode mbu with scenario intervals, regime and the f.3 check.

    ``frame``: rows with ``input_usd_per_mtok``, ``output_usd_per_mtok`` (both > 0), ``tier_threshold_tokens``
    (first long-context threshold of the schedule, or null) and the architecture columns (may be null).
    """
    if frame.height == 0:
        return frame
    a, c = assumptions, assumptions.central
    rho = (frame["output_usd_per_mtok"] / frame["input_usd_per_mtok"]).to_numpy()
    cols = {
        "rho": rho,
        **{
            k: frame[k].cast(pl.Float64).fill_null(np.nan).to_numpy()
            for k in ("params_active", "kv_bytes_per_token", "tier_threshold_tokens")
        },
    }
    names = ("prefill_mfu_frac", "decode_mbu_frac", "context_tokens")

    def x_of(hw, cols, context_tokens):
        l_star = critical_context(
            cols["params_active"], cols["kv_bytes_per_token"], cols["tier_threshold_tokens"], hw, hw["kv_scale"]
        )
        return np.where(np.isfinite(l_star), np.divide(context_tokens, l_star), 0.0)

    def batch(hw, cols, prefill_mfu_frac, decode_mbu_frac, context_tokens):
        return implied_batch_over_balance(
            cols["rho"], x_of(hw, cols, context_tokens), mfu=prefill_mfu_frac, mbu=decode_mbu_frac
        )

    def mbu(hw, cols, prefill_mfu_frac, context_tokens, batch_multiple_over_balance_ratio):
        return implied_decode_mbu(
            cols["rho"], x_of(hw, cols, context_tokens), batch_multiple_over_balance_ratio, mfu=prefill_mfu_frac
        )

    def predicted(hw, cols, prefill_mfu_frac, decode_mbu_frac, context_tokens, batch_multiple_over_balance_ratio):
        return price_ratio_roofline(
            batch_multiple_over_balance_ratio, x_of(hw, cols, context_tokens), mfu=prefill_mfu_frac, mbu=decode_mbu_frac
        )

    l_star = critical_context(
        cols["params_active"], cols["kv_bytes_per_token"], cols["tier_threshold_tokens"], a.central_hardware, a.kv_scale
    )
    x0 = np.where(np.isfinite(l_star), c["context_tokens"] / l_star, 0.0)
    b = a.propagate_rows(batch, names, cols)
    m = a.propagate_rows(mbu, ("prefill_mfu_frac", "context_tokens", "batch_multiple_over_balance_ratio"), cols)
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


# ---------------------------------------------------------------------------- market regression

MARKET_PARAMETERS = ("usd_per_mtok_per_tflop", "usd_per_mtok_per_weight_tb", "usd_per_mtok_per_kv_gb")
UNITS = {
    "usd_per_flop": "USD/FLOP",
    "usd_per_kv_byte": "USD/byte",
    "effective_batch_seqs": "sequences",
    "implied_usd_per_chip_hour_from_flops": "USD/chip-hour",
    "implied_usd_per_chip_hour_from_bytes": "USD/chip-hour",
}


def market_design(rows: pl.DataFrame, *, weight_bytes_per_param: float, kv_scale: float, context_tokens: float):
    """Stacked design (input rows then output rows): columns 2·N_act [TFLOP], N_tot·b_w [TB], KV read at L [GB]."""
    n_act = rows["params_active"].to_numpy().astype(float)
    n_tot = rows["params_total"].to_numpy().astype(float)
    kv = rows["kv_bytes_per_token"].to_numpy().astype(float) * kv_scale
    window = kv_window_bytes(
        context_tokens,
        rows["kv_window_bytes_per_sequence"].fill_null(0.0).to_numpy() * kv_scale,
        rows["sliding_window_tokens"].cast(pl.Float64).fill_null(np.nan).to_numpy(),
    )
    flop = 2.0 * n_act / 1e12
    weight = n_tot * weight_bytes_per_param / 1e12
    kv_read = (context_tokens * kv + window) / 1e9
    zeros = np.zeros_like(flop)
    x = np.vstack([np.column_stack([flop, zeros, zeros]), np.column_stack([flop, weight, kv_read])])
    y = np.concatenate([rows["input_usd_per_mtok"].to_numpy(), rows["output_usd_per_mtok"].to_numpy()]).astype(float)
    return x, y


def _linear(x, p):
    return x @ p


@formula("input = c_flop·2·N_act; output = c_flop·2·N_act + c_byte·(N_tot·b_w/B_eff + L·b_kv)", "lecture f.3")
def fit_market(rows: pl.DataFrame, *, weight_bytes_per_param: float, kv_scale: float, context_tokens: float):
    """The wrapper's fit of the stacked regression (weights 1/price) and the design it used."""
    x, y = market_design(
        rows, weight_bytes_per_param=weight_bytes_per_param, kv_scale=kv_scale, context_tokens=context_tokens
    )
    # relative errors of unknown size: each row divided by a scale (the wrapper's ``sigma`` means a known absolute
    # standard deviation, which would skip the residual-variance scaling of the covariance). Pass 1 scales by the
    # observed price; pass 2 by pass 1's fitted price, so the weights do not correlate with the noise (IRLS for a
    # variance proportional to the mean squared).
    scale = y
    for _ in range(2):
        result = fit(
            _linear,
            x / scale[:, None],
            y / scale,
            [0.1, 0.1, 0.1],
            names=MARKET_PARAMETERS,
            bounds=([0.0] * 3, [np.inf] * 3),
            linear=True,
            level=LEVEL,
            seed=0,
        )
        fitted = x @ np.nan_to_num(result.estimate)
        scale = np.where(fitted > 0, fitted, y)
    return result, x, y


@formula("B_eff = c_byte / (c_byte/B_eff), interval by Fieller's method", "Fieller 1954")
def effective_batch_interval(result) -> tuple[float, float, float]:
    """B_eff = 1000·θ_kv/θ_weight [sequences] with its fit interval (log delta method, or bootstrap quantiles)."""
    i_w, i_kv = MARKET_PARAMETERS.index("usd_per_mtok_per_weight_tb"), MARKET_PARAMETERS.index("usd_per_mtok_per_kv_gb")
    th_w, th_kv = result.estimate[i_w], result.estimate[i_kv]
    pinned = th_w <= 1e-9 * np.nanmax(np.abs(result.estimate))  # no weight term: the batch is not bounded above
    with np.errstate(divide="ignore", invalid="ignore"):
        central = np.inf if pinned else 1000.0 * th_kv / th_w
    if result.interval_kind == "covariance" and th_w > 0 and th_kv > 0:
        cov = result.extra["covariance"]
        var = cov[i_kv, i_kv] / th_kv**2 + cov[i_w, i_w] / th_w**2 - 2 * cov[i_w, i_kv] / (th_w * th_kv)
        t = stdtrit(max(result.n_points - len(MARKET_PARAMETERS), 1), (1 + result.level) / 2)
        half = t * np.sqrt(max(var, 0.0))
        return float(central), float(central * np.exp(-half)), float(central * np.exp(half))
    if result.interval_kind == "bootstrap":
        draws = result.extra["bootstrap"]
        with np.errstate(divide="ignore", invalid="ignore"):  # a draw with no weight term has an unbounded batch
            ratio = 1000.0 * draws[:, i_kv] / draws[:, i_w]
            lo, hi = np.nanquantile(
                np.where(draws[:, i_w] > 0, ratio, np.inf),
                [(1 - result.level) / 2, (1 + result.level) / 2],
                method="inverted_cdf",
            )
        return float(central), float(lo), float(hi)
    return float(central), -np.inf, np.inf


@formula("$/chip-hour = c·F·mfu (FLOP) or c·W·mbu (bytes), per (1 − margin)", "lecture a.4, f.3")
def market_quantities(result, assumptions) -> pl.DataFrame:
    """Long table of the market's implied quantities: estimate, fit interval, scenario interval (module docstring)."""
    a, c, hw = assumptions, assumptions.central, assumptions.central_hardware
    est = dict(zip(MARKET_PARAMETERS, result.estimate))
    lo = dict(zip(MARKET_PARAMETERS, result.low))
    hi = dict(zip(MARKET_PARAMETERS, result.high))
    to_flop, to_byte = 1.0 / (MEGA * 1e12), 1.0 / (MEGA * 1e9)
    b_w0, l0, kv0 = hw["weight_bytes_per_param"], c["context_tokens"], a.kv_scale
    b_eff, b_lo, b_hi = effective_batch_interval(result)

    def per_hour(cost_per_unit, rate_per_s, margin, eff):
        return cost_per_unit * (1.0 - margin) * rate_per_s * eff * SECONDS_PER_HOUR

    specs = [  # (quantity, estimate, fit low, fit high, scenario function or None, assumptions it reads, meaning)
        (
            "usd_per_flop",
            est["usd_per_mtok_per_tflop"] * to_flop,
            lo["usd_per_mtok_per_tflop"] * to_flop,
            hi["usd_per_mtok_per_tflop"] * to_flop,
            None,
            (),
            "c_flop: price of one FLOP of a token's forward pass (input and output)",
        ),
        (
            "usd_per_kv_byte",
            est["usd_per_mtok_per_kv_gb"] * to_byte,
            lo["usd_per_mtok_per_kv_gb"] * to_byte,
            hi["usd_per_mtok_per_kv_gb"] * to_byte,
            lambda hw, context_tokens: (
                est["usd_per_mtok_per_kv_gb"] * to_byte * l0 * kv0 / (context_tokens * hw["kv_scale"])
            ),
            ("context_tokens",),
            "c_byte: price of one byte read from HBM per output token; scales as 1/(L x KV format)",
        ),
        (
            "effective_batch_seqs",
            b_eff,
            b_lo,
            b_hi,
            lambda hw, context_tokens: (
                b_eff * (hw["weight_bytes_per_param"] / b_w0) * l0 * kv0 / (context_tokens * hw["kv_scale"])
            ),
            ("context_tokens",),
            "B_eff = c_byte / (price per weight byte per token): the decode batch the market prices",
        ),
        (
            "implied_usd_per_chip_hour_from_flops",
            per_hour(
                est["usd_per_mtok_per_tflop"] * to_flop,
                hw["peak_flop_per_s"],
                c["gross_margin_frac"],
                c["prefill_mfu_frac"],
            ),
            per_hour(
                lo["usd_per_mtok_per_tflop"] * to_flop,
                hw["peak_flop_per_s"],
                c["gross_margin_frac"],
                c["prefill_mfu_frac"],
            ),
            per_hour(
                hi["usd_per_mtok_per_tflop"] * to_flop,
                hw["peak_flop_per_s"],
                c["gross_margin_frac"],
                c["prefill_mfu_frac"],
            ),
            lambda hw, gross_margin_frac, prefill_mfu_frac: per_hour(
                est["usd_per_mtok_per_tflop"] * to_flop, hw["peak_flop_per_s"], gross_margin_frac, prefill_mfu_frac
            ),
            ("gross_margin_frac", "prefill_mfu_frac"),
            "c_flop x (1 - margin) x F x mfu x 3600: the chip-hour cost the FLOP price implies",
        ),
        (
            "implied_usd_per_chip_hour_from_bytes",
            per_hour(
                est["usd_per_mtok_per_kv_gb"] * to_byte,
                hw["hbm_bandwidth_bytes_per_s"],
                c["gross_margin_frac"],
                c["decode_mbu_frac"],
            ),
            per_hour(
                lo["usd_per_mtok_per_kv_gb"] * to_byte,
                hw["hbm_bandwidth_bytes_per_s"],
                c["gross_margin_frac"],
                c["decode_mbu_frac"],
            ),
            per_hour(
                hi["usd_per_mtok_per_kv_gb"] * to_byte,
                hw["hbm_bandwidth_bytes_per_s"],
                c["gross_margin_frac"],
                c["decode_mbu_frac"],
            ),
            lambda hw, gross_margin_frac, decode_mbu_frac, context_tokens: per_hour(
                est["usd_per_mtok_per_kv_gb"] * to_byte * l0 * kv0 / (context_tokens * hw["kv_scale"]),
                hw["hbm_bandwidth_bytes_per_s"],
                gross_margin_frac,
                decode_mbu_frac,
            ),
            ("gross_margin_frac", "decode_mbu_frac", "context_tokens"),
            "c_byte x (1 - margin) x W x mbu x 3600: the chip-hour cost the byte price implies",
        ),
    ]
    rows = []
    for quantity, value, fit_lo, fit_hi, fn, names, meaning in specs:
        if fn is None or not np.isfinite(value):
            s_lo = s_hi = value
            varied = "does not depend on the assumptions" if fn is None else "not bounded: no interval"
        else:
            mc = a.propagate(lambda hw, fn=fn, **kw: np.atleast_1d(fn(hw, **kw)), names)
            s_lo, s_hi = float(mc.low[0]), float(mc.high[0])
            varied = a.describe(names)
        rows.append(
            {
                "quantity": quantity,
                "unit": UNITS[quantity],
                "estimate": float(value),
                "fit_low": float(fit_lo),
                "fit_high": float(fit_hi),
                "scenario_low": s_lo,
                "scenario_high": s_hi,
                "meaning": meaning,
                "scenario_interval": varied,
            }
        )
    return pl.DataFrame(rows)


@formula("observed / predicted, predicted = X·ĉ", "fit_market residuals")
def market_residuals(rows: pl.DataFrame, result, x: np.ndarray, y: np.ndarray) -> pl.DataFrame:
    """Per price row × component (input, output): the observed price, the regression's prediction and their ratio."""
    predicted = x @ np.nan_to_num(result.estimate)
    n = rows.height
    ident = rows.select("source", "provider", "model", "arch_model", "arch_match")
    return (
        pl.concat([ident, ident])
        .with_columns(
            pl.Series("component", ["input"] * n + ["output"] * n),
            pl.Series("observed_usd_per_mtok", y),
            pl.Series("predicted_usd_per_mtok", predicted),
            pl.Series("observed_over_predicted_ratio", y / predicted),
        )
        .with_columns(pl.col(pl.Float64).fill_nan(None))
        .sort("provider", "arch_model", "model", "component")
    )
