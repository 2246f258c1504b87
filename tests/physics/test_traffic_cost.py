"""Prefill and decode at a traffic mix, and the batch a price ratio implies: hand arithmetic on published configs and
round trips through decode_terms (the batch made from a known batch is recovered)."""

from __future__ import annotations

import numpy as np
import pytest
from fits.pricing_data import frames

from econ.physics import deployment, traffic_cost


def model(name):
    deployed = frames()["serving"]
    have, m, chip, layout, b_w = deployed.rows([name])
    assert have.all()
    return deployed, m, chip, layout, b_w


def test_cached_prefix_adds_its_attention_to_every_new_token():
    """Llama-3.1-8B (32 layers x 32 heads x (128 + 128) x 2 FLOP per cached token): with half of a 16k prompt cached,
    each new token also attends to the 8k cached ones; the weight FLOPs per token are the same."""
    deployed, m, chip, layout, b_w = model("Llama-3.1-8B")
    s = deployed.settings("prefill", ["Llama-3.1-8B"])
    kw = dict(kv_scale=1.0, settings=s)
    fresh = traffic_cost.prefill_at_mix(m, chip, layout, [16_384.0], [1.0], 0.0, **kw)["flop_per_token"][0]
    cached = traffic_cost.prefill_at_mix(m, chip, layout, [16_384.0], [1.0], 0.5, **kw)["flop_per_token"][0]
    slope = 32 * 32 * (128 + 128) * 2
    by_hand = slope * ((8_192 + (8_192 + 1) / 2) - (16_384 + 1) / 2)
    assert cached - fresh == pytest.approx(by_hand, rel=1e-9)


@pytest.mark.parametrize("batch", [300.0, 1_000.0, 4_321.0])
def test_implied_batch_recovers_the_batch_that_made_the_ratio(batch):
    """rho = decode cost at a known batch (decode_terms directly, off the grid) over the mix's prefill cost: the
    grid interpolation recovers the batch within 2 %."""
    deployed, m, chip, layout, b_w = model("DeepSeek-V3")
    dec_s, pre_s = deployed.settings("decode", ["DeepSeek-V3"]), deployed.settings("prefill", ["DeepSeek-V3"])
    pre = traffic_cost.prefill_at_mix(
        m, chip, layout, [1_024.0, 16_384.0], [0.5, 0.5], 0.5, kv_scale=1.0, settings=pre_s
    )
    grid = traffic_cost.decode_at_context(m, chip, layout, 9_000.0, kv_scale=1.0, settings=dec_s)
    col = {k: np.asarray(v)[:, None] for k, v in m.items()}
    exact = deployment.decode_terms(
        col,
        {k: np.asarray(v)[:, None] for k, v in chip.items()},
        {k: np.asarray(v)[:, None] for k, v in layout.items()},
        np.array([[batch]]),
        9_000.0,
        kv_scale=1.0,
        settings={k: (np.asarray(v)[:, None] if np.ndim(v) else v) for k, v in dec_s.items()},
    )
    rho = exact["usd_per_mtok"][0, 0] / 1e6 / pre["usd_per_token"][0]
    got, where = traffic_cost.implied_batch(
        np.array([rho]), grid["usd_per_token"], pre["usd_per_token"], grid["batch"][0]
    )
    assert where[0] == "ok" and got[0] == pytest.approx(batch, rel=0.02)


def test_implied_batch_says_where_a_ratio_cannot_land():
    deployed, m, chip, layout, b_w = model("DeepSeek-V3")
    pre = traffic_cost.prefill_at_mix(
        m,
        chip,
        layout,
        [4_096.0],
        [1.0],
        0.5,
        kv_scale=1.0,
        settings=deployed.settings("prefill", ["DeepSeek-V3"]),
    )
    grid = traffic_cost.decode_at_context(
        m, chip, layout, 9_000.0, kv_scale=1.0, settings=deployed.settings("decode", ["DeepSeek-V3"])
    )
    rhos = np.array([1e9, 1.0 + 1e-9, 0.5])
    _, where = traffic_cost.implied_batch(
        rhos, np.repeat(grid["usd_per_token"], 3, axis=0), np.repeat(pre["usd_per_token"], 3), grid["batch"][0]
    )
    assert where.tolist() == ["above_batch_1", "below_memory_cap", "rho_not_above_1"]
