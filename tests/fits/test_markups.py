"""The markup model: a synthetic round trip (prices made from known costs with known markups, a known reseller factor
and noise give back the costs, the markups and intervals that cover at their stated rate) and the margin by hand."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from econ.fits import markups, validation

MU = {"input": np.log(5.0), "output": np.log(8.0)}
GAMMA = np.log(1.3)


def market(rng, *, models=15, model_sd=0.3, row_sd=0.2):
    """Each model sold by its maker and 2-6 resellers, input and output priced at cost x markup x noise; costs
    spread over three decades (so a no-price guess is poor)."""
    rows = []
    costs = np.exp(rng.uniform(np.log(0.01), np.log(10.0), size=(models, 2)))
    shift = rng.normal(0.0, model_sd, size=models)  # the model's own deviation (its deployment, its sellers)
    for m in range(models):
        for seller in range(1 + rng.integers(2, 7)):
            for c, component in enumerate(("input", "output")):
                reseller = seller > 0
                noise = rng.normal(0.0, row_sd)
                price = costs[m, c] * np.exp(MU[component] + GAMMA * reseller + shift[m] + noise)
                rows.append((f"m{m:02d}", component, reseller, price, costs[m, c]))
    return pl.DataFrame(rows, schema=["model", "component", "reseller", "price", "cost"], orient="row")


def read(frame: pl.DataFrame):
    comp = frame["component"].replace_strict({c: i for i, c in enumerate(markups.COMPONENTS)}).to_numpy()
    res = frame["reseller"].to_numpy().astype(float)
    group = frame["model"].rank("dense").cast(int).to_numpy() - 1
    price, cost = frame["price"].to_numpy(), frame["cost"].to_numpy()
    y = np.log(price / cost)
    n = len(markups.COMPONENTS)
    mu, gamma = markups.fit(y, comp, res, markups.model_weights(group, comp), n_components=n)
    read_cost = np.exp(markups.left_out(np.log(price), y, comp, res, group, n_components=n))
    return mu, gamma, read_cost


def test_the_fit_gives_back_the_markups_and_the_reseller_factor():
    mu, gamma, read_cost = read(market(np.random.default_rng(1), models=40))
    assert np.exp(mu[0]) == pytest.approx(5.0, rel=0.15) and np.exp(mu[1]) == pytest.approx(8.0, rel=0.15)
    assert np.exp(gamma) == pytest.approx(1.3, rel=0.1)
    assert np.isnan(mu[2:]).all()  # components without prices get no markup


def test_round_trip_costs_are_read_back_and_their_intervals_cover_at_the_stated_rate():
    """Over 60 synthetic markets the cost each price reads back to (its model left out) is unbiased, and the
    validated 90% intervals cover the true cost of the left-out models 90% +- 10 points (issue 24's check); the
    reading beats the no-price baseline and its status is ok."""
    rng = np.random.default_rng(7)
    coverage, bias, statuses = [], [], []
    for _ in range(60):
        frame = market(rng)
        _, _, read_cost = read(frame)
        for component in ("input", "output"):
            mine = (frame["component"] == component).to_numpy()
            checked, s = validation.validate(
                pl.DataFrame(
                    {
                        "model_key": frame["model"].filter(pl.Series(mine)),
                        "implied": read_cost[mine],
                        "scenario_low": [None] * int(mine.sum()),
                        "scenario_high": [None] * int(mine.sum()),
                        "true": frame["cost"].to_numpy()[mine],
                    },
                    schema_overrides={"scenario_low": pl.Float64, "scenario_high": pl.Float64},
                )
            )
            coverage.append(s["coverage_groups_frac"])
            bias.append(np.log(s["geometric_mean_ratio"]))
            statuses.append(s["status"])
    assert np.mean(coverage) == pytest.approx(0.9, abs=0.1)
    assert abs(np.mean(bias)) < 0.05
    assert statuses.count("ok") >= 0.9 * len(statuses)


def test_implied_margin_by_hand():
    assert markups.implied_margin([10.0, 4.0, 2.0], [2.0, 4.0, 3.0]).tolist() == pytest.approx([0.8, 0.0, -0.5])
    assert np.isnan(markups.implied_margin([0.0], [1.0])[0])
