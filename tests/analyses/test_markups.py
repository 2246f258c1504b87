"""The markup model, every seller's implied margin and the closed models read backwards, on the shipped data.

Checks of issue 24: the implied-margin table covers every open model with a calibrated cost, with at least 5 sellers
each where the data has them (counted independently here from price_current and model_catalog); the markup rows read
every source and snapshot; a margin recomputes from its price and cost; the decode cost is at the speed target;
the cost readings carry one status, the one inference_quantities shows.
"""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest

from econ.analyses import fit_markups, markup_costs


@pytest.fixture(scope="module")
def con(real_db):
    with duckdb.connect(str(real_db), read_only=True) as c:
        yield c


def q(con, sql: str) -> pl.DataFrame:
    return con.sql(sql).pl()


def test_every_open_model_with_a_calibrated_cost_has_its_sellers_margins(con):
    """Independent count: the distinct sellers of each open model's current standard base-tier prices (those the fits
    read, inference_prices: not the replayed histories)."""
    costed = set(q(con, "select distinct arch_model from markup_costs where input_cost_usd_per_mtok > 0")["arch_model"])
    sellers = q(
        con,
        """
        select c.arch_model, count(distinct p.provider) as sellers
        from inference_prices p join model_catalog c using (canonical_model)
        where c.arch_model is not null and p.variant = 'standard' and p.tier_min_prompt_tokens = 0
          and p.input_usd_per_mtok > 0
        group by 1
        """,
    )
    in_data = {r["arch_model"]: r["sellers"] for r in sellers.iter_rows(named=True) if r["arch_model"] in costed}
    table = q(con, "select arch_model, count(distinct provider) as sellers from implied_margins where component = "
                   "'input' group by 1")  # fmt: skip
    got = dict(zip(table["arch_model"], table["sellers"]))
    assert set(got) == set(in_data)
    for model, n in in_data.items():
        assert got[model] >= min(n, 5), model
    assert sum(n >= 5 for n in got.values()) >= 25


def test_a_margin_reads_its_price_and_cost_from_their_own_tables_and_the_chip_range_brackets_it(con):
    """Not the table's own 1 - c/p again: the price is the seller's current list price read here from price_current,
    the cost the reference chip's row of markup_costs, and the margin agrees with the markup model's second path,
    price_over_market = price/(cost x market markup), so 1 - margin = 1/(price_over_market x market markup)."""
    m = q(con, "select * from implied_margins")
    prices = q(
        con,
        """
        select source, provider, model, 'input' as component, input_usd_per_mtok as listed from inference_prices
        where variant = 'standard' and tier_min_prompt_tokens = 0
        union all
        select source, provider, model, 'output', output_usd_per_mtok from inference_prices
        where variant = 'standard' and tier_min_prompt_tokens = 0
        """,
    ).unique(subset=["source", "provider", "model", "component"])
    costs = q(
        con,
        "select arch_model, 'input' as component, input_cost_usd_per_mtok as reference_cost from markup_costs "
        "where reference union all select arch_model, 'output', output_cost_usd_per_mtok from markup_costs "
        "where reference",
    )
    joined = m.join(prices, on=["source", "provider", "model", "component"], how="left").join(
        costs, on=["arch_model", "component"], how="left"
    )
    assert joined["listed"].is_not_null().all()
    assert (joined["price_usd_per_mtok"] == joined["listed"]).all()
    assert (joined["cost_usd_per_mtok"] == joined["reference_cost"]).all()
    both = m.filter(pl.col("price_over_market_ratio").is_not_null())
    assert both.height
    assert (1 - both["margin_frac"]).to_list() == pytest.approx(
        (1 / (both["price_over_market_ratio"] * both["market_markup_ratio"])).to_list(), rel=1e-9
    )
    ok = m.filter(pl.col("n_chips") > 1)
    assert ok.height and (ok["margin_low_frac"] <= ok["margin_frac"] + 1e-12).all()
    assert (ok["margin_frac"] <= ok["margin_high_frac"] + 1e-12).all()


def test_the_output_cost_is_at_the_largest_batch_that_meets_the_speed_target():
    """By hand on a made-up cost curve: 2 chips at $3.6/h ($2e-3 a second for the replica), costs per token at
    batches 1, 10, 100 of 2e-5, 1e-5, 5e-5 $: tokens/s per user = 2e-3/(c*B) = 100, 20, 0.4; the target 10 picks
    batch 10; a target of 1e6 is met by no batch, so the output is not costed (no batch-1 fallback) and the
    fastest speed (100 tokens/s at batch 1) says why."""
    cost = np.array([[2e-5, 1e-5, 5e-5]])
    c, b, fastest = markup_costs.output_cost_at_speed(cost, np.array([1.0, 10.0, 100.0]), [2.0], 3.6, 10.0)
    assert (c[0], b[0]) == (1e-5, 10.0)
    assert fastest[0] == pytest.approx(100.0)
    c, b, fastest = markup_costs.output_cost_at_speed(cost, np.array([1.0, 10.0, 100.0]), [2.0], 3.6, 1e6)
    assert np.isnan(c[0]) and np.isnan(b[0]) and fastest[0] == pytest.approx(100.0)


def test_no_output_cost_is_at_a_speed_below_the_target(con):
    """Every costed output meets the scenario's per-user speed target; the rows that cannot are flagged and
    null (Llama-3.1-405B on the fewest chips that hold it), so no margin is read off a batch-1 cost."""
    rows = q(con, "select * from markup_costs")
    target = float(
        q(con, "select value from scenarios where scenario = 'base' and name = 'user_speed_target_tokens_per_s'")[
            "value"
        ][0]
    )
    costed = rows.filter(pl.col("output_cost_usd_per_mtok").is_not_null())
    assert costed.height and costed["speed_target_met"].all()
    assert (costed["fastest_tokens_per_s_per_user"] >= target * (1 - 1e-9)).all()
    unmet = rows.filter(~pl.col("speed_target_met"))
    assert unmet["output_cost_usd_per_mtok"].is_null().all() and unmet["output_batch_seqs"].is_null().all()
    assert (unmet["fastest_tokens_per_s_per_user"].fill_null(0.0) < target).all()


def test_the_markup_model_reads_every_source_and_snapshot_and_states_one_status(con):
    rows = q(con, "select * from fit_markup_rows")
    open_rows = rows.filter(pl.col("arch_model").is_not_null())
    assert set(open_rows["provider_kind"]) == {"first_party", "reseller"}
    assert open_rows["from_date"].n_unique() > 2  # several snapshots, not only the current prices
    status = dict(q(con, "select quantity, status from inference_quantities").iter_rows())
    kept = dict(q(con, "select quantity, status from fit_markup_quantities").iter_rows())
    fitted = q(con, "select component, quantity, n_models from fit_markups")
    assert set(kept) <= set(fitted["quantity"]) and all(status[k] == v for k, v in kept.items())
    assert fitted.filter(pl.col("component") == "input")["n_models"][0] >= 25
    assert fit_markups.quantity("input") in kept
    # the check's evidence sits on the open rows it was made on, never on a closed model's
    closed = rows.filter(pl.col("arch_model").is_null())
    assert closed["interval_covers_true"].is_null().all() and closed["baseline_cost_value"].is_null().all()
    assert open_rows["interval_covers_true"].is_not_null().any()


def test_closed_models_are_read_with_their_interval_and_never_given_a_decode_batch(con):
    inv = q(con, "select * from markup_inversions where arch_model is null")
    assert inv.height > 0 and inv["implied_active_params"].is_not_null().all()
    assert (inv["active_params_low"] < inv["implied_active_params"]).all()
    assert (inv["implied_active_params"] < inv["active_params_high"]).all()
    assert inv["implied_decode_batch_seqs"].is_null().all()
    assert inv["decode_batch_status"].str.starts_with("not identified").all()
