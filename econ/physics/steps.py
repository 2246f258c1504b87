"""The notebook API: one decode or prefill step of a ``Model`` on a replica of ``Chip`` s.

    >>> from econ.physics import Chip, Model, decode_step
    >>> h100 = Chip("H100", hbm_capacity_bytes=80e9, hbm_bandwidth_bytes_per_s=3.35e12, peak_bf16_flop_per_s=989e12)
    >>> llama = Model("Llama-2-7B", params_total=6.74e9, params_active=6.74e9, kv_bytes_per_token=524_288)
    >>> step = decode_step(llama, h100, batch=32, context_tokens=2048, chips=1, usd_per_chip_hour=2.0)
    >>> round(step.step_time_s * 1e3, 1), step.bound                   # lower bound, memory-bound
    (14.3, 'memory')

Arrays are accepted anywhere a scalar is (``batch=np.arange(1, 4097)``, ``context_tokens=[8192, 131072]``
broadcast like numpy). ``step_time_s`` is the roofline **lower bound** max(compute, memory) —
the lecture's t_step; ``upper_bound_s`` (compute + memory) is the no-overlap bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from econ.formats import bytes_per_value, kv_scale
from econ.physics import roofline
from econ.physics.hardware import Chip
from econ.physics.memory import replica_chips
from econ.physics.model import Model, kv_window_bytes
from econ.units import MEGA


def _scalar(x):
    """0-d arrays back to Python scalars so a scalar call reads like a scalar result."""
    x = np.asarray(x)
    return x.item() if x.ndim == 0 else x


@dataclass(frozen=True)
class Step:
    """The roofline of one forward pass of a replica. Times in s, throughput in tokens/s, cost in $/token.

    ``step_time_s`` is the lower bound (max of compute and memory time, perfect overlap).
    ``usd_per_token`` is computed from the lower bound and is None when no price was given.
    """

    compute_time_s: np.ndarray
    memory_time_s: np.ndarray
    lower_bound_s: np.ndarray
    upper_bound_s: np.ndarray
    bound: np.ndarray
    tokens_per_step: np.ndarray
    chips: float
    pipeline_stages: float
    usd_per_chip_hour: float | None = None

    @property
    def step_time_s(self):
        """The reported step time: the roofline lower bound max(compute, memory) [s]."""
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


class Formats(NamedTuple):
    peak_flop_per_s: float
    weight_bytes_per_param: float
    kv_bytes_per_token: float


def resolve_formats(model: Model, chip: Chip, number_format: str, weight_format: str | None, kv_format: str) -> Formats:
    """F from the chip's peak in the format of the math; b_w from the weight format (default: the math's); b_kv at
    kv_format."""
    peak = chip.peak_flop_per_s(number_format)
    b_w = bytes_per_value(weight_format or number_format)
    return Formats(peak, b_w, model.kv_bytes_per_token_at(kv_format))


def replica(
    model: Model, chip: Chip, *, number_format: str = "bf16", weight_format: str | None = None
) -> tuple[float, float]:
    """(chips G, pipeline stages P) of the smallest replica holding the weights (rule:
    :func:`econ.physics.memory.replica_chips`)."""
    b_w = bytes_per_value(weight_format or number_format)
    g, p = replica_chips(model.params_total, b_w, chip.hbm_capacity_bytes, chip.scale_up_domain_chips)
    return float(g), float(p)


def _pass(
    model,
    chip,
    batch,
    tokens_per_pass,
    kv_tokens,
    *,
    number_format,
    weight_format,
    kv_format,
    chips,
    pipeline_stages,
    mfu,
    mbu,
    usd_per_chip_hour,
    tokens_per_step,
) -> Step:
    f = resolve_formats(model, chip, number_format, weight_format, kv_format)
    if chips is None:
        chips, auto_stages = replica(model, chip, number_format=number_format, weight_format=weight_format)
        pipeline_stages = auto_stages if pipeline_stages is None else pipeline_stages
    pipeline_stages = 1 if pipeline_stages is None else pipeline_stages
    window = kv_window_bytes(
        kv_tokens,
        model.kv_window_bytes_per_sequence * kv_scale(kv_format),
        model.sliding_window_tokens,
    )
    compute = roofline.compute_time_s(batch, tokens_per_pass, model.params_active, chips, f.peak_flop_per_s, mfu=mfu)
    memory = roofline.memory_time_s(
        batch,
        kv_tokens,
        f.kv_bytes_per_token,
        model.params_total,
        f.weight_bytes_per_param,
        chips,
        chip.hbm_bandwidth_bytes_per_s,
        mbu=mbu,
        pipeline_stages=pipeline_stages,
        kv_extra_bytes_per_sequence=window,
    )
    times = roofline.step_bounds(compute, memory)
    return Step(
        _scalar(times.compute_time_s),
        _scalar(times.memory_time_s),
        _scalar(times.lower_bound_s),
        _scalar(times.upper_bound_s),
        _scalar(times.bound),
        _scalar(np.broadcast_to(tokens_per_step, times.lower_bound_s.shape)),
        float(chips),
        float(pipeline_stages),
        usd_per_chip_hour,
    )


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
    mfu=1.0,
    mbu=1.0,
    usd_per_chip_hour=None,
) -> Step:
    """One decode step: B sequences each get one new token, attending to ``context_tokens`` cached tokens.

    t_compute = 2·B·N_act/(G·F·mfu),  t_mem = (P·N_tot·b_w + B·L·b_kv)/(G·W·mbu)  (lecture a.2, d.6).

    Parameters
    ----------
    batch : sequences in the step (B); array-like.
    context_tokens : tokens already in each sequence's KV cache (L); array-like.
    number_format : format of the math; picks F from the chip (bf16, fp8, int8, fp4).
    weight_format : format the weights are stored in (default: ``number_format``); int8 weights with
        bf16 math is the scaling book's "120" case.
    kv_format : format of the KV cache (``models.kv_bytes_per_token`` is at bf16; fp8 halves it).
    chips : chips per replica G (default: the smallest power-of-two replica holding the weights).
    pipeline_stages : P (default 1, or the replica rule's stages when ``chips`` is not given).
    mfu, mbu : achieved fraction of peak FLOP/s and of HBM bandwidth (1 = the pure roofline).
    usd_per_chip_hour : rental price p, for ``usd_per_token``.
    """
    return _pass(
        model,
        chip,
        batch,
        1.0,
        context_tokens,
        number_format=number_format,
        weight_format=weight_format,
        kv_format=kv_format,
        chips=chips,
        pipeline_stages=pipeline_stages,
        mfu=mfu,
        mbu=mbu,
        usd_per_chip_hour=usd_per_chip_hour,
        tokens_per_step=batch,
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
    mfu=1.0,
    mbu=1.0,
    usd_per_chip_hour=None,
) -> Step:
    """One prefill pass: B sequences each process ``prompt_tokens`` new tokens (ℓ) after ``cached_tokens``.

    t_compute = 2·B·ℓ·N_act/(G·F·mfu); t_mem = (P·N_tot·b_w + B·(cached + ℓ)·b_kv)/(G·W·mbu): the weights
    once, the cached KV read and the prompt's KV written once (lecture f.3: the memory time does not
    grow with ℓ beyond that). Cost per token is per prompt token. Other arguments as :func:`decode_step`.
    """
    kv_tokens = np.add(cached_tokens, prompt_tokens)
    return _pass(
        model,
        chip,
        batch,
        prompt_tokens,
        kv_tokens,
        number_format=number_format,
        weight_format=weight_format,
        kv_format=kv_format,
        chips=chips,
        pipeline_stages=pipeline_stages,
        mfu=mfu,
        mbu=mbu,
        usd_per_chip_hour=usd_per_chip_hour,
        tokens_per_step=np.multiply(batch, prompt_tokens),
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
    """R, B*₀ by parameters and by experts, and L* for a model on a chip in a number format."""
    f = resolve_formats(model, chip, number_format, weight_format, kv_format)
    r = roofline.critical_batch_ratio(f.peak_flop_per_s, chip.hbm_bandwidth_bytes_per_s, f.weight_bytes_per_param)
    return Balance(
        float(r),
        float(roofline.balance_batch(r, model.params_total, model.params_active)),
        float(r * model.sparsity_expert_ratio),
        float(roofline.critical_context_tokens(r, f.weight_bytes_per_param, model.params_active, f.kv_bytes_per_token)),
    )
