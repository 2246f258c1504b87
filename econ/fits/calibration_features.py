"""The calibration's inputs: each step's features at peak (:class:`Step`), the measured runs (:class:`Runs`) and
published points (:class:`Points`) built from them, the whole problem with its groups (:class:`Problem`), and the
time of a step at given parameters (:func:`step_seconds`). :mod:`econ.fits.calibration` fits them."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from econ.physics import step_time


@dataclass(frozen=True)
class Step:
    """A step's features at peak, arrays that broadcast (rows, or rows × grid)."""

    dense_s: np.ndarray  # dense GEMM FLOPs / peak
    expert_s: np.ndarray  # routed experts' FLOPs (mean rank) / peak
    imbalance: np.ndarray  # busiest expert rank / mean under uniform routing
    attention_s: np.ndarray  # attention FLOPs / attention peak
    dense_mem_s: np.ndarray  # dense weight bytes / HBM bandwidth
    expert_mem_s: np.ndarray
    kv_mem_s: np.ndarray
    comm_s: np.ndarray  # communication at full link, no latency
    hops: np.ndarray  # latency-bearing collective hops
    layers: np.ndarray
    sequences: np.ndarray  # sequences (and prompts) the rank schedules in the step
    overlap: np.ndarray  # share of communication hidden behind another micro-batch (runs 0; points as stated)
    balanced: np.ndarray  # 1 where a load balancer (EPLB) places the routed experts: uniform routing's busiest rank

    @classmethod
    def from_terms(cls, out: dict) -> Step:
        """Features of :func:`econ.physics.deployment.step_terms` output at idealised settings."""
        peak, attn, bw = out["peak_flop_per_s"], out["attention_peak_flop_per_s"], out["hbm_bandwidth_bytes_per_s"]
        return cls(
            dense_s=(out["weight_flop_per_chip"] - out["expert_flop_per_chip"]) / peak,
            expert_s=out["expert_flop_per_chip"] / peak,
            imbalance=np.asarray(out["expert_imbalance_ratio"], dtype=float),
            attention_s=out["attention_flop_per_chip"] / attn,
            dense_mem_s=out["dense_bytes_read_per_chip"] / bw,
            expert_mem_s=out["expert_bytes_read_per_chip"] / bw,
            kv_mem_s=out["kv_bytes_read_per_chip"] / bw,
            comm_s=np.asarray(out["comm_peak_time_s"], dtype=float),
            hops=out["collective_hops"] + out["collective_hops_scale_out"],
            layers=np.asarray(out["layers_per_step"], dtype=float),
            sequences=np.asarray(out["sequences_per_step"], dtype=float),
            overlap=np.asarray(out.get("comm_overlap_frac", 0.0), dtype=float),
            balanced=np.asarray(out.get("expert_balanced", 0.0), dtype=float),
        )

    def take(self, index) -> Step:
        return Step(**{f.name: np.asarray(getattr(self, f.name))[index] for f in fields(self)})


def step_seconds(step: Step, p: dict) -> np.ndarray:
    """Time of a step at parameters ``p`` (arrays per row) [s]: :func:`econ.physics.step_time.kernel_step_time_s`
    of features already divided by their peaks."""
    return step_time.kernel_step_time_s(
        dense_flop=step.dense_s,
        expert_flop=step.expert_s,
        attention_flop=step.attention_s,
        dense_bytes=step.dense_mem_s,
        expert_bytes=step.expert_mem_s,
        kv_bytes=step.kv_mem_s,
        peak_flop_per_s=1.0,
        attention_peak_flop_per_s=1.0,
        hbm_bandwidth_bytes_per_s=1.0,
        comm_time_at_peak_s=step.comm_s,
        collective_hops=step.hops,
        layers=step.layers,
        sequences=step.sequences,
        expert_imbalance_ratio_=step.imbalance,
        gemm_mfu=p["gemm_mfu_frac"],
        expert_mfu=p["expert_mfu_frac"],
        attention_mfu=p["attention_mfu_frac"],
        mbu=p["hbm_bandwidth_frac"],
        expert_mbu=p["expert_hbm_bandwidth_frac"],
        link_frac=p["link_bandwidth_frac"],
        collective_latency_s=p["collective_latency_s"],
        layer_overhead_s=p["layer_overhead_s"],
        sequence_overhead_s=p["sequence_overhead_s"],
        step_overhead_s=p["step_overhead_s"],
        expert_imbalance_scale=p["expert_imbalance_scale"],
        comm_overlap_frac=step.overlap,
        expert_balanced=step.balanced,
    )


def prefill_parameters(p: dict) -> dict:
    """The parameters a step that carries prompt tokens is timed at (a prefill pass, an aggregated decode step with a
    prompt chunk): its dense GEMMs at ``prefill_gemm_mfu_frac``; a decode step alone's are at ``gemm_mfu_frac``."""
    return {**p, "gemm_mfu_frac": p["prefill_gemm_mfu_frac"]}


@dataclass(frozen=True)
class Runs:
    """Measured runs (one row each): the steps behind their TTFT and TPOT."""

    users: np.ndarray  # concurrency C
    slot_wait_lifetimes: np.ndarray  # request lifetimes a user waits for a decode slot (slot_wait.routed_slot_wait)
    slot_after_prefill: np.ndarray  # 1 where the decode slot is taken once the prompt is prefilled (disaggregated)
    slot_share: np.ndarray  # users per decode slot, C/K >= 1 (K: the sequences the decode pool's KV cache holds)
    output_tokens: np.ndarray  # mean output tokens per request
    accepted: np.ndarray  # tokens kept per decode step per sequence (speculative decoding)
    speculation: np.ndarray  # 1 where launched with speculative decoding of unstated draft length and acceptance
    decode: Step  # the TPOT step without prefill
    decode_chunk: Step  # aggregated: the TPOT step that carries a prefill chunk
    chunk_step_frac: np.ndarray  # share of the decode steps that carry one (0: disaggregated)
    first: Step  # a request's first prefill step (aggregated: beside the decode batch)
    first_steps: np.ndarray  # chunks of the prompt (steps of ``first``)
    first_wait_steps: np.ndarray  # decode steps a prompt is held before its first chunk (attention-DP balance)
    demand: Step  # a full prefill step (the queue's unit of work)
    demand_base: Step  # what that step would take without its prompts (aggregated: the decode batch)
    demand_requests: np.ndarray  # requests one demand step serves across the prefill pool
    log_ttft: np.ndarray  # measured (NaN: not measured)
    log_tpot: np.ndarray

    @property
    def n(self) -> int:
        return int(np.size(self.users))


@dataclass(frozen=True)
class Points:
    """Published throughput points on a batch grid (rows × grid), by regime (calibration_points)."""

    regime: np.ndarray
    decode: Step
    prefill: Step
    decode_tokens: np.ndarray  # sequences of a decode step (rows × grid)
    prefill_tokens: np.ndarray  # prompt tokens of a pass
    decode_fits: np.ndarray
    prefill_fits: np.ndarray
    decode_chips: np.ndarray  # rows × 1
    prefill_chips: np.ndarray
    decode_limit_s: np.ndarray  # rows × 1 (inf: none)
    prefill_limit_s: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    decode_share: np.ndarray
    log_measured: np.ndarray

    @property
    def n(self) -> int:
        return int(np.size(self.log_measured))


@dataclass(frozen=True)
class Problem:
    """Runs and points with their group codes (``codes[kind]``: rows' level index, -1 for none)."""

    runs: Runs
    points: Points
    levels: dict[str, tuple[str, ...]]
    run_codes: dict[str, np.ndarray]
    point_codes: dict[str, np.ndarray]
    run_mask: np.ndarray = field(default=None)  # rows in the fit (None: all)
    point_mask: np.ndarray = field(default=None)
