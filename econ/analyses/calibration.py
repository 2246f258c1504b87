"""``calibration_points``, ``calibration_runs``, ``calibration_parameters``, ``calibration_errors``,
``calibration_bands``: the serving model against measured systems.

Two measured sets are fitted together (:func:`econ.fits.calibration.fit_calibration`): the InferenceX runs of
``inferencex_train`` (TTFT and TPOT of a stated configuration, :mod:`econ.analyses.serving_runs` and
:mod:`econ.analyses.calibration_runs`) and the published throughput points of ``measured_points``
(:mod:`econ.analyses.calibration_points`). Grouped cross-validation (:mod:`econ.fits.calibration_cv`) leaves out
each model, each chip, each source document and five random folds of configurations; the error bands of
``calibration_bands`` are what ``econ predict`` claims for a point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.analyses import calibration_bands as bands
from econ.analyses import calibration_neighbours as nb
from econ.analyses import calibration_points as cp
from econ.analyses import calibration_runs as cr
from econ.analyses import calibration_tables as tables
from econ.analyses import serving_runs
from econ.analyses.calibration_columns import BANDS, ERRORS, PARAMETERS, POINTS, RUNS
from econ.analyses.calibration_scenario import FIELDS
from econ.analyses.timed_models import MODELS_SQL
from econ.engines import NAMES as ENGINE_NAMES
from econ.fits import calibration as cal
from econ.fits import calibration_cv as cv
from econ.fits.calibration_throughput import predict_points

NAME = "calibration"
INPUTS = (
    "measured_points",
    "inferencex_train",
    "inferencex_launches",
    "inferencex_node_launches",
    "models",
    "model_derived",
    "hardware",
    "hardware_derived",
    "scenarios",
)
TABLES = (POINTS, RUNS, PARAMETERS, ERRORS, BANDS)


def _codes(values, levels: tuple[str, ...]) -> np.ndarray:
    index = {v: i for i, v in enumerate(levels)}
    return np.array([index.get(v, -1) for v in values], dtype=int)


def _runs(ctx, models: pl.DataFrame, hardware: pl.DataFrame, reserve: float):
    """(every run's configuration with its reason, the included runs' inputs, their Runs and extra arrays); a copy of
    another row's measurement is not included (:func:`econ.analyses.calibration_tables.count_once`)."""
    raw = ctx.query("select * from inferencex_train")
    launches = ctx.query("select * from inferencex_launches")
    nodes = ctx.query("select * from inferencex_node_launches")
    configs = serving_runs.configurations(raw, models, hardware, launches, nodes)
    configs = tables.count_once(configs)
    ok = configs.filter(pl.col("reason").is_null())
    c = cr.run_inputs(ok, models, hardware)
    runs, extra = cr.runs_problem(c, hbm_reserve_frac=reserve)
    fits = extra["one_sequence_bytes"] <= extra["hbm_capacity_bytes"]
    links = np.isfinite(runs.decode.comm_s) & np.isfinite(runs.demand.comm_s) & np.isfinite(runs.first.comm_s)
    keep = fits & links
    why = np.where(
        ~links,
        "data/hardware.csv has no link bandwidth for this chip (scale_up_bandwidth_gb_per_s)",
        "the stated layout does not hold the weights and one sequence in HBM",
    )
    dropped = pl.DataFrame({"run_id": c["run_id"].filter(pl.Series(~keep)), "_why": why[~keep]})
    configs = (
        configs.join(dropped, on="run_id", how="left")
        .with_columns(pl.coalesce("reason", "_why").alias("reason"))
        .drop("_why")
    )
    c = c.filter(pl.Series(keep))
    return configs, c, cr.take(runs, keep), {k: np.asarray(v)[keep] for k, v in extra.items()}


def _points(ctx, models: pl.DataFrame, reserve: float):
    p = ctx.query(cp.POINTS_SQL).sort("point_id")
    p = p.with_columns(
        cp.reasons(p, set(models["model"].to_list())).alias("_reason"),
        cp.assumed(p).alias("assumed"),
        pl.Series("document", cp.document_of(p["source"].to_list())),
    )
    candidates = p.filter(pl.col("_reason").is_null())
    pts = cp.points(candidates, models, reserve)
    bound = predict_points(cal.ideal_parameters(pts.n), pts)["value"]
    runs = np.isfinite(bound) & (bound > 0)
    no_fit = f"the stated layout does not hold the weights and one sequence in HBM (less the {reserve:.0%} reserve)"
    reasons = pl.Series("_fit_reason", [None if r else no_fit for r in runs], dtype=pl.String)
    p = p.join(candidates.select("point_id").with_columns(reasons), on="point_id", how="left").with_columns(
        pl.coalesce("_reason", "_fit_reason").alias("_reason")
    )
    return p, candidates.filter(pl.Series(runs)), cp.take(pts, runs)


@dataclass(frozen=True)
class Inputs:
    """The calibration's problem and the frames its tables are made from."""

    problem: cal.Problem
    configs: pl.DataFrame  # every run read (calibration_runs' rows)
    runs: pl.DataFrame  # the included runs' inputs
    extra: dict
    points_all: pl.DataFrame  # every measured point with its reason
    points: pl.DataFrame  # the included points
    arch_of: dict
    attention_of: dict  # arch_model -> model_derived.attention
    groups: dict  # arch_model -> model_derived.architecture_group: what leave-one-model-out leaves out together


def build_problem(ctx) -> Inputs:
    """Read the measured runs and points of the database being built into the fit's problem."""
    reserve = ctx.scenario("base").hbm_reserve_frac
    models = ctx.query(MODELS_SQL)
    hardware = ctx.query("select * from hardware")
    configs, c, runs, extra = _runs(ctx, models, hardware, reserve)
    p, fitted, pts = _points(ctx, models, reserve)
    engine_r = c["engine"].to_list()
    engine_p = [ENGINE_NAMES.get(str(e).lower()) for e in fitted["engine"].to_list()]
    arch_of = dict(hardware.select("chip", "architecture").iter_rows())
    arch_r = [arch_of.get(x) for x in c["chip"].to_list()]
    arch_p = fitted["architecture"].to_list()
    serving_r = [f"{e}/{m}" for e, m in zip(engine_r, c["mode"].to_list())]
    serving_p = [f"{e}/{cp.MODES[r]}" if e and r in cp.MODES else None for e, r in zip(engine_p, fitted["regime"])]
    kind_of = dict(models.select("model", "attention").iter_rows())
    att_r = [kind_of.get(m) for m in c["arch_model"].to_list()]
    att_p = [kind_of.get(m) for m in fitted["arch_model"].to_list()]
    levels = {
        "attention": tuple(sorted({a for a in att_r + att_p if a})),
        "engine": tuple(sorted({e for e in engine_r + engine_p if e})),
        "architecture": tuple(sorted({a for a in arch_r + arch_p if a})),
        "serving": tuple(sorted({s for s in serving_r + serving_p if s})),
    }
    problem = cal.Problem(
        runs=runs,
        points=pts,
        levels=levels,
        run_codes={
            "engine": _codes(engine_r, levels["engine"]),
            "architecture": _codes(arch_r, levels["architecture"]),
            "serving": _codes(serving_r, levels["serving"]),
            "attention": _codes(att_r, levels["attention"]),
        },
        point_codes={
            "engine": _codes(engine_p, levels["engine"]),
            "architecture": _codes(arch_p, levels["architecture"]),
            "serving": _codes(serving_p, levels["serving"]),
            "attention": _codes(att_p, levels["attention"]),
        },
    )
    groups = dict(models.select("model", "architecture_group").iter_rows())
    return Inputs(problem, configs, c, extra, p, fitted, arch_of, kind_of, groups)


def run(ctx) -> None:
    i = build_problem(ctx)
    problem, levels, c, fitted, extra = i.problem, i.problem.levels, i.runs, i.points, i.extra
    result = cal.fit_calibration(problem)
    z = cal.usable(result, levels)
    fitted_pred = cal.predict(z, problem)
    labels = tables.fold_labels(c, fitted, i.groups)
    known = cv.at_point(z, problem)  # every fold of every basis starts at the full fit
    neighbours = nb.neighbour_tiers(c, extra)  # a random fold's runs are also corrected by the runs it fitted
    held = {
        basis: cv.cross_validate(
            problem, known[0], *labels[basis], known, neighbours=neighbours if basis == "random_out" else None
        )
        for basis in ("model_out", "chip_out", "source_out", "random_out")
    }
    random = held["random_out"]
    for tier in nb.TIERS:
        held[tier.basis] = {k.removesuffix(tier.suffix): v for k, v in random.items() if k.endswith(tier.suffix)}
    bounds = (extra["bound_first_pass_s"], extra["bound_tpot_s"])
    run_frame = tables.runs_frame(i.configs, c, extra, fitted_pred, held, bounds, nb.HELD_BASES)
    point_frame = tables.points_frame(i.points_all, fitted, problem.points, z, problem, held)
    ctx.write(RUNS, run_frame.select(RUNS.names))
    ctx.write(POINTS, point_frame.select(POINTS.names))
    rows = bands.residual_rows(run_frame, point_frame, i.groups)
    inside_at = bands.held_inside(rows)
    inside = inside_at[-1]  # what econ claims for each row: every split it has rows enough for
    band_frame = bands.bands(rows, inside_at)
    inside["source_out"] = source_inside(rows, band_frame)
    ctx.write(BANDS, band_frame.select(BANDS.names))
    ctx.write(ERRORS, bands.errors(rows, inside).select(ERRORS.names))
    params = tables.parameters(result, levels, run_frame, point_frame, i.arch_of, i.attention_of)
    sets = {p: ",".join(fields) for p, fields in FIELDS.items()}
    params = params.with_columns(
        pl.when(pl.col("group_kind").is_in(["", "architecture", "attention"]))
        .then(pl.col("parameter").replace_strict(sets, default=""))
        .otherwise(pl.lit(""))
        .alias("scenario_fields")
    )
    ctx.write(PARAMETERS, params.select(PARAMETERS.names))


def source_inside(rows: pl.DataFrame, band_frame: pl.DataFrame) -> np.ndarray:
    """Whether each run held out with its whole source (``source_out``: InferenceX's runs, then NVIDIA's) falls inside
    the p90 band econ prints for it, at its distance from the other source's runs: a model whose architecture group
    or a chip only its own source measured is new to the fold (NaN for the published points: each document's fold
    keeps every run, so no distance tells their claim apart)."""
    from econ.analyses.serving_predict import band_factors, distances  # it reads the bands this analysis writes

    inside = np.full(rows.height, np.nan)
    source, group, chip = (
        rows[c].fill_null("").to_numpy().astype(str) for c in ("source", "architecture_group", "chip")
    )
    for target in ("ttft", "tpot"):
        at = (rows["target"] == target).to_numpy()
        dist = np.empty(rows.height, dtype=object)
        for s in np.unique(source[at]):
            own, other = at & (source == s), at & (source != s)
            dist[own] = distances(group[own], chip[own], set(group[other]), set(chip[other]))
        t = rows.filter(pl.Series(at))
        p90 = band_factors(
            band_frame,
            target,
            t["regime"].to_numpy(),
            dist[at],
            np.ones(t.height, bool),
            t["engine"].to_numpy(),
            t["chip"].to_numpy(),
            t["arch_model"].to_numpy(),
        )[1]
        r = np.abs(t["source_out"].to_numpy().astype(float))
        inside[at] = np.where(np.isfinite(r) & np.isfinite(p90), (r <= np.log(p90)).astype(float), np.nan)
    return inside
