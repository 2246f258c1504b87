"""Input vs output prices: the closed form against the physics' step functions, the lecture's f.3 warning, and
the market regression against synthetic prices generated from known $/FLOP, $/byte and batch.

Independent numbers: ratios computed by econ.physics.decode_step / prefill_step (a second path through the
roofline), the lecture's rho = 5 and L* = 200k (f.3), hand arithmetic, and synthetic market prices.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.fits import io_prices as io
from econ.physics import Chip, Model, balance, decode_step, prefill_step
from fits.pricing_data import frames

CHIP = Chip(
    "GB200-like",
    hbm_capacity_bytes=186e9,
    hbm_bandwidth_bytes_per_s=8e12,
    peak_bf16_flop_per_s=2.5e15,
    peak_fp8_flop_per_s=5e15,
)
MODEL = Model("DeepSeek-V3-like", params_total=6.71e11, params_active=3.7e10, kv_bytes_per_token=70_272)


@pytest.mark.parametrize(("batch", "context"), [(1_000.0, 4_096.0), (300.0, 1_024.0), (2_000.0, 512.0)])
def test_closed_form_inverts_the_physics_step_costs(batch, context):
    """rho from decode_step / prefill_step costs (fp8, mfu 0.6, mbu 0.8) -> implied B/B*0 -> the batch used."""
    mfu, mbu = 0.6, 0.8
    kw = dict(number_format="fp8", chips=64, mfu=mfu, mbu=mbu, usd_per_chip_hour=2.0)
    decode = decode_step(MODEL, CHIP, batch=batch, context_tokens=context, **kw)
    prefill = prefill_step(MODEL, CHIP, batch=1, prompt_tokens=32_768, **kw)
    assert decode.bound == "memory" and prefill.bound == "compute"
    rho = decode.usd_per_token / prefill.usd_per_token
    b = balance(MODEL, CHIP, number_format="fp8")
    implied = io.implied_batch_over_balance(rho, context / b.critical_context_tokens, mfu=mfu, mbu=mbu)
    assert implied * b.balance_batch_params == pytest.approx(batch, rel=1e-9)
    assert io.price_ratio_roofline(
        batch / b.balance_batch_params, context / b.critical_context_tokens, mfu=mfu, mbu=mbu
    ) == pytest.approx(rho, rel=1e-9)


def test_lecture_f3_numbers_by_hand():
    """rho = 5, L* = 200k, L = 32k, mfu = mbu: B/B*0 = 1/(5 - 0.16). At B = 2-3 B*0 the memory time is only 0.66-0.49
    of the compute time, so decode is compute-bound and the roofline's rho is 1 ("you cannot get rho = 5", f.3);
    at B = 0.1 B*0 it is memory-bound: 10 + 0.16."""
    assert io.implied_batch_over_balance(5.0, 32_000 / 200_000, mfu=1.0, mbu=1.0) == pytest.approx(1 / 4.84)
    assert io.price_ratio_roofline(np.array([2.0, 3.0, 0.1]), 0.16, mfu=1.0, mbu=1.0) == pytest.approx(
        [1.0, 1.0, 10.16]
    )
    assert io.implied_decode_mbu(5.0, 0.16, 2.0, mfu=1.0) == pytest.approx(0.66 / 5)


def test_compute_bound_decode_from_the_physics_gives_rho_1_and_nothing_implied():
    """decode_step at 3 B*0 and a short context is compute-bound: its cost per token equals prefill's (rho = 1, the
    roofline's floor); the batch and the mbu are not identified from rho = 1."""
    mfu, mbu = 0.6, 0.8
    kw = dict(number_format="fp8", chips=64, mfu=mfu, mbu=mbu, usd_per_chip_hour=2.0)
    b = balance(MODEL, CHIP, number_format="fp8")
    decode = decode_step(MODEL, CHIP, batch=3 * b.balance_batch_params, context_tokens=256, **kw)
    prefill = prefill_step(MODEL, CHIP, batch=1, prompt_tokens=32_768, **kw)
    assert decode.bound == "compute"
    rho = decode.usd_per_token / prefill.usd_per_token
    x = 256 / b.critical_context_tokens
    assert io.price_ratio_roofline(3.0, x, mfu=mfu, mbu=mbu) == pytest.approx(rho, rel=1e-9) == 1.0
    assert np.isnan(io.implied_batch_over_balance(rho, x, mfu=mfu, mbu=mbu))
    assert np.isnan(io.implied_decode_mbu(rho, x, 3.0, mfu=mfu))
    assert io.mbu_check(io.implied_decode_mbu(rho, x, 3.0, mfu=mfu)) == "not identified (rho <= 1)"


def test_an_implied_mbu_above_1_is_flagged_as_impossible():
    """Qwen3-30B-A3B-like on GB200 fp8 (R = 312.5, b_w = 1): L* = 3.3e9/(312.5*98,304 B) = 107 tokens, so at 32k
    the KV read alone is ~300x the prefill compute; rho = 3.125 then needs mbu = 0.6*(0.5 + 298)/3.125 = 57 > 1."""
    l_star = 1.0 * 3.3e9 / (312.5 * 98_304)
    assert l_star == pytest.approx(107.4, abs=0.1)
    mbu = io.implied_decode_mbu(3.125, 32_000 / l_star, 2.0, mfu=0.6)
    assert mbu == pytest.approx(0.6 * (0.5 + 32_000 / l_star) / 3.125) and mbu > 50
    assert io.regime(3.125, 32_000 / l_star, mfu=0.6, mbu=0.8) == "kv_alone_exceeds_rho"
    assert io.mbu_check(np.array([mbu, 0.4, np.nan])).tolist() == list(
        io.MBU_CHECKS[1:2] + io.MBU_CHECKS[:1] + io.MBU_CHECKS[2:]
    )


@pytest.mark.parametrize(
    ("rho", "x", "expected"),
    [
        (5.0, 0.16, "memory_bound"),
        (1.0, 0.0, "rho_at_most_1"),
        (4.0, 230.0, "kv_alone_exceeds_rho"),
    ],
)
def test_regime(rho, x, expected):
    assert io.regime(rho, x, mfu=1.0, mbu=1.0) == expected
    assert np.isnan(io.implied_batch_over_balance(rho, x, mfu=1.0, mbu=1.0)) == (expected != "memory_bound")


def closed_row(rho, threshold):
    return pl.DataFrame(
        {
            "input_usd_per_mtok": [1.0],
            "output_usd_per_mtok": [rho],
            "params_active": [None],
            "params_total": [None],
            "kv_bytes_per_token": [None],
            "tier_threshold_tokens": [threshold],
        },
        schema_overrides={
            "params_active": pl.Float64,
            "params_total": pl.Float64,
            "kv_bytes_per_token": pl.Float64,
            "tier_threshold_tokens": pl.Float64,
        },
    )


def test_model_ratios_flag_the_lecture_inconsistency():
    """A closed model at 5x with a 200k tier, at the scenario (32k, mfu 0.6, mbu 0.8): B/B*0 = 1/(5*0.8/0.6 - 0.16)."""
    a = frames()["assumptions"]
    c = a.central
    out = io.model_ratios(closed_row(5.0, 200_000.0), a).row(0, named=True)
    assert out["critical_context_source"] == "price_tier_threshold"
    expected = 1 / (5 * c["decode_mbu_frac"] / c["prefill_mfu_frac"] - c["context_tokens"] / 200_000)
    assert out["batch_over_balance_ratio"] == pytest.approx(expected)
    assert out["batch_over_balance_scenario_low_ratio"] < expected < out["batch_over_balance_scenario_high_ratio"]
    assert out["lecture_f3_check"].startswith("batch below")
    assert out["regime"] == "memory_bound"
    assert out["implied_decode_mbu_check"] == "within 0-1"
    # at the scenario batch (m = 2) and 32k/200k the decode is compute-bound: the roofline's rho is its floor, 1
    assert out["predicted_output_over_input_ratio"] == 1.0


def test_model_ratios_flag_an_impossible_mbu_on_real_rows():
    """Every real price row whose implied mbu exceeds 1 is flagged; rows where the KV read alone exceeds rho say no
    batch fits; rho <= 1 identifies no mbu. The open models' small L* (architecture) drive it, e.g. Qwen3-30B-A3B's
    107 tokens."""
    from econ.analyses.fit_io_prices import table as io_prices_table

    f = frames()
    t = io_prices_table(f["price_current"], f["models"], f["assumptions"])
    above = t.filter(pl.col("implied_decode_mbu_frac") > 1)
    assert above.height > 0 and set(above["implied_decode_mbu_check"]) == {io.MBU_CHECKS[1]}
    kv_alone = t.filter(pl.col("regime") == "kv_alone_exceeds_rho")
    assert set(kv_alone["lecture_f3_check"]) == {"no batch fits (the KV read alone exceeds rho)"}
    assert kv_alone["batch_over_balance_ratio"].null_count() == kv_alone.height
    assert t.filter(pl.col("implied_decode_mbu_frac") <= 1)["implied_decode_mbu_check"].unique().to_list() == [
        io.MBU_CHECKS[0]
    ]
    low_rho = t.filter(pl.col("output_over_input_ratio") <= 1)
    assert low_rho["implied_decode_mbu_frac"].null_count() == low_rho.height
    assert (t["predicted_output_over_input_ratio"].drop_nulls() >= 1.0).all()
    qwen = t.filter(pl.col("arch_model") == "Qwen3-30B-A3B").row(0, named=True)
    assert qwen["critical_context_tokens"] == pytest.approx(3.3e9 / (312.5 * 98_304), rel=1e-9)


def test_without_a_critical_context_the_batch_is_a_lower_bound():
    a = frames()["assumptions"]
    out = io.model_ratios(closed_row(5.0, None), a).row(0, named=True)
    assert out["critical_context_source"].startswith("none")
    assert out["context_over_critical_ratio"] == 0.0
    assert out["batch_over_balance_ratio"] == pytest.approx(
        a.central["prefill_mfu_frac"] / (5 * a.central["decode_mbu_frac"])
    )


# ---------------------------------------------------------------------------- market regression

C_FLOP, C_BYTE, B_EFF = 3e-18, 2e-17, 400.0  # $/FLOP, $/byte, sequences


def synthetic_market(models: pl.DataFrame, rng, *, providers=4, noise=0.1, context=32_000.0, b_w=1.0):
    """Every open architecture served by ``providers`` providers at the truth's prices x (1 + noise)."""
    rows = models.filter(pl.col("kv_bytes_per_token").is_not_null()).select(
        "model",
        "params_total",
        "params_active",
        "kv_bytes_per_token",
        "kv_window_bytes_per_sequence",
        "sliding_window_tokens",
    )
    rows = pl.concat([rows.with_columns(pl.lit(f"p{i}").alias("provider")) for i in range(providers)])
    x, _ = io.market_design(
        rows.with_columns(pl.lit(1.0).alias("input_usd_per_mtok"), pl.lit(1.0).alias("output_usd_per_mtok")),
        weight_bytes_per_param=b_w,
        kv_scale=1.0,
        context_tokens=context,
    )
    truth = np.array([C_FLOP * 1e18, C_BYTE * 1e18 / B_EFF, C_BYTE * 1e15])  # $/MTok per TFLOP, TB, GB
    clean = x @ truth
    n = rows.height
    noisy = clean * (1 + noise * rng.standard_normal((1, clean.size)) if np.ndim(noise) == 0 else noise)
    return rows, noisy, truth, n


def test_market_regression_recovers_the_truth():
    rng = np.random.default_rng(5)
    rows, noisy, truth, n = synthetic_market(frames()["models"], rng)
    priced = rows.with_columns(
        pl.Series("input_usd_per_mtok", noisy[0, :n]), pl.Series("output_usd_per_mtok", noisy[0, n:])
    )
    result, _, _ = io.fit_market(priced, weight_bytes_per_param=1.0, kv_scale=1.0, context_tokens=32_000.0)
    assert result.status == "ok"
    assert result.estimate[0] == pytest.approx(truth[0], rel=0.05)  # c_flop
    assert result.estimate[2] == pytest.approx(truth[2], rel=0.25)  # c_byte
    b_eff, lo, hi = io.effective_batch_interval(result)
    assert lo < B_EFF < hi and b_eff == pytest.approx(B_EFF, rel=0.4)


@pytest.mark.slow
def test_market_intervals_cover_at_about_their_nominal_rate():
    """300 synthetic markets (additive noise, equal weights would be exact; the fit weights 1/price): the 90 %
    interval of c_flop covers the truth 90 % +- 6 % of the time."""
    rng = np.random.default_rng(9)
    models = frames()["models"]
    rows, _, truth, n = synthetic_market(models, rng)
    x, _ = io.market_design(
        rows.with_columns(pl.lit(1.0).alias("input_usd_per_mtok"), pl.lit(1.0).alias("output_usd_per_mtok")),
        weight_bytes_per_param=1.0,
        kv_scale=1.0,
        context_tokens=32_000.0,
    )
    clean = x @ truth
    draws = clean * (1 + 0.05 * rng.standard_normal((300, clean.size)))
    hits = 0
    for y in draws:
        priced = rows.with_columns(pl.Series("input_usd_per_mtok", y[:n]), pl.Series("output_usd_per_mtok", y[n:]))
        result, _, _ = io.fit_market(priced, weight_bytes_per_param=1.0, kv_scale=1.0, context_tokens=32_000.0)
        lo, hi = result.interval("usd_per_mtok_per_tflop")
        hits += lo <= truth[0] <= hi
    assert hits / len(draws) == pytest.approx(0.9, abs=0.06)


def test_market_quantities_state_units_and_both_intervals():
    from econ.analyses.fit_io_market import tables as io_market_tables

    f = frames()
    market, residuals = io_market_tables(f["price_current"], f["models"], f["assumptions"])
    q = {r["quantity"]: r for r in market.iter_rows(named=True)}
    assert set(q) == set(io.UNITS)
    assert q["usd_per_flop"]["unit"] == "USD/FLOP"
    assert q["usd_per_flop"]["scenario_low"] == q["usd_per_flop"]["estimate"]  # does not depend on assumptions
    for name in ("effective_batch_seqs", "implied_usd_per_chip_hour_from_flops"):
        assert q[name]["scenario_low"] < q[name]["estimate"] < q[name]["scenario_high"]
    assert market["n_providers"][0] >= 10 and market["n_models"][0] >= 15
    assert set(residuals["component"]) == {"input", "output"}
    assert residuals.height == 2 * market["n_price_rows"][0]


def test_market_without_a_weight_term_reports_an_unbounded_batch_not_a_number():
    """Prices with no weight-fetch term (the truth has B_eff = inf) pin that coefficient at 0: B_eff is inf, the fit
    says at_bound, and no finite upper limit is claimed."""
    rng = np.random.default_rng(3)
    rows, _, truth, n = synthetic_market(frames()["models"], rng)
    x, _ = io.market_design(
        rows.with_columns(pl.lit(1.0).alias("input_usd_per_mtok"), pl.lit(1.0).alias("output_usd_per_mtok")),
        weight_bytes_per_param=1.0,
        kv_scale=1.0,
        context_tokens=32_000.0,
    )
    y = (x @ (truth * np.array([1.0, 0.0, 1.0]))) * (1 + 0.05 * rng.standard_normal(2 * n))
    y[n:] *= 0.8  # output a little below the no-weight truth: the weight coefficient wants to be negative
    priced = rows.with_columns(pl.Series("input_usd_per_mtok", y[:n]), pl.Series("output_usd_per_mtok", y[n:]))
    result, _, _ = io.fit_market(priced, weight_bytes_per_param=1.0, kv_scale=1.0, context_tokens=32_000.0)
    assert result.status == "at_bound" and "usd_per_mtok_per_weight_tb" in result.message
    central, lo, hi = io.effective_batch_interval(result)
    assert central == np.inf and hi == np.inf
