"""Predictions of serving configurations from the calibration: TTFT, TPOT and throughput, the roofline bound beside
each, and the error factors of points like it. The one predictor behind ``econ predict``, ``econ predict
--points`` and the calibration's own tables (:func:`econ.fits.calibration.predict_runs` at the calibrated
parameters of each row's engine, architecture and way of serving).

Vectorised over rows: a configuration frame (:func:`econ.analyses.serving_runs.configurations`) becomes features
(:mod:`econ.analyses.calibration_runs`) and predictions in a handful of array passes, whatever the row count.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import calibration_runs as cr
from econ.analyses.calibration_bands import SPLITS
from econ.analyses.calibration_neighbours import TIERS, measured_correction
from econ.analyses.calibration_tables import regimes, workers_unstated
from econ.analyses.prediction_notes import attention_note, length_note, speculation_note, vendor_note
from econ.fits import calibration as cal

OUTPUT = (
    "id",
    "status",
    "reason",
    "predicted_ttft_ms",
    "predicted_tpot_ms",
    "predicted_output_tokens_per_s_per_gpu",
    "ttft_error_factor_p50",
    "ttft_error_factor_p90",
    "tpot_error_factor_p50",
    "tpot_error_factor_p90",
    "ttft_band_coverage_frac",
    "tpot_band_coverage_frac",
    "ttft_band_of",
    "tpot_band_of",
    "bound_ttft_ms",
    "bound_tpot_ms",
    "regime_ttft",
    "regime_tpot",
    "distance",
    "decode_batch_per_worker",
    "system_chips",
    "notes",
)
"""Columns of ``econ predict --points`` (``id`` … ``tpot_error_factor_p90`` as the issue names them, then the share
of held-out runs each p90 band covered out of group (``calibration_bands.coverage_p90_frac``: a band that covered
far fewer than 90% is not the promise its name makes) and whose runs it is from (a model's with an engine on a chip,
…, or every engine, chip and model of the regime), the roofline bound, the cell of the error bands and how
the row was read)."""


def _coordinate_offsets(params: pl.DataFrame) -> tuple[dict[str, float], dict[tuple[str, str, str], float]]:
    """(shared coordinate per parameter, offset per (parameter, group kind, group)) from calibration_parameters."""
    finite = params.filter(pl.col("estimate").is_not_null() & pl.col("estimate").is_finite())
    shared = {
        r["parameter"]: cal.to_coordinate(
            r["parameter"],
            min(max(r["estimate"], 1e-12), 1 - 1e-12)
            if r["parameter"] in cal.EFFICIENCIES
            else max(r["estimate"], 1e-300),
        )
        for r in finite.filter(pl.col("group_kind") == "").iter_rows(named=True)
    }
    offsets = {}
    for r in finite.filter(pl.col("group_kind") != "").iter_rows(named=True):
        name = r["parameter"]
        if name not in shared:
            continue
        value = min(max(r["estimate"], 1e-12), 1 - 1e-12) if name in cal.EFFICIENCIES else max(r["estimate"], 1e-300)
        offsets[(name, r["group_kind"], r["group"])] = cal.to_coordinate(name, value) - shared[name]
    return shared, offsets


def row_parameters(params: pl.DataFrame, groups: dict[str, list]) -> dict[str, np.ndarray]:
    """Each row's calibrated parameters: the shared coordinate plus the offsets of its groups (``groups[kind]``:
    each row's level). A parameter the table lacks takes the fit's starting value.

    A row whose engine (or engine/mode) the calibration does not know, or None, takes the mean of that kind's
    offsets (for ``serving``, over the groups of its mode): the engine average. Engines and architectures move the
    same coordinates, so the shared value alone is not an average of anything the runs measured (the fit pins it only
    through the priors): every engine's GEMM and expert efficiencies lie below it. An unknown architecture keeps the
    shared value (its offset is a chip family's, and a new family is not the mean of the known ones)."""
    shared, offsets = _coordinate_offsets(params)
    n = len(next(iter(groups.values()))) if groups else 1
    out = {}
    for name in cal.PARAMETERS:
        u = np.full(n, shared.get(name, cal.to_coordinate(name, cal.START[name])))
        for kind, levels in groups.items():  # one lookup per distinct level, then gathered for the rows
            raw = np.asarray(levels, dtype=object)
            _, first, index = np.unique(raw.astype(str), return_index=True, return_inverse=True)
            u = u + np.array([_offset(offsets, name, kind, lv) for lv in raw[first]])[index.reshape(-1)]
        out[name] = cal.to_value(name, u)
    return out


def _offset(offsets: dict, name: str, kind: str, level) -> float:
    """A group's offset of a parameter; for an engine or serving group the calibration lacks, the mean of its kind's."""
    if (name, kind, level) in offsets:
        return offsets[(name, kind, level)]
    if kind not in ("engine", "serving"):
        return 0.0
    mode = str(level).rpartition("/")[2] if kind == "serving" and level is not None else None
    known = [
        v for (p, k, lv), v in offsets.items() if p == name and k == kind and (mode is None or lv.endswith(f"/{mode}"))
    ]
    return float(np.mean(known)) if known else 0.0


def distances(arch_model, chip, seen_models: set, seen_chips: set) -> np.ndarray:
    """How far each row is from the calibration data: seen, new_model, new_chip or new_model_and_chip."""
    m = np.isin(np.asarray(arch_model, dtype=object).astype(str), np.array([str(x) for x in seen_models], dtype=str))
    c = np.isin(np.asarray(chip, dtype=object).astype(str), np.array([str(x) for x in seen_chips], dtype=str))
    return np.select([m & c, ~m & c, m & ~c], ["seen", "new_model", "new_chip"], "new_model_and_chip")


def band_factors(
    bands: pl.DataFrame,
    target: str,
    regimes: np.ndarray,
    dist: np.ndarray,
    stated: np.ndarray,
    engines: np.ndarray,
    chips: np.ndarray,
    models: np.ndarray,
) -> tuple[np.ndarray, ...]:
    """(p50, p90, coverage of the p90 band out of group, whose runs the band is from) of each row's cell: its regime,
    distance and whether its engine is ``stated``, split in turn by its engine (where stated), its chip and its model
    as far as the bands have such a cell; a regime the bands lack takes its target's widest band at that distance
    (never a narrower one) and its lowest coverage."""
    factors = ["error_factor_p50", "error_factor_p90", "coverage_p90_frac"]
    key = ["distance", "engine_stated"]
    t = bands.filter(pl.col("target") == target).select("regime", *SPLITS, *key, pl.col(factors).fill_nan(None))
    widest = t.filter(*(pl.col(c) == "" for c in SPLITS)).group_by(key)
    widest = widest.agg(pl.col(factors[:2]).max(), pl.col(factors[2]).min())
    said = np.asarray(stated, dtype=bool)
    rows = pl.DataFrame(
        {"regime": np.asarray(regimes, dtype=str), "distance": np.asarray(dist, dtype=str), "engine_stated": said}
    )
    path = {  # each row's value of each split; the engine only where stated
        "engine": np.where(said, np.asarray(engines, dtype=object).astype(str), ""),
        "chip": np.asarray(chips, dtype=object).astype(str),
        "arch_model": np.asarray(models, dtype=object).astype(str),
    }
    # the most specific cell the bands have gives all three numbers: every split of the row's path, then one fewer…
    arr, of = np.full((rows.height, 3), np.nan), np.full(rows.height, "", dtype=object)
    for depth in range(len(SPLITS), -1, -1):
        cell = {c: path[c] if i < depth else np.full(rows.height, "") for i, c in enumerate(SPLITS)}
        look = rows.with_columns(pl.Series(c, v) for c, v in cell.items())
        got = look.join(t, on=["regime", *SPLITS, *key], how="left", maintain_order="left")
        got = got.select(factors).to_numpy().astype(float).reshape(-1, 3)
        new = np.isnan(arr[:, 1]) & np.isfinite(got[:, 1])
        arr[new], of[new] = got[new], _runs_of(*(cell[c][new] for c in SPLITS))
    wide = rows.join(widest, on=key, how="left", maintain_order="left").select(factors).to_numpy().astype(float)
    none = np.isnan(arr[:, 1])
    arr[none], of[none] = wide.reshape(-1, 3)[none], "every regime's (widest)"
    return arr[:, 0], arr[:, 1], arr[:, 2], of.astype(str)


def _runs_of(engine: np.ndarray, chip: np.ndarray, model: np.ndarray) -> np.ndarray:
    """Whose held-out runs a band is from, in words: "Llama-3.1-70B's runs with vllm on H200", "runs with vllm",
    "runs on H200", "runs of every engine, chip and model"."""
    e, c, m = (np.asarray(x, dtype=str) for x in (engine, chip, model))
    words = np.where(m != "", np.char.add(m, "'s runs"), "runs")
    words = np.char.add(words, np.where(e != "", np.char.add(" with ", e), ""))
    words = np.char.add(words, np.where(c != "", np.char.add(" on ", c), ""))
    return np.where((e == "") & (c == "") & (m == ""), "runs of every engine, chip and model", words)


def _no_fit_reason(need_bytes, chip_bytes) -> np.ndarray:
    """Why a layout cannot run, with the sizes: what a chip of it must hold (the weights and one sequence, the fuller
    pool's) against what the chip has [GB]."""
    sizes = pl.DataFrame({"need": np.asarray(need_bytes, dtype=float), "have": np.asarray(chip_bytes, dtype=float)})
    gb = [(pl.col(c) / 1e9).fill_nan(None).round(0).cast(pl.Int64) for c in ("need", "have")]
    plain = "the layout does not hold the weights and one sequence in HBM"
    return (
        sizes.select(pl.format(f"{plain} ({{}} GB a chip, the chip has {{}} GB)", *gb).fill_null(plain))
        .to_series()
        .to_numpy()
    )


def predict_configurations(
    configs: pl.DataFrame,
    models: pl.DataFrame,
    hardware: pl.DataFrame,
    *,
    params: pl.DataFrame | None,
    bands: pl.DataFrame | None,
    seen_models: set,
    seen_chips: set,
    hbm_reserve_frac: float,
    lengths: dict | None = None,
    largest: pl.DataFrame | None = None,
    measured: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Predictions of every configuration row (:data:`OUTPUT` columns plus the features' frame columns).

    ``params``/``bands``: ``calibration_parameters`` / ``calibration_bands`` (None: the roofline bound alone, no
    error factors); ``lengths``: the row of ``calibration_lengths``, the range the bands were measured over (a row
    outside it says so, :func:`~econ.analyses.prediction_notes.length_note`); ``largest``: the bound on a run that
    states no workers, the calibration's :func:`~econ.analyses.assumed_workers.largest_systems` (None: read from
    ``configs``' own stated runs); ``measured``: the calibration's runs (``calibration_neighbours.MEASURED_SQL``): a
    row whose configuration (or layout) they measured is corrected by their residuals
    (``calibration_neighbours.measured_correction``) and takes the bands of such rows (distance ``seen_configuration``
    or ``seen_layout``). Rows with a ``reason`` get status = that reason and no numbers.
    """
    ok = configs.filter(pl.col("reason").is_null())
    frame = configs.select("run_id", "reason", "notes").rename({"run_id": "id"})
    if not ok.height:
        return _finish(frame, pl.DataFrame(schema={"id": pl.String}))
    c = cr.run_inputs(ok, models, hardware, largest)
    runs, extra = cr.runs_problem(c, hbm_reserve_frac=hbm_reserve_frac)
    fits = extra["one_sequence_bytes"] <= extra["hbm_capacity_bytes"]
    links = np.isfinite(runs.decode.comm_s) & np.isfinite(runs.demand.comm_s) & np.isfinite(runs.first.comm_s)
    arch_of = dict(hardware.select("chip", "architecture").iter_rows())
    arch = [arch_of.get(x) for x in c["chip"].to_list()]
    engine = c["engine"].to_list()
    serving = [f"{e}/{m}" for e, m in zip(engine, c["mode"].to_list())]
    if params is not None:
        groups = {"engine": engine, "architecture": arch, "serving": serving, "attention": c["attention"].to_list()}
        p = row_parameters(params, groups)
        known = set(params.filter(pl.col("group_kind") == "engine")["group"].to_list())
    else:
        p, known = cal.ideal_parameters(c.height), set()
    stated = np.isin(np.asarray(engine, dtype=object).astype(str), list(known))  # else the engines' average
    with np.errstate(all="ignore"):
        ttft, tpot = cal.predict_runs(p, runs)
    users, osl = runs.users, runs.output_tokens
    mode = c["mode"].to_numpy()
    assumed = c.select(workers_unstated()).to_series().to_numpy()
    reg_ttft, reg_tpot = (
        pl.DataFrame({"mode": mode, "users": users, "assumed": assumed, "waits": waits})
        .select(regimes(pl.col("mode"), pl.col("users"), pl.col("assumed"), pl.col("waits"), t))
        .to_series()
        .to_numpy()
        for t, waits in (("ttft", cr.waits_for_slot(extra)), ("tpot", cr.slot_limited(extra)))
    )
    factors, corrected = measured_correction(c, (reg_ttft, reg_tpot), measured, bands)
    ttft, tpot = ttft * factors[0], tpot * factors[1]
    with np.errstate(all="ignore"):
        per_gpu = users * osl / (ttft + (osl - 1.0) * tpot) / extra["system_chips"]
    dist = distances(c["arch_model"].to_list(), c["chip"].to_list(), seen_models, seen_chips)
    dist = np.where(corrected != "", corrected, dist)
    if bands is not None and bands.height:
        where = (engine, c["chip"].to_numpy(), c["arch_model"].to_numpy())
        t50, t90, t_cov, t_of = band_factors(bands, "ttft", reg_ttft, dist, stated, *where)
        p50, p90, p_cov, p_of = band_factors(bands, "tpot", reg_tpot, dist, stated, *where)
    else:
        t50 = t90 = t_cov = p50 = p90 = p_cov = np.full(c.height, np.nan)
        t_of = p_of = np.full(c.height, None)
    status = np.where(
        ~links,
        "data/hardware.csv has no scale_up_bandwidth_gb_per_s / scale_out_bandwidth_gbit_per_s for the chip",
        np.where(~fits, _no_fit_reason(extra["one_sequence_bytes"], extra["hbm_capacity_bytes"]), ""),
    )
    bad = (status != "") | ~np.isfinite(ttft) | ~np.isfinite(tpot)
    status = np.where((status == "") & bad, "the prediction is not finite", status)

    def good(x):
        return np.where(bad, np.nan, x)

    pred = pl.DataFrame(
        {
            "id": c["run_id"],
            "_status": status.astype(str),
            "_bad": bad,
            "predicted_ttft_ms": good(ttft * 1e3),
            "predicted_tpot_ms": good(tpot * 1e3),
            "predicted_output_tokens_per_s_per_gpu": good(per_gpu),
            "ttft_error_factor_p50": good(t50),
            "ttft_error_factor_p90": good(t90),
            "ttft_band_coverage_frac": good(t_cov),
            "tpot_error_factor_p50": good(p50),
            "tpot_error_factor_p90": good(p90),
            "tpot_band_coverage_frac": good(p_cov),
            "ttft_band_of": np.where(bad, None, t_of),
            "tpot_band_of": np.where(bad, None, p_of),
            "bound_ttft_ms": good(extra["bound_first_pass_s"] * 1e3),
            "bound_tpot_ms": good(extra["bound_tpot_s"] * 1e3),
            "regime_ttft": reg_ttft,
            "regime_tpot": reg_tpot,
            "distance": dist,
            "decode_batch_per_worker": extra["decode_batch_per_worker"],
            "system_chips": extra["system_chips"],
        }
    ).with_columns(cr.wait_notes(extra))
    note = pl.lit(None, dtype=pl.String)  # a prediction corrected by measured runs says by whose and how far
    for tier in TIERS:
        note = (
            pl.when(pl.Series(corrected == tier.distance))
            .then(
                pl.format(
                    f"corrected by {tier.whose} measured runs at other {tier.other} (TTFT x{{}}, TPOT x{{}} of the "
                    "model's)",
                    pl.Series(factors[0]).round(2),
                    pl.Series(factors[1]).round(2),
                )
            )
            .otherwise(note)
        )
    if params is not None:
        named = pl.Series(engine, dtype=pl.String)
        unknown = named.str.len_chars().fill_null(0).gt(0) & ~pl.Series(stated)
        note = cr.with_note(
            note,
            pl.when(unknown).then(
                pl.format(
                    "engine {} is not one the calibration measured ({}): predicted with the engines' average and its "
                    "error band",
                    named,
                    pl.lit(", ".join(sorted(known))),
                )
            ),
        )
        note = cr.with_note(note, vendor_note(c["chip"], hardware, seen_chips))
        note = cr.with_note(note, attention_note(c["arch_model"], models, seen_models))
    if bands is not None and lengths is not None:
        pred = pred.with_columns(
            c.select(
                length_note(pl.col("input_tokens"), pl.col("output_tokens"), lengths),
                speculation_note(pl.col("speculative_tokens"), lengths),
            )
        )
        note = cr.with_note(cr.with_note(note, pl.col("_length_note")), pl.col("_speculation_note"))
    pred = pred.with_columns(cr.with_note(note, pl.col("_wait_note")).alias("_note"))
    pred = pred.drop("_wait_note", "_length_note", "_speculation_note", strict=False)
    pred = pred.with_columns(pl.when(pl.col("_bad")).then(pl.col("_status")).alias("_why")).drop("_status", "_bad")
    return _finish(frame, pred)


LENGTHS_SQL = "select * from calibration_lengths"
"""The one row of lengths the bands were measured over (the view ``queries/calibration_lengths.sql``), read as
``pl.DataFrame(con.sql(LENGTHS_SQL)).row(0, named=True)`` by the commands that predict."""


def _finish(frame: pl.DataFrame, pred: pl.DataFrame) -> pl.DataFrame:
    out = frame.join(pred, on="id", how="left") if pred.height else frame
    for name in OUTPUT:
        if name not in out.columns:
            out = out.with_columns(
                pl.lit(
                    None, dtype=pl.Float64 if name not in ("regime_ttft", "regime_tpot", "distance") else pl.String
                ).alias(name)
            )
    reason = pl.coalesce("reason", "_why") if "_why" in out.columns else pl.col("reason")
    if "_note" in out.columns:  # how the row was read, then what the prediction adds (a slot wait, an engine)
        out = out.with_columns(cr.with_note(pl.col("notes"), pl.col("_note")).alias("notes"))
    return out.with_columns(
        reason.alias("reason"),
        pl.when(reason.is_null()).then(pl.lit("ok")).otherwise(pl.lit("not predicted")).alias("status"),
    ).select(OUTPUT)
