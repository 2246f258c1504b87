"""The open-weight market's prices per FLOP and per byte, and whether they tell one story (lecture f.3).

Across every provider's standard price of an open-weight model with a known architecture, the stacked
regression (relative errors, fitted twice: weights 1/price, then 1/fitted price)

    input  ≈ c_flop · F_in                                  F_in: FLOPs per uncached prompt token
    output ≈ c_flop · F_out + c_byte · (N_tot·b_w / B_eff + K_out)

is linear in (c_flop, c_byte/B_eff, c_byte). Its design comes from the deployment model at the fleet's traffic
mix (:mod:`econ.physics.traffic_cost`): F_in the weight and attention FLOPs of a prompt token after the cached
prefix, F_out those of a generated token at the mean decode context, K_out the cache bytes it reads there. The FLOPs
are counted in **prefill-dense equivalents** at the calibrated efficiency of each class, as the deployment model
times them: a routed expert's FLOP runs at expert_mfu, an attention FLOP at the model's attention kind's share
mfu_a (the calibrated share of its kind, :mod:`econ.fits.calibration`; where no share is stated, the pool's) of the
peak of the cache's format, P_a (BF16 for a BF16 cache: half the FP8 peak P the dense FLOPs run at), a decode step's
other dense FLOPs at decode_mfu, so

    F_in  = F_in,dense + F_in,exp · mfu_p/mfu_e + F_in,attn · (P/P_a) · mfu_p/mfu_a
    F_out = F_out,dense · mfu_p/mfu_d + F_out,exp · mfu_p/mfu_e + F_out,attn · (P/P_a) · mfu_p/mfu_a

and c_flop prices one FLOP at prefill's dense efficiency (the consistency test below converts it at mfu_p). The
efficiencies are varied over their calibrated intervals: the regression is refitted on every draw, and the spread of
the two chip-hour prices' ratio over the draws is its scenario interval.

**Consistency.** One chip-hour pays for both: c_flop·(1 − margin)·F·mfu·3600 and c_byte·(1 − margin)·W·mbu·3600
should be the same $/chip-hour. The regression is internally consistent when their intervals (fit and scenario,
combined in log quadrature) overlap; otherwise its status is ``inconsistent`` and says by how much, so neither
number is read as the market's chip-hour price. B_eff is compared with what measured systems run
(:mod:`econ.fits.measured_decode`); more than its ``FAR_FACTOR`` away is flagged.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits.measured_decode import DEEPSEEK_DECODE, MeasuredDecode, batch_check
from econ.fits.wrapper import fit
from econ.formula import formula
from econ.units import MEGA, SECONDS_PER_HOUR

LEVEL = 0.9
MARKET_PARAMETERS = ("usd_per_mtok_per_tflop", "usd_per_mtok_per_weight_tb", "usd_per_mtok_per_kv_gb")
FLOP_DESIGN = (
    "true_prefill_flop_per_input_token",
    "prefill_expert_flop_per_input_token",
    "prefill_attention_flop_per_input_token",
    "decode_flop_per_output_token",
    "decode_expert_flop_per_output_token",
    "decode_attention_flop_per_output_token",
)
DESIGN = (*FLOP_DESIGN, "weight_bytes_per_step", "decode_kv_read_bytes_per_output_token")
"""Design columns a market row carries (from the deployment model at the traffic mix)."""
ATTENTION_RATIO = "attention_mfu_over_shared_ratio"
"""A row's attention share over the scenario's shared one (its model's attention kind's, 1 for a kind the calibration
did not fit): a draw of the shared share moves every kind's by the same factor."""
ATTENTION_PEAK_RATIO = "attention_peak_over_peak_ratio"
"""The peak attention runs at (the cache format's) over the peak the dense FLOPs run at (the weights')."""
EFFICIENCIES = ("prefill_mfu_frac", "decode_mfu_frac", "expert_mfu_frac", "attention_mfu_frac")
"""The calibrated efficiencies the FLOP classes run at (the serving scenario's), varied over their intervals."""
EFFICIENCY_DRAWS = 200
"""Monte Carlo draws of the efficiencies (each a weighted least-squares refit of a few hundred rows)."""
UNITS = {
    "usd_per_flop": "USD/FLOP",
    "usd_per_kv_byte": "USD/byte",
    "effective_batch_seqs": "sequences",
    "implied_usd_per_chip_hour_from_flops": "USD/chip-hour",
    "implied_usd_per_chip_hour_from_bytes": "USD/chip-hour",
    "flop_over_byte_chip_hour_ratio": "",
}


@formula("F_in = F_dense + F_exp·mfu_p/mfu_e + F_attn·(P/P_a)·mfu_p/mfu_a; F_out = F_dense·mfu_p/mfu_d + …", "module")
def equivalent_flops(rows: pl.DataFrame, efficiencies: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(input, output) FLOPs per token in prefill-dense equivalents at ``efficiencies`` (prefill, decode, expert and
    the shared attention mfu, each row's attention at the shared one times its :data:`ATTENTION_RATIO`, of its
    :data:`ATTENTION_PEAK_RATIO` of the peak; an attention share of NaN runs attention at the pool's efficiency;
    None: every FLOP at the same efficiency, the plain counts)."""
    f_in, e_in, a_in, f_out, e_out, a_out = (rows[c].cast(pl.Float64).fill_null(0.0).to_numpy() for c in FLOP_DESIGN)
    if efficiencies is None:
        return f_in, f_out
    p, d, e, shared = (np.asarray(efficiencies[k], dtype=float) for k in EFFICIENCIES)
    ratio, peak = (rows[c].cast(pl.Float64).fill_null(1.0).to_numpy() for c in (ATTENTION_RATIO, ATTENTION_PEAK_RATIO))
    a = shared * ratio
    a_p, a_d = np.where(np.isnan(a), p, a) * peak, np.where(np.isnan(a), d, a) * peak  # against the dense peak
    f_in_eq = (f_in - e_in - a_in) + e_in * (p / e) + a_in * (p / a_p)
    f_out_eq = (f_out - e_out - a_out) * (p / d) + e_out * (p / e) + a_out * (p / a_d)
    return f_in_eq, f_out_eq


def market_design(rows: pl.DataFrame, efficiencies: dict | None = None):
    """Stacked design (input rows then output rows): F [TFLOP, prefill-dense equivalents at ``efficiencies``],
    N_tot·b_w [TB], K_out [GB]; and the prices."""
    f_in, f_out = equivalent_flops(rows, efficiencies)
    weight, kv = (rows[c].cast(pl.Float64).to_numpy() for c in DESIGN[len(FLOP_DESIGN) :])
    zeros = np.zeros(rows.height)
    x = np.vstack(
        [
            np.column_stack([f_in / 1e12, zeros, zeros]),
            np.column_stack([f_out / 1e12, weight / 1e12, kv / 1e9]),
        ]
    )
    y = np.concatenate([rows["input_usd_per_mtok"].to_numpy(), rows["output_usd_per_mtok"].to_numpy()]).astype(float)
    return x, y


def _linear(x, p):
    return x @ p


@formula("input = c_flop·F_in; output = c_flop·F_out + c_byte·(N_tot·b_w/B_eff + K_out)", "lecture f.3, h.1")
def fit_market(rows: pl.DataFrame, efficiencies: dict | None = None):
    """The wrapper's fit of the stacked regression (weights 1/price, then 1/fitted price) and the design it used."""
    x, y = market_design(rows, efficiencies)
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


@formula("B_eff = c_byte / (c_byte/B_eff), interval by the delta method in logs", "Fieller 1954")
def effective_batch_interval(result) -> tuple[float, float, float]:
    """B_eff = 1000·θ_kv/θ_weight [sequences] with its fit interval (log delta method, or bootstrap quantiles)."""
    i_w, i_kv = MARKET_PARAMETERS.index("usd_per_mtok_per_weight_tb"), MARKET_PARAMETERS.index("usd_per_mtok_per_kv_gb")
    th_w, th_kv = result.estimate[i_w], result.estimate[i_kv]
    if not (np.isfinite(th_w) and np.isfinite(th_kv)):  # too few rows to fit (the status says so): no batch
        return float("nan"), -np.inf, np.inf
    pinned = th_w <= 1e-9 * np.nanmax(np.abs(result.estimate))  # no weight term: the batch is not bounded above
    with np.errstate(divide="ignore", invalid="ignore"):
        central = np.inf if pinned else 1000.0 * th_kv / th_w
    if result.interval_kind == "covariance" and th_w > 0 and th_kv > 0:
        cov = result.extra["covariance"]
        var = cov[i_kv, i_kv] / th_kv**2 + cov[i_w, i_w] / th_w**2 - 2 * cov[i_w, i_kv] / (th_w * th_kv)
        from scipy.special import stdtrit  # imported when an interval is computed (see econ.fits.wrapper)

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


def _ratio_fit_interval(result, i, j, ratio) -> tuple[float, float]:
    """Fit interval of a ratio θ_i/θ_j (times constants) by the delta method in logs, from the covariance."""
    th_i, th_j = result.estimate[i], result.estimate[j]
    if result.interval_kind != "covariance" or not (th_i > 0 and th_j > 0):
        return -np.inf, np.inf
    cov = result.extra["covariance"]
    var = cov[i, i] / th_i**2 + cov[j, j] / th_j**2 - 2 * cov[i, j] / (th_i * th_j)
    from scipy.special import stdtrit

    half = stdtrit(max(result.n_points - len(MARKET_PARAMETERS), 1), (1 + result.level) / 2) * np.sqrt(max(var, 0.0))
    return float(ratio * np.exp(-half)), float(ratio * np.exp(half))


@formula("per draw of the efficiencies: refit, ratio of the two chip-hour prices; 5–95% over the draws", "module")
def efficiency_ratio_draws(rows: pl.DataFrame, efficiencies: dict, weights: np.ndarray, *, n: int = EFFICIENCY_DRAWS):
    """The FLOP-over-byte chip-hour ratio's factor against the central fit, per draw of the efficiencies over their
    ranges (``efficiencies``: name -> (central, low, high)), each a weighted least-squares refit with the central
    fit's weights. Returns the draws' ratios over the central one (5–95% of them is the scenario interval)."""
    from econ.fits.propagate import draw

    central = {k: v[0] for k, v in efficiencies.items()}
    ranges = {k: (v[1], v[2]) for k, v in efficiencies.items() if v[1] < v[2]}
    sample = draw(ranges, n, seed=0)

    # every draw's design at once (the central one first): the same elementwise arithmetic as market_design's
    every = {k: np.r_[central[k], sample[k]] if k in sample else np.full(n + 1, central[k]) for k in central}
    f_in, f_out = equivalent_flops(rows, {k: every[k][:, None] for k in EFFICIENCIES})
    x, y = market_design(rows)
    designs = np.repeat(x[None], n + 1, axis=0)
    designs[:, : rows.height, 0] = f_in / 1e12
    designs[:, rows.height :, 0] = f_out / 1e12
    # one least-squares solve per draw: a batched solver would not give lstsq's numbers bit for bit
    beta = np.array([np.linalg.lstsq(d * weights[:, None], y * weights, rcond=None)[0] for d in designs])
    flop, byte = beta[:, 0], beta[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where((byte > 0) & (flop > 0), flop * every["prefill_mfu_frac"] / byte, np.nan)
    base, out = ratios[0], ratios[1:]
    return out / base


@formula("$/chip-hour = c·(1 − margin)·F·mfu·3600 (FLOP) or c·(1 − margin)·W·mbu·3600 (bytes)", "lecture a.4, f.3")
def usd_per_chip_hour(usd_per_unit, units_per_s, gross_margin_frac, efficiency):
    """The chip-hour cost a price per FLOP (or per byte) implies on a chip doing ``units_per_s`` at ``efficiency``."""
    return usd_per_unit * (1.0 - np.asarray(gross_margin_frac)) * units_per_s * efficiency * SECONDS_PER_HOUR


@formula("ln hi = ln x + √(ln(fit_hi/x)² + ln(scen_hi/x)²), low alike", "log quadrature")
def combined_interval(estimate, fit_low, fit_high, scenario_low, scenario_high) -> tuple[float, float]:
    """Fit and scenario intervals combined in log quadrature (an end that is not finite gives that end unbounded)."""
    if not (np.isfinite(estimate) and estimate > 0):
        return float("nan"), float("nan")

    def gap(b, upper):
        if not (np.isfinite(b) and b > 0):
            return np.inf
        return max(np.log(b / estimate) if upper else np.log(estimate / b), 0.0)

    up = np.hypot(gap(fit_high, True), gap(scenario_high, True))
    down = np.hypot(gap(fit_low, False), gap(scenario_low, False))
    return float(estimate * np.exp(-down)), float(estimate * np.exp(up))


@formula("consistent when the interval of (FLOP $/chip-hour)/(byte $/chip-hour) contains 1", "lecture a.4")
def consistency(ratio_estimate, ratio_low, ratio_high, flop_estimate, byte_estimate) -> tuple[str, str]:
    """(status, reason) of the regression's two chip-hour prices, from the interval of their ratio (the margin and
    the $/chip-hour cancel in it; the fit's covariance and the efficiencies, chip and KV format do not)."""
    if not (np.isfinite(ratio_low) and np.isfinite(ratio_high)):
        return "ok", "the ratio of the two chip-hour prices has no finite interval: no test"
    if ratio_low <= 1.0 <= ratio_high:
        return "ok", (
            f"FLOP prices imply {flop_estimate:.3g} and byte prices {byte_estimate:.3g} USD/chip-hour; their ratio "
            f"{ratio_estimate:.3g} ({ratio_low:.3g}-{ratio_high:.3g}) contains 1"
        )
    return "inconsistent", (
        f"FLOP prices imply {flop_estimate:.3g} USD/chip-hour and byte prices {byte_estimate:.3g}: ratio "
        f"{ratio_estimate:.3g} ({ratio_low:.3g}-{ratio_high:.3g}) excludes 1, so one chip-hour cannot cost both; "
        "the market does not price decode bytes at the input's FLOP rate (margins, batch or efficiencies differ "
        "between prefill and decode)"
    )


@formula("c_flop, c_byte, B_eff and the $/chip-hour each implies, with fit and scenario intervals", "module")
def market_quantities(
    result, assumptions, measured: MeasuredDecode = DEEPSEEK_DECODE, efficiency_factor=None, efficiency_text=""
) -> pl.DataFrame:
    """Long table of the market's implied quantities: estimate, fit, scenario and combined intervals, checks.

    ``efficiency_factor``: (low, high) factors on the chip-hour ratio from refitting over the efficiencies' draws
    (:func:`efficiency_ratio_draws`), folded into its scenario interval in log quadrature; ``efficiency_text`` says
    what was varied."""
    a, c, hw = assumptions, assumptions.central, assumptions.central_hardware
    est = dict(zip(MARKET_PARAMETERS, result.estimate))
    lo = dict(zip(MARKET_PARAMETERS, result.low))
    hi = dict(zip(MARKET_PARAMETERS, result.high))
    to_flop, to_byte = 1.0 / (MEGA * 1e12), 1.0 / (MEGA * 1e9)
    b_w0, kv0 = hw["weight_bytes_per_param"], a.kv_scale
    b_eff, b_lo, b_hi = effective_batch_interval(result)

    def flop_hour(value, hw, margin, mfu):
        return usd_per_chip_hour(value * to_flop, hw["peak_flop_per_s"], margin, mfu)

    def byte_hour(value, hw, margin, mbu):
        return usd_per_chip_hour(value * to_byte, hw["hbm_bandwidth_bytes_per_s"], margin, mbu)

    m0 = c["gross_margin_frac"]
    specs = [  # (quantity, estimate, fit low, fit high, scenario function or None, assumptions it reads, meaning)
        (
            "usd_per_flop",
            est["usd_per_mtok_per_tflop"] * to_flop,
            lo["usd_per_mtok_per_tflop"] * to_flop,
            hi["usd_per_mtok_per_tflop"] * to_flop,
            None,
            (),
            "c_flop: price of one FLOP of a token's forward pass, attention included (input and output)",
        ),
        (
            "usd_per_kv_byte",
            est["usd_per_mtok_per_kv_gb"] * to_byte,
            lo["usd_per_mtok_per_kv_gb"] * to_byte,
            hi["usd_per_mtok_per_kv_gb"] * to_byte,
            lambda hw: est["usd_per_mtok_per_kv_gb"] * to_byte * kv0 / hw["kv_scale"],
            (),
            "c_byte: price of one byte read from HBM per output token; scales as 1/(KV format)",
        ),
        (
            "effective_batch_seqs",
            b_eff,
            b_lo,
            b_hi,
            lambda hw: b_eff * (hw["weight_bytes_per_param"] / b_w0) * kv0 / hw["kv_scale"],
            (),
            "B_eff = c_byte / (price per weight byte per token): the decode batch the market prices",
        ),
        (
            "implied_usd_per_chip_hour_from_flops",
            flop_hour(est["usd_per_mtok_per_tflop"], hw, m0, c["prefill_mfu_frac"]),
            flop_hour(lo["usd_per_mtok_per_tflop"], hw, m0, c["prefill_mfu_frac"]),
            flop_hour(hi["usd_per_mtok_per_tflop"], hw, m0, c["prefill_mfu_frac"]),
            lambda hw, gross_margin_frac, prefill_mfu_frac: flop_hour(
                est["usd_per_mtok_per_tflop"], hw, gross_margin_frac, prefill_mfu_frac
            ),
            ("gross_margin_frac", "prefill_mfu_frac"),
            "c_flop x (1 - margin) x F x mfu x 3600: the chip-hour cost the FLOP price implies",
        ),
        (
            "implied_usd_per_chip_hour_from_bytes",
            byte_hour(est["usd_per_mtok_per_kv_gb"], hw, m0, c["decode_mbu_frac"]),
            byte_hour(lo["usd_per_mtok_per_kv_gb"], hw, m0, c["decode_mbu_frac"]),
            byte_hour(hi["usd_per_mtok_per_kv_gb"], hw, m0, c["decode_mbu_frac"]),
            lambda hw, gross_margin_frac, decode_mbu_frac: byte_hour(
                est["usd_per_mtok_per_kv_gb"] * kv0 / hw["kv_scale"], hw, gross_margin_frac, decode_mbu_frac
            ),
            ("gross_margin_frac", "decode_mbu_frac"),
            "c_byte x (1 - margin) x W x mbu x 3600: the chip-hour cost the byte price implies",
        ),
    ]
    i_f, i_kv = MARKET_PARAMETERS.index("usd_per_mtok_per_tflop"), MARKET_PARAMETERS.index("usd_per_mtok_per_kv_gb")
    hour_ratio = flop_hour(est["usd_per_mtok_per_tflop"], hw, m0, c["prefill_mfu_frac"]) / byte_hour(
        est["usd_per_mtok_per_kv_gb"], hw, m0, c["decode_mbu_frac"]
    )
    r_lo, r_hi = _ratio_fit_interval(result, i_f, i_kv, hour_ratio)
    specs.append(
        (
            "flop_over_byte_chip_hour_ratio",
            hour_ratio,
            r_lo,
            r_hi,
            lambda hw, decode_mbu_frac: (
                flop_hour(est["usd_per_mtok_per_tflop"], hw, m0, c["prefill_mfu_frac"])
                / byte_hour(est["usd_per_mtok_per_kv_gb"] * kv0 / hw["kv_scale"], hw, m0, decode_mbu_frac)
            ),
            ("decode_mbu_frac",),
            "The FLOP price's chip-hour over the byte price's: 1 if one chip-hour pays for both (margin cancels)",
        )
    )
    rows = []
    for quantity, value, fit_lo, fit_hi, fn, names, meaning in specs:
        if fn is None or not np.isfinite(value):
            s_lo = s_hi = value
            varied = "does not depend on the assumptions" if fn is None else "not bounded: no interval"
        else:
            mc = a.propagate(lambda hw, fn=fn, **kw: np.atleast_1d(fn(hw, **kw)), names)
            s_lo, s_hi = float(mc.low[0]), float(mc.high[0])
            varied = a.describe(names)
            if quantity == "flop_over_byte_chip_hour_ratio" and efficiency_factor is not None:
                f_lo, f_hi = efficiency_factor
                v = float(value)
                s_lo = v * np.exp(-np.hypot(np.log(v / s_lo) if s_lo > 0 else 0.0, -np.log(min(f_lo, 1.0))))
                s_hi = v * np.exp(np.hypot(np.log(s_hi / v) if s_hi > 0 else 0.0, np.log(max(f_hi, 1.0))))
                varied = f"{varied}; {efficiency_text}"
        c_lo, c_hi = combined_interval(float(value), float(fit_lo), float(fit_hi), s_lo, s_hi)
        rows.append(
            {
                "quantity": quantity,
                "unit": UNITS[quantity],
                "estimate": float(value),
                "fit_low": float(fit_lo),
                "fit_high": float(fit_hi),
                "scenario_low": s_lo,
                "scenario_high": s_hi,
                "combined_low": c_lo,
                "combined_high": c_hi,
                "meaning": meaning,
                "scenario_interval": varied,
            }
        )
    frame = pl.DataFrame(rows)
    by = {r["quantity"]: r for r in rows}
    f, b, q = (
        by["implied_usd_per_chip_hour_from_flops"],
        by["implied_usd_per_chip_hour_from_bytes"],
        by["flop_over_byte_chip_hour_ratio"],
    )
    status, reason = consistency(q["estimate"], q["combined_low"], q["combined_high"], f["estimate"], b["estimate"])
    if result.status != "ok":
        status, reason = result.status, f"the fit is {result.status}: {result.message}"
    checks = {
        "effective_batch_seqs": batch_check(b_eff, measured.per_replica, what=f"per replica ({measured.what})"),
        "implied_usd_per_chip_hour_from_flops": reason,
        "implied_usd_per_chip_hour_from_bytes": reason,
        "flop_over_byte_chip_hour_ratio": reason,
    }
    return frame.with_columns(
        pl.lit(status).alias("status"),
        pl.lit(reason).alias("status_reason"),
        pl.col("quantity").replace_strict(checks, default=None, return_dtype=pl.String).alias("check"),
    )


@formula("observed / predicted, predicted = X·ĉ", "fit_market residuals")
def market_residuals(rows: pl.DataFrame, result, x: np.ndarray, y: np.ndarray) -> pl.DataFrame:
    """Per price row × component (input, output): the observed price, the regression's prediction and their ratio."""
    predicted = x @ np.nan_to_num(result.estimate)  # 0 where the fit has no estimate (too few rows: its status)
    ratio = np.divide(y, predicted, out=np.full_like(y, np.nan), where=predicted > 0)
    n = rows.height
    ident = rows.select("source", "provider", "model", "arch_model", "arch_match")
    return (
        pl.concat([ident, ident])
        .with_columns(
            pl.Series("component", ["input"] * n + ["output"] * n),
            pl.Series("observed_usd_per_mtok", y),
            pl.Series("predicted_usd_per_mtok", predicted),
            pl.Series("observed_over_predicted_ratio", ratio),
        )
        .with_columns(pl.col(pl.Float64).fill_nan(None))
        .sort("provider", "arch_model", "model", "component")
    )
