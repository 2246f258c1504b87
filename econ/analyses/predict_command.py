"""``econ predict``: what one stated serving configuration achieves, from the built database (read-only).

A configuration is a model on a chip, aggregated (one pool) or disaggregated (prefill and decode workers), each
pool's layout (:mod:`econ.analyses.predict_layouts`: stated, named or searched), the concurrency (or a decode
batch per worker, or the speed each user must see), the lengths, the formats, speculative decoding and the engine.
It is predicted by the calibrated serving model (:func:`econ.analyses.serving_predict.predict_configurations`, the
function ``econ predict --points`` and the calibration's own tables use), with the roofline bound beside it and
the error factors of the calibration's held-out points like it (``calibration_bands``).

Where a degree is omitted the layout search picks, over the layouts it allows, the one with the most output
tokens/s per chip that meets the speed target; a disaggregated system's prefill pool gets the layout and the
fewest workers that keep TTFT within the target (the scenario's ``ttft_target_s`` unless ``--ttft-s``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from econ.analyses import launch_layouts, serving_runs
from econ.analyses import launch_settings as launch
from econ.analyses import serving_run_notes as run_notes
from econ.analyses.calibration_runs import MATH_FORMATS
from econ.analyses.calibration_scenario import all_scenarios
from econ.analyses.predict_layouts import Layout, PoolSpec, check_spec, pool_layouts
from econ.analyses.predict_result import result
from econ.analyses.prediction_notes import sparse_cache_note
from econ.analyses.serving_predict import LENGTHS_SQL, predict_configurations
from econ.analyses.timed_models import MODELS_SQL, refuse_untimed
from econ.db import connect_read_only
from econ.engines import ENGINES
from econ.errors import EconError
from econ.load.ceilings import CHIPS, TOKENS
from econ.names import resolve_chip, resolve_model

CONCURRENCY = np.unique(np.round(np.geomspace(1, 16384, 29)))
PREFILL_WORKERS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)
FORMATS = ("bf16", "fp8", "int8", "fp4")


@dataclass(frozen=True)
class Point:
    """One configuration as ``econ predict`` takes it."""

    model: str
    chip: str
    input_tokens: float
    output_tokens: float
    mode: str = "disagg"
    engine: str | None = None
    decode: PoolSpec = field(default_factory=PoolSpec)
    prefill: PoolSpec = field(default_factory=PoolSpec)
    concurrency: float | None = None
    batch: float | None = None
    tokens_per_s_per_user: float | None = None
    ttft_s: float | None = None
    cached_input_frac: float = 0.0
    weight_format: str | None = None
    expert_format: str | None = None
    kv_cache_format: str | None = None
    speculative_tokens: int = 0
    acceptance_frac: float | None = None
    expert_balanced: bool = False  # a load balancer (EPLB) places the routed experts of both pools
    scenario: str = "calibrated"


def _positive(flag: str, value, *, upper: float | None = None, why: str = "") -> None:
    if value is None:
        return
    ok = isinstance(value, int | float) and math.isfinite(value) and value > 0 and (upper is None or value <= upper)
    if not ok:
        raise EconError(
            f"{flag} must be a positive number{f' up to {upper:g}' if upper else ''} (got {value})",
            f"give {flag[2:].replace('-', ' ')}{f' ({why})' if why else ''}",
        )


def validate(pt: Point) -> None:
    """Every input in range before anything is read (a clear error, never a traceback or a NaN)."""
    given = [x is not None for x in (pt.concurrency, pt.batch, pt.tokens_per_s_per_user)]
    if sum(given) != 1:
        raise EconError(
            "give exactly one of --concurrency, --batch and --tokens-per-s-per-user",
            "the requests in flight, the decode batch per worker, or the speed each user must see",
        )
    if pt.mode not in ("agg", "disagg"):
        raise EconError(f"--mode must be agg or disagg (got {pt.mode!r})", "agg: one pool; disagg: two")
    if pt.engine is not None and pt.engine not in ENGINES:
        raise EconError(f"unknown --engine {pt.engine!r}", f"use one of {', '.join(ENGINES)} (or leave it out)")
    for flag, value in (("--input-tokens", pt.input_tokens), ("--output-tokens", pt.output_tokens)):
        _positive(flag, value, upper=TOKENS.value, why=TOKENS.why)
    _positive("--concurrency", pt.concurrency, upper=CHIPS.value * 1e3)
    _positive("--batch", pt.batch, upper=CHIPS.value * 1e3)
    _positive("--tokens-per-s-per-user", pt.tokens_per_s_per_user, upper=1e6)
    _positive("--ttft-s", pt.ttft_s, upper=1e6)
    if not (isinstance(pt.cached_input_frac, int | float) and 0.0 <= pt.cached_input_frac < 1.0):
        raise EconError(
            f"--cached-input-frac must be in [0, 1) (got {pt.cached_input_frac})",
            "give the share of each prompt served from the prompt cache",
        )
    for flag, value in (("--weight-format", pt.weight_format), ("--expert-format", pt.expert_format)):
        if value is not None and value not in FORMATS:
            raise EconError(f"unknown {flag} {value!r}", f"use one of {', '.join(FORMATS)}")
    if pt.kv_cache_format is not None and pt.kv_cache_format not in ("bf16", "fp8"):
        raise EconError(f"unknown --kv-cache-format {pt.kv_cache_format!r}", "use bf16 or fp8")
    if not (isinstance(pt.speculative_tokens, int) and 0 <= pt.speculative_tokens <= 16):
        raise EconError(
            f"--speculative-tokens must be a whole number from 0 to 16 (got {pt.speculative_tokens})",
            "give the MTP / draft tokens verified per step",
        )
    if pt.speculative_tokens and pt.acceptance_frac is None:
        raise EconError("--speculative-tokens needs --acceptance", "give the share of draft tokens accepted (0-1)")
    if pt.acceptance_frac is not None and not (
        isinstance(pt.acceptance_frac, int | float) and 0.0 <= pt.acceptance_frac <= 1.0
    ):
        raise EconError(f"--acceptance must be in [0, 1] (got {pt.acceptance_frac})", "a share of draft tokens")
    check_spec(pt.decode, "decode", CHIPS.value)
    check_spec(pt.prefill, "prefill", CHIPS.value)
    if pt.mode == "agg" and (pt.prefill.stated or pt.prefill.workers is not None):
        raise EconError(
            "--mode agg serves prefill and decode in one pool: the --prefill-* layout flags do not apply",
            "give the pool's layout as --decode-* flags, or use --mode disagg for a separate prefill pool",
        )


def _resolve(con, pt: Point) -> tuple[str, str]:
    """The model and chip the point names: a Hugging Face id of the measured files' kind (quantised re-releases
    included, :func:`econ.analyses.serving_runs.model_key`) or a system name (``h100_sxm``), else any name
    :mod:`econ.names` reads (canonical, models.model, repo, price key; any case), whose errors suggest the nearest."""
    models = pl.DataFrame(con.sql("select model, hf_repo from models"))
    model = serving_runs.model_resolver(models).get(serving_runs.model_key(pt.model))
    if model is None:
        model = resolve_model(con, pt.model, need="architecture").arch_model
    chips = {c.upper(): c for c in pl.DataFrame(con.sql("select chip from hardware"))["chip"].to_list()}
    chip = chips.get(serving_runs.chip_key(pt.chip)) or resolve_chip(con, pt.chip)
    return model, chip


def _rows(pt, model, chip, fmt, efmt, kv, d: Layout, p: Layout, users, w_d, w_p) -> dict:
    return {
        "run_id": "",
        "engine": pt.engine or "",
        "model_path": pt.model,
        "system": chip,
        "arch_model": model,
        "chip": chip,
        "mode": pt.mode,
        "input_tokens": float(pt.input_tokens),
        "output_tokens": float(pt.output_tokens),
        "concurrency": float(users),
        "weight_format": fmt,
        "expert_weight_format": efmt,
        "kv_cache_format": kv,
        "kv_cache_stated": True,
        "speculative_tokens": float(pt.speculative_tokens),
        "acceptance_frac": float(pt.acceptance_frac or 0.0),
        **{
            f"{pool}_{k}": float(v)
            for pool, lay, w in (("decode", d, w_d), ("prefill", p, w_p))
            for k, v in (
                ("tensor_parallel", lay.tensor_parallel),
                ("attention_data_parallel", lay.data_parallel),
                ("pipeline_parallel", lay.pipeline_parallel),
                ("expert_tensor_parallel", lay.expert_tensor_parallel),
                ("expert_parallel", lay.expert_parallel),
                ("workers", w),
                ("replicate", 1.0 if lay.replicate else 0.0),
                ("redundant_expert_slots", lay.redundant_expert_slots),
                ("overlap_comm", 1.0 if lay.overlap_comm else 0.0),
                ("expert_balanced", 1.0 if pt.expert_balanced else 0.0),
            )
        },
        "workers_assumed": False,
        launch_layouts.CHOICES: None,
        "length_range_ratio": 1.0,
        "cached_input_frac": float(pt.cached_input_frac),
        "measured_ttft_s": None,
        "measured_tpot_s": None,
        "notes": None,
        "reason": None,
    }


def _math_note(hw: dict, chip: str, formats) -> str | None:
    """What the matmuls of weights in a format the chip has no peak for run in (calibration_runs.MATH_FORMATS), said."""
    said = []
    for f in dict.fromkeys(formats):
        peaks = [hw.get(f"peak_{g}_{'op' if g == 'int8' else 'flop'}_per_s") for g in MATH_FORMATS[f]]
        runs_in = next((g for g, v in zip(MATH_FORMATS[f], peaks, strict=True) if v is not None and v > 0), None)
        if runs_in is not None and runs_in != f:
            said.append(f"{chip} has no {f} peak: {f} weights' matmuls run in {runs_in}")
    return "; ".join(said) or None


def _frame(rows: list[dict]) -> pl.DataFrame:
    frame = pl.DataFrame(rows, infer_schema_length=None)
    return frame.with_columns(pl.Series("run_id", [str(i) for i in range(frame.height)]))


def predict_point(db_path: Path, pt: Point) -> dict:
    """The prediction for one configuration as {key: value} (see :data:`QUANTITIES`)."""
    validate(pt)
    with connect_read_only(Path(db_path), current=True) as con:
        model, chip = _resolve(con, pt)
        scenarios = all_scenarios(con)
        if pt.scenario not in scenarios:
            raise EconError(f"no scenario {pt.scenario!r}", f"known scenarios: {', '.join(sorted(scenarios))}")
        s = scenarios[pt.scenario]
        refuse_untimed(con, model)
        models = pl.DataFrame(con.sql(MODELS_SQL))
        hardware = pl.DataFrame(con.sql("select * from hardware"))
        layouts = pl.DataFrame(con.sql("select * from layouts"))
        calibrated = s.efficiency_basis == "calibrated"
        params = pl.DataFrame(con.sql("select * from calibration_parameters")) if calibrated else None
        bands = pl.DataFrame(con.sql("select * from calibration_bands")) if calibrated else None
        seen = pl.DataFrame(con.sql("select arch_model, chip from calibration_seen"))
        lengths = pl.DataFrame(con.sql(LENGTHS_SQL)).row(0, named=True)
        price = s.usd_per_chip_hour
    hw = hardware.filter(pl.col("chip") == chip).row(0, named=True)
    info = models.filter(pl.col("model") == model).row(0, named=True)
    moe = info["num_routed_experts"] is not None
    fmt = pt.weight_format or s.weight_format
    efmt = pt.expert_format or fmt
    sparse = info["sparse_topk_tokens"] is not None  # its engines' only cache is FP8 (launch.SPARSE_CACHE_FORMAT)
    kv = pt.kv_cache_format or (launch.SPARSE_CACHE_FORMAT if sparse else s.kv_cache_format)
    if hw["scale_up_bandwidth_bytes_per_s"] is None or hw["scale_out_bandwidth_bytes_per_s"] is None:
        missing = (
            "scale_up_bandwidth_gb_per_s"
            if hw["scale_up_bandwidth_bytes_per_s"] is None
            else ("scale_out_bandwidth_gbit_per_s")
        )
        raise EconError(
            f"{chip} has no {missing} in data/hardware.csv: communication cannot be timed",
            f"add the chip's {missing} with its source to data/hardware.csv",
        )
    domain = int(hw["scale_up_domain_chips"] or 1)
    shape = {
        "heads": int(info["num_attention_heads"] or 0),
        "layers": int(info["num_layers"]),
        "moe": moe,
        "domain": domain,
        "max_chips": int(s.max_replica_chips),
    }
    decode_options = pool_layouts(pt.decode, "decode", layouts, **shape)
    prefill_options = (
        pool_layouts(pt.prefill, "prefill", layouts, **shape) if pt.mode == "disagg" else [decode_options[0]]
    )
    w_d = pt.decode.workers or 1
    seen_models, seen_chips = set(seen["arch_model"].to_list()), set(seen["chip"].to_list())

    context_note = pl.select(  # a request beyond the model's native context is predicted, and says so
        run_notes.beyond_context(
            pl.lit(pt.input_tokens + pt.output_tokens),
            pl.lit(model),
            pl.lit(info["max_position_embeddings"], dtype=pl.Float64),
        )
    ).item()
    taken = sparse and pt.kv_cache_format is None and kv != s.kv_cache_format
    cache_note = sparse_cache_note(s.kv_cache_format) if taken else None
    said = "; ".join(x for x in (_math_note(hw, chip, (fmt, efmt)), context_note, cache_note) if x) or None

    def run(rows):
        frame = _frame(rows).with_columns(pl.lit(said, dtype=pl.String).alias("notes"))
        return frame, predict_configurations(
            frame,
            models,
            hardware,
            params=params,
            bands=bands,
            seen_models=seen_models,
            seen_chips=seen_chips,
            hbm_reserve_frac=s.hbm_reserve_frac,
            lengths=lengths,
        )

    # 1. the decode pool (TPOT does not depend on the prefill pool): layout and concurrency
    if pt.concurrency is not None:
        users = [pt.concurrency]
    elif pt.batch is not None:
        users = [pt.batch * w_d]
    else:
        users = [float(c) for c in CONCURRENCY]
    # TPOT does not depend on the prefill pool: each decode layout is tried with itself as the prefill layout (one
    # that holds the weights), and the prefill pool is chosen in step 2
    rows = [
        _rows(pt, model, chip, fmt, efmt, kv, d, d, c, w_d, pt.prefill.workers or 1)
        for d in decode_options
        for c in users
    ]
    frame, pred = run(rows)
    ok = (pred["status"] == "ok").to_numpy()
    tpot = pred["predicted_tpot_ms"].to_numpy() / 1e3
    per_chip = _decode_rate(frame, pred)
    if not ok.any():
        why = pred["reason"].drop_nulls()
        raise EconError(
            f"cannot predict the decode pool: {why[0] if why.len() else 'no layout tried runs'}",
            "use more chips per worker (--decode-chips), a smaller batch, shorter lengths or a smaller format",
        )
    meets = ok.copy()
    if pt.tokens_per_s_per_user is not None:
        meets &= 1.0 / tpot >= pt.tokens_per_s_per_user
        if not meets.any():
            fastest = float(np.nanmax(np.where(ok, 1.0 / tpot, np.nan)))
            raise EconError(
                f"unreachable: no layout and concurrency tried gives {pt.tokens_per_s_per_user:g} tokens/s per user; "
                f"the fastest reaches {fastest:,.1f}",
                "ask for a lower --tokens-per-s-per-user, or give the decode pool more chips",
            )
    best = int(np.argmax(np.where(meets, per_chip, -np.inf)))
    d = decode_options[best // len(users)]
    c = users[best % len(users)]
    # 2. the prefill pool (disaggregated): layout and workers meeting the TTFT target with the fewest chips
    target = pt.ttft_s if pt.ttft_s is not None else s.ttft_target_s
    if pt.mode == "disagg":
        w_options = [pt.prefill.workers] if pt.prefill.workers else list(PREFILL_WORKERS)
        rows = [_rows(pt, model, chip, fmt, efmt, kv, d, p, c, w_d, w) for p in prefill_options for w in w_options]
        frame, pred = run(rows)
        ok = (pred["status"] == "ok").to_numpy()
        ttft = pred["predicted_ttft_ms"].to_numpy() / 1e3
        chips = np.array([p.chips * w for p in prefill_options for w in w_options], dtype=float)
        meets = ok & (ttft <= target)
        cost = np.where(meets, chips + ttft / max(target, 1e-9), np.inf)
        if not np.isfinite(cost).any():
            cost = np.where(ok, ttft, np.inf)
        if not np.isfinite(cost).any():
            raise EconError(
                f"the prefill pool cannot run: {pred['reason'].drop_nulls()[0]}",
                "give the prefill pool more chips (--prefill-chips) or a shorter prompt",
            )
        i = int(np.argmin(cost))
        p, w_p = prefill_options[i // len(w_options)], w_options[i % len(w_options)]
    else:
        p, w_p = d, 1
    frame, pred = run([_rows(pt, model, chip, fmt, efmt, kv, d, p, c, w_d, w_p)])
    return result(pt, s, model, chip, fmt, efmt, kv, d, p, w_d, w_p, frame, pred, price, calibrated, target, moe=moe)


def _decode_rate(frame: pl.DataFrame, pred: pl.DataFrame) -> np.ndarray:
    """Output tokens/s per decode chip: the worker's batch over TPOT and its chips."""
    chips = (
        frame["decode_tensor_parallel"] * frame["decode_attention_data_parallel"] * frame["decode_pipeline_parallel"]
    ).to_numpy()
    with np.errstate(all="ignore"):
        return pred["decode_batch_per_worker"].to_numpy() / (pred["predicted_tpot_ms"].to_numpy() / 1e3) / chips
