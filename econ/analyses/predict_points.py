"""``econ predict --points FILE.csv``: every row of a file of serving runs in the measured file's own schema
(``inferencex_train``: AIConfigurator's ``silicon_sample.csv`` columns) predicted at once.

The file is read and checked by the table spec of ``inferencex_train`` (a bad cell names its file, line and
column); measured columns are ignored; ``system`` may name any chip econ knows in the file's style (``h100_sxm``,
``b300_sxm``, ``gb200``, ``mi355x``) and ``model_path`` any Hugging Face id of ``data/models.csv`` or a quantised
re-release of one. One output row per input row (:data:`econ.analyses.serving_predict.OUTPUT`), in input order:
``status`` ``ok`` or the kind of problem, ``reason`` the sentence. Vectorised (bench/predict_points.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from econ.analyses import assumed_workers, serving_runs
from econ.analyses.calibration_neighbours import MEASURED_SQL
from econ.analyses.calibration_scenario import all_scenarios
from econ.analyses.serving_predict import LENGTHS_SQL, predict_configurations
from econ.analyses.timed_models import MODELS_SQL, UNTIMED_SQL
from econ.db import connect_read_only
from econ.load.serving_run_tables import SERVING_RUNS
from econ.load.spec import FILE, LINE, read_table

STATUS = (
    (r"which econ cannot time", "untimed_model"),
    (r"^model '", "unknown_model"),
    (r"^system '", "unknown_chip"),
    (r"hardware\.csv has no", "no_link_bandwidth"),
    (r"does not hold the weights", "does_not_fit"),
    (r"not finite", "not_predicted"),
)
"""A reason's status code, the first pattern that matches (anything else: ``bad_input``)."""

STATED_SYSTEMS_SQL = """
select chip, mode, workers_assumed, launch_choices, system_chips, prefill_worker_chips from calibration_runs
where included
"""
"""The calibration's runs, from which :func:`~econ.analyses.assumed_workers.largest_systems` reads the bound on a row
that states no workers, the bound the calibration put on its own."""


def read_points(path: Path) -> pl.DataFrame:
    """The rows of a file of runs, checked and converted by the ``inferencex_train`` spec."""
    frame = read_table(Path(path), SERVING_RUNS)
    return frame.drop([c for c in (FILE, LINE) if c in frame.columns])


@dataclass(frozen=True)
class Calibrated:
    """What predicting rows reads from a built database: the models and chips, the calibrated parameters and error
    bands, the models and chips the calibration saw, the HBM reserve of the ``base`` scenario (the calibration's) and
    InferenceX's launches (a disaggregated row without worker counts takes its launch's pools, as the calibration
    reads its runs)."""

    models: pl.DataFrame
    hardware: pl.DataFrame
    params: pl.DataFrame
    bands: pl.DataFrame
    seen_models: frozenset[str]
    seen_chips: frozenset[str]
    hbm_reserve_frac: float
    launches: pl.DataFrame
    node_launches: pl.DataFrame
    untimed: pl.DataFrame  # models of data/models.csv the serving model cannot time (UNTIMED_SQL)
    lengths: dict  # the prompt and output lengths the bands were measured over (calibration_lengths)
    largest: pl.DataFrame  # the most chips a stated disaggregated run used, by chip (STATED_SYSTEMS_SQL)
    measured: pl.DataFrame  # the calibration's runs: configuration, concurrency, residuals (MEASURED_SQL)

    @classmethod
    def read(cls, con) -> Calibrated:
        seen = pl.DataFrame(con.sql("select arch_model, chip from calibration_seen"))
        return cls(
            models=pl.DataFrame(con.sql(MODELS_SQL)),
            hardware=pl.DataFrame(con.sql("select * from hardware")),
            params=pl.DataFrame(con.sql("select * from calibration_parameters")),
            bands=pl.DataFrame(con.sql("select * from calibration_bands")),
            seen_models=frozenset(seen["arch_model"].to_list()),
            seen_chips=frozenset(seen["chip"].to_list()),
            hbm_reserve_frac=all_scenarios(con)["base"].hbm_reserve_frac,
            launches=pl.DataFrame(con.sql("select * from inferencex_launches")),
            node_launches=pl.DataFrame(con.sql("select * from inferencex_node_launches")),
            untimed=pl.DataFrame(con.sql(UNTIMED_SQL)),
            lengths=pl.DataFrame(con.sql(LENGTHS_SQL)).row(0, named=True),
            largest=assumed_workers.largest_systems(pl.DataFrame(con.sql(STATED_SYSTEMS_SQL))),
            measured=pl.DataFrame(con.sql(MEASURED_SQL)),
        )


def predict_frame(rows: pl.DataFrame, c: Calibrated) -> pl.DataFrame:
    """Predictions of rows of the spec's frame (see the module) by the calibration ``c`` read from a database."""
    configs = untimed_reasons(serving_runs.configurations(rows, c.models, c.hardware, c.launches, c.node_launches), c)
    out = predict_configurations(
        configs,
        c.models,
        c.hardware,
        params=c.params,
        bands=c.bands,
        seen_models=c.seen_models,
        seen_chips=c.seen_chips,
        hbm_reserve_frac=c.hbm_reserve_frac,
        lengths=c.lengths,
        largest=c.largest,
        measured=c.measured,
    )
    code = pl.lit("bad_input")
    for pattern, name in reversed(STATUS):
        code = pl.when(pl.col("reason").str.contains(pattern)).then(pl.lit(name)).otherwise(code)
    return out.with_columns(pl.when(pl.col("reason").is_null()).then(pl.lit("ok")).otherwise(code).alias("status"))


def untimed_reasons(configs: pl.DataFrame, c: Calibrated) -> pl.DataFrame:
    """A row whose model data/models.csv has but the serving model cannot time (an attention written ``other`` has
    no modelled KV cache) says so, instead of calling the model unknown. Python reads only the distinct model names."""
    resolve = serving_runs.model_resolver(c.untimed)
    why = dict(c.untimed.select("model", "why").iter_rows())
    unknown = pl.col("arch_model").is_null() & pl.col("reason").str.starts_with("model '")
    text = {}
    for path in configs.filter(unknown)["model_path"].unique().to_list():
        model = resolve.get(serving_runs.model_key(path))
        if model:
            text[path] = f"model '{path}' is {model} of data/models.csv, which econ cannot time: {why[model]}"
    if not text:
        return configs
    said = pl.col("model_path").replace_strict(text, default=None, return_dtype=pl.String)
    return configs.with_columns(
        pl.when(unknown & said.is_not_null()).then(said).otherwise(pl.col("reason")).alias("reason")
    )


def predict_points_file(db_path: Path, points: Path) -> pl.DataFrame:
    """Every row of ``points`` predicted by the calibrated serving model of the database at ``db_path``."""
    rows = read_points(points)
    with connect_read_only(Path(db_path), current=True) as con:
        calibrated = Calibrated.read(con)
    return predict_frame(rows, calibrated)


def describe(frame: pl.DataFrame) -> str:
    """One line for stderr: how many rows were predicted and why the others were not."""
    ok = int((frame["status"] == "ok").sum())
    others = frame.filter(pl.col("status") != "ok").group_by("status").len().sort("len", descending=True)
    why = ", ".join(f"{n} {re.sub('_', ' ', s)}" for s, n in others.iter_rows())
    return f"{ok} of {frame.height} rows predicted" + (f" ({why})" if why else "")
