"""sardana_optimum on the fixture laws: more demand means a smaller model trained longer; the heuristic never wins."""

from __future__ import annotations

import polars as pl
import pytest

from tests.analyses.helpers import q


def test_sardana_direction_in_the_table(fixture_db):
    """More inference demand → smaller N, more tokens per parameter (every law, form, target)."""
    opt = q(
        fixture_db,
        "select * from sardana_optimum where method = 'optimum' and demand_source = 'grid' and inference_tokens > 0 "
        "order by law, form, reference_params, inference_tokens",
    )
    steps = opt.group_by("law", "form", "reference_params", maintain_order=True).agg(
        (pl.col("params").diff() < 0).all().alias("n_falls"),
        (pl.col("tokens_per_param_ratio").diff() > 0).all().alias("tpp_rises"),
    )
    assert steps["n_falls"].all() and steps["tpp_rises"].all()


def test_the_heuristic_never_beats_the_optimum(fixture_db):
    rows = q(fixture_db, "select * from sardana_optimum where params is not null")
    assert (rows["excess_over_optimum_frac"] >= -1e-9).all()
    assert (rows.filter(pl.col("method") == "optimum")["saving_vs_chinchilla_frac"] >= -1e-9).all()
    scenario = q(fixture_db, "select * from sardana_optimum where demand_source = 'scenario'")
    assert scenario["inference_tokens"].unique().to_list() == [pytest.approx(2.592e14)]
