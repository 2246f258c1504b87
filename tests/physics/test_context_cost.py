"""Marginal context costs under the deployment model, against hand arithmetic on published configs."""

from __future__ import annotations

import numpy as np
import pytest
from fits.pricing_data import frames

from econ.physics import context_cost, deployment

P_CHIP = 2.0  # the base scenario's $/chip-hour


def deepseek():
    deployed = frames()["serving"]
    have, m, chip, layout, b_w = deployed.rows(["DeepSeek-V3"])
    assert have.all()
    return deployed, m, chip, layout, b_w


def test_decode_kv_cost_is_the_latent_read_at_the_chips_bandwidth():
    """DeepSeek-V3 MLA: 61 layers x (512 + 64) x 2 B = 70,272 B per context token (config.json, lecture-math f.2);
    on GB200 (8 TB/s) at mbu 0.8 and $2/chip-hour each byte read per token costs p/(W*mbu)."""
    deployed, m, chip, layout, b_w = deepseek()
    settings = deployed.settings("decode", ["DeepSeek-V3"])
    length = np.array([[10_000.0, 100_000.0]])
    cost = context_cost.decode_kv_usd_per_token(m, chip, layout, length, kv_scale=1.0, settings=settings)
    by_hand = length * 61 * 576 * 2 * (P_CHIP / 3600) / (8e12 * settings["mbu"])
    assert layout["tensor_parallel"][0] == 1  # data-parallel attention: one read per byte
    assert cost == pytest.approx(by_hand, rel=1e-9)
    assert context_cost.decode_kv_bytes_read(m, length, kv_scale=1.0) == pytest.approx(length * 70_272)


def test_decode_kv_cost_per_token_does_not_depend_on_the_batch():
    """The KV part of a memory-bound step grows with the sequences in it: per token it is the same at 1 or 37
    sequences per rank (decode_terms directly, a second evaluation path)."""
    deployed, m, chip, layout, b_w = deepseek()
    settings = deployed.settings("decode", ["DeepSeek-V3"])
    ranks = layout["attention_data_parallel"] * layout["pipeline_parallel"]
    col = {k: np.asarray(v)[:, None] for k, v in m.items()}
    chip_c = {k: np.asarray(v)[:, None] for k, v in chip.items()}
    lay = {k: np.asarray(v)[:, None] for k, v in layout.items()}
    s = {k: (np.asarray(v)[:, None] if np.ndim(v) else v) for k, v in settings.items()}
    batches = ranks[:, None] * np.array([[1.0, 37.0]])
    out = deployment.decode_terms(col, chip_c, lay, batches, 50_000.0, kv_scale=1.0, settings=s)
    per_token = out["kv_time_s"] * out["replica_chips"] * (P_CHIP / 3600) / batches
    assert per_token[0, 0] == pytest.approx(per_token[0, 1], rel=1e-12)


def test_tensor_parallel_mla_reads_the_latent_on_every_chip():
    """An MLA latent is one KV head: with TP = 8 every chip reads it, so a byte costs 8 times as much per token."""
    deployed, m, chip, layout, b_w = deepseek()
    settings = deployed.settings("decode", ["DeepSeek-V3"])
    tp8 = {**layout, "tensor_parallel": np.array([8.0]), "attention_data_parallel": np.array([8.0])}
    one = context_cost.decode_kv_usd_per_token(m, chip, layout, np.array([[50_000.0]]), kv_scale=1.0, settings=settings)
    eight = context_cost.decode_kv_usd_per_token(m, chip, tp8, np.array([[50_000.0]]), kv_scale=1.0, settings=settings)
    assert eight / one == pytest.approx(8.0, rel=1e-12)


def test_prefill_attention_per_token_is_half_the_causal_slope():
    """Llama-3.1-8B: 32 layers x 32 query heads x (128 + 128) x 2 FLOP per cached token; a causal prompt of L tokens
    averages (L + 1)/2 cached tokens per position (lecture h.1)."""
    deployed = frames()["serving"]
    have, m, _chip, _layout, _b = deployed.rows(["Llama-3.1-8B"])
    assert have.all()
    slope = 32 * 32 * (128 + 128) * 2
    length = np.array([[4_096.0, 65_536.0]])
    got = context_cost.prefill_attention_flop_per_token(m, length)
    assert got == pytest.approx(slope * (length + 1) / 2, rel=1e-9)
