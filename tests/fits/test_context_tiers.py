"""Long-context tiers → the cost slope per component: worked example, synthetic round trips with coverage, real rows.

Independent numbers: the lecture's f.1 worked example (200k, 1e11, R 300, 1 B/weight → 1,667 B; FP4 → 833 B),
synthetic price tables generated from the roofline's own cost functions with a known b_kv, and hand arithmetic
on published tier edges (the power-law means by hand).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.fits import context_readings as cr
from econ.fits import context_tiers as ct
from econ.physics import roofline
from econ.units import SECONDS_PER_HOUR
from fits.pricing_data import frames, hand_prices

# ---------------------------------------------------------------------------- the lecture's worked example


@pytest.mark.parametrize(
    ("critical_ratio", "weight_bytes", "expected"),
    [
        (300.0, 1.0, 1_666.7),  # lecture f.1: "(1/300) * 1e11 / 2e5 = 1,667 bytes"
        (300.0, 0.5, 833.3),  # lecture-math f.1 precision caveat: FP4 weights
    ],
)
def test_crossover_reading_reproduces_the_lecture(critical_ratio, weight_bytes, expected):
    result = cr.kv_bytes_at_crossover(critical_ratio, weight_bytes, 1e11, 200_000)
    assert result == pytest.approx(expected, abs=0.1)


def test_usd_per_kv_byte_is_price_over_bandwidth():
    """$2/chip-hour on 8 TB/s at full bandwidth: 2/3600/8e12 $ per byte read per token."""
    assert cr.usd_per_token_per_kv_byte(2.0, 8e12, 1.0) == pytest.approx(2.0 / 3600 / 8e12, rel=1e-12)


# ---------------------------------------------------------------------------- representative contexts


def schedule(thresholds, max_input, prices, *, provider="p", model="m", variant="standard", source="hand"):
    n = len(thresholds)
    return pl.DataFrame(
        {
            "source": [source] * n,
            "provider": [provider] * n,
            "model": [model] * n,
            "variant": [variant] * n,
            "tier_min_prompt_tokens": thresholds,
            "max_input_tokens": [max_input] * n,
            "input_usd_per_mtok": prices,
            "output_usd_per_mtok": [6.0 * p for p in prices],
            "cache_read_usd_per_mtok": [None] * n,
        },
        schema_overrides={"cache_read_usd_per_mtok": pl.Float64},
    )


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("midpoint", [100_000, (200_000 + 1_048_576) / 2]),
        ("lower", [0, 200_000]),
        ("upper", [200_000, 1_048_576]),
        ("geometric", [np.sqrt(1_000 * 200_000), np.sqrt(200_000 * 1_048_576)]),
        ("power_law", [(1_000 + 200_000) / 2, (200_000 + 1_048_576) / 2]),  # alpha = 0: the even spread
    ],
)
def test_representative_context_rules_on_gemini_edges(rule, expected):
    """Gemini 3.1 Pro's published edges: 0-200k and 200k-1,048,576 (max_input_tokens)."""
    out = ct.representative_contexts(schedule([0, 200_000], 1_048_576, [2.0, 4.0]))
    assert out[f"context_{rule}_tokens"].to_list() == pytest.approx(expected)


def test_missing_max_input_leaves_the_top_tier_without_a_midpoint():
    out = ct.representative_contexts(schedule([0, 200_000], None, [2.0, 4.0]))
    assert out["context_midpoint_tokens"].to_list() == [100_000, None]
    fits = ct.fit_schedules(schedule([0, 200_000], None, [2.0, 4.0]), rules=("midpoint", "lower", "power_law"))
    status = dict(
        zip(fits.filter(pl.col("component") == "input")["rule"], fits.filter(pl.col("component") == "input")["status"])
    )
    assert status == {"midpoint": "underdetermined", "lower": "exact", "power_law": "underdetermined"}


# ---------------------------------------------------------------------------- synthetic round trips

W, P_CHIP, MBU, MARGIN, B_KV = 8e12, 2.0, 0.8, 0.5, 70_000.0
THRESHOLDS = [0, 32_000, 128_000, 256_000]
MAX_INPUT = 1_000_000


def roofline_tier_prices(contexts_per_tier: np.ndarray, *, batch=2_000.0, n_act=3.7e10, n_tot=6.7e11) -> np.ndarray:
    """Break-even price per tier [$/MTok]: decode cost per token from the roofline (memory-bound, one chip's share),
    averaged over prompts spread evenly across the tier, grossed up by the margin."""
    t = roofline.memory_time_s(batch, contexts_per_tier, B_KV, n_tot, 1.0, 64.0, W, mbu=MBU)
    cost = roofline.usd_per_token(t, batch, 64.0, P_CHIP)
    return cost.mean(axis=-1) / (1 - MARGIN) * 1e6


def tier_grid(n=201):
    edges = np.array(THRESHOLDS[1:] + [MAX_INPUT], dtype=float)
    lower = np.array(THRESHOLDS, dtype=float)
    return lower[:, None] + (edges - lower)[:, None] * np.linspace(0, 1, n)[None, :]


def synthetic(prices_per_replication: np.ndarray) -> pl.DataFrame:
    frames_ = [schedule(THRESHOLDS, MAX_INPUT, list(p), model=f"m{i}") for i, p in enumerate(prices_per_replication)]
    return pl.concat(frames_)


def test_round_trip_recovers_kv_bytes_exactly_without_noise():
    """Prices from the roofline with prompts uniform in each tier: the midpoint rule recovers b_kv (4 tiers: ok)."""
    prices = roofline_tier_prices(tier_grid())
    fits = ct.fit_schedules(synthetic(prices[None, :]), rules=("midpoint",)).filter(pl.col("component") == "input")
    assert fits["status"].to_list() == ["ok"]
    kv = cr.kv_bytes_from_slope(fits["slope_usd_per_mtok_per_mtok_context"][0], MARGIN, P_CHIP, W, MBU)
    assert kv == pytest.approx(B_KV, rel=1e-6)


def test_round_trip_with_noise_recovers_truth_and_intervals_cover_at_nominal_rate():
    """400 noisy replications (additive N(0, 2% of the base price) on every tier), generated at once: the median
    estimate is within 2 % of the truth and the 90 % covariance interval covers it 90 % ± 4 % of the time."""
    rng = np.random.default_rng(11)
    clean = roofline_tier_prices(tier_grid())
    noisy = clean[None, :] + rng.normal(0.0, 0.02 * clean[0], size=(400, clean.size))
    fits = ct.fit_schedules(synthetic(noisy), rules=("midpoint",)).filter(pl.col("component") == "input")
    assert set(fits["status"]) == {"ok"}
    to_kv = cr.kv_bytes_from_slope(1.0, MARGIN, P_CHIP, W, MBU)  # bytes per unit of slope
    est = fits["slope_usd_per_mtok_per_mtok_context"].to_numpy() * to_kv
    lo = fits["slope_fit_low_usd_per_mtok_per_mtok_context"].to_numpy() * to_kv
    hi = fits["slope_fit_high_usd_per_mtok_per_mtok_context"].to_numpy() * to_kv
    assert np.median(est) == pytest.approx(B_KV, rel=0.02)
    assert np.mean((lo <= B_KV) & (B_KV <= hi)) == pytest.approx(0.9, abs=0.04)


def test_power_law_contexts_are_the_request_and_token_weighted_means():
    """alpha = 2 on Gemini's edges: E[L] = ln(hi/lo)/(1/lo - 1/hi); per input token (hi - lo)/ln(hi/lo), by hand."""
    out = ct.representative_contexts(schedule([0, 200_000], 1_048_576, [2.0, 4.0]), exponent=2.0)
    lo, hi = 200_000.0, 1_048_576.0
    assert out["context_power_law_tokens"][1] == pytest.approx(np.log(hi / lo) / (1 / lo - 1 / hi))
    assert out["context_power_law_token_weighted_tokens"][1] == pytest.approx((hi - lo) / np.log(hi / lo))
    fits = ct.fit_schedules(schedule([0, 200_000], 1_048_576, [2.0, 4.0]), rules=("power_law",), exponent=2.0)
    by = {r["component"]: r for r in fits.iter_rows(named=True)}
    assert by["output"]["representative_contexts_tokens"].split(",")[1] == str(
        round(out["context_power_law_tokens"][1])
    )
    assert by["input"]["representative_contexts_tokens"].split(",")[1] == str(
        round(out["context_power_law_token_weighted_tokens"][1])
    )


def test_slope_grid_over_alpha_matches_refits():
    """The slope-ratio grid (used for the scenario interval over alpha) equals refitting at each alpha."""
    tiers = schedule([0, 200_000], 1_048_576, [2.0, 4.0])
    at = ct.fit_schedules(tiers, rules=("power_law",), exponent=1.5).filter(pl.col("component") == "output")
    grid = at["_slope_ratio_grid"][0].to_list()
    for i, alpha in enumerate(ct.EXPONENT_GRID):
        refit = ct.fit_schedules(tiers, rules=("power_law",), exponent=alpha).filter(pl.col("component") == "output")
        ratio = refit["slope_usd_per_mtok_per_mtok_context"][0] / at["slope_usd_per_mtok_per_mtok_context"][0]
        assert grid[i] == pytest.approx(ratio, rel=1e-9)


def test_cache_read_tiers_are_read_as_a_billing_rule():
    """Gemini 3.1 Pro: cache read 0.20 -> 0.40 with input 2 -> 4: one fraction (0.1) in both tiers."""
    text, rule = ct.billing_rule(np.array([2.0, 4.0]), np.array([0.2, 0.4]))
    assert text == "0.1,0.1" and rule.startswith("billing rule: cache read = 0.1 x input")
    assert ct.billing_rule(np.array([2.0, 4.0]), np.array([0.2, 0.5]))[1].startswith("cache read / input changes")


# ---------------------------------------------------------------------------- real rows


@pytest.fixture(scope="module")
def real_table():
    from econ.analyses.fit_context_tiers import table as context_tiers_table

    f = frames()
    return context_tiers_table(f["price_current"], f["models"], f["assumptions"], f["serving"])


def row(table, model, component="output", rule="power_law", variant="standard"):
    match = table.filter(
        (pl.col("model") == model)
        & (pl.col("component") == component)
        & (pl.col("rule") == rule)
        & (pl.col("variant") == variant)
        & ~pl.col("pooled")
    )
    assert match.height == 1, f"{model}: {match.height} rows"
    return match.row(0, named=True)


def test_two_tier_schedule_is_exact_with_no_fit_interval(real_table):
    """Gemini 3.1 Pro (hand rows: 2/4 input, 12/18 output at 200k): exact, the fit interval unidentified (±inf)."""
    r = row(real_table, "gemini-3.1-pro-preview", rule="midpoint")
    assert r["status"] == "exact" and r["fit_interval_kind"] == "none"
    assert r["kv_read_fit_low_bytes_per_context_token"] == -np.inf
    assert r["kv_read_fit_high_bytes_per_context_token"] == np.inf
    # slope by hand: (18 - 12) $/MTok over the midpoints 100k -> 624,288 tokens
    assert r["slope_usd_per_mtok_per_mtok_context"] == pytest.approx(6.0 / ((200_000 + 1_048_576) / 2 - 100_000) * 1e6)


def test_a_schedule_with_one_tier_is_not_fitted(real_table):
    """Claude Opus 4.6: one standard tier (flat to 1M) is not fitted; its fast variant has two (200k) and is exact."""
    rows = hand_prices("anthropic", "claude-opus-4-6")
    assert rows.filter(pl.col("variant") == "standard").height == 1
    assert rows.filter(pl.col("variant") == "fast").height == 2
    fitted = real_table.filter(pl.col("model") == "claude-opus-4-6")
    assert set(fitted["variant"]) == {"fast"} and set(fitted["status"]) == {"exact"}


def test_qwen_three_and_four_tier_schedules_get_residual_intervals(real_table):
    for model, tiers in (("qwen3-max", 3), ("qwen3-coder-plus", 4)):
        r = row(real_table, model, component="input")
        assert r["n_tiers"] == tiers and r["status"] in ("ok", "at_bound")
        assert np.isfinite(r["slope_fit_low_usd_per_mtok_per_mtok_context"])


def test_crossover_reading_at_gemini_threshold_matches_the_lecture_at_the_scenario_chip(real_table):
    """L* = 200k, N_act = 1e11 (scenario), GB200 fp8 (R = 312.5, b_w = 1): 1e11/(312.5*2e5) = 1,600 B."""
    r = row(real_table, "gemini-3.1-pro-preview")
    assert r["params_active_source"] == "scenario frontier_active_params"
    assert r["kv_crossover_bytes_per_token"] == pytest.approx(1e11 / (312.5 * 2e5))


def test_open_weight_tiered_models_report_implied_over_true_per_seller(real_table):
    """Open-weight models with tiers (MiniMax-M3 first-party and resellers; reseller schedules of GLM-5.1 and
    Qwen3.5): every output and input row has a finite implied/true; MiniMax-M3 is read from each seller apart."""
    open_rows = real_table.filter(
        pl.col("arch_model").is_not_null()
        & pl.col("default_rule")
        & ~pl.col("pooled")
        & (pl.col("variant") == "standard")
    )
    read = open_rows.filter(pl.col("component").is_in(["output", "input"]))
    assert read.height >= 12 and read["implied_over_true_ratio"].is_not_null().all()
    assert read["implied_over_true_ratio"].is_finite().all()
    assert open_rows["kv_crossover_over_true_ratio"].is_finite().all()
    assert (open_rows["params_active_source"] == "architecture").all()
    minimax = open_rows.filter((pl.col("arch_model") == "MiniMax-M3") & (pl.col("component") == "output"))
    assert set(minimax["provider_kind"]) == {"first_party", "reseller"} and minimax.height >= 3
    assert open_rows.filter(pl.col("component") == "cache_read")["kv_read_bytes_per_context_token"].is_null().all()


def test_openai_pool_is_one_plausible_relative_slope(real_table):
    """OpenAI's >272k tiers are uniformly 2x input: with the lower rule kappa = (2 - 1)/0.272 per million tokens."""
    pool = real_table.filter(
        pl.col("pooled")
        & (pl.col("provider") == "openai")
        & (pl.col("component") == "input")
        & (pl.col("rule") == "lower")
    ).row(0, named=True)
    assert pool["pool_plausible"] and pool["pool_model_count"] >= 5
    assert pool["uplift_per_mtok_context_frac"] == pytest.approx(1.0 / 0.272, rel=1e-6)
    assert pool["status"] == "ok"


def test_every_row_states_its_assumptions(real_table):
    for column in (
        "chip",
        "number_format",
        "kv_cache_format",
        "usd_per_chip_hour",
        "gross_margin_frac",
        "rule",
        "scenario_interval",
        "source",
    ):
        assert real_table[column].null_count() == 0, column
    assert set(real_table["rule"]) == set(ct.RULES)
    hw = frames()["assumptions"]
    assert real_table["usd_per_chip_hour"][0] == hw.central["usd_per_chip_hour"]


def test_output_reading_by_hand_at_the_power_law_means(real_table):
    """b = k*(1-margin)*W*mbu/p for Gemini 2.5 Pro output (10 -> 15 at 200k, max 1,048,576), the tiers at their
    request-weighted means under the scenario's alpha (closed form by hand), at the scenario's chip (GB200: 8 TB/s).
    (Sonnet 4.5, the example before, has had no long-context tier since its 1M beta ended on 2026-04-30.)"""
    a = frames()["assumptions"]
    alpha = a.central["tier_context_density_exponent_ratio"]

    def mean(lo, hi):
        lo = max(lo, 1_000.0)
        return (
            (1 - alpha)
            / (2 - alpha)
            * (hi ** (2 - alpha) - lo ** (2 - alpha))
            / (hi ** (1 - alpha) - lo ** (1 - alpha))
        )

    r = row(real_table, "gemini-2.5-pro")
    k = 5.0 / (mean(200_000, 1_048_576) - mean(0, 200_000)) * 1e6 / 1e12  # $/token per context token
    by_hand = (
        k
        * (1 - a.central["gross_margin_frac"])
        * 8e12
        * a.central["decode_mbu_frac"]
        / (a.central["usd_per_chip_hour"] / SECONDS_PER_HOUR)
    )
    assert r["kv_read_bytes_per_context_token"] == pytest.approx(by_hand, rel=1e-9)
    assert r["kv_read_validated_low_bytes_per_context_token"] < r["kv_read_scenario_low_bytes_per_context_token"]
    assert r["kv_read_validated_high_bytes_per_context_token"] > r["kv_read_scenario_high_bytes_per_context_token"]
