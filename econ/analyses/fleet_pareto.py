"""``fleet_pareto``: throughput per chip against per-user speed over decode batches, per model × chip × format.

The cost–speed frontier on the replica the fleet plan would use, at the base scenario's mean decode
context (lecture a.3–a.4; :func:`econ.physics.fleet.frontier`). Step times are lower bounds.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.inputs import cases_for, models_at
from econ.analyses.scenario import Scenario
from econ.analyses.serving_columns import KEYS
from econ.analyses.traffic import traffic_mix
from econ.physics import fleet, roofline
from econ.physics.model import kv_window_bytes
from econ.results import ResultColumn as C
from econ.results import ResultTable

NAME = "fleet_pareto"
INPUTS = ("models", "model_derived", "hardware_derived", "scenarios")

PARETO_BATCH = np.unique(np.concatenate([np.arange(1.0, 64.0), np.round(np.geomspace(64.0, 65_536.0, 1_000))]))
"""Decode batches of the frontier: every batch 1–63, then 1,000 log-spaced batches 64–65,536 rounded to whole
sequences (duplicates dropped): 1,026 points."""

FLEET_PARETO = ResultTable(
    name="fleet_pareto",
    grain="model x chip x number format x decode batch that fits",
    key=("model", "chip", "number_format", "batch_seqs"),
    description=(
        "Cost-speed frontier: throughput per chip against per-user speed over 1,026 decode batches (1-65,536; the "
        "batches that fit in the replica's HBM are kept) for every model x chip x number format, on the replica the "
        "fleet plan would use, at the base scenario's mean decode context, $/chip-hour and decode efficiencies, KV "
        "at its kv_cache_format (lecture a.3-a.4). Step times are lower bounds, so speeds and throughputs are upper "
        "bounds and costs lower bounds"
    ),
    columns=(
        *KEYS,
        C(
            "replica_chips",
            "int",
            "chips",
            "derived",
            "Chips per replica G: weights + KV of the balance-multiple batch at the context, within one scale-up "
            "domain",
            fleet.replica_for_batch,
        ),
        C(
            "pipeline_stages",
            "int",
            "",
            "derived",
            "Pipeline stages P (scale-up domains per replica)",
            fleet.replica_for_batch,
        ),
        C("batch_seqs", "int", "sequences", "key", "Decode batch B"),
        C(
            "tokens_per_s_per_user",
            "float",
            "tokens/s",
            "bound",
            "Per-user speed at the lower-bound step",
            fleet.frontier,
        ),
        C("tokens_per_s_per_chip", "float", "tokens/s", "bound", "Throughput per chip B/(step*G)", fleet.frontier),
        C(
            "usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "Decode cost at the base scenario's usd_per_chip_hour",
            fleet.frontier,
        ),
        C("compute_bound", "bool", "", "check", "True where compute time >= memory time"),
        C(
            "pareto_optimal",
            "bool",
            "",
            "check",
            "No point of the same model x chip (any format) is at least as fast per user with more throughput per chip "
            "(of identical points, one is marked)",
            fleet.pareto_optimal,
        ),
    ),
)
TABLES = (FLEET_PARETO,)


def _np(frame: pl.DataFrame, name: str) -> np.ndarray:
    return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


def pareto_frame(cases: pl.DataFrame, s: Scenario, *, batch: np.ndarray = PARETO_BATCH) -> pl.DataFrame:
    """``fleet_pareto``: every model × chip × format (``cases`` as :func:`econ.analyses.inputs.cases_for` builds them)
    over ``batch`` at the scenario's mean decode context, on the replica the fleet plan would use.

    Only the batches whose weights + KV fit in the replica are kept (the rest are not on any
    achievable frontier); ``pareto_optimal`` marks the points no other format of the model × chip beats.
    """
    cases = cases.filter(pl.col("kv_bytes_per_token").is_not_null())
    a = {
        k: _np(cases, k)
        for k in (
            "params_total",
            "params_active",
            "weight_bytes_per_param",
            "kv_bytes_per_token",
            "kv_window_bytes_per_sequence",
            "sliding_window_tokens",
            "peak_flop_per_s",
            "hbm_bandwidth_bytes_per_s",
            "hbm_capacity_bytes",
            "scale_up_domain_chips",
        )
    }
    context = traffic_mix(s).decode_context_tokens
    window = kv_window_bytes(context, a["kv_window_bytes_per_sequence"], a["sliding_window_tokens"])
    b0 = roofline.balance_batch(
        roofline.critical_batch_ratio(
            a["peak_flop_per_s"], a["hbm_bandwidth_bytes_per_s"], a["weight_bytes_per_param"]
        ),
        a["params_total"],
        a["params_active"],
    )
    target = np.maximum(np.round(fleet.balance_multiple_batch(b0, s.batch_multiple_over_balance_ratio)), 1.0)
    chips, stages = fleet.replica_for_batch(
        a["params_total"],
        a["weight_bytes_per_param"],
        target,
        context,
        a["kv_bytes_per_token"],
        a["hbm_capacity_bytes"],
        a["scale_up_domain_chips"],
        window,
    )
    out = fleet.frontier(
        batch=batch,
        context_tokens=context,
        params_total=a["params_total"],
        params_active=a["params_active"],
        weight_bytes_per_param=a["weight_bytes_per_param"],
        kv_bytes_per_token=a["kv_bytes_per_token"],
        chips=chips,
        peak_flop_per_s=a["peak_flop_per_s"],
        hbm_bandwidth_bytes_per_s=a["hbm_bandwidth_bytes_per_s"],
        hbm_capacity_bytes=a["hbm_capacity_bytes"],
        usd_per_chip_hour=s.usd_per_chip_hour,
        mfu=s.decode_mfu_frac,
        mbu=s.decode_mbu_frac,
        pipeline_stages=stages,
        kv_extra_bytes_per_sequence=window,
    )
    points = len(batch)
    fits = out["fits_in_memory"].ravel()
    index = np.repeat(np.arange(cases.height), points)[fits]
    keys = cases.select(
        pl.col("model").cast(pl.Categorical),
        pl.col("chip").cast(pl.Categorical),
        pl.col("number_format").cast(pl.Categorical),
    )[index]
    speed, throughput = out["tokens_per_s_per_user"].ravel()[fits], out["tokens_per_s_per_chip"].ravel()[fits]
    group = cases.select(pl.struct("model", "chip").rank("dense")).to_series().to_numpy()[index]
    return keys.with_columns(
        pl.Series("replica_chips", chips[index], dtype=pl.Int32),
        pl.Series("pipeline_stages", stages[index], dtype=pl.Int32),
        pl.Series("batch_seqs", np.tile(batch, cases.height)[fits], dtype=pl.Int32),
        pl.Series("tokens_per_s_per_user", speed),
        pl.Series("tokens_per_s_per_chip", throughput),
        pl.Series("usd_per_mtok", out["usd_per_mtok"].ravel()[fits]),
        pl.Series("compute_bound", out["compute_bound"].ravel()[fits]),
        pl.Series("pareto_optimal", fleet.pareto_optimal(group, speed, throughput)),
    )


def run(ctx) -> None:
    s = ctx.scenario("base")
    hardware = ctx.query("select * from hardware_derived order by chip, format_order")
    ctx.write(FLEET_PARETO, pareto_frame(cases_for(models_at(ctx, s.kv_cache_format), hardware), s))
