"""Declarations of the serving analysis's tables: ``serving_curves``, ``serving_summary``, ``serving_sparsity``."""

from __future__ import annotations

from econ.physics import deployment, layout_search, memory, roofline, sharding, weights
from econ.results import Identity, ResultTable
from econ.results import ResultColumn as C

KEYS = (
    C("model", "str", "", "key", "Model (models.model)"),
    C("chip", "str", "", "key", "Accelerator (hardware.chip)"),
    C("number_format", "str", "", "key", "Format of the math (F = the chip's dense peak in it); weights stored in it"),
)
REPLICA = (
    C(
        "replica_chips",
        "float",
        "chips",
        "derived",
        "Chips of the default layout (MoE: DP-attention and experts over the largest power of two <= the scale-up "
        "domain, more domains if needed; dense: the least TP that holds the weights, else two stages)",
        layout_search.default_layout,
    ),
    C("tensor_parallel", "float", "chips", "derived", "TP of the default layout", layout_search.default_layout),
    C("attention_data_parallel", "float", "ranks", "derived", "DP of the default layout", layout_search.default_layout),
    C("pipeline_parallel", "float", "stages", "derived", "PP of the default layout", layout_search.default_layout),
)

CURVES = ResultTable(
    name="serving_curves",
    grain="model x chip x number format x batch x context",
    key=("model", "chip", "number_format", "batch_seqs", "context_tokens"),
    description=(
        "Decode and prefill of every model x chip x number format on its default layout (replica_chips, TP, DP, PP) "
        "over batch 1-65,536 and context 1,024-1,048,576 (powers of two), every step-time term (weights touched, "
        "cache, compute with attention, communication), at each chip's rental price (its on-demand quote, else the "
        "base scenario's) and the base scenario's efficiencies and KV format; times are lower bounds unless named "
        "upper, so throughputs are upper bounds and costs lower bounds; "
        "models without a KV figure (attention 'other') are left out; rows that do not fit are kept, marked"
    ),
    columns=(
        *KEYS,
        *REPLICA,
        C("batch_seqs", "int", "sequences", "key", "Decode batch B, and prompts per prefill pass"),
        C(
            "context_tokens",
            "int",
            "tokens",
            "key",
            "Context L: cached tokens per sequence for decode, prompt length for prefill",
        ),
        C(
            "decode_compute_time_s",
            "float",
            "s",
            "bound",
            "Weight + attention FLOPs / (F*mfu)",
            deployment.decode_terms,
        ),
        C("decode_weight_time_s", "float", "s", "bound", "Weight bytes touched / (W*mbu)", deployment.decode_terms),
        C("decode_kv_time_s", "float", "s", "bound", "Cache bytes read / (W*mbu)", deployment.decode_terms),
        C("decode_memory_time_s", "float", "s", "bound", "Weight + cache time", deployment.decode_terms),
        C("decode_comm_time_s", "float", "s", "bound", "TP, EP and PP communication", deployment.communication_times_s),
        C("decode_overhead_time_s", "float", "s", "assumption", "Per-step overhead (scenario step_overhead_s)"),
        C(
            "decode_step_time_s",
            "float",
            "s",
            "bound",
            "Decode step, lower bound max(compute, memory, communication) + overhead",
            deployment.overlap_bounds,
        ),
        C(
            "decode_upper_bound_time_s",
            "float",
            "s",
            "bound",
            "Decode step, upper bound: every term in series",
            deployment.overlap_bounds,
        ),
        C("decode_compute_bound", "bool", "", "check", "True where compute time >= memory time"),
        C(
            "decode_tokens_per_s",
            "float",
            "tokens/s",
            "bound",
            "Output tokens per second of one replica at the lower-bound step (an upper bound)",
            roofline.tokens_per_s,
        ),
        C(
            "usd_per_chip_hour",
            "float",
            "USD/chip-hour",
            "assumption",
            "Rental price of the chip (serving_summary.usd_per_chip_hour: its on-demand quote, else the scenario's)",
        ),
        C(
            "output_usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "Decode cost per output token at the lower-bound step and the chip's $/chip-hour (a lower bound)",
            roofline.usd_per_token,
        ),
        C(
            "prefill_step_time_s",
            "float",
            "s",
            "bound",
            "Prefill of B prompts of L tokens in one pass, lower bound at the scenario's prefill mfu and mbu",
            deployment.prefill_terms,
        ),
        C("prefill_compute_bound", "bool", "", "check", "True where the prefill pass is compute-bound"),
        C(
            "input_usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "Prefill cost per prompt token at the lower-bound pass time (a lower bound)",
            roofline.usd_per_token,
        ),
        C(
            "memory_per_chip_bytes",
            "float",
            "bytes",
            "derived",
            "HBM one chip needs: its weight shard and its rank's cache at the batch and context",
            sharding.memory_per_chip_bytes,
        ),
        C("fits_in_memory", "bool", "", "check", "Fits every chip within the scenario's hbm_reserve_frac"),
        C("decode_bound", "str", "", "check", "compute, memory or communication: the largest term"),
    ),
    identities=(
        Identity(
            "decode_step_time_s",
            "greatest(decode_compute_time_s, decode_memory_time_s, decode_comm_time_s) + decode_overhead_time_s",
        ),
        Identity(
            "decode_upper_bound_time_s",
            "decode_compute_time_s + decode_memory_time_s + decode_comm_time_s + decode_overhead_time_s",
        ),
        Identity("decode_memory_time_s", "decode_weight_time_s + decode_kv_time_s"),
        Identity("decode_tokens_per_s", "batch_seqs / decode_step_time_s"),
        Identity(
            "output_usd_per_mtok", "decode_step_time_s * replica_chips * usd_per_chip_hour / 3600 / batch_seqs * 1e6"
        ),
        Identity(
            "input_usd_per_mtok",
            "prefill_step_time_s * replica_chips * usd_per_chip_hour / 3600 / (batch_seqs * context_tokens) * 1e6",
        ),
    ),
)

EFFICIENCY_COLUMNS = (
    C("decode_mfu_frac", "float", "", "assumption", "Achieved fraction of peak FLOP/s in decode (scenario)"),
    C("decode_mbu_frac", "float", "", "assumption", "Achieved fraction of HBM bandwidth in decode (scenario)"),
    C("prefill_mfu_frac", "float", "", "assumption", "Achieved fraction of peak FLOP/s in prefill (scenario)"),
    C("prefill_mbu_frac", "float", "", "assumption", "Achieved fraction of HBM bandwidth in prefill (scenario)"),
    C(
        "usd_per_chip_hour",
        "float",
        "USD/chip-hour",
        "assumption",
        "Rental price of the chip: its newest on-demand quote (median of the newest date's, rental_prices), else the "
        "scenario's usd_per_chip_hour (price_basis says which)",
    ),
    C("price_basis", "str", "", "label", "Where usd_per_chip_hour comes from: the quotes, or the scenario"),
    C("kv_cache_format", "str", "", "assumption", "Format of the KV cache (scenario kv_cache_format)"),
)

SUMMARY = ResultTable(
    name="serving_summary",
    grain="model x chip x number format",
    key=("model", "chip", "number_format"),
    description=(
        "Per model x chip x number format: the balance batch, critical context, latency and cost floors and what "
        "fits (lecture a.3-a.4, b, d.4, d.6), at the base scenario's decode/prefill efficiencies and KV format and "
        "each chip's rental price (usd_per_chip_hour, price_basis); a cost floor is blank where not one sequence fits "
        "(R, drain time and W_eff per chip are in hardware_derived; sparsity and weight bytes per model in "
        "model_derived)"
    ),
    columns=(
        *KEYS,
        *REPLICA,
        C(
            "balance_batch_seqs",
            "float",
            "sequences",
            "bound",
            "B*0: decode batch where weight time = compute time at peak FLOP/s and bandwidth, KV ignored (lecture b.1)",
            roofline.balance_batch,
        ),
        C(
            "balance_batch_experts_seqs",
            "float",
            "sequences",
            "bound",
            "R x E/k: the same with the expert ratio",
            roofline.balance_batch,
        ),
        C(
            "balance_batch_achieved_seqs",
            "float",
            "sequences",
            "bound",
            "The lecture's balance batch at the scenario's decode mfu and mbu (KV, attention and layout ignored): "
            "R x mfu/mbu x N_tot/N_act",
            roofline.balance_batch,
        ),
        C(
            "critical_context_tokens",
            "float",
            "tokens",
            "bound",
            "L* at peak: above it decode is memory-bound at every batch (KV at the scenario's kv_cache_format)",
            roofline.critical_context_tokens,
        ),
        C(
            "critical_context_achieved_tokens",
            "float",
            "tokens",
            "bound",
            "L* at the scenario's decode mfu and mbu (what serving_curves show)",
            roofline.critical_context_tokens,
        ),
        C(
            "balance_batch_at_8k_seqs",
            "float",
            "sequences",
            "bound",
            "B*(L) at L = 8,192, at peak; null where L >= L* (memory-bound at every batch)",
            roofline.balance_batch_at_context,
        ),
        C(
            "balance_batch_at_128k_seqs",
            "float",
            "sequences",
            "bound",
            "B*(L) at L = 131,072; null where L >= L*",
            roofline.balance_batch_at_context,
        ),
        C(
            "weight_bytes_touched_batch1_bytes",
            "float",
            "bytes",
            "bound",
            "Weight bytes one decode step of one sequence reads (one copy): all but the routed experts, k per MoE "
            "layer",
            weights.weight_bytes_touched,
        ),
        C(
            "weight_bytes_touched_batch16_bytes",
            "float",
            "bytes",
            "bound",
            "The same for 16 sequences: E(1 - (1 - k/E)^16) distinct experts per MoE layer",
            weights.weight_bytes_touched,
        ),
        C(
            "latency_floor_s",
            "float",
            "s",
            "bound",
            "Decode step of one sequence at the scenario's context on the default layout: no batch is faster (a.3)",
            deployment.decode_terms,
        ),
        C(
            "max_tokens_per_s_per_sequence",
            "float",
            "tokens/s",
            "bound",
            "The fastest a single stream can go on the default layout (accepted tokens / latency floor)",
            deployment.accepted_tokens_per_step,
        ),
        C(
            "cost_floor_at_8k_usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "Decode cost as B -> inf at 8,192 context, at the chip's price (blank where no sequence fits)",
            roofline.decode_cost_floor_usd_per_token,
        ),
        C(
            "cost_floor_at_128k_usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "Decode cost floor at 131,072 context (blank where no sequence fits)",
            roofline.decode_cost_floor_usd_per_token,
        ),
        C(
            "prefill_cost_floor_usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "Input (prefill) cost as the pass grows (lecture f.3), at the scenario's prefill mfu and mbu and the "
            "chip's price (blank where the weights do not fit)",
            roofline.prefill_cost_floor_usd_per_token,
        ),
        C("scenario_context_tokens", "float", "tokens", "assumption", "The scenario's context_tokens"),
        C(
            "cost_floor_at_scenario_context_usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "Decode cost floor at the scenario's context (blank where no sequence fits)",
            roofline.decode_cost_floor_usd_per_token,
        ),
        C(
            "max_batch_at_8k_seqs",
            "float",
            "sequences",
            "derived",
            "Largest batch that fits the default layout at 8,192 context",
            sharding.max_batch_per_replica,
        ),
        C(
            "max_batch_at_128k_seqs",
            "float",
            "sequences",
            "derived",
            "Largest batch that fits the default layout at 131,072 context",
            sharding.max_batch_per_replica,
        ),
        C("replica_hbm_bytes", "float", "bytes", "derived", "HBM of the replica", memory.replica_hbm_bytes),
        *EFFICIENCY_COLUMNS,
    ),
    identities=(Identity("balance_batch_achieved_seqs", "balance_batch_seqs * decode_mfu_frac / decode_mbu_frac"),),
)

SPARSITY = ResultTable(
    name="serving_sparsity",
    grain="model",
    key=("model",),
    description=(
        "The balance batch each reading of sparsity gives at the lecture's round R = 300 (lecture b.2: DeepSeek-V3 is "
        "18 by parameters, 32 by experts, 8 as said); the sparsity ratios themselves are in model_derived"
    ),
    columns=(
        C("model", "str", "", "key", "Model (models.model)"),
        C(
            "lecture_sparsity_ratio",
            "float",
            "",
            "input",
            "The figure said in the lecture (DeepSeek: '32 out of 256' -> 8; the config routes 8 of 256)",
        ),
        C("balance_batch_param_r300_seqs", "float", "sequences", "bound", "300 x N_tot/N_act", roofline.balance_batch),
        C("balance_batch_expert_r300_seqs", "float", "sequences", "bound", "300 x E/k", roofline.balance_batch),
        C(
            "balance_batch_lecture_r300_seqs",
            "float",
            "sequences",
            "bound",
            "300 x the lecture's sparsity (2,400 for DeepSeek)",
            roofline.balance_batch,
        ),
    ),
)
