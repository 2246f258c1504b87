"""``calibration_errors`` and ``calibration_bands``: the held-out error of every measured row, grouped, and the error
factors a prediction is claimed from the rows like it (:mod:`econ.fits.calibration_cv`)."""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.calibration_tables import config_key
from econ.analyses.inputs import architecture_of
from econ.fits import calibration_cv as cv
from econ.fits.calibration_cv import ANY_ENGINE

BASES = ("model_out", "chip_out", "source_out", "random_out")
HELD_OUT = ("model_out", "chip_out", "random_out")
"""The bases whose folds also predict each run with no engine stated (``calibration_cv.engine_average_runs``)."""
DISTANCES = (
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
                pl.lit("inferencex_train").alias("source"),
                *(pl.col(f"{b}_{target}_ratio").log().alias(b) for b in HELD_OUT),
                pl.lit(None, dtype=pl.Float64).alias("source_out"),
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
            pl.lit(None, dtype=pl.Float64).alias("random_out"),
            (-pl.col("cv_over_measured_ratio").log()).alias("source_out"),
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
        "seen": "fold",
        "new_model": "architecture_group",
        "new_chip": "chip",
        "new_model_and_chip": "architecture_group",
    }[distance]


def band_bases() -> tuple[tuple[str, str, bool], ...]:
    """(distance, basis column, engine stated) of every band: each distance with the engine stated and without."""
    return tuple((d, f"{b}{a}", a == "") for a in ("", ANY_ENGINE) for d, b in DISTANCES)


def held_inside(rows: pl.DataFrame) -> dict[str, np.ndarray]:
    """Per basis column (:func:`band_bases`): whether each row falls inside the p90 band its cell (or, thin, the
    pooled cells) would have given without its own group (:func:`econ.fits.calibration_cv.claimed_band`; NaN: no
    band), rows in order."""
    out = {}
    for distance, basis, _ in band_bases():
        flags = np.full(rows.height, np.nan)
        for _, idx in rows.with_row_index("_i").group_by(["target"]):
            r = np.abs(idx[basis].cast(pl.Float64).to_numpy())
            if np.isfinite(r).any():
                group = idx[_group_of(distance)].to_numpy().astype(str)
                flags[idx["_i"].to_numpy()] = cv.claimed_band(r, idx["regime"].to_numpy(), group)[1]
        out[basis] = flags
    return out


def bands(rows: pl.DataFrame, inside_of: dict[str, np.ndarray]) -> pl.DataFrame:
    """``calibration_bands``: per target × regime × distance × whether the engine is stated, the held-out error
    factors and their out-of-group coverage. A cell with fewer than
    :data:`econ.fits.calibration_cv.MIN_BAND_POINTS` rows or from fewer than
    :data:`~econ.fits.calibration_cv.MIN_BAND_GROUPS` groups is pooled: its factors are the larger of its own and
    its target's at that distance. Coverage: ``inside_of`` (:func:`held_inside`)."""
    out = []
    rows = rows.with_row_index("_i")
    for (target,), t_rows in rows.group_by(["target"], maintain_order=True):
        for distance, basis, stated in band_bases():
            r = np.abs(t_rows[basis].cast(pl.Float64).to_numpy())
            if not np.isfinite(r).any():
                continue
            group = t_rows[_group_of(distance)].to_numpy().astype(str)
            regime = t_rows["regime"].to_numpy()
            inside = inside_of[basis][t_rows["_i"].to_numpy()]
            finite = np.isfinite(r)
            p50_all, p90_all = cv.band_factors(r, group)
            level_all = cv.calibrated_levels(r[finite], group[finite])[1]
            for reg in sorted(set(regime)):
                cell = (regime == reg) & finite
                thin = cell.sum() < cv.MIN_BAND_POINTS or cv.counted_groups(group[cell]) < cv.MIN_BAND_GROUPS
                p50, p90 = cv.band_factors(r[cell], group[cell])
                level = cv.calibrated_levels(r[cell], group[cell])[1] if cell.any() else np.nan
                if thin:
                    p50, p90 = np.nanmax([p50, p50_all]), np.nanmax([p90, p90_all])
                    level = level_all if p90 == p90_all else level
                cov = inside[cell]
                cov = cov[np.isfinite(cov)]
                out.append(
                    {
                        "target": target,
                        "regime": reg,
                        "distance": distance,
                        "engine_stated": stated,
                        "basis": basis.replace("model_and_chip", "larger of model_out and chip_out"),
                        "n_points": int(cell.sum()),
                        "error_factor_p50": p50,
                        "error_factor_p90": p90,
                        "p90_level_frac": float(level),
                        "coverage_p90_frac": float(cov.mean()) if cov.size else np.nan,
                        "pooled": bool(thin),
                    }
                )
    return pl.DataFrame(out)


def errors(rows: pl.DataFrame, inside_of: dict[str, np.ndarray]) -> pl.DataFrame:
    """``calibration_errors``: per basis × target × grouping, the error factors and the share of held-out rows
    inside the p90 band of their cell computed without their group (``inside_of``: :func:`held_inside`)."""
    rows = rows.with_columns(pl.Series(f"_in_{b}", v) for b, v in inside_of.items() if "model_and_chip" not in b)
    out = []
    for basis in (*BASES, *(f"{b}{ANY_ENGINE}" for b in HELD_OUT), "calibrated", "bound", "replicates"):
        r = rows.select(
            "target",
            "regime",
            "chip",
            "arch_model",
            "engine",
            pl.col(basis).alias("r"),
            (pl.col(f"_in_{basis}") if f"_in_{basis}" in rows.columns else pl.lit(None, dtype=pl.Float64)).alias(
                "inside"
            ),
        ).filter(pl.col("r").is_not_null() & pl.col("r").is_finite())
        if not r.height:
            continue
        for kind, key in (
            ("overall", None),
            ("regime", "regime"),
            ("chip", "chip"),
            ("model", "arch_model"),
            ("engine", "engine"),
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
