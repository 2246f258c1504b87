"""The serving analysis on the fixture data set: tables, grain, agreement with the views and the notebook API."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from econ.analyses import serving
from econ.analyses.runner import run_analyses
from econ.analyses.scenario import Assumption, Scenario
from econ.analyses.serving_tables import memory_tier_table
from econ.build import build
from econ.errors import EconError
from econ.physics import decode_step, load_chip, load_model

FIXTURE_DATA = Path(__file__).resolve().parents[1] / "fixtures" / "data"
AS_OF = date(2026, 11, 30)
TABLES = (
    "serving_curves",
    "serving_summary",
    "serving_sparsity",
    "network_ratios",
    "attention_crossover",
    "memory_tier_costs",
    "fast_mode_identity",
)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The fixture data built into a database, with the serving analysis run on it (whether or not it is registered)."""
    db = tmp_path_factory.mktemp("serving") / "econ.duckdb"
    build(data_dir=FIXTURE_DATA, db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF)
    with duckdb.connect(str(db)) as con:
        if "serving_curves" not in {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}:
            run_analyses(con, [serving], as_of=AS_OF, cache_dir=None)
    return db


def q(db, sql) -> pl.DataFrame:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.sql(sql).pl()


def test_every_table_is_written_with_comments(served):
    with duckdb.connect(str(served), read_only=True) as con:
        comments = dict(con.execute("select table_name, comment from duckdb_tables()").fetchall())
        for table in TABLES:
            assert comments[table] and "Grain:" in comments[table]
        assert (
            con.execute(
                "select comment from duckdb_columns() where table_name = 'serving_curves' "
                "and column_name = 'decode_step_time_s'"
            )
            .fetchone()[0]
            .startswith("Decode step, lower bound")
        )


def test_curves_grain(served):
    """3 models x (H100 bf16/fp8, B200 bf16/fp8/fp4, v5e bf16) x 17 batches x 11 contexts, one row each."""
    counts = q(
        served,
        "select count(*) as n, count(distinct (model, chip, number_format)) as cases, "
        "min(batch_seqs) as b0, max(batch_seqs) as b1, min(context_tokens) as c0, max(context_tokens) as c1, "
        "count(distinct (model, chip, number_format, batch_seqs, context_tokens)) as keys from serving_curves",
    ).row(0)
    assert counts == (18 * 17 * 11, 18, 1, 65_536, 1_024, 1_048_576, 18 * 17 * 11)
    formats = q(
        served,
        "select chip, list(distinct number_format order by number_format) as f from serving_curves group by chip "
        "order by chip",
    )
    assert formats.rows() == [("B200", ["bf16", "fp4", "fp8"]), ("H100", ["bf16", "fp8"]), ("TPU-v5e", ["bf16"])]


def test_a_curve_point_equals_the_notebook_api(served):
    """Second code path: the table's point equals decode_step on the Model/Chip loaded from the same database."""
    row = q(
        served,
        "select * from serving_curves where model = 'DeepSeek-V3' and chip = 'H100' and number_format = 'fp8' "
        "and batch_seqs = 256 and context_tokens = 8192",
    ).row(0, named=True)
    with duckdb.connect(str(served), read_only=True) as con:
        model, chip = load_model("DeepSeek-V3", db=con), load_chip("H100", db=con)
    step = decode_step(model, chip, batch=256, context_tokens=8192, number_format="fp8", usd_per_chip_hour=2.0)
    assert (row["replica_chips"], row["pipeline_stages"]) == (16, 2)  # 671 GB fp8 > one 640 GB HGX: two domains
    assert row["decode_step_time_s"] == pytest.approx(step.step_time_s, rel=1e-12)
    assert row["output_usd_per_mtok"] == pytest.approx(step.usd_per_mtok, rel=1e-12)
    assert row["decode_bound"] == step.bound


def test_fits_flag_agrees_with_summary_max_batch(served):
    """Cross-table: at 8,192 context a batch fits exactly when it is <= the summary's max batch at 8k."""
    bad = q(
        served,
        """
        select c.model, c.chip, c.number_format, c.batch_seqs
        from serving_curves c join serving_summary s using (model, chip, number_format)
        where c.context_tokens = 8192 and c.fits_in_memory <> (c.batch_seqs <= s.max_batch_at_8k_seqs)""",
    )
    assert bad.height == 0


def test_summary_agrees_with_hardware_derived_view(served):
    """The lead's hardware_derived view (SQL) and the Python R and drain time agree on every chip and format."""
    joined = q(
        served,
        """
        select s.chip, s.number_format, s.critical_batch_ratio, v.critical_batch_ratio as view_r,
               s.hbm_drain_time_s, v.hbm_drain_time_s as view_drain,
               s.scale_up_effective_bandwidth_bytes_per_s, v.scale_up_hbm_bandwidth_bytes_per_s as view_w_eff
        from serving_summary s join hardware_derived v using (chip, number_format)""",
    )
    assert joined.height == q(served, "select count(*) as n from serving_summary").item()
    np.testing.assert_allclose(joined["critical_batch_ratio"], joined["view_r"], rtol=1e-12)
    np.testing.assert_allclose(joined["hbm_drain_time_s"], joined["view_drain"], rtol=1e-12)
    np.testing.assert_allclose(joined["scale_up_effective_bandwidth_bytes_per_s"], joined["view_w_eff"], rtol=1e-12)


def test_summary_against_published_figures(served):
    """TPU v5e R ~ 240 and H100 ~ 295 (scaling book); B200 drain 180 GB / 7.7 TB/s ~ 23 ms; DeepSeek B*0 = R x 18.1."""
    s = q(served, "select * from serving_summary where number_format = 'bf16' order by model, chip")
    r = dict(zip(s["chip"], s["critical_batch_ratio"]))
    assert r["TPU-v5e"] == pytest.approx(240, rel=0.01) and r["H100"] == pytest.approx(295, rel=0.01)
    ds = s.filter(pl.col("model") == "DeepSeek-V3").row(by_predicate=pl.col("chip") == "H100", named=True)
    assert ds["balance_batch_seqs"] == pytest.approx(ds["critical_batch_ratio"] * 671 / 37)
    assert ds["balance_batch_experts_seqs"] == pytest.approx(ds["critical_batch_ratio"] * 32)
    assert ds["replica_within_scale_up"] is False and ds["pipeline_stages"] == 4
    assert ds["latency_floor_s"] == pytest.approx(671e9 * 2 / (8 * 3.35e12))  # W_eff = S*W, lecture d.6


def test_deepseek_sparsity_discrepancy_is_shown(served):
    """Lecture b.2: 300 x 8 = 2,400 as said; by experts 32 (9,600); by parameters 671/37 = 18.1 (5,440)."""
    row = q(served, "select * from serving_sparsity where model = 'DeepSeek-V3'").row(0, named=True)
    assert row["lecture_sparsity_ratio"] == 8 and row["balance_batch_lecture_r300_seqs"] == pytest.approx(2400)
    assert row["sparsity_expert_ratio"] == 32 and row["balance_batch_expert_r300_seqs"] == pytest.approx(9600)
    assert row["sparsity_param_ratio"] == pytest.approx(18.1, abs=0.05)
    assert row["balance_batch_param_r300_seqs"] == pytest.approx(5440, rel=0.001)


def test_fast_mode_identity_for_claude(served):
    """Lecture a.5: Claude Opus 4.6 fast mode, 6x price x 2.5x speed = 15x smaller batch."""
    row = q(served, "select * from fast_mode_identity where model = 'claude-opus-4-6'").row(0, named=True)
    assert (row["output_price_ratio"], row["speed_ratio"], row["batch_ratio"]) == pytest.approx((6.0, 2.5, 15.0))


def test_network_uses_stored_bandwidths(served):
    row = q(served, "select * from network_ratios where model = 'DeepSeek-V3' and chip = 'H100'").row(0, named=True)
    assert row["scale_up_over_out_bandwidth_ratio"] == pytest.approx(9.0)  # 450 GB/s over 400 Gb/s, not the round 8
    assert row["expert_parallel_chips"] == 8 and row["moe_layers"] == 58


def test_attention_crossover_for_llama(served):
    """Llama-3.1-70B: 4 x 64 heads x 128 x 80 layers per cached token vs 2 x 70.6e9 -> ~54k tokens (reference h.1:
    ~50k)."""
    row = q(served, "select * from attention_crossover where model = 'Llama-3.1-70B'").row(0, named=True)
    assert row["crossover_context_tokens"] == pytest.approx(2 * 70.6e9 / (4 * 64 * 128 * 80))


def test_memory_tiers_one_cheapest_per_hold_time(served):
    t = q(served, "select model, hold_time_s, sum(cheapest::int) as n from memory_tier_costs group by all")
    assert (t["n"] >= 1).all()
    first = q(served, "select mechanism from memory_tier_costs where cheapest and hold_time_s = 0.001 group by all")
    assert first["mechanism"].to_list() == ["hbm"]  # nothing beats memory already next to the compute for an instant


def test_memory_tier_costs_by_hand(served):
    """DeepSeek-V3 (37B active, 61 x 576 x 2 = 70,272 B of KV per token) held for an hour (lecture g.2), from the
    fixture's
    tiers at the scenario's $2/chip-hour: recompute is a B200 bf16 forward pass, 2 x 37e9 / 2.25e15 s; DDR (2 TB, 200
    GB/s,
    $0.50/h) costs its read time once plus its capacity share per second; HBM (80 GB, $2/h) only its capacity share."""
    kv, per_s = 61 * 576 * 2, 1e6 / 3600  # bytes per token; $/MTok per ($/h x s)
    expected = {
        "recompute": 2 * 37e9 / 2.25e15 * 2.0 * per_s,
        "ddr": (kv / 2e11 + kv / 2e12 * 3600) * 0.5 * per_s,
        "hbm": kv / 80e9 * 3600 * 2.0 * per_s,
    }
    rows = q(
        served,
        "select mechanism, cost_usd_per_mtok, cheapest from memory_tier_costs where model = 'DeepSeek-V3' "
        "and hold_time_s = 3600",
    )
    assert dict(zip(rows["mechanism"], rows["cost_usd_per_mtok"])) == pytest.approx(expected, rel=1e-9)
    assert rows.filter(pl.col("cheapest"))["mechanism"].to_list() == ["ddr"]  # 0.0176 against recompute's 0.0183
    # DDR's hold cost overtakes recompute after (recompute - DDR read) / DDR hold rate = 3,734 s: a day is recompute's
    day = q(
        served,
        "select mechanism from memory_tier_costs where model = 'DeepSeek-V3' and cheapest and hold_time_s > 86400 "
        "group by all",
    )
    assert day["mechanism"].to_list() == ["recompute"]


def test_streamed_chunks_give_the_same_table():
    """A grid written chunk by chunk (tiny chunks) equals the one written in large chunks."""
    models = pl.DataFrame(
        {
            "model": ["a", "b"],
            "params_total": [1e11, 7e9],
            "params_active": [1e10, 7e9],
            "kv_bytes_per_token": [7e4, None],
            "kv_window_bytes_per_sequence": [0.0, 0.0],
            "sliding_window_tokens": [None, None],
        }
    )
    hardware = pl.DataFrame(
        {
            "chip": ["X"],
            "peak_bf16_flop_per_s": [1e15],
            "peak_fp8_flop_per_s": [2e15],
            "peak_fp4_flop_per_s": [None],
            "peak_int8_op_per_s": [None],
            "hbm_capacity_bytes": [8e10],
            "hbm_bandwidth_bytes_per_s": [3e12],
            "scale_up_domain_chips": [8],
        }
    )
    cases = serving.cases(models, hardware)
    big = pl.concat(list(serving.curve_frames(cases, usd_per_chip_hour=2.0, mfu=1.0, mbu=1.0)))
    small = list(serving.curve_frames(cases, usd_per_chip_hour=2.0, mfu=1.0, mbu=1.0, max_points=187))
    assert len(small) == 2  # model b has no KV figure: left out of the curves, one chunk per remaining case
    assert big.equals(pl.concat(small))


def test_scenario_efficiencies_and_kv_format_are_applied(tmp_path):
    """prefill_mfu and decode_mbu in the base scenario divide the compute and memory terms; kv_cache_format fp8 halves
    KV."""
    data = tmp_path / "data"
    shutil.copytree(FIXTURE_DATA, data)
    with open(data / "scenarios.csv", "a") as f:
        f.write("base,prefill_mfu,0.5,,fraction,,,,test,https://example.org\n")
        f.write("base,decode_mbu,0.8,,fraction,,,,test,https://example.org\n")
        f.write("base,kv_cache_format,,fp8,format,,,,test,https://example.org\n")
    db = tmp_path / "e.duckdb"
    build(data_dir=data, db_path=db, cache_dir=None, reports_dir=None, as_of=AS_OF)
    with duckdb.connect(str(db)) as con:
        if "serving_curves" not in {r[0] for r in con.execute("select table_name from duckdb_tables()").fetchall()}:
            run_analyses(con, [serving], as_of=AS_OF, cache_dir=None)
        row = con.sql(
            "select decode_compute_time_s, decode_memory_time_s from serving_curves where model = 'Llama-3.1-70B' "
            "and chip = 'H100' and number_format = 'bf16' and batch_seqs = 1 and context_tokens = 1024"
        ).fetchall()[0]
        eff = con.sql("select mfu_frac, mbu_frac from serving_summary limit 1").fetchall()[0]
        balance = con.sql(
            "select balance_batch_achieved_seqs, critical_context_achieved_tokens, critical_context_tokens "
            "from serving_summary where model = 'Llama-3.1-70B' and chip = 'H100' and number_format = 'bf16'"
        ).fetchall()[0]
        bounds = con.sql(
            "select batch_seqs, decode_bound from serving_curves where model = 'Llama-3.1-70B' and chip = 'H100' "
            "and number_format = 'bf16' and context_tokens = 4096 order by batch_seqs"
        ).fetchall()
    assert eff == (0.5, 0.8)
    assert row[0] == pytest.approx(2 * 70.6e9 / (2 * 989.4e12 * 0.5))
    assert row[1] == pytest.approx((70.6e9 * 2 + 1024 * 327_680 / 2) / (2 * 3.35e12 * 0.8))
    # at peak L* = 2*N_act*W/(F*b_kv) = 2,918 tokens of fp8 KV (163,840 B); at mfu 0.5, mbu 0.8 the curves balance at
    # L* x 0.8/0.5 = 4,669 and B*0 = 295.3 x 0.5/0.8 = 184.6, so at 4,096 context B* = 184.6/(1 - 4,096/4,669) = 1,504:
    # compute-bound from batch 2,048 although 4,096 is above the peak L*
    assert balance[0] == pytest.approx(989.4e12 / 3.35e12 * 0.5 / 0.8)
    assert balance[1] == pytest.approx(2 * 70.6e9 * 3.35e12 * 0.8 / (989.4e12 * 0.5 * 163_840))
    assert balance[2] < 4096 < balance[1]
    assert [b for b, bound in bounds if bound == "compute"] == [2.0**k for k in range(11, 17)]


def test_sparsity_and_weights_agree_with_model_derived_view(served):
    """The lead's model_derived view (SQL) and the Python sparsities and weight bytes agree on every model."""
    joined = q(
        served,
        """
        select s.model, s.sparsity_param_ratio, v.sparsity_param_ratio as view_params,
               coalesce(s.sparsity_expert_ratio, -1) as experts, coalesce(v.sparsity_expert_ratio, -1) as view_experts,
               (select weight_bytes from serving_summary w where w.model = s.model and w.number_format = 'fp8' limit 1)
               as fp8,
               v.weight_fp8_bytes as view_fp8
        from serving_sparsity s join model_derived v using (model)""",
    )
    assert joined.height == 3
    np.testing.assert_allclose(joined["sparsity_param_ratio"], joined["view_params"], rtol=1e-12)
    np.testing.assert_allclose(joined["experts"], joined["view_experts"], rtol=1e-12)
    np.testing.assert_allclose(joined["fp8"], joined["view_fp8"], rtol=1e-12)


def scenario_with(**texts) -> Scenario:
    return Scenario(
        "base",
        {n: Assumption(n, None, t, "format", None, None, (), "test", "https://example.org") for n, t in texts.items()},
    )


def test_format_assumptions_are_checked_not_guessed():
    """A scenario's weight_format / kv_cache_format typo is an error naming the assumption, never a silent bf16."""
    assert serving.format_assumption(scenario_with(), "weight_format", "bf16") == "bf16"
    assert serving.format_assumption(scenario_with(weight_format="fp8"), "weight_format", "bf16") == "fp8"
    with pytest.raises(
        EconError,
        match=r"^scenario 'base' sets weight_format to 'fp6', not a number format econ can use "
        r"here — use one of bf16, fp8, int8, fp4 in data/scenarios.csv$",
    ):
        serving.format_assumption(scenario_with(weight_format="fp6"), "weight_format", "bf16")
    hardware = pl.DataFrame({"chip": ["X"], "peak_bf16_flop_per_s": [1e15], "peak_int8_op_per_s": [None]})
    with pytest.raises(
        EconError,
        match=r"^scenario serving_chip X has no int8 peak \(the scenario's weight_format\) — set "
        r"weight_format to a format the chip has a peak for in data/scenarios.csv$",
    ):
        memory_tier_table(
            pl.DataFrame(), hardware, pl.DataFrame(), chip="X", usd_per_chip_hour=2.0, mfu=1.0, number_format="int8"
        )
