"""``econ predict``: what one stated operating point achieves, from the built database (read-only).

The point is a model on a chip with a decode replica of N chips (and a prefill replica, by default the same
size), prompts of I tokens (a share F of them cached) and O output tokens, at a decode batch B or the largest
batch that still gives each user S tokens/s. Of the search grid's layouts of that size
(:func:`econ.physics.layout_search.layout_grid`) the one with the most tokens/s per chip is used. Decode runs at
the mean context of the generation, I + O/2; the prefill pass is the largest (in prompts) whose TTFT meets the
scenario's ``ttft_target_s``, else one prompt per data-parallel rank (then ``ttft_meets_target`` is false). Step
terms come from :func:`econ.physics.deployment.decode_terms` / :func:`~econ.physics.deployment.prefill_terms` at
the scenario's efficiencies (``calibrated`` by default); the error factor is the calibration's leave-one-source-out
error for the chip (≥ 3 held-out points), else its architecture, else overall (``calibration_errors``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs as inputs
from econ.analyses.calibration_scenario import all_scenarios
from econ.db import connect_read_only
from econ.errors import EconError
from econ.load.ceilings import CHIPS
from econ.names import resolve_chip, resolve_model
from econ.physics import deployment, layout_search
from econ.units import GIGA, MEGA

DECODE_BATCH = np.unique(np.round(np.geomspace(1.0, 65_536.0, 161)))
PREFILL_PROMPTS = 2.0 ** np.arange(0, 13)  # 1 … 4,096 prompts per pass
MIN_ERROR_POINTS = 3
LAYOUT_DEGREES = ("tensor_parallel", "attention_data_parallel", "pipeline_parallel")

QUANTITIES = (  # key, unit, label
    ("model", "", "model"),
    ("chip", "", "chip"),
    ("number_format", "", "number format"),
    ("scenario", "", "scenario"),
    ("efficiency_basis", "", "efficiencies"),
    ("decode_layout", "", "decode layout (TP x DP x PP)"),
    ("prefill_layout", "", "prefill layout (TP x DP x PP)"),
    ("decode_batch_per_replica", "sequences", "decode batch per replica"),
    ("decode_context_tokens", "tokens", "decode context"),
    ("decode_tokens_per_s_per_chip", "tokens/s", "decode throughput per chip"),
    ("decode_tokens_per_s_per_user", "tokens/s", "decode speed per user"),
    ("step_time_s", "s", "decode step time"),
    ("compute_time_s", "s", "  compute"),
    ("memory_time_s", "s", "  memory (weights + cache)"),
    ("weight_time_s", "s", "    weights"),
    ("kv_time_s", "s", "    cache"),
    ("comm_time_s", "s", "  communication"),
    ("overhead_time_s", "s", "  overhead"),
    ("step_bound", "", "  largest term"),
    ("memory_per_chip_gb", "GB", "decode memory per chip"),
    ("prefill_prompts_per_pass", "prompts", "prefill prompts per pass"),
    ("prefill_tokens_per_s_per_chip", "tokens/s", "prefill throughput per chip (new tokens)"),
    ("ttft_s", "s", "time to first token"),
    ("ttft_meets_target", "", "TTFT meets the scenario's target"),
    ("usd_per_chip_hour", "USD/chip-hour", "chip price (scenario)"),
    ("usd_per_mtok_input", "USD/MTok", "cost per million input tokens"),
    ("usd_per_mtok_output", "USD/MTok", "cost per million output tokens"),
    ("error_factor", "", "typical error factor (held-out median)"),
    ("error_factor_p90", "", "error factor 9 in 10 points are within"),
    ("error_basis", "", "error measured on"),
)


def _positive(flag: str, value, *, whole=False, upper=None) -> None:
    if value is None:
        return
    ok = math.isfinite(value) and value > 0 and (upper is None or value <= upper)
    if not ok:
        raise EconError(
            f"{flag} must be a positive number{f' up to {upper:g}' if upper else ''} (got {value:g})",
            f"give {flag[2:].replace('-', ' ')}",
        )


def _layouts(case: dict, chips: int) -> dict[str, np.ndarray]:
    grid = layout_search.layout_grid(int(case["scale_up_domain_chips"] or 1), moe=case["moe"], max_chips=chips)
    size = grid["tensor_parallel"] * grid["attention_data_parallel"] * grid["pipeline_parallel"]
    keep = size == chips
    if not keep.any():
        raise EconError(
            f"no layout of the search grid has {chips} chips",
            "give a power of two or a multiple of the chip's scale-up domain",
        )
    return {k: np.asarray(v)[keep] for k, v in grid.items()}


def _error(con, chip: str, architecture: str) -> tuple[float, float, str]:
    rows = con.sql(
        'select group_kind, "group", n_points, error_factor, error_factor_p90 from calibration_errors '
        "where basis = 'cv' and ((group_kind = 'chip' and \"group\" = ?) or (group_kind = 'architecture' and "
        "\"group\" = ?) or group_kind = 'overall')",
        params=[chip, architecture],
    ).pl()
    for kind in ("chip", "architecture", "overall"):
        r = rows.filter(pl.col("group_kind") == kind)
        if r.height and (kind == "overall" or r["n_points"][0] >= MIN_ERROR_POINTS):
            n = int(r["n_points"][0])
            basis = f"{n} held-out points on {r['group'][0]}" if kind != "overall" else f"all {n} held-out points"
            if kind == "overall":
                basis += f" (no {chip} or {architecture} points: an extrapolation)"
            return float(r["error_factor"][0]), float(r["error_factor_p90"][0]), basis
    return math.nan, math.nan, "no calibration in this database"


def _bound(con) -> tuple[float, float, str]:
    rows = con.sql(
        "select error_factor from calibration_errors where basis = 'bound' and group_kind = 'overall'"
    ).fetchall()
    below = f": measured systems run a median {rows[0][0]:.2f}x below it" if rows else ""
    return math.nan, math.nan, f"none: a roofline bound, not a prediction{below}"


def predict_point(
    db_path: Path,
    *,
    model: str,
    chip: str,
    decode_chips: int,
    input_tokens: float,
    output_tokens: float,
    prefill_chips: int | None = None,
    batch: float | None = None,
    tokens_per_s_per_user: float | None = None,
    number_format: str | None = None,
    cached_input_frac: float = 0.0,
    scenario: str = "calibrated",
) -> dict:
    """The prediction for one operating point as {key: value} (see :data:`QUANTITIES`)."""
    if (batch is None) == (tokens_per_s_per_user is None):
        raise EconError(
            "give exactly one of --batch and --tokens-per-s-per-user",
            "the decode batch, or the speed each user must see",
        )
    for flag, value in (("--decode-chips", decode_chips), ("--prefill-chips", prefill_chips)):
        _positive(flag, value, upper=CHIPS.value)
    for flag, value in (
        ("--input-tokens", input_tokens),
        ("--output-tokens", output_tokens),
        ("--batch", batch),
        ("--tokens-per-s-per-user", tokens_per_s_per_user),
    ):
        _positive(flag, value)
    if not 0.0 <= cached_input_frac < 1.0:
        raise EconError(
            f"--cached-input-frac must be in [0, 1) (got {cached_input_frac:g})",
            "give the share of each prompt served from the prompt cache",
        )
    prefill_chips = prefill_chips or decode_chips
    with connect_read_only(Path(db_path), current=True) as con:
        model, chip = resolve_model(con, model, need="architecture").arch_model, resolve_chip(con, chip)
        scenarios = all_scenarios(con)
        if scenario not in scenarios:
            raise EconError(f"no scenario {scenario!r}", f"known scenarios: {', '.join(sorted(scenarios))}")
        s = scenarios[scenario]
        fmt = number_format or s.weight_format
        cases = con.sql(inputs.CASES_SQL).pl().filter((pl.col("model") == model) & (pl.col("chip") == chip))
        if not cases.height:
            raise EconError(f"{model} has no modelled cache (kv_bytes_per_token)", "pick a model with one")
        one = cases.filter(pl.col("number_format") == fmt)
        if not one.height:
            raise EconError(f"{chip} has no {fmt} peak", f"pass --number-format {' or '.join(cases['number_format'])}")
        error = _error(con, chip, one["architecture"][0]) if s.efficiency_basis == "calibrated" else _bound(con)
    case = one.row(0, named=True)
    case["moe"] = case["num_routed_experts"] is not None
    decode = _decode(one, s, _layouts(case, decode_chips), input_tokens, output_tokens, batch, tokens_per_s_per_user)
    prefill = _prefill(one, s, _layouts(case, prefill_chips), input_tokens, cached_input_frac)
    price = s.usd_per_chip_hour
    out = {
        "model": model,
        "chip": chip,
        "number_format": fmt,
        "scenario": scenario,
        "efficiency_basis": s.efficiency_basis,
        **decode,
        **prefill,
        "usd_per_chip_hour": price,
        "usd_per_mtok_input": price
        / 3600.0
        / prefill["prefill_tokens_per_s_per_chip"]
        * (1 - cached_input_frac)
        * MEGA,
        "usd_per_mtok_output": price / 3600.0 / decode["decode_tokens_per_s_per_chip"] * MEGA,
        "error_factor": error[0],
        "error_factor_p90": error[1],
        "error_basis": error[2],
    }
    return out


def _arrays(one: pl.DataFrame, s, layouts: dict, extra_axes: int):
    shape = (-1,) + (1,) * extra_axes
    model = {k: v.reshape(1, *([1] * extra_axes)) for k, v in inputs.model_arrays(one).items()}
    chip = {k: v.reshape(1, *([1] * extra_axes)) for k, v in inputs.chip_arrays(one, s.kv_cache_format).items()}
    layout = {k: np.asarray(v).reshape(shape) for k, v in layouts.items()}
    arch = np.asarray(one["architecture"].to_list(), dtype=object).reshape(1, *([1] * extra_axes))
    run = inputs.settings(s, "decode", one["weight_bytes_per_param"].to_numpy().reshape(1, *([1] * extra_axes)), arch)
    return model, chip, layout, run


def _name(layout: dict, i) -> str:
    return "x".join(f"{np.ravel(layout[k])[i]:.0f}" for k in LAYOUT_DEGREES)


def _decode(one, s, layouts, input_tokens, output_tokens, batch, speed) -> dict:
    model, chip, layout, run = _arrays(one, s, layouts, 1)
    context = input_tokens + output_tokens / 2.0
    b = np.array([float(batch)]) if batch is not None else DECODE_BATCH
    out = deployment.decode_terms(
        model, chip, layout, b[None, :], context, kv_scale=inputs.cache_scale(s), settings=run
    )
    fits = out["fits"]
    reserve = f"{s.hbm_reserve_frac:.0%} reserved"
    if not fits.any():
        i = int(np.argmin(out["memory_per_chip_bytes"][:, 0]))
        need = out["memory_per_chip_bytes"][i, 0] / GIGA
        cap = float(chip["hbm_capacity_bytes"].ravel()[0]) / GIGA
        raise EconError(
            f"does not fit: at batch {b[0]:g} and {context:,.0f} tokens of context the best layout "
            f"({_name(layout, i)}) needs {need:,.1f} GB per chip; a {one['chip'][0]} holds {cap:,.0f} GB ({reserve})",
            "use more --decode-chips, a smaller --batch, shorter lengths or a smaller --number-format",
        )
    ok = fits.copy()
    if speed is not None:
        ok &= out["tokens_per_s_per_user"] >= speed
        if not ok.any():
            fastest = float(np.nanmax(np.where(fits, out["tokens_per_s_per_user"], np.nan)))
            chips = deployment.replica_chips(*(np.ravel(layout[k])[0] for k in LAYOUT_DEGREES))
            raise EconError(
                f"unreachable: no layout of {chips:.0f} chips gives {speed:g} tokens/s per user; the fastest reaches "
                f"{fastest:,.1f} at batch 1",
                "ask for a lower --tokens-per-s-per-user, or use more --decode-chips",
            )
    score = np.where(ok, out["tokens_per_s_per_chip"], -np.inf)
    i, j = np.unravel_index(int(np.argmax(score)), score.shape)

    def at(key):
        return float(np.broadcast_to(out[key], score.shape)[i, j])

    terms = {
        k: at(k)
        for k in (
            "step_time_s",
            "compute_time_s",
            "memory_time_s",
            "weight_time_s",
            "kv_time_s",
            "comm_time_s",
            "overhead_time_s",
        )
    }
    largest = max(
        ("compute", terms["compute_time_s"]),
        ("memory", terms["memory_time_s"]),
        ("communication", terms["comm_time_s"]),
        key=lambda t: t[1],
    )[0]
    return {
        "decode_layout": _name(layout, i),
        "decode_batch_per_replica": float(b[j]),
        "decode_context_tokens": context,
        "decode_tokens_per_s_per_chip": at("tokens_per_s_per_chip"),
        "decode_tokens_per_s_per_user": at("tokens_per_s_per_user"),
        **terms,
        "step_bound": largest,
        "memory_per_chip_gb": at("memory_per_chip_bytes") / GIGA,
    }


def _prefill(one, s, layouts, input_tokens, cached_frac) -> dict:
    model, chip, layout, run = _arrays(one, s, layouts, 1)
    run["mfu"] = inputs.efficiency(
        s, "prefill_mfu_frac", np.asarray(one["architecture"].to_list(), dtype=object).reshape(1, 1)
    )
    run["mbu"] = inputs.efficiency(
        s, "prefill_mbu_frac", np.asarray(one["architecture"].to_list(), dtype=object).reshape(1, 1)
    )
    run["speculative_tokens"] = 0.0
    cached = input_tokens * cached_frac
    new = input_tokens - cached
    dp = layout["attention_data_parallel"] * layout["pipeline_parallel"]
    prompts = np.maximum(PREFILL_PROMPTS[None, :], 1.0) * dp  # whole prompts per rank
    out = deployment.prefill_terms(
        model, chip, layout, prompts, new, cached, kv_scale=inputs.cache_scale(s), settings=run
    )
    fits = out["fits"]
    if not fits.any():
        raise EconError(
            f"does not fit: one {input_tokens:,.0f}-token prompt per rank does not fit a prefill replica of "
            f"{int(np.max(layout['tensor_parallel'] * dp))} chips",
            "use more --prefill-chips, a shorter prompt or a smaller --number-format",
        )
    meets = fits & (out["ttft_s"] <= s.ttft_target_s)
    target_met = bool(meets.any())
    score = np.where(meets if target_met else fits & (prompts == dp), out["tokens_per_s_per_chip"], -np.inf)
    i, j = np.unravel_index(int(np.argmax(score)), score.shape)
    return {
        "prefill_layout": _name(layout, i),
        "prefill_prompts_per_pass": float(np.broadcast_to(prompts, score.shape)[i, j]),
        "prefill_tokens_per_s_per_chip": float(out["tokens_per_s_per_chip"][i, j]),
        "ttft_s": float(out["ttft_s"][i, j]),
        "ttft_meets_target": target_met,
    }


def rows(result: dict) -> tuple[list[str], list[tuple]]:
    """(columns, rows) of the prediction for table, csv and markdown output."""
    return ["quantity", "value", "unit"], [(label, result[key], unit) for key, unit, label in QUANTITIES]
