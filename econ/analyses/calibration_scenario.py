"""Scenario ``calibrated``: scenario ``base`` with the serving parameters the calibration fitted.

The shared values of ``calibration_parameters`` become the scenario's fields (:data:`FIELDS`); the values of each
architecture family the measured rows cover go in ``efficiencies_by_architecture`` (a chip of another
architecture takes the shared values), and the attention share of each attention kind they cover in
``efficiencies_by_attention`` (a model of another kind takes the shared value). The scenario is the engine average:
each value plus the mean of the engines' offsets and of their disaggregated serving offsets (:func:`for_engine` with
no engine); one engine's values are ``econ predict --engine`` and ``econ fleet --engine``. A parameter the fit could
not identify (no finite estimate) keeps base's value. The calibrated scenario times a step as real engines run it
(``kernel_serial``: :func:`econ.physics.step_time.kernel_step_time_s`).
"""

from __future__ import annotations

import dataclasses

import duckdb
import polars as pl

from econ.analyses.scenario import Scenario, load_scenarios
from econ.errors import EconError
from econ.fits import calibration as cal

NAME = "calibrated"

FIELDS = {
    "gemm_mfu_frac": ("decode_mfu_frac",),
    "prefill_gemm_mfu_frac": ("prefill_mfu_frac",),
    "expert_mfu_frac": ("expert_mfu_frac",),
    "attention_mfu_frac": ("attention_mfu_frac",),
    "hbm_bandwidth_frac": ("prefill_mbu_frac", "decode_mbu_frac"),
    "expert_hbm_bandwidth_frac": ("expert_mbu_frac",),
    "link_bandwidth_frac": ("link_bandwidth_frac",),
    "collective_latency_s": ("scale_up_latency_s", "scale_out_latency_s"),
    "layer_overhead_s": ("layer_overhead_s",),
    "sequence_overhead_s": ("sequence_overhead_s",),
    "step_overhead_s": ("step_overhead_s",),
    "expert_imbalance_scale": ("expert_imbalance_scale_ratio",),
    "ttft_overhead_s": ("ttft_overhead_s",),
    "ttft_stream_steps": ("ttft_stream_steps",),
    "queue_wait_frac": ("queue_wait_frac",),
    "burst_wait_frac": ("burst_wait_frac",),
}
"""Calibration parameter -> the scenario fields it sets."""

if set(cal.OFFSETS["attention"]) & set(cal.OFFSETS["architecture"]):  # deployment_inputs.efficiency takes one group's
    raise RuntimeError("a parameter moves by both the chip's family and the model's attention kind: combine them")


def calibrated(base: Scenario, parameters: pl.DataFrame) -> Scenario:
    """``base`` with the calibration's efficiencies (``parameters``: the ``calibration_parameters`` table, or rows of
    ``parameter``, ``family``, ``attention`` and ``estimate``: a row with an architecture ``family`` is that chip
    family's value, one with an ``attention`` kind that kind's)."""
    finite = parameters.filter(
        pl.col("estimate").is_not_null() & pl.col("estimate").is_finite() & pl.col("parameter").is_in(list(FIELDS))
    )
    if "attention" not in finite.columns:  # calibration_parameters: an attention kind's row is its group
        kind = pl.col("group_kind") == "attention" if "group_kind" in finite.columns else pl.lit(False)
        finite = finite.with_columns(pl.when(kind).then(pl.col("group")).otherwise(pl.lit("")).alias("attention"))
    plain = (pl.col("family") == "") & (pl.col("attention") == "")  # an engine's row has no family (null)
    shared = {r["parameter"]: r["estimate"] for r in finite.filter(plain).iter_rows(named=True)}
    values = {f: float(shared[p]) for p, fields in FIELDS.items() if p in shared for f in fields}
    by_group: dict[str, dict[str, dict[str, float]]] = {"family": {}, "attention": {}}
    for kind, group in by_group.items():
        for r in finite.filter(pl.col(kind) != "").iter_rows(named=True):
            for f in FIELDS[r["parameter"]]:
                group.setdefault(r[kind], {})[f] = float(r["estimate"])
    return dataclasses.replace(
        base,
        name=NAME,
        **values,
        efficiencies_by_architecture=by_group["family"],
        efficiencies_by_attention=by_group["attention"],
        efficiency_basis="calibrated",
    )


def for_engine(base: Scenario, parameters: pl.DataFrame, engine: str | None, mode: str = "disagg") -> Scenario:
    """``calibrated`` as one engine serves (``econ fleet --engine``; None: the engine average, the scenario's own
    values): every parameter at the shared value plus the engine's offset and its serving mode's (``engine/mode``),
    each architecture family's value plus the same offsets, combined where the fit combines them (in each parameter's
    coordinate, :func:`econ.fits.calibration.to_value`; the average takes the mean offset of the engines,
    :func:`econ.analyses.serving_predict.row_parameters`), and each attention kind's value of the parameters the
    kind moves (:data:`econ.fits.calibration.OFFSETS`; none of them moves by the chip's family as well).
    ``parameters``: the whole ``calibration_parameters``."""
    from econ.analyses.serving_predict import row_parameters  # it reads the calibration's tables, as this does

    known = set(parameters.filter(pl.col("group_kind") == "engine")["group"].to_list())
    if engine is not None and engine not in known:
        raise EconError(
            f"the calibration has no values for engine {engine!r}", f"known engines: {', '.join(sorted(known))}"
        )
    families = sorted(f for f in set(parameters["family"].to_list()) if f)
    kinds = sorted(set(parameters.filter(pl.col("group_kind") == "attention")["group"].to_list()))
    levels = [(None, None), *((f, None) for f in families), *((None, k) for k in kinds)]
    values = row_parameters(
        parameters,
        {
            "engine": [engine] * len(levels),
            "serving": [f"{engine}/{mode}"] * len(levels),
            "architecture": [f for f, _ in levels],
            "attention": [k for _, k in levels],
        },
    )
    moved = set(cal.OFFSETS["attention"])
    rows = [
        (name, family or "", kind or "", float(values[name][i]))
        for name in FIELDS
        for i, (family, kind) in enumerate(levels)
        if kind is None or name in moved
    ]
    frame = pl.DataFrame(rows, schema=["parameter", "family", "attention", "estimate"], orient="row")
    return calibrated(base, frame)


def has_calibration(con: duckdb.DuckDBPyConnection) -> bool:
    sql = "select count(*) from information_schema.tables where table_name = 'calibration_parameters'"
    return bool(con.execute(sql).fetchall()[0][0])


def with_calibrated(con: duckdb.DuckDBPyConnection, scenarios: dict[str, Scenario]) -> dict[str, Scenario]:
    """The scenarios plus ``calibrated`` once the database has ``calibration_parameters``."""
    if "base" not in scenarios or not has_calibration(con):
        return scenarios
    frame = pl.DataFrame(con.sql("select * from calibration_parameters"))
    if not frame.filter(pl.col("estimate").is_not_null() & pl.col("estimate").is_finite()).height:
        return scenarios
    return {**scenarios, NAME: for_engine(scenarios["base"], frame, None)}


def all_scenarios(con: duckdb.DuckDBPyConnection) -> dict[str, Scenario]:
    """Every scenario of a built database, ``calibrated`` included."""
    return with_calibrated(con, load_scenarios(con))


def predictive(scenarios: dict[str, Scenario]) -> tuple[Scenario, Scenario | None]:
    """(the scenario predictions use, the bound beside it): ``calibrated`` and ``base`` once a calibration exists;
    else ``base`` alone (its efficiencies, labelled by its ``efficiency_basis``)."""
    if NAME in scenarios:
        return scenarios[NAME], scenarios["base"]
    return scenarios["base"], None
