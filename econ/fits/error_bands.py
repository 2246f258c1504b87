"""Error bands: the factors a prediction claims from held-out errors of rows like it, and their check.

An error band is the held-out error of *points like it*: the rows of the same target (TTFT, TPOT or a published
throughput), regime and distance from the data (a configuration of a seen model and chip: the random folds; an
unseen model: leave-one-model-out, a model's architecture group left out whole; an unseen chip: leave-one-chip-out;
both unseen: the larger of the two). The factor claimed at quantile q is ``exp(ℓ-quantile of |log ratio|)`` at a
level ℓ calibrated so that bands from all groups but one cover q of the group left out (:func:`calibrated_levels`:
rows of one model share its error, so the plain q-quantile of other models' rows covers fewer than q of a new
model's). Its promise is checked out of group at both levels: each group's rows are measured against the band
built, level included, from the other groups' rows alone (:func:`band_coverage`), so a band that only fits its
own data shows as low coverage.
"""

from __future__ import annotations

import numpy as np

from econ.fits.regimes import regime_family
from econ.formula import formula

QUANTILES = (0.5, 0.9)

MIN_BAND_POINTS = 8
"""Fewest held-out rows a band is computed from; a thinner cell takes its target's pooled band at that distance."""

MIN_BAND_GROUPS = 3
"""Fewest distinct groups (models, chips or folds) a band is computed from, counting only groups with at least
:data:`MIN_GROUP_ROWS` rows in it: a cell one model dominates says how that model's rows scatter, not how a new
model's will (its band widens to the pooled one)."""

MIN_GROUP_ROWS = 8
"""Fewest rows a group has in a cell to count as one of its groups: two rows of a model say nothing about how a
model scatters (they still count among the cell's rows)."""


def counted_groups(group: np.ndarray) -> int:
    """How many groups have at least :data:`MIN_GROUP_ROWS` rows."""
    _, n = np.unique(group, return_counts=True)
    return int((n >= MIN_GROUP_ROWS).sum())


def factors(abs_log: np.ndarray) -> tuple[float, float]:
    """(p50, p90) error factors of held-out ``|log ratio|`` values (NaN with none)."""
    x = np.asarray(abs_log, dtype=float)
    x = x[np.isfinite(x)]
    if not x.size:
        return np.nan, np.nan
    q = np.quantile(x, QUANTILES)
    return float(np.exp(q[0])), float(np.exp(q[1]))


MIN_LEVEL_GROUPS = 3
"""Fewest groups a band's level is calibrated over (a leave-one-group-out among them, each inner band from at least
two groups); with fewer the level is the nominal quantile itself."""

MIN_WIDENING_GROUPS = 2
"""Fewest groups an engine's split too thin for a band of its own must still have rows from (of
:data:`MIN_GROUP_ROWS`) to widen the band it takes to its own rows' (:func:`nested_claimed_bands`): two say how groups
differ, one only how its own rows scatter."""


def needed_levels(held: np.ndarray, others: np.ndarray, *, presorted: bool = False) -> np.ndarray:
    """The smallest quantile level of ``others`` (linear interpolation, numpy's default) that reaches each value of
    ``held``: 0 at or below the smallest, ``inf`` above the largest (``presorted``: ``others`` is sorted)."""
    s = others if presorted else np.sort(others)
    k = np.searchsorted(s, held, side="left")  # first order statistic ≥ the value
    below = s[np.maximum(k - 1, 0)]
    above = s[np.minimum(k, s.size - 1)]
    with np.errstate(invalid="ignore", divide="ignore"):
        step = np.where(above > below, (held - below) / (above - below), 1.0)
    level = (k - 1 + step) / max(s.size - 1, 1)
    return np.where(k == 0, 0.0, np.where(k >= s.size, np.inf, level))


def calibrated_levels(abs_log: np.ndarray, group: np.ndarray, nominal=QUANTILES) -> np.ndarray:
    """The quantile level of these rows' ``|log ratio|`` to claim each ``nominal`` coverage at: the smallest level at
    which bands from the other groups' rows (each group left out in turn) cover ``nominal`` of the rows left out
    (split conformal over groups, the level checked by leaving groups out rather than assumed). Groups that differ
    more than their rows scatter need a level above nominal: rows of one group share its error, so the q-quantile of
    the others' rows covers fewer than q of a new group's. Fewer than :data:`MIN_LEVEL_GROUPS` groups of
    :data:`MIN_GROUP_ROWS` rows (smaller groups take no part): the nominal levels; no level reaching a nominal: 1
    (the largest error seen). Never below nominal: the plain quantile of held-out errors is the least a band
    claims."""
    nominal = np.asarray(nominal, dtype=float)
    _, code, n = np.unique(group, return_inverse=True, return_counts=True)
    keep = n[code] >= MIN_GROUP_ROWS
    if (n >= MIN_GROUP_ROWS).sum() < MIN_LEVEL_GROUPS:
        return nominal
    order = np.argsort(abs_log[keep], kind="stable")  # each group's others, sorted once for all of them
    values, codes = abs_log[keep][order], code[keep][order]
    needed = [
        needed_levels(values[codes == h], values[codes != h], presorted=True)
        for h in np.flatnonzero(n >= MIN_GROUP_ROWS)
        if codes.size - n[h] >= MIN_BAND_POINTS
    ]
    if not needed:
        return nominal
    needed = np.sort(np.concatenate(needed))  # a level ℓ covers the rows whose needed level is ≤ ℓ
    at = needed[np.ceil(nominal * needed.size).astype(int) - 1]
    return np.where(np.isfinite(at), np.clip(at, nominal, 1.0), 1.0)


def band_factors(abs_log: np.ndarray, group: np.ndarray) -> tuple[float, float, float]:
    """(p50, p90) error factors a band claims from held-out ``|log ratio|`` values of several groups, and the level
    of its p90: the quantiles at :func:`calibrated_levels` (NaN with none)."""
    x = np.asarray(abs_log, dtype=float)
    ok = np.isfinite(x)
    if not ok.any():
        return np.nan, np.nan, np.nan
    x, g = x[ok], np.asarray(group, dtype=object).astype(str)[ok]
    levels = calibrated_levels(x, g)
    q = np.quantile(x, levels)
    return float(np.exp(q[0])), float(np.exp(q[1])), float(levels[1])


@formula(
    "coverage = share of a group's held-out |log ratio| ≤ p90 band of the other groups' rows, at the level "
    "calibrated on those other groups alone (nested leave-one-group-out)",
    "this module",
)
def band_coverage(
    abs_log: np.ndarray,
    cell: np.ndarray,
    group: np.ndarray,
    *,
    min_points: int = MIN_BAND_POINTS,
    min_groups: int = MIN_BAND_GROUPS,
) -> tuple[np.ndarray, np.ndarray]:
    """(p90 band each row would have been given from rows of its cell outside its own group, whether the row falls
    inside it). The band is built exactly as :func:`band_factors` builds a published one (its level calibrated by
    leaving out each of the other groups), never seeing the row's group: the check is out of fold at both levels.
    Fewer than ``min_points`` other rows (:data:`MIN_BAND_POINTS`), or from fewer than ``min_groups`` other groups
    (:data:`MIN_BAND_GROUPS`), give NaN."""
    abs_log = np.asarray(abs_log, dtype=float)
    band, _ = _out_of_group_bands(abs_log, cell, group, min_points, min_groups)
    inside = np.where(np.isfinite(band), abs_log <= band, np.nan)
    return np.exp(band), inside


def _out_of_group_bands(
    abs_log: np.ndarray, cell: np.ndarray, group: np.ndarray, min_points: int, min_groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """(log p90 band each row would have been given from rows of its cell outside its own group, where at least
    ``min_points`` such rows from ``min_groups`` groups exist (else NaN); whether those rows also reach
    :data:`MIN_BAND_POINTS` from :data:`MIN_BAND_GROUPS` groups): the band of :func:`band_coverage`, which does not
    depend on the thresholds where they are met, so one pass serves both of :func:`claimed_band`'s."""
    abs_log = np.asarray(abs_log, dtype=float)
    # cells and groups as integer codes: the nested leave-one-group-out compares them ~100,000 times
    cell = np.unique(np.asarray(cell, dtype=object).astype(str), return_inverse=True)[1].reshape(-1)
    group = np.unique(np.asarray(group, dtype=object).astype(str), return_inverse=True)[1].reshape(-1)
    band = np.full(abs_log.size, np.nan)
    enough = np.zeros(abs_log.size, dtype=bool)
    for c in np.unique(cell):
        in_cell = (cell == c) & np.isfinite(abs_log)
        for g in np.unique(group[in_cell]):
            others = in_cell & (group != g)
            n_others, n_groups = others.sum(), counted_groups(group[others])
            if n_others >= min_points and n_groups >= min_groups:
                level = calibrated_levels(abs_log[others], group[others])[1]
                band[in_cell & (group == g)] = np.quantile(abs_log[others], level)
                enough[in_cell & (group == g)] = n_others >= MIN_BAND_POINTS and n_groups >= MIN_BAND_GROUPS
    return band, enough


def claimed_band(abs_log: np.ndarray, cell: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(p90 band each row would have been given without its own group, whether the row falls inside it): its cell's
    band where the cell has enough rows from enough other groups; else the band a thin cell is published with
    (``calibration_bands.bands``): the larger of all cells pooled, the cells of its family pooled
    (:func:`econ.fits.regimes.regime_family`) and whatever rows of its cell the other groups have: the pooled band
    alone is narrower than that where the cell's other rows scatter more than the pool (a new model's disaggregated
    cells: the pool is mostly aggregated rows), and a cell one group holds has no rows of other groups (a new model's
    runs without worker counts, all of DeepSeek's architecture once the launches settle the others': 64% inside the
    pooled band)."""
    abs_log = np.asarray(abs_log, dtype=float)
    own_log, enough = _out_of_group_bands(abs_log, cell, group, 1, 0)  # the cell's band where enough, one pass
    own = np.exp(own_log)
    band = np.where(enough, own, np.nan)
    pooled, _ = band_coverage(abs_log, np.full(np.size(abs_log), "all"), group)
    family, _ = _out_of_group_bands(abs_log, regime_family(cell), group, 1, 0)
    claimed = np.where(np.isfinite(band), band, np.fmax(np.fmax(pooled, own), np.exp(family)))
    return claimed, inside_band(abs_log, claimed)


def nested_claimed_bands(
    abs_log: np.ndarray,
    cell: np.ndarray,
    splits: tuple[np.ndarray, ...],
    group: np.ndarray,
    widening: tuple[bool, ...] = (),
) -> list[np.ndarray]:
    """:func:`claimed_band` of cells split further by each of ``splits`` in turn (a regime's rows by their engine,
    then by their chip), one array per depth (0: the cells unsplit): each row's band from the rows of its split
    outside its own group where they reach :data:`MIN_BAND_POINTS` from :data:`MIN_BAND_GROUPS` groups, else the band
    one level up. A split ``widening`` marks (the engine) whose other rows reach :data:`MIN_BAND_POINTS` from
    :data:`MIN_WIDENING_GROUPS` groups takes their band where wider (``calibration_bands`` publishes it so)."""
    abs_log = np.asarray(abs_log, dtype=float)
    claimed = [claimed_band(abs_log, cell, group)[0]]
    key = np.asarray(cell, dtype=str)
    for i, split in enumerate(splits):
        finer = np.char.add(np.char.add(key, "\x1f"), np.asarray(split, dtype=str))
        if np.unique(finer).size == np.unique(key).size:  # the split divides no cell: the same bands
            claimed.append(claimed[-1])
            continue
        key = finer
        widens = i < len(widening) and widening[i]
        own_log, enough = _out_of_group_bands(
            abs_log, key, group, MIN_BAND_POINTS, MIN_WIDENING_GROUPS if widens else 0
        )
        thin = np.fmax(claimed[-1], np.exp(own_log)) if widens else claimed[-1]
        claimed.append(np.where(enough, np.exp(own_log), thin))
    return claimed


def inside_band(abs_log: np.ndarray, claimed: np.ndarray) -> np.ndarray:
    """Whether each |log ratio| is within its claimed factor (NaN where either is not finite)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(np.isfinite(claimed) & np.isfinite(abs_log), abs_log <= np.log(claimed), np.nan)
