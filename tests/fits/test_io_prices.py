"""Input vs output prices per model: the closed form against the physics' step functions, the lecture's f.3
warning, the prefill reading by hand, and the deployment model's implied batch recovered from prices it made.

Independent numbers: ratios computed by econ.physics.decode_step / prefill_step (a second path through the
roofline), the lecture's rho = 5 and L* = 200k (f.3), hand arithmetic.
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


def closed_row(rho):
    return pl.DataFrame(
        {
            "input_usd_per_mtok": [1.0],
            "output_usd_per_mtok": [rho],
            "params_active": [None],
            "params_total": [None],
            "kv_bytes_per_token": [None],
        },
        schema_overrides={"params_active": pl.Float64, "params_total": pl.Float64, "kv_bytes_per_token": pl.Float64},
    )


def test_a_closed_model_has_no_critical_context_and_its_batch_is_a_lower_bound():
    """No architecture: the first tier threshold is not read as L* (the crossover fails on open models), so the KV
    term is dropped: B/B*0 = mfu/(rho*mbu)."""
    a = frames()["assumptions"]
    out = io.model_ratios(closed_row(5.0), a, context_tokens=8_719.0).row(0, named=True)
    assert out["critical_context_source"].startswith("none")
    assert out["context_over_critical_ratio"] == 0.0
    assert out["batch_over_balance_ratio"] == pytest.approx(
        a.central["prefill_mfu_frac"] / (5 * a.central["decode_mbu_frac"])
    )
    assert out["batch_over_balance_scenario_low_ratio"] < out["batch_over_balance_ratio"]


def test_model_ratios_flag_an_impossible_mbu_on_real_rows():
    """Every real price row whose implied mbu exceeds 1 is flagged; rows where the KV read alone exceeds rho say no
    batch fits; rho <= 1 identifies no mbu. The open models' small L* (architecture) drive it, e.g. Qwen3-30B-A3B's
    107 tokens."""
    from econ.analyses.fit_io_prices import table as io_prices_table
    from econ.analyses.inference_serving import traffic_costs

    f = frames()
    t = io_prices_table(f["price_current"], f["models"], f["assumptions"], traffic_costs(f["serving"]))
    above = t.filter(pl.col("implied_decode_mbu_frac") > 1)
    assert above.height > 0 and set(above["implied_decode_mbu_check"]) == {io.MBU_CHECKS[1]}
    kv_alone = t.filter(pl.col("regime") == "kv_alone_exceeds_rho")
    assert set(kv_alone["lecture_f3_check"]) == {"no batch fits (the KV read alone exceeds rho)"}
    assert kv_alone["batch_over_balance_ratio"].null_count() == kv_alone.height
    low_rho = t.filter(pl.col("output_over_input_ratio") <= 1)
    assert low_rho["implied_decode_mbu_frac"].null_count() == low_rho.height
    assert (t["predicted_output_over_input_ratio"].drop_nulls() >= 1.0).all()
    qwen = t.filter(pl.col("arch_model") == "Qwen3-30B-A3B").row(0, named=True)
    assert qwen["critical_context_tokens"] == pytest.approx(3.3e9 / (312.5 * 98_304), rel=1e-9)
    assert t["decode_context_tokens"][0] == pytest.approx(8_719.0, rel=1e-3)  # the fleet's mix, not 32k


def test_prefill_reading_by_hand():
    """0.27 $/MTok input at margin 0.5 on GB200 fp8 (5e15 FLOP/s) at mfu 0.6 and 2 $/chip-hour pays for
    0.27e-6 * 0.5 * 5e15 * 0.6 / (2/3600) FLOP per token."""
    a = frames()["assumptions"]
    row = pl.DataFrame({"input_usd_per_mtok": [0.27], "true_prefill_flop_per_input_token": [1e11]})
    out = io.prefill_reading(row, a).row(0, named=True)
    c, hw = a.central, a.central_hardware
    by_hand = 0.27e-6 * (1 - c["gross_margin_frac"]) * hw["peak_flop_per_s"] * c["prefill_mfu_frac"]
    by_hand /= c["usd_per_chip_hour"] / 3600
    assert hw["peak_flop_per_s"] == pytest.approx(5e15)
    assert out["prefill_flop_per_input_token"] == pytest.approx(by_hand)
    assert out["prefill_flop_over_true_ratio"] == pytest.approx(by_hand / 1e11)
    assert (
        out["prefill_flop_scenario_low_per_input_token"] < by_hand < out["prefill_flop_scenario_high_per_input_token"]
    )
