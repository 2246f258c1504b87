"""The serving tables on the fixture data: grain, agreement with the notebook API and the derived tables, the
lecture."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest

from econ.analyses import serving
from econ.analyses.scenario import scenarios_from_frame
from econ.notebook import load_chip, load_model
from econ.physics import decode_step
from tests.analyses.helpers import build_with, q


def test_curves_grain(fixture_db):
    """3 models x (H100 bf16/fp8, B200 bf16/fp8/fp4, v5e bf16) x 17 batches x 11 contexts, one row each."""
    counts = q(
        fixture_db,
        "select count(*) as n, count(distinct (model, chip, number_format)) as cases, "
        "min(batch_seqs) as b0, max(batch_seqs) as b1, min(context_tokens) as c0, max(context_tokens) as c1, "
        "count(distinct (model, chip, number_format, batch_seqs, context_tokens)) as keys from serving_curves",
    ).row(0)
    assert counts == (18 * 17 * 11, 18, 1, 65_536, 1_024, 1_048_576, 18 * 17 * 11)
    formats = q(
        fixture_db,
        "select chip, list(distinct number_format order by number_format) as f from serving_curves group by chip "
        "order by chip",
    )
    assert formats.rows() == [("B200", ["bf16", "fp4", "fp8"]), ("H100", ["bf16", "fp8"]), ("TPU-v5e", ["bf16"])]


def test_a_curve_point_equals_the_notebook_api(fixture_db):
    """Second code path: the table's point equals decode_step on the Model/Chip loaded from the same database, on
    the row's layout."""
    row = q(
        fixture_db,
        "select * from serving_curves where model = 'DeepSeek-V3' and chip = 'H100' and number_format = 'fp8' "
        "and batch_seqs = 256 and context_tokens = 8192",
    ).row(0, named=True)
    with duckdb.connect(str(fixture_db), read_only=True) as con:
        model, chip = load_model("DeepSeek-V3", db=con), load_chip("H100", db=con)
    # 671 GB fp8 > one 640 GB HGX: experts over two domains (EP16 over scale-out), attention replicated per chip
    assert (row["replica_chips"], row["tensor_parallel"], row["attention_data_parallel"]) == (16, 1, 16)
    step = decode_step(
        model,
        chip,
        batch=256,
        context_tokens=8192,
        number_format="fp8",
        usd_per_chip_hour=row["usd_per_chip_hour"],  # the chip's own rental price (test below)
        layout=layout_of(row),
    )
    assert row["decode_step_time_s"] == pytest.approx(step.step_time_s, rel=1e-12)
    assert row["output_usd_per_mtok"] == pytest.approx(step.usd_per_mtok, rel=1e-12)
    assert row["decode_bound"] == step.bound


def layout_of(row: dict) -> dict:
    dp = row["attention_data_parallel"]
    flags = ("replicate_attention", "replicate_shared_experts", "replicate_dense", "replicate_embeddings")
    return {
        "tensor_parallel": row["tensor_parallel"],
        "attention_data_parallel": dp,
        "pipeline_parallel": row["pipeline_parallel"],
        **dict.fromkeys(flags, dp > 1),
        "redundant_expert_slots": 0.0,
    }


def test_fits_flag_agrees_with_summary_max_batch(fixture_db):
    """Cross-table: at 8,192 context a batch fits exactly when it is <= the summary's max batch at 8k."""
    bad = q(
        fixture_db,
        """
        select c.model, c.chip, c.number_format, c.batch_seqs
        from serving_curves c join serving_summary s using (model, chip, number_format)
        where c.context_tokens = 8192 and c.fits_in_memory <> (c.batch_seqs <= s.max_batch_at_8k_seqs)""",
    )
    assert bad.height == 0


def test_balance_batch_is_r_of_hardware_derived_times_sparsity_of_model_derived(fixture_db):
    """B*0 = R x N_tot/N_act, each factor read from the one table that stores it (a cross-table identity)."""
    joined = q(
        fixture_db,
        """
        select s.balance_batch_seqs, h.critical_batch_ratio * m.sparsity_param_ratio as product
        from serving_summary s join hardware_derived h using (chip, number_format) join model_derived m using
        (model)""",
    )
    assert joined.height == q(fixture_db, "select count(*) as n from serving_summary").item()
    np.testing.assert_allclose(joined["balance_batch_seqs"], joined["product"], rtol=1e-12)


def test_summary_against_published_figures(fixture_db):
    """DeepSeek B*0 = R x 18.1 by parameters and R x 32 by experts; one sequence reads ~37 GB of its 671 GB in FP8,
    sixteen ~277 GB (the issue's hand count; tests/physics/test_weights.py derives it from the config)."""
    ds = q(
        fixture_db,
        "select s.*, h.critical_batch_ratio from serving_summary s join hardware_derived h using (chip, number_format)"
        " where s.number_format = 'fp8' and model = 'DeepSeek-V3' and chip = 'H100'",
    ).row(0, named=True)
    assert ds["balance_batch_seqs"] == pytest.approx(ds["critical_batch_ratio"] * 671 / 37)
    assert ds["balance_batch_experts_seqs"] == pytest.approx(ds["critical_batch_ratio"] * 32)
    assert ds["weight_bytes_touched_batch1_bytes"] == pytest.approx(37e9, rel=0.02)
    assert ds["weight_bytes_touched_batch16_bytes"] == pytest.approx(277e9, rel=0.01)


def test_deepseek_sparsity_discrepancy_is_shown(fixture_db):
    """Lecture b.2: 300 x 8 = 2,400 as said; by experts 32 (9,600); by parameters 671/37 = 18.1 (5,440)."""
    row = q(fixture_db, "select * from serving_sparsity where model = 'DeepSeek-V3'").row(0, named=True)
    assert row["lecture_sparsity_ratio"] == 8 and row["balance_batch_lecture_r300_seqs"] == pytest.approx(2400)
    assert row["balance_batch_expert_r300_seqs"] == pytest.approx(9600)
    assert row["balance_batch_param_r300_seqs"] == pytest.approx(5440, rel=0.001)


def test_streamed_chunks_give_the_same_table(fixture_db):
    """A grid written one case per chunk equals the one written in large chunks."""
    from econ.analyses.deployment_inputs import CASES_SQL

    base = scenarios_from_frame(q(fixture_db, "select * from scenarios"))["base"]
    cases = serving._with_layout(q(fixture_db, CASES_SQL), base)
    big = pl.concat(list(serving.curve_frames(cases, base)))
    small = list(serving.curve_frames(cases, base, cases_per_chunk=1))
    assert len(small) == cases.height
    assert big.equals(pl.concat(small))


def test_decode_and_prefill_efficiencies_are_applied_separately(tmp_path):
    """decode_mfu/mbu divide a decode step's terms, prefill_mfu/mbu a prefill pass's; kv_cache_format fp8 halves KV
    and runs attention at the FP8 peak (1,979 TFLOP/s on H100) while the BF16 weights' FLOPs run at 989.4."""
    db = build_with(
        tmp_path,
        ("scenarios", "base,decode_mfu_frac,0.5,,fraction,,,,test,https://example.org"),
        ("scenarios", "base,decode_mbu_frac,0.8,,fraction,,,,test,https://example.org"),
        ("scenarios", "base,prefill_mfu_frac,0.25,,fraction,,,,test,https://example.org"),
        ("scenarios", "base,prefill_mbu_frac,0.4,,fraction,,,,test,https://example.org"),
        ("scenarios", "base,kv_cache_format,,fp8,format,,,,test,https://example.org"),
    )
    where = "where model = 'Llama-3.1-70B' and chip = 'H100' and number_format = 'bf16'"
    row = q(db, f"select * from serving_curves {where} and batch_seqs = 1 and context_tokens = 1024").row(0, named=True)
    eff = q(db, "select decode_mfu_frac, decode_mbu_frac, prefill_mfu_frac, prefill_mbu_frac from serving_summary")
    balance = q(db, f"select * from serving_summary {where}").row(0, named=True)
    bounds = q(db, f"select batch_seqs, decode_bound from serving_curves {where} and context_tokens = 4096 order by 1")
    assert eff.row(0) == (0.5, 0.8, 0.25, 0.4)
    slope = 2 * 64 * (128 + 128) * 80  # attention FLOPs per new token per cached token (config: 64 heads, 80 layers)
    read = 2 * (70.6e9 - 128_256 * 8192)  # bf16 weights but the input embedding (only its rows are read)
    n = 70.6e9 - 128_256 * 8192  # parameters with FLOPs: an embedding lookup has none
    assert (balance["tensor_parallel"], balance["attention_data_parallel"]) == (2, 1)  # TP2 holds 141 GB
    assert row["decode_compute_time_s"] == pytest.approx(
        2 * n / (2 * 989.4e12 * 0.5) + slope * 1024 / (2 * 1979e12 * 0.5)
    )
    assert row["decode_memory_time_s"] == pytest.approx((read + 1024 * 327_680 / 2) / (2 * 3.35e12 * 0.8))
    prefill_compute = 2 * 1024 * n / (2 * 989.4e12 * 0.25) + slope * 1024 * 1025 / 2 / (2 * 1979e12 * 0.25)
    prefill_memory = (read + 1024 * 327_680 / 2) / (2 * 3.35e12 * 0.4)
    assert row["prefill_step_time_s"] == pytest.approx(max(prefill_compute, prefill_memory))

    # at peak L* = 2*N_act*W/(F*b_kv) = 2,918 tokens of fp8 KV (163,840 B); at decode mfu 0.5, mbu 0.8 the curves
    # balance at L* x 0.8/0.5 = 4,669 and B*0 = 295.3 x 0.5/0.8 = 184.6, so at 4,096 context B* = 1,504
    assert balance["balance_batch_achieved_seqs"] == pytest.approx(989.4e12 / 3.35e12 * 0.5 / 0.8)
    assert balance["critical_context_achieved_tokens"] == pytest.approx(
        2 * 70.6e9 * 3.35e12 * 0.8 / (989.4e12 * 0.5 * 163_840)
    )
    assert balance["critical_context_tokens"] < 4096 < balance["critical_context_achieved_tokens"]
    # with attention FLOPs at 4,096 context a step turns compute-bound at
    # B >= (read/(W*mbu)) / ((2*N/F + slope*L/F_attn)/mfu - L*b_kv/(W*mbu)), b_kv the fp8 KV per token
    per_seq_compute = (2 * n / 989.4e12 + slope * 4096 / 1979e12) / 0.5
    per_seq_kv = 4096 * 327_680 / 2 / (3.35e12 * 0.8)
    turn = (read / (3.35e12 * 0.8)) / (per_seq_compute - per_seq_kv)
    assert [b for b, bound in bounds.rows() if bound == "compute"] == [b for b in 2.0 ** np.arange(17) if b >= turn]


def test_each_chip_is_priced_at_its_own_rental_quote_and_nothing_that_does_not_fit_has_a_cost(real_db):
    """Issue 26: every chip was priced at a flat 2 USD/chip-hour, so cross-chip costs were throughput comparisons,
    and a cost floor was printed where not one sequence fits. Independent reading: the median of each chip's newest
    on-demand quotes on or before the build's date, in SQL on rental_prices; the scenario's price where none."""
    expected = dict(
        q(
            real_db,
            """
            with quotes as (
                select chip, usd_per_chip_hour, as_of from rental_prices
                where kind = 'on_demand' and as_of <= (select as_of from build_info)
            )
            select chip, median(usd_per_chip_hour) as p from quotes
            where (chip, as_of) in (select (chip, max(as_of)) from quotes group by chip) group by chip
            """,
        ).rows()
    )
    flat = q(real_db, "select value from scenarios where scenario = 'base' and name = 'usd_per_chip_hour'").item()
    priced = q(real_db, "select distinct chip, usd_per_chip_hour, price_basis from serving_summary")
    assert priced["chip"].n_unique() == priced.height  # one price per chip
    assert len(expected) >= 3 and len(set(expected.values())) >= 3  # the shipped quotes differ between chips
    for chip, price, basis in priced.iter_rows():
        assert price == pytest.approx(expected.get(chip, flat)), chip
        assert basis.startswith("on_demand median of" if chip in expected else "no on_demand quote"), basis
    curves = q(real_db, "select distinct chip, usd_per_chip_hour from serving_curves")
    assert dict(curves.rows()) == dict(priced.select("chip", "usd_per_chip_hour").rows())
    nothing_fits = q(
        real_db,
        "select count(*) filter (where max_batch_at_128k_seqs < 1) as none_128k, "
        "count(*) filter (where max_batch_at_128k_seqs < 1 and cost_floor_at_128k_usd_per_mtok is not null) as priced, "
        "count(*) filter (where max_batch_at_8k_seqs >= 1 and cost_floor_at_8k_usd_per_mtok is null) as lost "
        "from serving_summary",
    ).row(0)
    assert nothing_fits[0] > 0 and nothing_fits[1:] == (0, 0)


def test_a_re_release_is_computed_once_and_its_rows_are_what_computing_it_gives(real_db):
    """The sweeps compute one model of each architecture (DeepSeek-R1 for DeepSeek-V3 and -V3.1; 15 of 44)
    and copy its rows to the others; computed on its own, DeepSeek-V3's curves are those copies."""
    from econ.analyses import deployment_inputs as inputs

    base = scenarios_from_frame(q(real_db, "select * from scenarios"))["base"]
    as_of = q(real_db, "select as_of from build_info")["as_of"][0]
    cases = serving._with_layout(q(real_db, inputs.CASES_SQL), base)
    cases = serving.with_chip_prices(cases, q(real_db, "select * from rental_prices"), base, as_of)
    stored = q(real_db, "select * from serving_curves where model = 'DeepSeek-V3'")
    kept, computed_as = inputs.one_per_architecture(cases)
    twins = dict(computed_as.iter_rows())
    assert twins["DeepSeek-V3"] == twins["DeepSeek-V3.1"] == "DeepSeek-R1" and "DeepSeek-V3" not in set(kept["model"])
    assert twins["Llama-3.1-70B"] == "Llama-3.1-70B" and twins["DeepSeek-V3.2"] == "DeepSeek-V3.2"  # its own layout
    alone = pl.concat(serving.curve_frames(cases.filter(pl.col("model") == "DeepSeek-V3"), base))
    key = ["chip", "number_format", "batch_seqs", "context_tokens"]
    assert alone.height == stored.height > 0
    assert alone.select(stored.columns).sort(key).equals(stored.sort(key))
