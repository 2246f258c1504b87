"""What ``econ predict`` prints for one point: the prediction row of :func:`econ.analyses.predict_command.predict_point`
turned into named quantities with units, the notes a reader needs beside them (a band that misses its promise, an
ignored flag), and the table rows the CLI renders."""

from __future__ import annotations

import math

from econ.errors import EconError
from econ.physics import deployment
from econ.units import MEGA

QUANTITIES = (  # key, unit, label
    ("model", "", "model"),
    ("chip", "", "chip"),
    ("engine", "", "engine"),
    ("mode", "", "serving"),
    ("scenario", "", "scenario"),
    ("efficiency_basis", "", "parameters"),
    ("weight_format", "", "weight / matmul format"),
    ("expert_format", "", "expert format"),
    ("kv_cache_format", "", "KV-cache format"),
    ("expert_load", "", "routed experts' load"),
    ("decode_layout", "", "decode worker layout"),
    ("decode_layout_chosen_by", "", "  chosen by"),
    ("decode_workers", "workers", "decode workers"),
    ("prefill_layout", "", "prefill worker layout"),
    ("prefill_layout_chosen_by", "", "  chosen by"),
    ("prefill_workers", "workers", "prefill workers"),
    ("concurrency", "requests", "requests in flight"),
    ("decode_batch_per_worker", "sequences", "decode batch per worker"),
    ("speculative_tokens", "tokens", "draft tokens per step"),
    ("tpot_s", "s", "time per output token"),
    ("tpot_bound_s", "s", "  roofline bound"),
    ("tpot_error_factor_p50", "", "  error factor (p50)"),
    ("tpot_error_factor_p90", "", "  error factor (p90)"),
    ("tpot_band_coverage_frac", "frac", "  held-out runs inside that p90 band"),
    ("ttft_s", "s", "time to first token"),
    ("ttft_bound_s", "s", "  roofline bound (first pass)"),
    ("ttft_error_factor_p50", "", "  error factor (p50)"),
    ("ttft_error_factor_p90", "", "  error factor (p90)"),
    ("ttft_band_coverage_frac", "frac", "  held-out runs inside that p90 band"),
    ("ttft_meets_target", "", "  meets the TTFT target"),
    ("decode_tokens_per_s_per_user", "tokens/s", "speed per user"),
    ("decode_tokens_per_s_per_chip", "tokens/s", "decode throughput per chip"),
    ("output_tokens_per_s_per_chip", "tokens/s", "system output tokens/s per chip"),
    ("system_chips", "chips", "chips of the system"),
    ("usd_per_chip_hour", "USD/chip-hour", "chip price (scenario)"),
    ("usd_per_mtok_output", "USD/MTok", "cost per million output tokens (whole system)"),
    ("error_basis", "", "error factors from"),
    ("notes", "", "notes"),
)


WEAK_COVERAGE = 0.8
"""A p90 band whose out-of-group coverage is below this is said to miss its promise (a note beside it)."""


def result(pt, s, model, chip, fmt, efmt, kv, d, p, w_d, w_p, frame, pred, price, calibrated, target, *, moe) -> dict:
    r = pred.row(0, named=True)
    if r["status"] != "ok":
        raise EconError(f"cannot predict: {r['reason']}", "change the layout, lengths or formats")
    tpot, ttft = r["predicted_tpot_ms"] / 1e3, r["predicted_ttft_ms"] / 1e3
    chips_d = d.chips
    per_chip = r["decode_batch_per_worker"] / tpot / chips_d
    system = r["predicted_output_tokens_per_s_per_gpu"]
    notes = []
    if pt.mode == "agg" and pt.prefill.stated:
        notes.append("aggregated serving: the prefill flags are ignored (one pool does both)")
    if not calibrated:
        notes.append("scenario base: the roofline bound with no fixed costs and no queue")
    if pt.engine is None and calibrated:
        notes.append("no --engine: the engine-average parameters, and bands over the engines' mix (--engine: its own)")
    if r["notes"]:  # how the configuration was read, and whether its users wait for a decode slot
        notes.append(r["notes"])
    for measure in ("tpot", "ttft"):
        cov = r[f"{measure}_band_coverage_frac"]
        if cov is not None and math.isfinite(cov) and cov < WEAK_COVERAGE:
            notes.append(
                f"the {measure.upper()} p90 band covered only {cov:.0%} of held-out runs like this one: not the 90% "
                "its name says"
            )
    of = r["tpot_band_of"] if r["tpot_band_of"] == r["ttft_band_of"] else f"{r['tpot_band_of']} / {r['ttft_band_of']}"
    basis = (
        f"held-out {r['regime_tpot']} / {r['regime_ttft']} points, {r['distance'].replace('_', ' ')}"
        f"{f', {of}' if of else ''}"
        f"{'' if pt.engine else ', predicted with the engine average'} (calibration_bands)"
        if calibrated
        else "none: a roofline bound, not a prediction"
    )
    return {
        "model": model,
        "chip": chip,
        "engine": pt.engine or "engine average",
        "mode": pt.mode,
        "scenario": pt.scenario,
        "efficiency_basis": s.efficiency_basis,
        "weight_format": fmt,
        "expert_format": efmt,
        "kv_cache_format": kv,
        "expert_load": (
            ""
            if not moe
            else "balanced (EPLB): uniform routing's busiest rank"
            if deployment.expert_balanced(
                {"expert_balanced": float(pt.expert_balanced), "redundant_expert_slots": d.redundant_expert_slots}
            )
            else "the measured engines' router skew (fitted)"
        ),
        "decode_layout": d.text(moe),
        "decode_layout_chosen_by": d.how,
        "decode_workers": float(w_d),
        "prefill_layout": p.text(moe) if pt.mode == "disagg" else "(the decode pool: aggregated)",
        "prefill_layout_chosen_by": (
            p.how + ("; workers: the fewest meeting the TTFT target" if not pt.prefill.workers else "")
        )
        if pt.mode == "disagg"
        else "",
        "prefill_workers": float(w_p) if pt.mode == "disagg" else 0.0,
        "concurrency": float(frame["concurrency"][0]),
        "decode_batch_per_worker": float(r["decode_batch_per_worker"]),
        "speculative_tokens": float(pt.speculative_tokens),
        "tpot_s": tpot,
        "tpot_bound_s": r["bound_tpot_ms"] / 1e3,
        "tpot_error_factor_p50": r["tpot_error_factor_p50"],
        "tpot_error_factor_p90": r["tpot_error_factor_p90"],
        "tpot_band_coverage_frac": r["tpot_band_coverage_frac"],
        "ttft_s": ttft,
        "ttft_bound_s": r["bound_ttft_ms"] / 1e3,
        "ttft_error_factor_p50": r["ttft_error_factor_p50"],
        "ttft_error_factor_p90": r["ttft_error_factor_p90"],
        "ttft_band_coverage_frac": r["ttft_band_coverage_frac"],
        "ttft_meets_target": bool(ttft <= target),
        "decode_tokens_per_s_per_user": 1.0 / tpot,
        "decode_tokens_per_s_per_chip": per_chip,
        "output_tokens_per_s_per_chip": system,
        "system_chips": float(r["system_chips"]),
        "usd_per_chip_hour": price,
        "usd_per_mtok_output": price / 3600.0 / system * MEGA if system and system > 0 else math.nan,
        "error_basis": basis,
        "notes": "; ".join(notes),
    }


def rows(result: dict) -> tuple[list[str], list[tuple]]:
    """(columns, rows) of the prediction for table, csv and markdown output."""
    return ["quantity", "value", "unit"], [(label, result.get(key), unit) for key, unit, label in QUANTITIES]
