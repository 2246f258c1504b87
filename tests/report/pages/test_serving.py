"""Serving page: what a reader sees, checked against the fixture's datasheets and configs and the lecture's numbers."""

from __future__ import annotations

import polars as pl
import pytest

from ..html_tables import read_tables
from ..specs import by, chart_spec, figure_text, number, rows

HARDWARE = by(rows("hardware"), "chip")
MODELS = by(rows("models"), "model")


def r_bf16(chip: str) -> float:
    """R = (F/2)·b_w/W at bf16 (b_w = 2 bytes): the scaling book's F/W (lecture b.1)."""
    h = HARDWARE[chip]
    return float(h["peak_bf16_tflop_per_s"]) * 1e12 / (float(h["hbm_bandwidth_tb_per_s"]) * 1e12)


def sparsity(model: str) -> float:
    return float(MODELS[model]["params_total_b"]) / float(MODELS[model]["params_active_b"])


def test_sparsity_table_shows_the_lectures_three_readings_for_deepseek(built_report):
    """Lecture b.2: 671/37 ≈ 18 by parameters, 256/8 = 32 by experts, 8 as said; B*₀ at R = 300: 5,441, 9,600, 2,400."""
    row = by(read_tables(built_report / "serving.html")["sparsity"], "Model")["DeepSeek-V3"]
    assert number(row["N_tot/N_act (ratio)"]) == pytest.approx(671 / 37, abs=0.05)
    assert (row["Experts E/k (ratio)"], row["Lecture's figure (ratio)"]) == ("32", "8")
    assert [
        number(row[c])
        for c in ("300 × N_tot/N_act (sequences)", "300 × E/k (sequences)", "300 × lecture's (sequences)")
    ] == [5441, 9600, 2400]


def test_balance_chart_data_is_r_times_sparsity_for_every_model_and_chip(built_report):
    frame = pl.read_csv(built_report / "serving" / "balance-drain.csv.gz")
    assert frame.height == len(HARDWARE) * len(MODELS)
    for r in frame.iter_rows(named=True):
        assert r["balance_batch_seqs"] / r["critical_batch_ratio"] == pytest.approx(sparsity(r["model"]), rel=1e-3)
        assert r["critical_batch_ratio"] == pytest.approx(r_bf16(r["chip"]), rel=1e-3)


def test_summary_shows_each_case_s_default_layout(built_report):
    """DeepSeek-V3 in bf16 (1.34 TB) on an 8-chip HGX B200 (1.44 TB): the first candidate that holds it splits the
    replicated weights over TP4 (TP1 and TP2 leave no room), two attention ranks, experts over all 8."""
    row = next(
        r
        for r in read_tables(built_report / "serving.html")["serving-summary"]
        if (r["Model"], r["Chip"]) == ("DeepSeek-V3", "B200")
    )
    assert (row["Chips per replica"], row["TP"], row["DP"], row["PP"]) == ("8", "4", "2", "1")


def test_step_at_batch_one_reads_the_weights_and_one_sequences_kv(built_report):
    """Llama-3.1-70B on one B200 at 8,192 tokens (fixture scenario has no context): (N·b_w + L·b_kv)/W for every
    weight but the input embedding, with b_kv = 80 layers × 2 × 8 KV heads × 128 × 2 bytes = 327,680 (lecture
    f.2's layout)."""
    curves = pl.read_csv(built_report / "serving" / "latency-vs-batch.csv.gz")
    one = curves.filter((pl.col("model") == "Llama-3.1-70B") & (pl.col("chip") == "B200") & (pl.col("batch_seqs") == 1))
    assert one["context_tokens"][0] == 8192 and one["replica_chips"][0] == 1
    kv = 80 * 2 * 8 * 128 * 2
    read = (70.6e9 - 128_256 * 8192) * 2
    assert one["decode_step_time_s"][0] == pytest.approx((read + 8192 * kv) / 7.7e12, rel=1e-3)
    assert one["decode_bound"][0] == "memory"


def test_largest_batch_that_fits_is_the_biggest_power_of_two_under_the_free_hbm(built_report):
    fit = pl.read_csv(built_report / "serving" / "memory-fit.csv.gz")
    row = fit.filter(
        (pl.col("model") == "Llama-3.1-70B") & (pl.col("chip") == "B200") & (pl.col("context_tokens") == 8192)
    )
    free = 180e9 - 70.6e9 * 2
    sequences = free / (8192 * 80 * 2 * 8 * 128 * 2)  # 14.4 sequences of KV fit beside the weights
    assert row["max_batch_seqs"][0] == 2 ** int(sequences).bit_length() // 2 == 8


def test_every_chart_names_its_formula_section_and_source(built_report):
    page = built_report / "serving.html"
    for slug in ("latency-vs-batch", "cost-vs-batch", "balance-drain", "memory-fit", "attention-crossover"):
        text = figure_text(page, slug)
        assert "Formula:" in text and "lecture §" in text and "Data:" in text, slug
    spec = chart_spec(page, "latency-vs-batch")
    assert spec["facet"]["column"]["sort"] == ["H100", "B200", "TPU-v5e"]  # preferred chips first, then the rest
    assert sorted({r["model"] for r in spec["datasets"]["curves"]}) == ["DeepSeek-V3", "Llama-3.1-70B", "gpt-oss-120b"]
