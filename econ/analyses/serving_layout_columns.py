"""Declarations of ``serving_layouts`` and ``serving_frontier``."""

from __future__ import annotations

from econ.physics import collectives, deployment, layout_search, roofline, sequence, sharding, weights
from econ.physics.layout_search import pareto_optimal
from econ.results import Identity, ResultTable
from econ.results import ResultColumn as C

KEYS = (
    C("model", "str", "", "key", "Model (models.model)"),
    C("chip", "str", "", "key", "Accelerator (hardware.chip)"),
    C("number_format", "str", "", "key", "Format of the math and the weights"),
    C("pool", "str", "", "key", "prefill or decode"),
    C("layout", "str", "", "key", "layouts.layout of a named layout, 'grid' for the search's own"),
    C("replica_chips", "float", "chips", "key", "Chips per replica c = TP·DP·PP", sharding.replica_chips),
    C("tensor_parallel", "float", "chips", "key", "Tensor-parallel chips of an attention rank (TP)"),
    C("attention_data_parallel", "float", "ranks", "key", "Attention data-parallel ranks per stage (DP)"),
    C("pipeline_parallel", "float", "stages", "key", "Pipeline stages (PP)"),
)
POINT = (
    C(
        "expert_parallel",
        "float",
        "chips",
        "derived",
        "Chips the routed experts of a stage spread over (TP·DP; 1 dense)",
        sharding.replica_chips,
    ),
    C("batch_per_replica", "float", "sequences", "key", "Sequences per decode step, or prompts per prefill pass"),
    C("context_tokens", "float", "tokens", "key", "Context each sequence attends to (prefill: cached + new)"),
)
TERMS = (
    C("prompt_tokens", "float", "tokens", "input", "New prompt tokens per prefill sequence (null for decode)"),
    C(
        "weight_bytes_read_per_chip",
        "float",
        "bytes",
        "bound",
        "Weight bytes one chip reads per step: its shard of each class, and of the routed experts the distinct ones "
        "touched",
        weights.distinct_experts,
    ),
    C(
        "kv_bytes_read_per_chip",
        "float",
        "bytes",
        "bound",
        "Cache bytes one chip reads (and writes) per step for its rank's sequences",
        deployment.decode_terms,
    ),
    C(
        "weight_flop_per_chip",
        "float",
        "FLOP",
        "bound",
        "Weight FLOPs per chip per step (2·N_act per token)",
        sharding.weight_flop_per_chip,
    ),
    C(
        "attention_flop_per_chip",
        "float",
        "FLOP",
        "bound",
        "Attention FLOPs per chip per step",
        sequence.decode_attention_flop_per_token,
    ),
    C("compute_time_s", "float", "s", "calibrated", "FLOPs / (F·mfu)", deployment.decode_terms),
    C("weight_time_s", "float", "s", "calibrated", "Weight bytes / (W·mbu)", deployment.decode_terms),
    C("kv_time_s", "float", "s", "calibrated", "Cache bytes / (W·mbu)", deployment.decode_terms),
    C("memory_time_s", "float", "s", "calibrated", "Weight plus cache time", deployment.decode_terms),
    C("tp_comm_time_s", "float", "s", "calibrated", "Tensor-parallel all-reduces", collectives.all_reduce_time_s),
    C("ep_comm_time_s", "float", "s", "calibrated", "Expert dispatch and combine", collectives.dispatch_combine_time_s),
    C("pp_comm_time_s", "float", "s", "calibrated", "Pipeline hand-offs", collectives.pipeline_handoff_time_s),
    C("comm_time_s", "float", "s", "calibrated", "All communication", deployment.communication_times_s),
    C("overhead_time_s", "float", "s", "assumption", "Per-step overhead (scenario step_overhead_s)"),
    C(
        "step_time_s",
        "float",
        "s",
        "calibrated",
        "Step time: in scenario calibrated the kernels in sequence with their fixed costs (kernel_step_time_s), "
        "else step_time_bound_s",
        deployment.overlap_bounds,
    ),
    C(
        "step_time_bound_s",
        "float",
        "s",
        "bound",
        "Step time at the scenario's efficiencies with every term overlapped: max(compute, memory, communication) "
        "+ overhead (a lower bound beside the calibrated step)",
        deployment.overlap_bounds,
    ),
    C(
        "step_time_serial_comm_s",
        "float",
        "s",
        "calibrated",
        "Step time if communication does not overlap: max(compute, memory) + communication + overhead",
        deployment.overlap_bounds,
    ),
    C(
        "step_time_upper_s",
        "float",
        "s",
        "calibrated",
        "Step time, upper bound: every term in series",
        deployment.overlap_bounds,
    ),
    C(
        "tokens_per_s_per_chip",
        "float",
        "tokens/s",
        "calibrated",
        "Tokens out of the pool per second per chip (prefill: prompt tokens) at the step time",
        roofline.tokens_per_s,
    ),
    C(
        "usd_per_mtok",
        "float",
        "USD/MTok",
        "calibrated",
        "Rental cost per million tokens out (prefill: prompt tokens) at the scenario's $/chip-hour",
        roofline.usd_per_token,
    ),
    C("memory_per_chip_bytes", "float", "bytes", "bound", "HBM one chip needs", sharding.memory_per_chip_bytes),
    C(
        "tokens_per_s_per_user",
        "float",
        "tokens/s",
        "calibrated",
        "Decode speed each sequence sees (accepted tokens per step / step time; null for prefill)",
        deployment.accepted_tokens_per_step,
    ),
    C(
        "ttft_s",
        "float",
        "s",
        "calibrated",
        "Time to first token: the prefill pass (null for decode)",
        deployment.prefill_terms,
    ),
    C("bound", "str", "", "label", "The largest term: compute, memory or communication"),
    C("fits", "bool", "", "check", "Weights and cache fit every chip within the scenario's HBM reserve"),
)
LAYOUTS = ResultTable(
    name="serving_layouts",
    grain="model x chip x number format x pool x layout x batch (the answers and the thinned grid)",
    key=(
        "model",
        "chip",
        "number_format",
        "pool",
        "layout",
        "replica_chips",
        "tensor_parallel",
        "attention_data_parallel",
        "pipeline_parallel",
        "batch_per_replica",
    ),
    description=(
        "The layout search of every model x chip x format, per pool: every parallel layout (the search grid and the "
        "named layouts) over decode batches 1-16,384 at the traffic mix's mean decode context and prefill passes of "
        "1-64 prompts of its mean uncached prompt is evaluated, and kept are the answers (the cheapest point meeting "
        "the target, the decode frontier) and a thinned grid for charts (at batches 1, 4, 16, ...: the cheapest grid "
        "layout of each replica size and every named layout), each with every step-time term, the three overlap "
        "rules, throughput, speed, TTFT, $/MTok and memory per chip; only points that fit. The whole grid is econ "
        "sweep's (keep = points). Times at scenario calibrated's efficiencies (per architecture): predictions of what "
        "real systems achieve, within the calibration's error factor (calibration_errors)"
    ),
    columns=(
        *KEYS,
        *POINT,
        *TERMS,
        C("efficiency_basis", "str", "", "label", "calibrated, or bound where no calibration could be fitted"),
        C(
            "meets_target",
            "bool",
            "",
            "check",
            "Decode: speed >= user_speed_target_tokens_per_s; prefill: TTFT <= ttft_target_s",
        ),
        C(
            "cheapest_meeting_target",
            "bool",
            "",
            "derived",
            "The lowest $/MTok of its model x chip x format x pool among the points that meet the target",
            layout_search.cheapest_meeting_target,
        ),
        C(
            "on_frontier",
            "bool",
            "",
            "derived",
            "A decode point of serving_frontier: no other layout and batch is as fast per user with more throughput "
            "per chip",
            pareto_optimal,
        ),
        C(
            "best_of_replica_size",
            "bool",
            "",
            "derived",
            "The lowest $/MTok grid layout of its replica size at this batch (the thinned grid's row)",
            layout_search.cheapest_meeting_target,
        ),
    ),
    identities=(
        Identity("memory_time_s", "weight_time_s + kv_time_s"),
        Identity("comm_time_s", "tp_comm_time_s + ep_comm_time_s + pp_comm_time_s"),
        Identity(
            "step_time_bound_s",
            "greatest(compute_time_s, memory_time_s, comm_time_s) + overhead_time_s",
        ),
        Identity("step_time_upper_s", "compute_time_s + memory_time_s + comm_time_s + overhead_time_s"),
    ),
)
FRONTIER = ResultTable(
    name="serving_frontier",
    grain="model x chip x number format x frontier point (decode)",
    key=(
        "efficiency_basis",
        "model",
        "chip",
        "number_format",
        "layout",
        "replica_chips",
        "tensor_parallel",
        "attention_data_parallel",
        "pipeline_parallel",
        "batch_per_replica",
    ),
    description=(
        "The decode points of serving_layouts no other layout and batch of the same model x chip x format beats on "
        "both tokens/s per user and tokens/s per chip: the curve accelerators are compared by, at the calibrated "
        "efficiencies (what real systems achieve) and, labelled bound, at the roofline (every efficiency 1)"
    ),
    columns=(
        C("efficiency_basis", "str", "", "key", "calibrated (the prediction) or bound (the idealised roofline)"),
        *(c for c in KEYS if c.name != "pool"),
        C("batch_per_replica", "float", "sequences", "key", "Sequences per decode step"),
        C("context_tokens", "float", "tokens", "input", "Decode context"),
        C(
            "tokens_per_s_per_user",
            "float",
            "tokens/s",
            "calibrated",
            "Decode speed per sequence",
            deployment.accepted_tokens_per_step,
        ),
        C(
            "tokens_per_s_per_chip",
            "float",
            "tokens/s",
            "calibrated",
            "Output tokens per second per chip",
            pareto_optimal,
        ),
        C(
            "usd_per_mtok",
            "float",
            "USD/MTok",
            "calibrated",
            "Rental cost per million output tokens",
            roofline.usd_per_token,
        ),
        C("step_time_s", "float", "s", "calibrated", "Step time (lower bound)", deployment.overlap_bounds),
        C("bound", "str", "", "label", "The largest term"),
    ),
)
