"""The notebook API: one decode or prefill step of a ``Model`` on a replica of ``Chip`` s under a layout.

    >>> from econ.physics import Chip, Model, decode_step
    >>> h100 = Chip("H100", hbm_capacity_bytes=80e9, hbm_bandwidth_bytes_per_s=3.35e12, peak_bf16_flop_per_s=989e12)
    >>> llama = Model("Llama-2-7B", params_total=6.74e9, params_active=6.74e9, kv_bytes_per_token=524_288)
    >>> step = decode_step(llama, h100, batch=32, context_tokens=2048, chips=1, usd_per_chip_hour=2.0)
    >>> round(step.step_time_s * 1e3, 1), step.bound                   # lower bound, memory-bound
    (14.3, 'memory')

It is :func:`econ.physics.deployment.decode_terms` / :func:`~econ.physics.deployment.prefill_terms` — the functions
every table uses — on one model and chip. Arrays are accepted anywhere a scalar is (``batch=np.arange(1, 4097)``,
``context_tokens=[8192, 131072]`` broadcast like numpy). ``step_time_s`` is the **lower bound**
max(compute, memory, communication) + overhead; ``upper_bound_s`` puts every term in series.

The layout: ``layout=`` a mapping of ``deployment.LAYOUT_KEYS``; or ``chips=G`` (and ``pipeline_stages=P``), the
lecture's replica with every weight split over its G chips; or neither, the default layout
(:func:`econ.physics.layout_search.default_layout`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from econ.formats import bytes_per_value, kv_scale
from econ.physics import deployment, layout_search, roofline
from econ.physics.hardware import Chip
from econ.physics.model import Model
from econ.units import MEGA


def _scalar(x):
    """0-d arrays back to Python scalars so a scalar call reads like a scalar result."""
    x = np.asarray(x)
    return x.item() if x.ndim == 0 else x


@dataclass(frozen=True)
class Step:
    """One pass of a replica. Times in s, throughput in tokens/s, cost in $/token; ``terms`` holds every term."""

    compute_time_s: np.ndarray
    memory_time_s: np.ndarray
    comm_time_s: np.ndarray
    lower_bound_s: np.ndarray
    upper_bound_s: np.ndarray
    bound: np.ndarray
    tokens_per_step: np.ndarray
    chips: float
    pipeline_stages: float
    usd_per_chip_hour: float | None = None
    terms: dict = field(default_factory=dict, repr=False)

    @property
    def step_time_s(self):
        """The reported step time: the lower bound [s]."""
        return self.lower_bound_s

    @property
    def tokens_per_s(self):
        """Tokens per second of the replica at the lower-bound step time."""
        return _scalar(roofline.tokens_per_s(self.tokens_per_step, self.lower_bound_s))

    @property
    def usd_per_token(self):
        """Cost per token at the lower-bound step time [$/token] (None without a price)."""
        if self.usd_per_chip_hour is None:
            return None
        return _scalar(
            roofline.usd_per_token(self.lower_bound_s, self.tokens_per_step, self.chips, self.usd_per_chip_hour)
        )

    @property
    def usd_per_mtok(self):
        """Cost per million tokens [$/MTok] (None without a price)."""
        cost = self.usd_per_token
        return None if cost is None else cost * MEGA


def _chip_arrays(chip: Chip, number_format: str) -> dict:
    def value(x):
        return np.nan if x is None else float(x)

    return {
        "peak_flop_per_s": chip.peak_flop_per_s(number_format),
        "hbm_bandwidth_bytes_per_s": float(chip.hbm_bandwidth_bytes_per_s),
        "hbm_capacity_bytes": float(chip.hbm_capacity_bytes),
        "scale_up_domain_chips": float(chip.scale_up_domain_chips or 1),
        "scale_up_bandwidth_bytes_per_s": value(chip.scale_up_bandwidth_bytes_per_s),
        "scale_out_bandwidth_bytes_per_s": value(chip.scale_out_bandwidth_bytes_per_s),
    }


def lecture_layout(chips, pipeline_stages=1) -> dict:
    """The lecture's replica: ``chips`` G in P stages, every weight split over the G/P chips of a stage."""
    tp = np.asarray(chips, dtype=float) / np.asarray(pipeline_stages, dtype=float)
    return {
        "tensor_parallel": tp,
        "attention_data_parallel": np.ones_like(tp),
        "pipeline_parallel": np.asarray(pipeline_stages, dtype=float) * np.ones_like(tp),
        "replicate_attention": False,
        "replicate_shared_experts": False,
        "replicate_dense": False,
        "replicate_embeddings": False,
        "redundant_expert_slots": 0.0,
    }


def replica(
    model: Model, chip: Chip, *, number_format: str = "bf16", weight_format: str | None = None, context_tokens=8192
) -> dict:
    """The default layout of ``model`` on ``chip`` (:func:`econ.physics.layout_search.default_layout`)."""
    return layout_search.default_layout(
        model.deployment_arrays(),
        _chip_arrays(chip, number_format),
        weight_bytes_per_param=bytes_per_value(weight_format or number_format),
        context_tokens=context_tokens,
    )


def _layout(model, chip, number_format, weight_format, chips, pipeline_stages, layout, context):
    if layout is not None:
        return layout
    if chips is not None:
        return lecture_layout(chips, 1 if pipeline_stages is None else pipeline_stages)
    return replica(model, chip, number_format=number_format, weight_format=weight_format, context_tokens=context)


def _step(model, chip, pool, batch, context, prompt, *, number_format, weight_format, kv_format, layout, run, price):
    settings = {
        "weight_bytes_per_param": bytes_per_value(weight_format or number_format),
        "usd_per_chip_hour": np.nan if price is None else price,
        **run,
    }
    arrays = model.deployment_arrays()
    chip_arrays = _chip_arrays(chip, number_format)
    if pool == "decode":
        out = deployment.decode_terms(
            arrays, chip_arrays, layout, batch, context, kv_scale=kv_scale(kv_format), settings=settings
        )
        tokens = np.multiply(batch, deployment.accepted_tokens_per_step(*_spec(settings)))
    else:
        out = deployment.prefill_terms(
            arrays, chip_arrays, layout, batch, prompt, context, kv_scale=kv_scale(kv_format), settings=settings
        )
        tokens = np.multiply(batch, prompt)
    lower = out["step_time_s"]
    bound = np.where(
        out["compute_bound"], "compute", np.where(out["comm_time_s"] > out["memory_time_s"], "communication", "memory")
    )
    return Step(
        _scalar(out["compute_time_s"]),
        _scalar(out["memory_time_s"]),
        _scalar(out["comm_time_s"]),
        _scalar(lower),
        _scalar(out["step_time_upper_s"]),
        _scalar(bound),
        _scalar(np.broadcast_to(tokens, np.shape(lower))),
        _scalar(out["replica_chips"]),
        _scalar(np.asarray(layout["pipeline_parallel"], dtype=float)),
        price,
        out,
    )


def _spec(settings):
    return settings.get("speculative_tokens", 0.0), settings.get("acceptance_frac", 0.0)


def decode_step(
    model: Model,
    chip: Chip,
    *,
    batch,
    context_tokens,
    number_format: str = "bf16",
    weight_format: str | None = None,
    kv_format: str = "bf16",
    chips=None,
    pipeline_stages=None,
    layout: dict | None = None,
    mfu=1.0,
    mbu=1.0,
    usd_per_chip_hour=None,
    **settings,
) -> Step:
    """One decode step: B sequences each get 1 + n_draft tokens verified, attending to ``context_tokens`` cached ones.

    Parameters
    ----------
    batch : sequences in the step per replica (B); array-like.
    context_tokens : tokens already in each sequence's cache (L); array-like.
    number_format : format of the math; picks F from the chip (bf16, fp8, int8, fp4).
    weight_format : format the weights are stored in (default: ``number_format``).
    kv_format : format of the KV cache (``model_derived`` is at bf16; fp8 halves it).
    chips, pipeline_stages : the lecture's replica (every weight split over G/P chips per stage); see ``layout``.
    layout : a mapping of ``deployment.LAYOUT_KEYS`` (overrides ``chips``); neither: the default layout.
    mfu, mbu : achieved fraction of peak FLOP/s and of HBM bandwidth (1 = the pure roofline).
    usd_per_chip_hour : rental price p, for ``usd_per_token``.
    settings : other ``deployment.SETTINGS`` (link_frac, latencies, step_overhead_s, speculative_tokens, …).
    """
    chosen = _layout(model, chip, number_format, weight_format, chips, pipeline_stages, layout, context_tokens)
    run = {"mfu": mfu, "mbu": mbu, **settings}
    return _step(
        model,
        chip,
        "decode",
        batch,
        context_tokens,
        None,
        number_format=number_format,
        weight_format=weight_format,
        kv_format=kv_format,
        layout=chosen,
        run=run,
        price=usd_per_chip_hour,
    )


def prefill_step(
    model: Model,
    chip: Chip,
    *,
    batch,
    prompt_tokens,
    cached_tokens=0,
    number_format: str = "bf16",
    weight_format: str | None = None,
    kv_format: str = "bf16",
    chips=None,
    pipeline_stages=None,
    layout: dict | None = None,
    mfu=1.0,
    mbu=1.0,
    usd_per_chip_hour=None,
    **settings,
) -> Step:
    """One prefill pass: B prompts of ``prompt_tokens`` new tokens after ``cached_tokens`` cached ones.

    The cache is read and the new tokens' cache written once; attention FLOPs are causal. Cost per token is per
    prompt token. Other arguments as :func:`decode_step`.
    """
    context = np.add(cached_tokens, prompt_tokens)
    chosen = _layout(model, chip, number_format, weight_format, chips, pipeline_stages, layout, context)
    run = {"mfu": mfu, "mbu": mbu, **settings}
    return _step(
        model,
        chip,
        "prefill",
        batch,
        cached_tokens,
        prompt_tokens,
        number_format=number_format,
        weight_format=weight_format,
        kv_format=kv_format,
        layout=chosen,
        run=run,
        price=usd_per_chip_hour,
    )


class Balance(NamedTuple):
    """Where decode turns from weight-bound to compute-bound (lecture b.1–b.3)."""

    critical_batch_ratio: float  # R
    balance_batch_params: float  # B*₀ = R · N_tot/N_act
    balance_batch_experts: float  # R · E/k (NaN for dense)
    critical_context_tokens: float  # L*


def balance(
    model: Model, chip: Chip, *, number_format: str = "bf16", weight_format: str | None = None, kv_format: str = "bf16"
) -> Balance:
    """R, B*₀ by parameters and by experts, and L* for a model on a chip in a number format (lecture closed forms)."""
    peak = chip.peak_flop_per_s(number_format)
    b_w = bytes_per_value(weight_format or number_format)
    r = roofline.critical_batch_ratio(peak, chip.hbm_bandwidth_bytes_per_s, b_w)
    return Balance(
        float(r),
        float(roofline.balance_batch(r, model.params_total, model.params_active)),
        float(r * model.sparsity_expert_ratio),
        float(roofline.critical_context_tokens(r, b_w, model.params_active, model.kv_bytes_per_token_at(kv_format))),
    )
