"""A fleet plan as people read it: the ``fleet_plan`` columns ``econ fleet`` prints, in their display units, with the
calibration's error factors under the decode step and the time to first token."""

from __future__ import annotations

import polars as pl

PLAN_SUMMARY = (  # (column, label, unit, scale)
    ("model", "model", "", None),
    ("chip", "chip", "", None),
    ("number_format", "number format", "", None),
    ("scenario", "scenario", "", None),
    ("batch_policy", "batch policy", "", None),
    ("batch_status", "batch", "", None),
    ("tokens_per_s", "traffic", "tokens/s", 1),
    ("input_tokens_per_s", "input", "tokens/s", 1),
    ("output_tokens_per_s", "output", "tokens/s", 1),
    ("requests_per_s", "requests", "requests/s", 1),
    ("mean_prompt_tokens", "mean prompt", "tokens", 1),
    ("output_tokens_per_request", "output per request", "tokens", 1),
    ("decode_context_tokens", "decode context", "tokens", 1),
    ("decode_layout", "decode layout", "", None),
    ("decode_replica_chips", "decode chips per replica", "chips", 1),
    ("decode_tensor_parallel", "decode tensor parallel", "chips", 1),
    ("decode_attention_data_parallel", "decode attention data parallel", "ranks", 1),
    ("decode_pipeline_parallel", "decode pipeline stages", "stages", 1),
    ("prefill_layout", "prefill layout", "", None),
    ("prefill_replica_chips", "prefill chips per replica", "chips", 1),
    ("prefill_tensor_parallel", "prefill tensor parallel", "chips", 1),
    ("prefill_attention_data_parallel", "prefill attention data parallel", "ranks", 1),
    ("prefill_status", "prefill", "", None),
    ("prefill_ttft_max_s", "longest time to first token", "s", 1),
    ("balance_batch_seqs", "balance batch B*0", "sequences", 1),
    ("decode_batch_seqs", "decode batch", "sequences", 1),
    ("decode_step_time_s", "decode step", "ms", 1e3),
    ("decode_comm_time_s", "decode communication at peak links", "ms", 1e3),
    ("decode_comm_exposed_time_s", "decode communication waited for", "ms", 1e3),
    ("tokens_per_s_per_user", "speed per user", "tokens/s", 1),
    ("decode_tokens_per_s_per_replica", "decode throughput per replica", "tokens/s", 1),
    ("prefill_tokens_per_s_per_replica", "prefill throughput per replica (uncached)", "tokens/s", 1),
    ("prefill_replicas", "prefill replicas", "replicas", 1),
    ("prefill_replicas_needed", "  busy at this traffic", "replicas", 1),
    ("decode_replicas", "decode replicas", "replicas", 1),
    ("decode_replicas_needed", "  busy at this traffic", "replicas", 1),
    ("prefill_decode_replica_ratio", "prefill : decode replicas", "ratio", 1),
    ("chips", "chips", "chips", 1),
    ("nodes", "nodes", "nodes", 1),
    ("racks", "racks", "racks", 1),
    ("facility_power_w", "facility power", "MW", 1e-6),
    ("energy_mwh_per_day", "energy", "MWh/day", 1),
    ("tokens_per_mwh", "tokens per MWh", "tokens/MWh", 1),
    ("price_provider", "sold by", "", None),
    ("price_model", "sold as", "", None),
    ("price_match", "list price found by", "", None),
    ("list_input_usd_per_mtok", "list input price", "USD/MTok", 1),
    ("list_output_usd_per_mtok", "list output price", "USD/MTok", 1),
    ("revenue_usd_per_day", "revenue at list prices", "USD/day", 1),
)
PLAN_PER_KIND = (
    ("usd_per_chip_hour", "price", "USD/chip-hour"),
    ("usd_per_day", "cost", "USD/day"),
    ("input_usd_per_mtok", "input cost", "USD/MTok"),
    ("output_usd_per_mtok", "output cost", "USD/MTok"),
    ("gross_margin_frac", "gross margin", "frac"),
)


ERROR_ROWS = {  # after the row of this column: the calibration's held-out error of that quantity
    "prefill_ttft_max_s": "prefill_ttft",
    "decode_step_time_s": "decode_step",
}


def plan_rows(plan: pl.DataFrame, errors: dict | None = None) -> list[tuple]:
    """A plan (the rows of one deployment, one per price kind) as readable (quantity, value, unit) rows; ``errors``
    (:func:`_errors`) adds the calibration's error factors under the decode step and the time to first token."""
    first = plan.row(0, named=True)
    errors = errors or {}
    rows = []
    for column, label, unit, scale in PLAN_SUMMARY:
        value = first.get(column)
        rows.append((label, value * scale if scale is not None and value is not None else value, unit))
        if column in ERROR_ROWS and errors:
            pool = ERROR_ROWS[column]
            rows.append(("  error factor (p50)", errors[f"{pool}_error_factor_p50"], ""))
            rows.append(("  error factor (p90)", errors[f"{pool}_error_factor_p90"], ""))
            rows.append(("  held-out runs inside that p90 band", errors[f"{pool}_band_coverage_frac"], "frac"))
    if errors:
        rows.append(
            (
                "error factors from",
                f"held-out disagg_decode / disagg_prefill runs, {errors['error_distance'].replace('_', ' ')}"
                f"{'' if errors['error_engine_stated'] else ', predicted with the engine average'} "
                "(calibration_bands); the chips and costs scale with the decode step and the prefill time",
                "",
            )
        )
        decode, prefill = errors["decode_step_error_band_of"], errors["prefill_ttft_error_band_of"]
        rows.append(("  whose runs", decode if decode == prefill else f"{decode} / {prefill}", ""))
    for kind in plan.iter_rows(named=True):
        for column, label, unit in PLAN_PER_KIND:
            rows.append((f"{label} ({kind['price_kind']})", kind[column], unit))
        rows.append((f"price basis ({kind['price_kind']})", kind["price_basis"], ""))
    rows.append(("notes", first.get("notes") or "", ""))
    return rows
