"""memory_tier_costs on the fixture tiers, checked by hand (lecture g.2)."""

from __future__ import annotations

import polars as pl
import pytest

from econ.analyses.memory_tier_costs import costs
from econ.analyses.scenario import scenarios_from_frame
from econ.errors import EconError
from tests.analyses.helpers import q


def test_memory_tiers_one_cheapest_per_hold_time(fixture_db):
    t = q(fixture_db, "select model, hold_time_s, sum(cheapest::int) as n from memory_tier_costs group by all")
    assert (t["n"] >= 1).all()
    first = q(fixture_db, "select mechanism from memory_tier_costs where cheapest and hold_time_s = 0.001 group by all")
    assert first["mechanism"].to_list() == ["hbm"]  # nothing beats memory already next to the compute for an instant


def test_memory_tier_costs_by_hand(fixture_db):
    """DeepSeek-V3 (37B active, 61 x 576 x 2 = 70,272 B of KV per token) held for an hour, from the fixture's tiers at
    the scenario's $2/chip-hour: recompute is a B200 bf16 forward pass, 2 x 37e9 / 2.25e15 s; DDR (2 TB, 200 GB/s,
    $0.50/h) costs its read time once plus its capacity share per second; HBM (80 GB, $2/h) only its capacity share."""
    kv, per_s = 61 * 576 * 2, 1e6 / 3600  # bytes per token; $/MTok per ($/h x s)
    expected = {
        "recompute": 2 * 37e9 / 2.25e15 * 2.0 * per_s,
        "ddr": (kv / 2e11 + kv / 2e12 * 3600) * 0.5 * per_s,
        "hbm": kv / 80e9 * 3600 * 2.0 * per_s,
    }
    rows = q(
        fixture_db,
        "select mechanism, cost_usd_per_mtok, cheapest from memory_tier_costs where model = "
        "'DeepSeek-V3' and hold_time_s = 3600",
    )
    assert dict(zip(rows["mechanism"], rows["cost_usd_per_mtok"])) == pytest.approx(expected, rel=1e-9)
    assert rows.filter(pl.col("cheapest"))["mechanism"].to_list() == ["ddr"]  # 0.0176 against recompute's 0.0183
    # DDR's hold cost overtakes recompute after (recompute - DDR read) / DDR hold rate = 3,734 s: a day is recompute's
    day = q(
        fixture_db,
        "select mechanism from memory_tier_costs where model = 'DeepSeek-V3' and cheapest and "
        "hold_time_s > 86400 group by all",
    )
    assert day["mechanism"].to_list() == ["recompute"]


def test_a_chip_without_the_scenario_format_is_an_error_for_people(fixture_db):
    s = scenarios_from_frame(q(fixture_db, "select * from scenarios"))["base"]
    with pytest.raises(
        EconError,
        match=r"^scenario serving_chip B200 has no bf16 peak \(the scenario's weight_format\)"
        r" — set weight_format to a format the chip has a peak for in "
        r"data/scenarios.csv$",
    ):
        costs(pl.DataFrame(), pl.DataFrame(), pl.DataFrame(), s)
