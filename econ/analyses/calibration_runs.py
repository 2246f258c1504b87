"""The steps behind a serving run's TTFT and TPOT: configurations (:mod:`econ.analyses.serving_runs`) -> features.

For each configuration (vectorised over rows) the deployment terms at peak
(:func:`econ.physics.deployment.step_terms`, idealised settings) of the steps its TTFT and TPOT are made of
(:class:`econ.fits.calibration.Runs`):

- the **decode step** of one decode worker at its share of the concurrency, ``B = C / W_d`` sequences at the mean
  context ``I + O/2``; in aggregated serving the new prompts' prefill shares steps with decode, ``B/O`` prompts
  of ``I`` tokens a step on average (each request's prompt is prefilled once over its O steps), run as whole
  chunks in the share of the steps :func:`econ.physics.step_time.chunk_step_frac` gives: TPOT is the mean of a step
  alone and a step that carries a chunk (a group of chunks, one per attention rank, where the engine holds prompts
  back to prefill together: :mod:`econ.physics.prompt_hold`);
- the request's **first pass**: aggregated, one chunk of the prompt beside the decode batch (``⌈I/chunk⌉``
  steps), after the decode steps it is held for; disaggregated, one prompt through a prefill worker;
- the **prefill demand** per request: a full prefill step (``chunk`` tokens of prompts per attention rank) over
  the requests it serves (aggregated: less the decode batch's own step).

Engine settings the measured runs used (InferenceX's launch scripts: :mod:`econ.analyses.launch_settings`) and the
benchmark client's lengths (:data:`LENGTH_RATIO`) are stated assumptions, written in ``assumed``.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import assumed_workers, launch_layouts
from econ.analyses import deployment_inputs as inputs
from econ.analyses import launch_settings as launch
from econ.fits.calibration import Runs, Step
from econ.formats import BYTES_PER_VALUE
from econ.physics import deployment, prompt_hold, sharding, slot_wait, step_time

LENGTH_RATIO = 0.8
"""InferenceX's client (vLLM ``benchmark_serving.py --random-range-ratio 0.8``) draws each prompt and output
length uniformly from [0.8·L, L]: the mean is 0.9·L."""

BATCH_WAIT_COLUMNS = ("batch_wait_timeout_iters", "batch_wait_threshold_tokens")
"""A run's launch holding prompts for a step's scheduled tokens (:func:`econ.analyses.launch_settings.batch_wait`):
steps a prompt may wait, scheduled tokens that release it (nulls: it does not hold)."""


def _f(frame: pl.DataFrame, name: str) -> np.ndarray:
    return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()


def _optional(c: pl.DataFrame, name: str, default: float) -> np.ndarray:
    return _f(c, name) if name in c.columns else np.full(c.height, default)


def _layout(c: pl.DataFrame, pool: str) -> dict:
    """A pool's layout arrays; ``<pool>_replicate`` (0: nothing replicated per data-parallel rank, the lecture's
    count) and ``<pool>_redundant_expert_slots`` are optional columns (a named layout sets them)."""
    replicate = _optional(c, f"{pool}_replicate", 1.0) > 0
    return {
        "tensor_parallel": _f(c, f"{pool}_tensor_parallel"),
        "attention_data_parallel": _f(c, f"{pool}_attention_data_parallel"),
        "pipeline_parallel": _f(c, f"{pool}_pipeline_parallel"),
        "expert_tensor_parallel": _f(c, f"{pool}_expert_tensor_parallel"),
        "replicate_attention": replicate,
        "replicate_shared_experts": replicate,
        "replicate_dense": replicate,
        "replicate_embeddings": replicate,
        "redundant_expert_slots": np.nan_to_num(_optional(c, f"{pool}_redundant_expert_slots", 0.0)),
        "overlap_comm": np.nan_to_num(_optional(c, f"{pool}_overlap_comm", 0.0)),
        "expert_balanced": np.nan_to_num(_optional(c, f"{pool}_expert_balanced", 0.0)),
    }


MATH_FORMATS = {
    "fp4": ("fp4", "fp8", "bf16"),
    "fp8": ("fp8", "bf16"),
    "int8": ("int8", "fp8", "bf16"),
    "bf16": ("bf16",),
}
"""The formats a weight format's matmuls may run in, in order: the first the chip has a peak for (FP4 weights on
Hopper run their math in FP8)."""


def _peak(hw: pl.DataFrame, formats: list[str]) -> np.ndarray:
    """The dense peak of each row's math format (:data:`MATH_FORMATS`)."""
    column = {
        "fp4": "hw_peak_fp4_flop_per_s",
        "fp8": "hw_peak_fp8_flop_per_s",
        "int8": "hw_peak_int8_op_per_s",
        "bf16": "hw_peak_bf16_flop_per_s",
    }
    out = np.full(hw.height, np.nan)
    peaks = {f: _f(hw, c) for f, c in column.items()}
    fmt = np.asarray(formats, dtype=object)
    for f, steps in MATH_FORMATS.items():
        pick = np.full(hw.height, np.nan)
        for g in reversed(steps):
            pick = np.where(np.isfinite(peaks[g]), peaks[g], pick)
        out = np.where(fmt == f, pick, out)
    return out


def _stated_limit(c: pl.DataFrame) -> pl.Expr:
    """A decode worker's request limit its launch's recipe states (:data:`econ.analyses.launch_layouts.LIMIT`); the
    single-node scripts' limits (:func:`econ.analyses.launch_settings.max_running_requests`) hold for aggregated runs
    only, a disaggregated decode worker being launched by its multi-node recipe."""
    name = launch_layouts.LIMIT
    return pl.col(name) if name in c.columns else pl.lit(None, dtype=pl.Float64)


def run_inputs(
    configs: pl.DataFrame, models: pl.DataFrame, hardware: pl.DataFrame, largest: pl.DataFrame | None = None
) -> pl.DataFrame:
    """The configurations joined to their architecture (``model_derived``) and chip (``hardware``), with the
    assumptions the steps use: mean lengths, KV format, prefill chunk, and the worker counts of a run that states
    none (:func:`econ.analyses.assumed_workers.assume`, within ``largest``)."""
    c = configs.join(models.rename({"model": "arch_model"}), on="arch_model", how="left", suffix="_m")
    c = c.join(hardware.select(pl.all().name.prefix("hw_")).rename({"hw_chip": "chip"}), on="chip", how="left")
    chunk = launch.prefill_tokens()
    ratio = pl.col("length_range_ratio") if "length_range_ratio" in c.columns else pl.lit(LENGTH_RATIO)
    mean = (1.0 + ratio.fill_null(LENGTH_RATIO)) / 2.0
    kv = (
        pl.when(pl.col("kv_cache_stated"))
        .then(pl.col("kv_cache_format"))
        .otherwise(launch.kv_cache_format(has_date="measured_date" in c.columns))
    )
    c = c.with_columns(
        (pl.col("input_tokens") * mean).alias("mean_input_tokens"),
        (pl.col("output_tokens") * mean).alias("mean_output_tokens"),
        kv.alias("kv_used"),
        pl.coalesce(_stated_limit(c), pl.when(pl.col("mode") == "agg").then(launch.max_running_requests())).alias(
            "max_running_requests"
        ),
        pl.when(chunk > 0).then(chunk).otherwise(pl.col("input_tokens") * mean).alias("chunk_tokens"),
        pl.when(pl.col("mode") == "agg").then(launch.adp_balance_timeout_iters()).alias("adp_timeout_iters"),
        *(e.alias(n) for e, n in zip(launch.batch_wait(c.columns), BATCH_WAIT_COLUMNS)),
    )
    return assumed_workers.assume(c, largest)


def _arrays(c: pl.DataFrame):
    model = inputs.model_arrays(c)
    kv_fp8 = (c["kv_used"] == "fp8").to_numpy()
    chip = {
        "peak_flop_per_s": _peak(c, c["weight_format"].to_list()),
        "attention_peak_flop_per_s": np.where(
            kv_fp8 & np.isfinite(_f(c, "hw_peak_fp8_flop_per_s")),
            _f(c, "hw_peak_fp8_flop_per_s"),
            _f(c, "hw_peak_bf16_flop_per_s"),
        ),
        **{
            k: _f(c, f"hw_{k}")
            for k in deployment.CHIP_KEYS
            if k not in ("peak_flop_per_s", "attention_peak_flop_per_s")
        },
    }
    b_w = np.array([BYTES_PER_VALUE[f] for f in c["weight_format"].to_list()])
    b_e = np.array([BYTES_PER_VALUE[f] for f in c["expert_weight_format"].to_list()])
    run = {
        "weight_bytes_per_param": b_w,
        "expert_weight_bytes_per_param": b_e,
        "dispatch_bytes": np.where(b_w < 2.0, 1.0, 2.0),
        "speculative_tokens": _f(c, "speculative_tokens"),
        "acceptance_frac": _f(c, "acceptance_frac"),
    }
    kv_scale = np.where(kv_fp8, 0.5, 1.0)
    return model, chip, run, kv_scale


def runs_problem(c: pl.DataFrame, *, hbm_reserve_frac: float) -> tuple[Runs, dict[str, np.ndarray]]:
    """The :class:`~econ.fits.calibration.Runs` of rows of :func:`run_inputs` (every row predictable), and per-row
    arrays the result tables report (memory per chip, decode batch per worker, chips).

    A decode worker runs at most the sequences its KV cache holds (HBM less ``hbm_reserve_frac`` and the weights,
    each sequence at ``I + O`` tokens on an engine that admits a request only with room for all of it,
    :data:`econ.analyses.launch_settings.ADMISSION_FULL_ENGINES`, else ``I + O/2``) and the engine's launch limit
    (:data:`econ.analyses.launch_settings.LAUNCH_MAX_RUNNING`); the other users wait for a slot, and with several
    decode workers a router blind to their load makes some wait while another worker has room
    (``slot_wait_lifetimes`` of :class:`~econ.fits.calibration.Runs`,
    :func:`econ.physics.slot_wait.routed_slot_wait`; the wait in :func:`econ.fits.calibration.run_components`). A
    run's assumed decode workers are first raised until their caches hold every user
    (:func:`econ.analyses.assumed_workers.holding_every_user`)."""
    model, chip, run, kv_scale = _arrays(c)
    agg = (c["mode"] == "agg").to_numpy()
    prompt, osl = _f(c, "mean_input_tokens"), _f(c, "mean_output_tokens")
    cached_frac = np.nan_to_num(_optional(c, "cached_input_frac", 0.0))
    cached, isl = prompt * cached_frac, prompt * (1.0 - cached_frac)
    users = _f(c, "concurrency")
    ratio = np.nan_to_num(_optional(c, "length_range_ratio", LENGTH_RATIO), nan=LENGTH_RATIO)
    decode_layout, prefill_layout = _layout(c, "decode"), _layout(c, "prefill")
    w_d, w_p = _f(c, "decode_workers"), _f(c, "prefill_workers")
    context = prompt + osl / 2.0
    full = np.isin(c["engine"].fill_null("").to_numpy(), launch.ADMISSION_FULL_ENGINES)
    capacity = sharding.max_batch_per_replica(
        model,
        decode_layout,
        chip,
        np.where(full, prompt + osl, context),
        weight_bytes_per_param=run["weight_bytes_per_param"],
        kv_scale=kv_scale,
        hbm_reserve_frac=hbm_reserve_frac,
        expert_bytes=run["expert_weight_bytes_per_param"],
    )
    capacity = np.fmin(capacity, _optional(c, "max_running_requests", np.nan))
    w_d = assumed_workers.holding_every_user(w_d, users, capacity, c["workers_assumed"].fill_null(False).to_numpy())
    users_per_worker = users / w_d
    batch = np.where(capacity >= 1.0, np.minimum(users_per_worker, capacity), users_per_worker)
    chunk = np.minimum(_f(c, "chunk_tokens"), isl)
    per_rank = np.maximum(np.floor(_f(c, "chunk_tokens") / isl), 1.0)

    def terms(layout, decode_batch, prompts, prompt_tokens, cached=0.0):
        return deployment.step_terms(
            model,
            chip,
            layout,
            decode_batch=decode_batch,
            context_tokens=context,
            prefill_prompts=prompts,
            prompt_tokens=prompt_tokens,
            cached_tokens=cached,
            kv_scale=kv_scale,
            settings=run,
        )

    dp_d, dp_p = decode_layout["attention_data_parallel"], prefill_layout["attention_data_parallel"]
    timeout = _optional(c, "adp_timeout_iters", np.nan)
    group, wait_steps = prompt_hold.balanced_prefill(batch / osl, dp_d, batch, timeout)
    wait_timeout, wait_tokens = (_optional(c, n, np.nan) for n in BATCH_WAIT_COLUMNS)
    waited, waited_steps = prompt_hold.batch_wait_hold(batch / osl, isl, batch, wait_tokens, wait_timeout)
    waits = np.isfinite(wait_timeout)  # never beside the attention-DP balance: the engine skips it under ADP
    group, wait_steps = np.where(waits, waited, group), np.where(waits, waited_steps, wait_steps)
    # aggregated: B/O prompts a step on average, run as whole chunks in a share of the steps, a group of them at once
    # where the engine holds prompts back to prefill them together
    share = np.where(agg, step_time.chunk_step_frac(batch / osl / group, isl, chunk), 0.0)
    decode = terms(decode_layout, batch, 0.0, isl)
    with np.errstate(invalid="ignore", divide="ignore"):
        decode_chunk = terms(decode_layout, batch, np.where(share > 0, batch / osl / share, 0.0), isl)
    # a held prompt's first chunk runs in one step with the prompts released with it (the scheduler hands them over
    # together); a prompt that is not held runs alone (group 1)
    first_agg = terms(decode_layout, batch, group, chunk, cached)
    first_dis = terms(prefill_layout, 0.0, 1.0, isl, cached)
    full_agg = terms(decode_layout, batch, per_rank * dp_d, isl, cached)
    full_dis = terms(prefill_layout, 0.0, per_rank * dp_p, isl, cached)

    def pick(a: dict, b: dict | None) -> Step:
        sa = Step.from_terms(a)
        sb = Step.from_terms(b) if b is not None else Step(**{k: np.zeros(c.height) for k in Step.__dataclass_fields__})
        return Step(**{k: np.where(agg, getattr(sa, k), getattr(sb, k)) for k in Step.__dataclass_fields__})

    runs = Runs(
        users=users,
        slot_wait_lifetimes=slot_wait.routed_slot_wait(
            users, w_d, np.where(capacity >= 1.0, capacity, np.nan), slot_wait.uniform_length_scv(ratio)
        ),
        slot_after_prefill=(
            ~agg & np.isin(c["engine"].fill_null("").to_numpy(), launch.SLOT_AFTER_PREFILL_ENGINES)
        ).astype(float),
        slot_share=users_per_worker / batch,
        output_tokens=osl,
        accepted=deployment.accepted_tokens_per_step(run["speculative_tokens"], run["acceptance_frac"]),
        speculation=np.asarray(_optional(c, "speculation_launched", 0.0), dtype=float),
        decode=Step.from_terms(decode),
        decode_chunk=Step.from_terms(decode_chunk),
        chunk_step_frac=share,
        first=pick(first_agg, first_dis),
        first_steps=np.where(agg, np.ceil(isl / chunk), 1.0),
        first_wait_steps=np.where(agg, wait_steps, 0.0),
        demand=pick(full_agg, full_dis),
        demand_base=pick(decode, None),  # the decode batch's own step
        demand_requests=np.where(agg, per_rank * dp_d, per_rank * dp_p * w_p),
        log_ttft=np.log(_f(c, "measured_ttft_s")),
        log_tpot=np.log(_f(c, "measured_tpot_s")),
    )

    def memory(layout, sequences):
        return sharding.memory_per_chip_bytes(
            model,
            layout,
            sequences,
            context,
            weight_bytes_per_param=run["weight_bytes_per_param"],
            kv_scale=kv_scale,
            expert_bytes=run["expert_weight_bytes_per_param"],
        )

    weights_only, prefill_only = memory(decode_layout, 1.0), memory(prefill_layout, 1.0)
    chips = sharding.replica_chips(
        decode_layout["tensor_parallel"], decode_layout["attention_data_parallel"], decode_layout["pipeline_parallel"]
    )
    p_chips = sharding.replica_chips(
        prefill_layout["tensor_parallel"],
        prefill_layout["attention_data_parallel"],
        prefill_layout["pipeline_parallel"],
    )
    extra = {
        "decode_batch_per_worker": batch,
        "users_per_decode_worker": users_per_worker,
        "decode_workers": w_d,
        "decode_slots_per_worker": capacity,
        "slot_wait_lifetimes": runs.slot_wait_lifetimes,
        "memory_per_chip_bytes": memory(decode_layout, batch),
        "one_sequence_bytes": np.where(agg, weights_only, np.maximum(weights_only, prefill_only)),  # either pool
        "hbm_capacity_bytes": chip["hbm_capacity_bytes"],
        "system_chips": np.where(agg, chips, w_d * chips + w_p * p_chips),
        "decode_chips": chips,
        "prefill_chips": np.where(agg, chips, p_chips),
        "new_input_tokens": isl,
        "prompt_hold_steps": runs.first_wait_steps,
        "prompts_released_together": np.where(agg, group, 1.0),
        "prompt_batch_wait": waits & agg,
        "bound_tpot_s": ((1.0 - share) * _bound(decode) + share * _bound(decode_chunk)) / runs.accepted,
        "bound_first_pass_s": np.where(agg, _bound(first_agg) * runs.first_steps, _bound(first_dis)),
    }
    return runs, extra


ROUTED_WAIT_LIFETIMES = 0.05
"""A run whose users wait at least this many request lifetimes for a slot on a busy worker (a router blind to load)
is a run that waits, beside one whose workers hold fewer sequences than their share of the users."""


def slot_limited(extra: dict) -> np.ndarray:
    """Whether each run's decode workers hold fewer sequences than their share of the users (its TPOT is that of a
    worker at its limit, where a routed wait alone leaves the TPOT of the even spread)."""
    return np.asarray(extra["decode_batch_per_worker"]) < np.asarray(extra["users_per_decode_worker"]) * (1.0 - 1e-9)


def waits_for_slot(extra: dict) -> np.ndarray:
    """Whether some of each run's users wait for a decode slot: its workers hold fewer sequences than their share of
    the users, or the router's blindness to load costs at least :data:`ROUTED_WAIT_LIFETIMES`."""
    return slot_limited(extra) | (np.asarray(extra["slot_wait_lifetimes"]) >= ROUTED_WAIT_LIFETIMES)


def wait_notes(extra: dict) -> pl.Series:
    """The note of a run whose users wait before their prompt is prefilled (else null): its decode workers hold
    fewer sequences than their share of the users, or its engine holds new prompts back to prefill them together
    (:mod:`econ.physics.prompt_hold`)."""
    both = pl.DataFrame(
        {
            "running": extra["decode_batch_per_worker"],
            "users": extra["users_per_decode_worker"],
            "workers": extra["decode_workers"],
            "slots": extra["decode_slots_per_worker"],
            "wait": extra["slot_wait_lifetimes"],
            "waits": waits_for_slot(extra),
            "full": slot_limited(extra),
            "hold": extra["prompt_hold_steps"],
            "together": extra["prompts_released_together"],
            "balanced": ~np.asarray(extra["prompt_batch_wait"]),
        }
    )
    full = pl.format(
        "each decode worker runs {} of its {} users at once (its KV cache or its engine's launch limit): the others "
        "wait for a slot, and the TTFT includes the wait",
        pl.col("running").round(0).cast(pl.Int64),
        pl.col("users").round(0).cast(pl.Int64),
    )
    routed = pl.format(
        "users routed without regard to load over {} decode workers running at most {} each wait {} request "
        "lifetimes for a slot on a busy worker (slot_wait.routed_slot_wait), and the TTFT includes the wait",
        pl.col("workers").round(0).cast(pl.Int64),
        pl.col("slots").round(0).cast(pl.Int64),
        pl.col("wait").round(2),
    )
    held = pl.format(
        "the engine holds each new prompt {} decode steps on average and prefills {} together, {} (TensorRT-LLM's "
        "{}, as InferenceX launches it): the TTFT includes the wait",
        pl.col("hold").round(1),
        pl.col("together").round(1),
        pl.when("balanced").then(pl.lit("one per attention rank")).otherwise(pl.lit("or once they fill a step")),
        pl.when("balanced").then(pl.lit("attention_dp_config.enable_balance")).otherwise(pl.lit("batch waiting")),
    )
    slot = pl.when("waits").then(pl.when("full").then(full).otherwise(routed))
    return both.select(with_note(slot, pl.when(pl.col("hold") > 0).then(held)).alias("_wait_note")).to_series()


def with_note(notes: pl.Expr, note: pl.Expr) -> pl.Expr:
    """``notes`` with ``note`` (e.g. :func:`wait_notes`) after it, joined by "; " where both are there."""
    return pl.coalesce(pl.concat_str([notes, note], separator="; "), notes, note)


def _bound(out: dict) -> np.ndarray:
    """The lecture's lower bound of a step at peak: max(compute, memory, communication)."""
    lower, _, _ = deployment.overlap_bounds(out["compute_time_s"], out["memory_time_s"], out["comm_time_s"], 0.0)
    return lower


def take(runs: Runs, keep: np.ndarray) -> Runs:
    """The runs of ``keep`` (a boolean mask)."""

    def sub(x):
        return x.take(keep) if isinstance(x, Step) else np.asarray(x)[keep]

    return Runs(**{k: sub(getattr(runs, k)) for k in Runs.__dataclass_fields__})
