"""``markup_inversions``: the markup model read backwards into hidden quantities, validated where the truth is known.

From the cost each price reads back to (``fit_markup_rows``: open models with their own model left out, closed
models with every open model):

- **active parameters** from the input price: N̂ = Ĉ_in / ū, ū the geometric mean over the other open models of
  their calibrated input cost per active parameter (cost per MTok ∝ FLOPs ∝ N_act at a mix of attention and expert
  efficiencies);
- **KV bytes held per token** from the price of holding a cached prompt (storage per hour, or a write's premium over
  input per second of the duration it buys): b̂ = h / u_hold, u_hold the cache tier's cost of holding a byte for a
  second (``markup_costs``), truth the architecture's KV bytes per token at the scenario's cache format;
- **decode batch** of an open model's seller: the batch at which the deployment model's decode cost equals the output
  cost its price reads back to (:func:`econ.physics.traffic_cost.implied_batch`), with the interval of that cost;
  a closed model has no decode cost curve (its total parameters are unknown), so none.

KV bytes *read* per context token are ``fit_context_tiers``' published reading (its own validation), not repeated.
Each validated quantity goes through :func:`econ.fits.validation.validate` (``inference_quantities``).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.fit_markups import BASE_PRICES_SQL, HISTORY_SOURCES_SQL
from econ.analyses.inference_serving import INPUTS as SERVING_INPUTS
from econ.analyses.inference_serving import serving, traffic_costs
from econ.analyses.inputs import MODELS_SQL, architecture_groups, architecture_of
from econ.analyses.validation_evidence import (
    empty_evidence,
    evidence,
    evidence_columns,
    evidence_names,
    quantities_table,
    summary_frame,
    validate,
)
from econ.fits import validation
from econ.formula import formula
from econ.physics import traffic_cost
from econ.results import ResultColumn as C
from econ.results import ResultTable
from econ.units import MEGA

NAME = "markup_inversions"
INPUTS = (*SERVING_INPUTS, "fit_markup_rows", "markup_costs", "prices", "price_snapshots", "scenarios")
READS = {"prices": BASE_PRICES_SQL, "price_snapshots": HISTORY_SOURCES_SQL}
"""All it reads of ``prices`` (the base rows of the sources the markup fit read, ``fit_markup_rows``' own): a new
snapshot of a replayed history keeps its tables, and the Inferences page that draws them (``econ.analyses.runner``)."""

ACTIVE = "active_params_from_input_price"
HELD = "kv_held_bytes_per_token_from_cache_price"
KEY = ("source", "provider", "model", "from_date")
HOLD_COLUMNS = ("cache_write_5m_usd_per_mtok", "cache_write_1h_usd_per_mtok", "cache_write_12h_usd_per_mtok")
ACTIVE_EVIDENCE = {
    "log_ratio": "active_params_log_ratio",
    "implied_over_true_ratio": "active_params_implied_over_true_ratio",
    "scenario_interval_covers_true": "active_params_scenario_interval_covers_true",
    "correction_factor_ratio": "active_params_correction_factor_ratio",
    "interval_covers_true": "active_params_interval_covers_true",
    "baseline_value": "baseline_active_params",
    "baseline_low_value": "baseline_active_params_low",
    "baseline_high_value": "baseline_active_params_high",
    "interval_score_log": "active_params_interval_score_log",
    "baseline_interval_score_log": "active_params_baseline_interval_score_log",
}
HELD_EVIDENCE = evidence_names("kv_held", "bytes_per_token")
EVIDENCE = {ACTIVE: ACTIVE_EVIDENCE, HELD: HELD_EVIDENCE}
"""Each reading's validation evidence on the open rows (:mod:`econ.analyses.validation_evidence`; the
``inference_validation`` view reads it there)."""


@formula("ū = exp(mean over the other open models of ln(C_in/N_act))", "leave one architecture group out")
def unit_cost_left_out(model_keys, cost, quantity) -> tuple[np.ndarray, float]:
    """Per row: the geometric-mean cost per unit of the other open models (``model_keys``: the unit left out, the
    row's architecture group, one vote each; every open model for a row without one), and that over every open
    model."""
    names, per, row = validation.model_means(model_keys, np.log(np.asarray(cost, float) / np.asarray(quantity, float)))
    n = len(names)
    if n == 0:
        return np.full(len(row), np.nan), float("nan")
    total = per.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        others = (total - per) / (n - 1) if n > 1 else np.full(n, np.nan)
    full = total / n
    return np.exp(np.where(row >= 0, others[np.maximum(row, 0)], full)), float(np.exp(full))


MARKUP_INVERSIONS = ResultTable(
    name="markup_inversions",
    grain="price row (source x seller x price key x period) with an input price, base tier, standard",
    key=KEY,
    description=(
        "The markup model read backwards: implied active parameters from the input price, KV bytes held per token "
        "from the price of holding a cached prompt, and (open models) the decode batch whose calibrated decode cost "
        "equals the output cost the price reads back to, each with its validated (left-out) interval; open models "
        "with their truth and the evidence of the check (the status: markup_inversion_quantities, "
        "inference_quantities)"
    ),
    columns=(
        C("source", "str", "", "key", "Price source"),
        C("provider", "str", "", "key", "Seller"),
        C("model", "str", "", "key", "Price key"),
        C("from_date", "date", "", "key", "First day of the price's period"),
        C("arch_model", "str", "", "input", "Open model (null: closed)"),
        C("provider_kind", "str", "", "input", "first_party, reseller, null for a closed model"),
        C(
            "active_params_raw",
            "float",
            "params",
            "inference",
            "N = C_in / u before the validation rule's correction (C_in: the input price over the predicted markup)",
            unit_cost_left_out,
        ),
        C("implied_active_params", "float", "params", "inference", "N = C_in / u (published)", validation.validate),
        C("active_params_low", "float", "params", "inference", "Validated interval, low", validation.left_out),
        C("active_params_high", "float", "params", "inference", "Validated interval, high", validation.left_out),
        C("true_active_params", "float", "params", "input", "Open models: the architecture's active parameters"),
        *evidence_columns(ACTIVE_EVIDENCE, "params", "Active parameters"),
        C(
            "hold_price_usd_per_mtok_s",
            "float",
            "USD/MTok/s",
            "input",
            "Price of holding a cached token per second: storage/3600, or the longest write's premium over input "
            "over its duration",
        ),
        C(
            "kv_held_raw_bytes_per_token",
            "float",
            "bytes/token",
            "inference",
            "b = h / u_hold before the validation rule's correction",
            unit_cost_left_out,
        ),
        C(
            "implied_kv_held_bytes_per_token",
            "float",
            "bytes/token",
            "inference",
            "b = h / u_hold",
            validation.validate,
        ),
        C(
            "kv_held_low_bytes_per_token",
            "float",
            "bytes/token",
            "inference",
            "Validated interval, low",
            validation.left_out,
        ),
        C(
            "kv_held_high_bytes_per_token",
            "float",
            "bytes/token",
            "inference",
            "Validated interval, high",
            validation.left_out,
        ),
        C("true_kv_held_bytes_per_token", "float", "bytes/token", "input", "Open models: KV bytes per token"),
        *evidence_columns(HELD_EVIDENCE, "bytes/token", "KV held"),
        C(
            "implied_decode_batch_seqs",
            "float",
            "sequences",
            "inference",
            "Open models: the batch at which decode costs the output cost the price reads back to",
            traffic_cost.implied_batch,
        ),
        C(
            "decode_batch_low_seqs",
            "float",
            "sequences",
            "inference",
            "At the high end of the cost's interval",
            traffic_cost.implied_batch,
        ),
        C(
            "decode_batch_high_seqs",
            "float",
            "sequences",
            "inference",
            "At the low end of the cost's interval",
            traffic_cost.implied_batch,
        ),
        C("decode_batch_status", "str", "", "label", "Where the batch lands, or why there is none"),
    ),
)
LABELS = {
    ACTIVE: (
        "markup_inversions",
        "params",
        "input price -> serving cost (markup model) -> active parameters at the other open models' cost per one",
        "reading",
    ),
    HELD: (
        "markup_inversions",
        "bytes/token",
        "price of holding a cached prompt (storage, or a write's premium per second) -> KV bytes held per token at "
        "the cache tier's cost of holding a byte",
        "reading",
    ),
}
"""quantity -> (table, unit, what is read from what, role): the labels of its ``markup_inversion_quantities`` row."""
MARKUP_INVERSION_QUANTITIES = quantities_table("markup_inversion_quantities", "markup_inversions")
TABLES = (MARKUP_INVERSIONS, MARKUP_INVERSION_QUANTITIES)


def _validated(frame: pl.DataFrame, implied, true, groups: dict[str, str]) -> tuple[pl.DataFrame, dict]:
    rows = pl.DataFrame(
        {
            "model_key": frame["arch_model"],
            "group_key": frame.select(architecture_of(groups))["arch_model"],
            "implied": implied,
            "scenario_low": [None] * frame.height,
            "scenario_high": [None] * frame.height,
            "true": true,
        },
        schema={
            "model_key": pl.String,
            "group_key": pl.String,
            **{c: pl.Float64 for c in ("implied", "scenario_low", "scenario_high", "true")},
        },
    )
    return validate(rows, role="reading")


def active_rows(markup_rows: pl.DataFrame, models: pl.DataFrame) -> pl.DataFrame:
    """The input rows of ``fit_markup_rows`` with the architecture's active parameters."""
    rows = markup_rows.filter(pl.col("component") == "input")
    return rows.join(
        models.select(pl.col("model").alias("arch_model"), pl.col("params_active").alias("true_active_params")),
        on="arch_model",
        how="left",
    )


def table(markup_rows, prices, models, costs, kv_scale, decode=None) -> pl.DataFrame:
    """``markup_inversions`` (:func:`tables`)."""
    return tables(markup_rows, prices, models, costs, kv_scale, decode)[0]


def tables(markup_rows, prices, models, costs, kv_scale, decode=None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(``markup_inversions``, ``markup_inversion_quantities``) (module docstring)."""
    rows = active_rows(markup_rows, models)
    if rows.height == 0:
        return MARKUP_INVERSIONS.empty_frame(), summary_frame({}, MARKUP_INVERSION_QUANTITIES, LABELS)
    ref = costs.filter(pl.col("reference"))
    rows = rows.join(
        ref.select("arch_model", "input_cost_usd_per_mtok", "cache_hold_usd_per_mtok_s"), on="arch_model", how="left"
    )
    read = (rows["price_value"] / rows["predicted_markup_ratio"]).to_numpy()
    groups = architecture_groups(models)
    unit, _ = unit_cost_left_out(
        rows.select(architecture_of(groups))["arch_model"].to_list(),
        rows["input_cost_usd_per_mtok"].fill_null(np.nan).to_numpy(),
        rows["true_active_params"].fill_null(np.nan).to_numpy(),
    )
    raw_active = read / unit
    checked, s_active = _validated(rows, raw_active, rows["true_active_params"].fill_null(np.nan).to_numpy(), groups)
    out = rows.select("source", "provider", "model", "from_date", "arch_model", "provider_kind", "true_active_params")
    out = out.with_columns(
        pl.Series("active_params_raw", raw_active, nan_to_null=True),
        checked["corrected"].alias("implied_active_params"),
        checked["validated_low"].alias("active_params_low"),
        checked["validated_high"].alias("active_params_high"),
        *evidence(checked, ACTIVE_EVIDENCE),
    )
    kv, s_held = held(prices, models, costs, kv_scale)
    out = out.join(kv, on=list(KEY), how="left")
    summaries = {ACTIVE: s_active, **({HELD: s_held} if s_held else {})}
    return (
        out.join(decode if decode is not None else _no_decode(out), on=list(KEY), how="left"),
        summary_frame(summaries, MARKUP_INVERSION_QUANTITIES, LABELS),
    )


def held(
    prices: pl.DataFrame, models: pl.DataFrame, costs: pl.DataFrame, kv_scale: float
) -> tuple[pl.DataFrame, dict | None]:
    """Per price row with a hold price: the implied KV bytes held per token, validated on open models; and the
    validation's summary (None without a row)."""
    hold = pl.col("cache_storage_usd_per_mtok_hour") / 3600.0
    for column, seconds in zip(HOLD_COLUMNS[::-1], (43_200.0, 3_600.0, 300.0)):
        premium = (pl.col(column) - pl.col("input_usd_per_mtok")) / seconds
        hold = hold.fill_null(pl.when(premium > 0).then(premium))
    rows = prices.with_columns(hold.alias("hold_price_usd_per_mtok_s")).filter(pl.col("hold_price_usd_per_mtok_s") > 0)
    rows = rows.join(
        costs.filter(pl.col("reference")).select("arch_model", "cache_hold_usd_per_mtok_s"), on="arch_model", how="left"
    ).join(
        models.select(pl.col("model").alias("arch_model"), (pl.col("kv_bytes_per_token") * kv_scale).alias("_kv")),
        on="arch_model",
        how="left",
    )
    names = ("implied_kv_held_bytes_per_token", "kv_held_low_bytes_per_token", "kv_held_high_bytes_per_token")
    if rows.height == 0:
        floats = (*names, "true_kv_held_bytes_per_token", "kv_held_raw_bytes_per_token", "hold_price_usd_per_mtok_s")
        schema = {**{k: prices.schema[k] for k in KEY}, **dict.fromkeys(floats, pl.Float64)}
        return pl.DataFrame(schema=schema).with_columns(empty_evidence(HELD_EVIDENCE)), None
    per_byte = (rows["cache_hold_usd_per_mtok_s"] / rows["_kv"]).fill_null(np.nan).to_numpy()
    groups = architecture_groups(models)
    keys = rows.select(architecture_of(groups))["arch_model"].to_list()
    unit, full = unit_cost_left_out(keys, per_byte, np.ones(rows.height))
    raw = rows["hold_price_usd_per_mtok_s"].to_numpy() / np.where(np.isfinite(unit), unit, full)
    checked, s = _validated(rows, raw, rows["_kv"].fill_null(np.nan).to_numpy(), groups)
    return rows.select(
        *KEY,
        "hold_price_usd_per_mtok_s",
        *(checked[c].alias(n) for c, n in zip(("corrected", "validated_low", "validated_high"), names)),
        pl.col("_kv").alias("true_kv_held_bytes_per_token"),
        pl.Series("kv_held_raw_bytes_per_token", raw, nan_to_null=True),
        *evidence(checked, HELD_EVIDENCE),
    ).unique(subset=list(KEY), keep="first"), s


def _no_decode(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.select(*KEY).with_columns(
        *(
            pl.lit(None, pl.Float64).alias(c)
            for c in ("implied_decode_batch_seqs", "decode_batch_low_seqs", "decode_batch_high_seqs")
        ),  # fmt: skip
        pl.lit("no deployment model in this build").alias("decode_batch_status"),
    )


def decode_batches(markup_rows: pl.DataFrame, costs) -> pl.DataFrame:
    """Per output row of an open model: the batch at which the deployment model's decode cost equals the cost the
    price reads back to (and at the ends of its validated interval); closed rows say why there is none."""
    rows = markup_rows.filter(pl.col("component") == "output")
    status = pl.when(pl.col("arch_model").is_null()).then(
        pl.lit("not identified: a closed model's decode cost curve needs its total parameters")
    )
    base = rows.select(*KEY, status.alias("decode_batch_status"))
    if costs is None or costs.frame.height == 0:
        return _no_decode(base)
    have, found, decode = costs.for_models(rows["arch_model"].fill_null("").to_list())
    sub = rows.filter(pl.Series(have))
    pre = found["prefill_usd_per_input_token"].fill_null(np.nan).to_numpy()

    def batch(value_column):
        c = sub[value_column].fill_null(np.nan).to_numpy() / MEGA
        return traffic_cost.implied_batch(c / pre, decode, pre, costs.batch)

    central, where = batch("implied_cost_value")
    low, _ = batch("implied_cost_high_value")  # a dearer cost is a smaller batch
    high, _ = batch("implied_cost_low_value")
    part = sub.select(*KEY).with_columns(
        pl.Series("implied_decode_batch_seqs", central, nan_to_null=True),
        pl.Series("decode_batch_low_seqs", low, nan_to_null=True),
        pl.Series("decode_batch_high_seqs", high, nan_to_null=True),
        pl.Series("_where", where),
    )
    out = base.join(part, on=list(KEY), how="left").with_columns(
        pl.col("decode_batch_status").fill_null(pl.col("_where")).fill_null("no modelled deployment")
    )
    return out.drop("_where")


def run(ctx) -> None:
    markup_rows = ctx.query("select * from fit_markup_rows")
    models = ctx.query(MODELS_SQL)
    deployed = serving(ctx)
    prices = markup_rows.filter(pl.col("component") == "input").select(*KEY, "arch_model", "provider_kind")
    raw = ctx.query(BASE_PRICES_SQL)
    prices = prices.join(raw, on=list(KEY), how="inner")
    frame, quantities = tables(
        markup_rows,
        prices,
        models,
        ctx.query("select * from markup_costs"),
        deployed.kv_scale,
        decode_batches(markup_rows, traffic_costs(deployed) if deployed.cases.height else None),
    )
    ctx.write(MARKUP_INVERSIONS, frame.select(MARKUP_INVERSIONS.names))
    ctx.write(MARKUP_INVERSION_QUANTITIES, quantities)
