"""econ.analyses.calibration_neighbours: the tiers of measured runs that correct a prediction."""

from __future__ import annotations

from econ.analyses.calibration_columns import RUNS
from econ.analyses.calibration_neighbours import HELD_BASES, TIERS
from tests.analyses.helpers import q


def test_a_layout_is_a_configuration_less_its_lengths(real_db):
    """Each tier is coarser than the one before: the runs of one configuration share one layout, and a layout holds
    runs of several lengths (else the second tier could never reach a row the first does not)."""
    per_config = q(
        real_db,
        "select configuration_key, count(distinct layout_key) as n from calibration_runs where included group by 1",
    )
    assert per_config.height > 100 and (per_config["n"] == 1).all()
    lengths = q(
        real_db,
        "select layout_key, count(distinct (input_tokens, output_tokens)) as n from calibration_runs where included "
        "group by 1",
    )
    assert (lengths["n"] > 1).sum() > 20


def test_every_tier_is_stored_and_read_at_its_own_distance():
    """Each tier's held-out ratios are declared columns of calibration_runs, its key column too, and no two tiers
    share a distance (a band measured on one tier's rows is never claimed for the other's)."""
    names = {c.name for c in RUNS.columns}
    for basis in HELD_BASES:
        assert {f"{basis}_{t}_ratio" for t in ("ttft", "tpot")} <= names
    assert {tier.column for tier in TIERS} <= names
    assert len({tier.distance for tier in TIERS}) == len(TIERS)
