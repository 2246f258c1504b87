"""The error bands (:mod:`econ.fits.error_bands`) on synthetic held-out errors whose spread is known: a band from the
other groups' rows covers what it claims, a level calibrated on other groups covers a new group's rows, a thin cell
is checked with the band it is published with, and an engine's split holds where the regime's band does not."""

from __future__ import annotations

import numpy as np
import pytest

from econ.fits import error_bands as eb


def test_a_band_from_other_groups_covers_about_90_percent_of_exchangeable_rows():
    rng = np.random.default_rng(4)
    r = np.abs(rng.normal(0, 0.3, 4000))
    groups = rng.integers(0, 10, 4000).astype(str)
    band, inside = eb.band_coverage(r, np.full(r.size, "cell"), groups)
    assert np.nanmean(inside) == pytest.approx(0.9, abs=0.02)
    assert np.log(np.nanmedian(band)) == pytest.approx(np.quantile(r, 0.9), rel=0.05)
    thin, _ = eb.band_coverage(r[:5], np.full(5, "cell"), groups[:5])
    assert np.isnan(thin).all()  # fewer than MIN_BAND_POINTS others: no band


def test_a_band_whose_level_is_calibrated_on_other_groups_covers_new_groups_rows():
    """Groups that differ more than their rows scatter (a model's error shared by its rows: offset ~ N(0, 0.3), row
    noise ~ N(0, 0.1)), 8 groups of 40 rows drawn 100 times: the plain 0.9-quantile of the rows covers ~87% of
    fresh groups' rows from the same law (a new group is one draw of the offset, and 8 draws under-state its
    spread); the band at the level calibrated by leaving each group out covers 0.88-0.95 of them on average."""
    plain, calibrated = [], []
    for seed in range(100):
        rng = np.random.default_rng(seed)
        groups = np.repeat(np.arange(8), 40).astype(str)
        r = np.abs(rng.normal(0, 0.3, 8)[groups.astype(int)] + rng.normal(0, 0.1, groups.size))
        fresh = np.abs(rng.normal(0, 0.3, 500)[:, None] + rng.normal(0, 0.1, (500, 4)))
        level = eb.calibrated_levels(r, groups)[1]
        assert level >= 0.9
        plain.append(np.mean(fresh <= np.quantile(r, 0.9)))
        calibrated.append(np.mean(fresh <= np.quantile(r, level)))
    assert np.mean(plain) < 0.88 and 0.88 <= np.mean(calibrated) <= 0.95
    # the out-of-fold check sees the same: each group against the band built (level included) without it
    _, inside = eb.band_coverage(r, np.full(r.size, "cell"), groups)
    assert np.isfinite(inside).all()


def test_a_thin_cell_is_checked_with_the_band_it_is_published_with():
    """A cell with too few groups is published with the larger of its own rows' band and the pooled one
    (calibration_bands.bands); its out-of-group check must use that band, not the pooled one alone. Here the pool
    (four groups of tight rows) is narrower than the thin cell (two widely scattered groups): against the pool alone
    the thin cell's rows would look uncovered, against the published band they are covered."""
    rng = np.random.default_rng(9)
    tight = np.abs(rng.normal(0, 0.05, 400))
    wide = np.abs(rng.normal(0, 1.0, 40))
    r = np.concatenate([tight, wide])
    cell = np.array(["agg"] * 400 + ["disagg"] * 40)
    group = np.array([f"t{i % 4}" for i in range(400)] + ["w0"] * 20 + ["w1"] * 20)
    band, inside = eb.claimed_band(r, cell, group)
    pooled, _ = eb.band_coverage(r, np.full(r.size, "all"), group)
    thin = cell == "disagg"
    assert np.all(band[thin] >= pooled[thin]) and np.nanmean(inside[thin]) > 0.8
    assert np.nanmean(r[thin] <= np.log(pooled[thin])) < 0.3  # the pooled band alone misses most of them


def test_a_cell_one_group_holds_is_checked_with_at_least_its_familys_band():
    """A regime one group holds (a new model's runs without worker counts: DeepSeek's alone) has no rows of other
    groups, so held out by group its band falls back to a pool. The pool over every regime is narrow when most rows
    are aggregated and tight; the regime's family (the same pool, stated workers: ``regime_family`` drops
    ``_unstated_workers`` and ``_slot_wait``) scatters as it does. Checked with the pool alone its rows would be
    covered a third of the time; with at least the family's band, most of them."""
    rng = np.random.default_rng(11)
    agg = np.abs(rng.normal(0, 0.05, 400))
    family = np.abs(rng.normal(0, 0.8, 60))
    alone = np.abs(rng.normal(0, 0.8, 40))
    r = np.concatenate([agg, family, alone])
    cell = np.array(["agg"] * 400 + ["disagg_prefill"] * 60 + ["disagg_prefill_unstated_workers"] * 40)
    group = np.array([f"t{i % 4}" for i in range(400)] + [f"d{i % 3}" for i in range(60)] + ["one"] * 40)
    band, inside = eb.claimed_band(r, cell, group)
    pooled, _ = eb.band_coverage(r, np.full(r.size, "all"), group)
    one = group == "one"
    assert np.mean(r[one] <= np.log(pooled[one])) < 0.4
    assert np.all(band[one] > pooled[one]) and np.nanmean(inside[one]) > 0.8


def _engines(seed: int, *engines: tuple[str, float, list[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(|log ratio|, engine, group) of synthetic held-out rows: per engine (name, σ of a half-normal error, each
    row's group)."""
    rng = np.random.default_rng(seed)
    r = np.concatenate([np.abs(rng.normal(0, sigma, len(groups))) for _, sigma, groups in engines])
    engine = np.concatenate([[name] * len(groups) for name, _, groups in engines])
    return r, engine, np.concatenate([groups for _, _, groups in engines])


def test_a_band_split_by_engine_holds_for_each_engine_where_the_regimes_band_does_not():
    """One regime, two engines each measured on six models (the groups held out): one predicted within a typical 4%
    (|log ratio| half-normal, σ 0.06), the other within 40% (σ 0.6). The regime's band over both, held out by model,
    covers every row of the tight engine and far fewer than 90% of the loose one's; split by engine
    (nested_claimed_bands) each engine's rows are covered 85-95%. A third engine measured on two models only (too few
    groups for a band of its own) keeps the regime's band."""
    six = [f"m{i % 6}" for i in range(360)]
    r, engine, group = _engines(3, ("tight", 0.06, six), ("loose", 0.6, six), ("few", 0.3, ["m0"] * 10 + ["m1"] * 10))
    regime, split = eb.nested_claimed_bands(r, np.full(r.size, "agg"), (engine,), group)

    def covered(band, name):
        return np.mean(r[engine == name] <= np.log(band[engine == name]))

    assert covered(regime, "tight") == 1.0 and covered(regime, "loose") < 0.8
    assert 0.85 <= covered(split, "tight") <= 0.95 and 0.85 <= covered(split, "loose") <= 0.95
    assert np.array_equal(split[engine == "few"], regime[engine == "few"])


def test_an_engine_on_three_groups_takes_its_own_wider_band_where_two_remain():
    """SGLang's aggregated runs are on three chips: held out by chip, the other two are too few groups for a band of
    their own, and the regime's band over every engine (mostly tight engines here, σ 0.1 on six chips) is too narrow
    for the loose engine (σ 0.6 on three). Where the engine split widens (the engine's other rows, 8 or more from two
    groups, give a wider band), the loose engine's rows are covered near 90%; without, far fewer. A split from one
    other group keeps the regime's band."""
    r, engine, group = _engines(
        5,
        ("tight", 0.1, [f"c{i % 6}" for i in range(1800)]),
        ("loose", 0.6, [f"c{i % 3}" for i in range(240)]),
        ("single", 0.6, ["c0"] * 20 + ["c1"] * 20),
    )
    cell = np.full(r.size, "agg")
    regime, narrow = eb.nested_claimed_bands(r, cell, (engine,), group)
    _, wide = eb.nested_claimed_bands(r, cell, (engine,), group, (True,))
    loose_rows = engine == "loose"
    assert np.array_equal(narrow[loose_rows], regime[loose_rows])
    assert np.mean(r[loose_rows] <= np.log(narrow[loose_rows])) < 0.6
    assert np.mean(r[loose_rows] <= np.log(wide[loose_rows])) >= 0.85
    assert np.array_equal(wide[engine == "single"], regime[engine == "single"])
    assert np.array_equal(wide[engine == "tight"], narrow[engine == "tight"])
