"""``calibration_errors`` and ``calibration_bands``: the held-out error of every measured row, grouped, and the error
factors a prediction is claimed from the rows like it (:mod:`econ.fits.error_bands`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.analyses.calibration_tables import config_key
from econ.analyses.inputs import architecture_of
from econ.fits import calibration_cv as cv
from econ.fits import error_bands as eb
from econ.fits.calibration_cv import ANY_ENGINE
from econ.fits.regimes import regime_family

BASES = ("model_out", "chip_out", "source_out", "random_out", "neighbour_out", "lengths_out")
HELD_OUT = ("model_out", "chip_out", "source_out", "random_out", "neighbour_out", "lengths_out")
"""The bases whose folds also predict each run with no engine stated (``calibration_cv.engine_average_runs``)."""
DISTANCES = (
    ("seen_configuration", "neighbour_out"),
    ("seen_layout", "lengths_out"),
    ("seen", "random_out"),
    ("new_model", "model_out"),
    ("new_chip", "chip_out"),
    ("new_model_and_chip", "model_and_chip"),
)


def residual_rows(runs: pl.DataFrame, points: pl.DataFrame, groups: dict[str, str]) -> pl.DataFrame:
    """One row per included measurement and target: its held-out, in-sample and bound log ratios and its groups
    (``groups``: arch_model -> architecture group, as :func:`fold_labels`)."""
    frames = []
    inc = runs.filter(pl.col("included"))
    for target in ("ttft", "tpot"):
        m = pl.col(f"measured_{target}_s")
        frames.append(
            inc.select(
                pl.lit(target).alias("target"),
                pl.col(f"regime_{target}").alias("regime"),
                "arch_model",
                "chip",
                "engine",
                "source",
                *(pl.col(f"{b}_{target}_ratio").log().alias(b) for b in HELD_OUT),
                (pl.col(f"predicted_{target}_s") / m).log().alias("calibrated"),
                (pl.col(f"bound_{target}_s") / m).log().alias("bound"),
                config_key().alias("config"),
                *(pl.col(f"{b}{ANY_ENGINE}_{target}_ratio").log().alias(f"{b}{ANY_ENGINE}") for b in HELD_OUT),
                pl.Series(
                    "replicates",
                    cv.replicate_log_deviation(
                        inc["replicate_key"].to_numpy(), np.log(inc[f"measured_{target}_s"].to_numpy())
                    ),
                ),
            )
        )
    pts = points.filter(pl.col("included"))
    frames.append(
        pts.select(
            pl.lit("throughput").alias("target"),
            "regime",
            "arch_model",
            "chip",
            "engine",
            pl.col("document").alias("source"),
            # throughput over-predicted = time under-predicted: flip the sign so > 0 always means "too slow/long"
            (-pl.col("model_out_over_measured_ratio").log()).alias("model_out"),
            (-pl.col("chip_out_over_measured_ratio").log()).alias("chip_out"),
            (-pl.col("cv_over_measured_ratio").log()).alias("source_out"),
            pl.lit(None, dtype=pl.Float64).alias("random_out"),
            pl.lit(None, dtype=pl.Float64).alias("neighbour_out"),
            pl.lit(None, dtype=pl.Float64).alias("lengths_out"),
            (-pl.col("calibrated_over_measured_ratio").log()).alias("calibrated"),
            (-pl.col("bound_over_measured_ratio").log()).alias("bound"),
            pl.col("point_id").alias("config"),
            *(pl.lit(None, dtype=pl.Float64).alias(f"{b}{ANY_ENGINE}") for b in HELD_OUT),
            pl.lit(None, dtype=pl.Float64).alias("replicates"),
        )
    )
    rows = pl.concat(frames, how="vertical_relaxed")
    # the random fold each row was held out in (as fold_labels deals them: runs by configuration, points by id)
    run_fold = cv.random_groups(inc.select(config_key().alias("k"))["k"].to_numpy())
    point_fold = cv.random_groups(pts["point_id"].to_numpy(), seed=1)
    fold = np.concatenate([run_fold, run_fold, point_fold]).astype(str)
    return rows.with_columns(
        pl.Series("fold", fold),
        architecture_of(groups).alias("architecture_group"),
        *(
            pl.max_horizontal(pl.col(f"model_out{a}").abs(), pl.col(f"chip_out{a}").abs()).alias(f"model_and_chip{a}")
            for a in ("", ANY_ENGINE)
        ),
    )


def _group_of(distance: str) -> str:
    return {
        "seen_configuration": "fold",
        "seen_layout": "fold",
        "seen": "fold",
        "new_model": "architecture_group",
        "new_chip": "chip",
        "new_model_and_chip": "architecture_group",
    }[distance]


def band_bases() -> tuple[tuple[str, str, bool], ...]:
    """(distance, basis column, engine stated) of every band: each distance with the engine stated and without."""
    return tuple((d, f"{b}{a}", a == "") for a in ("", ANY_ENGINE) for d, b in DISTANCES)


SPLITS = ("engine", "chip", "arch_model")
"""What a regime's band is split by, in turn, where a split has rows enough (:func:`splits`)."""
WIDENING_SPLITS = ("engine",)
"""Splits published where their rows come from two groups only, at the larger of their own band and the cell's they
split: engines scatter unlike each other (SGLang's TTFT about twice the others' held out), so the regime's band over
every engine is too narrow for SGLang on a new chip, where its aggregated runs are on three chips and two are too few
groups for a band of its own (76% covered). A chip's or model's split so widened over-covered (DeepSeek-V3's TPOT
95.1% by random fold): their thin splits keep the cell's band."""
SEEN_SPLITS = ("chip", "arch_model")
"""The splits only a seen model on a seen chip has: its chip's and its model's own held-out runs say how far off it
is (held out by configuration, bands over every chip and model covered 78% of H200's TPOT runs and 97% of B200's, 71%
of Llama-3.1-8B's TTFT runs and 98% of Llama-3.1-70B's). A new model's chip cells are thin (few architecture groups
per chip) and a new chip or model has none."""


def splits(distance: str, stated: bool) -> tuple[str, ...]:
    """The columns a band at this distance is split by, in turn: the engine where the prediction names it, then, for
    a seen model on a seen chip, the chip and the model."""
    seen = distance.startswith("seen")
    return tuple(c for c in SPLITS if (c != "engine" or stated) and (c not in SEEN_SPLITS or seen))


def held_inside(rows: pl.DataFrame) -> list[dict[str, np.ndarray]]:
    """Per depth (0: the regime's band, then split by each of :func:`splits` in turn, where the split has rows
    enough) and basis column (:func:`band_bases`): whether each row falls inside the p90 band claimed for it at that
    depth, computed without its own group (NaN: no band), rows in order
    (:func:`econ.fits.error_bands.nested_claimed_bands`). The last depth is what econ claims for the row."""
    out = [{} for _ in range(len(SPLITS) + 1)]
    for distance, basis, stated in band_bases():
        flags = np.full((len(out), rows.height), np.nan)
        for _, idx in rows.with_row_index("_i").group_by(["target"]):
            r = np.abs(idx[basis].cast(pl.Float64).to_numpy())
            if np.isfinite(r).any():
                group = idx[_group_of(distance)].to_numpy().astype(str)
                by = tuple(_column(idx, c) for c in splits(distance, stated))
                widening = tuple(c in WIDENING_SPLITS for c in splits(distance, stated))
                claimed = eb.nested_claimed_bands(r, idx["regime"].to_numpy(), by, group, widening)
                for depth in range(len(out)):  # a basis split fewer ways claims its last band deeper down
                    flags[depth, idx["_i"].to_numpy()] = eb.inside_band(r, claimed[min(depth, len(claimed) - 1)])
        for depth, d in enumerate(out):
            d[basis] = flags[depth]
    return out


def _column(rows: pl.DataFrame, name: str) -> np.ndarray:
    return rows[name].fill_null("").to_numpy().astype(str)


def bands(rows: pl.DataFrame, inside_at: list[dict[str, np.ndarray]]) -> pl.DataFrame:
    """``calibration_bands``: per target × regime × distance × whether the engine is stated, the held-out error
    factors and their out-of-group coverage (``engine``, ``chip`` and ``arch_model`` empty), then the same per value
    of each of :func:`splits` in turn (the engine, then the chip within it and the model within that). A regime's
    cell with fewer than
    :data:`econ.fits.error_bands.MIN_BAND_POINTS` rows or from fewer than
    :data:`~econ.fits.error_bands.MIN_BAND_GROUPS` groups is pooled: its factors are the larger of its own and
    its target's at that distance; an engine's split of enough rows from two groups, the larger of its own and the
    cell's it splits (:data:`WIDENING_SPLITS`); a thinner split has no row (a prediction in it takes the cell it
    splits).
    Coverage: the share of the cell's rows inside the band claimed for them without their group at the cell's depth
    (``inside_at[depth]``: :func:`held_inside`)."""
    out = []
    rows = rows.with_row_index("_i")
    for (target,), t_rows in rows.group_by(["target"], maintain_order=True):
        regime = t_rows["regime"].to_numpy()
        for distance, basis, stated in band_bases():
            r = np.abs(t_rows[basis].cast(pl.Float64).to_numpy())
            if not np.isfinite(r).any():
                continue
            group = t_rows[_group_of(distance)].to_numpy().astype(str)
            finite = np.isfinite(r)
            pooled = eb.band_factors(r, group)
            family = regime_family(regime)
            by = splits(distance, stated)
            c = _Cells(
                r=r,
                group=group,
                split_by=tuple((name, _column(t_rows, name)) for name in by),
                inside=[d[basis][t_rows["_i"].to_numpy()] for d in inside_at],
                fixed={"target": target, "distance": distance, "engine_stated": stated, "basis": _label(basis)},
            )
            for reg in sorted(set(regime)):
                cell = (regime == reg) & finite
                if not cell.any():  # no held-out row of the regime at this distance: no band, not a pooled one
                    continue
                named = {"regime": reg, **dict.fromkeys(SPLITS, "")}
                kin = (family == regime_family(reg)) & finite
                out += c.rows(
                    cell, named, _band(r, group, cell, _wider(pooled, eb.band_factors(r[kin], group[kin]))), 0
                )
    return pl.DataFrame(out)


@dataclass(frozen=True)
class _Cells:
    """The held-out rows of one target and basis, and what their bands split by (for :func:`bands`)."""

    r: np.ndarray  # |log ratio| of each row
    group: np.ndarray  # the group each row was held out with
    split_by: tuple[tuple[str, np.ndarray], ...]  # (column, each row's value), in the order the bands split
    inside: list[np.ndarray]  # per depth, whether each row is inside the band claimed for it at that depth
    fixed: dict  # the columns every row of the band shares

    def rows(self, cell: np.ndarray, named: dict, band: tuple, depth: int) -> list[dict]:
        """The band row of ``cell`` (``band``: :func:`_band`) and, recursively, of each value of the next split."""
        (p50, p90), level, thin = band
        cov = self.inside[depth][cell]
        cov = cov[np.isfinite(cov)]
        out = [
            {
                **self.fixed,
                **named,
                "n_points": int(cell.sum()),
                "error_factor_p50": p50,
                "error_factor_p90": p90,
                "p90_level_frac": float(level),
                "coverage_p90_frac": float(cov.mean()) if cov.size else np.nan,
                "pooled": thin,
            }
        ]
        if depth < len(self.split_by):
            column, values = self.split_by[depth]
            for v in sorted(set(values[cell]) - {""}):  # thin in groups: the larger of its own band and this cell's
                sub = cell & (values == v)
                if not _thin(sub, self.group) or (column in WIDENING_SPLITS and _split_enough(sub, self.group)):
                    band = _band(self.r, self.group, sub, ((p50, p90), level))
                    out += self.rows(sub, {**named, column: v}, band, depth + 1)
        return out


def _thin(cell: np.ndarray, group: np.ndarray) -> bool:
    """Too few rows, or from too few groups, for a band of its own."""
    return bool(cell.sum() < eb.MIN_BAND_POINTS or eb.counted_groups(group[cell]) < eb.MIN_BAND_GROUPS)


def _split_enough(cell: np.ndarray, group: np.ndarray) -> bool:
    """Rows enough from :data:`~econ.fits.error_bands.MIN_WIDENING_GROUPS` groups for a split's band (the larger
    of its own and the cell's it splits)."""
    return bool(cell.sum() >= eb.MIN_BAND_POINTS and eb.counted_groups(group[cell]) >= eb.MIN_WIDENING_GROUPS)


def _label(basis: str) -> str:
    return basis.replace("model_and_chip", "larger of model_out and chip_out")


def _wider(*bands: tuple[float, float, float]) -> tuple:
    """((p50, p90), p90 level) of the widest of :func:`~econ.fits.error_bands.band_factors`' bands (each factor the
    largest; the level of the largest p90)."""
    p50 = np.nanmax([b[0] for b in bands])
    widest = max(bands, key=lambda b: -np.inf if np.isnan(b[1]) else b[1])
    return (p50, widest[1]), widest[2]


def _band(r: np.ndarray, group: np.ndarray, cell: np.ndarray, fallback: tuple) -> tuple:
    """((p50, p90), p90 level, pooled) of a cell's rows; a thin cell (too few rows or groups) takes the larger of
    its own factors and ``fallback``'s ((p50, p90), level): a regime's, the wider of its target's pooled over every
    regime and over its regime's family (:func:`~econ.fits.regimes.regime_family`); a split's, the cell it splits."""
    thin = _thin(cell, group)
    p50, p90, level = eb.band_factors(r[cell], group[cell])
    if thin:
        (f50, f90), f_level = fallback
        p50, p90 = np.nanmax([p50, f50]), np.nanmax([p90, f90])
        level = f_level if p90 == f90 else level
    return (p50, p90), level, bool(thin)


def _inside(rows: pl.DataFrame, basis: str) -> pl.Expr:
    """Whether each row is inside what ``basis`` claims for it: a held-out basis's p90 band (``_in_<basis>``); for
    ``bound``, the bound itself (the measured time no shorter, the measured throughput no higher, than the
    roofline's: ``log(bound/measured) ≤ 0``, as the rows' ``bound`` column is signed); else none claimed."""
    if basis == "bound":
        return (pl.col("bound") <= 0.0).cast(pl.Float64)
    column = f"_in_{basis}"
    return pl.col(column) if column in rows.columns else pl.lit(None, dtype=pl.Float64)


def errors(rows: pl.DataFrame, inside_of: dict[str, np.ndarray]) -> pl.DataFrame:
    """``calibration_errors``: per basis × target × grouping, the error factors and the share of held-out rows
    inside the p90 band of their cell computed without their group (``inside_of``: :func:`held_inside`); for the
    ``bound`` basis, the share of rows the roofline bound holds for."""
    rows = rows.with_columns(  # NaN: no band claimed for the row
        pl.Series(f"_in_{b}", v).fill_nan(None) for b, v in inside_of.items() if "model_and_chip" not in b
    )
    out = []
    for basis in (*BASES, *(f"{b}{ANY_ENGINE}" for b in HELD_OUT), "calibrated", "bound", "replicates"):
        r = rows.select(
            "target",
            "regime",
            "chip",
            "arch_model",
            "engine",
            "source",
            pl.col(basis).alias("r"),
            _inside(rows, basis).alias("inside"),
        ).filter(pl.col("r").is_not_null() & pl.col("r").is_finite())
        if not r.height:
            continue
        for kind, key in (
            ("overall", None),
            ("regime", "regime"),
            ("chip", "chip"),
            ("model", "arch_model"),
            ("engine", "engine"),
            ("source", "source"),
        ):
            g = r.with_columns((pl.lit("all") if key is None else pl.col(key).fill_null("")).alias("_g"))
            agg = g.group_by("target", "_g").agg(
                pl.len().alias("n_points"),
                pl.col("r").abs().median().alias("median_abs_log_ratio"),
                pl.col("r").abs().quantile(0.9, interpolation="linear").alias("p90_abs_log_ratio"),
                pl.col("r").median().alias("median_log_ratio"),
                pl.col("inside").mean().alias("band_coverage_frac"),
            )
            out.append(
                agg.with_columns(
                    pl.lit(basis).alias("basis"), pl.lit(kind).alias("group_kind"), pl.col("_g").alias("group")
                )
            )
    frame = pl.concat(out).with_columns(
        pl.col("median_abs_log_ratio").exp().alias("error_factor"),
        pl.col("p90_abs_log_ratio").exp().alias("error_factor_p90"),
    )
    return frame.sort("basis", "target", "group_kind", "group")
