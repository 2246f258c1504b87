"""The declared spec of every input table (columns, units, ranges, keys, references).

This module is the contract between ``data/`` and the database: ``data/README.md`` documents
the same columns for people. Vendor units (TFLOP/s, GB, TB/s, Gbit/s, billions) are
converted once here, with the factors from :mod:`econ.units`.
"""

from __future__ import annotations

import polars as pl

from econ import units
from econ.errors import Problem
from econ.load import ceilings
from econ.load.spec import FILE, LINE, Column, TableSpec

VARIANTS = ("standard", "batch", "flex", "priority", "fast")
SOURCES = ("hand", "litellm", "openrouter")
RENTAL_KINDS = ("on_demand", "spot", "capacity_block", "reserved_1y", "reserved_3y", "owner_tco", "market_index")
TIERS = ("hbm", "ddr", "flash", "disk")
ATTENTION = ("mha", "gqa", "mqa", "mla", "hybrid", "other")


def _rows(frame: pl.DataFrame, mask: pl.Expr) -> list[dict]:
    return frame.filter(mask).to_dicts()


# ---------------------------------------------------------------------------- hardware


HARDWARE = TableSpec(
    name="hardware",
    grain="one row per accelerator (per chip, not per server)",
    description="Accelerator specs: dense peak FLOP/s by number format, HBM capacity and bandwidth, networks, power",
    key=("chip",),
    columns=(
        Column("chip", "str", "", "Short accelerator id used everywhere else (e.g. H100)", required=True),
        Column("chip_name", "str", "", "Full product name as the vendor writes it", required=True),
        Column("vendor", "str", "", "Vendor", required=True),
        Column("release_date", "date", "", "First availability date"),
        Column(
            "peak_bf16_tflop_per_s",
            "float",
            "TFLOP/s",
            "Dense BF16 peak, 2 FLOP per multiply-add, no structured sparsity",
            required=True,
            positive=True,
            db_name="peak_bf16_flop_per_s",
            factor=units.TFLOP_PER_S,
            db_unit="FLOP/s",
            ceiling=ceilings.FLOP_PER_S,
        ),
        Column(
            "peak_fp8_tflop_per_s",
            "float",
            "TFLOP/s",
            "Dense FP8 peak (blank if not supported)",
            positive=True,
            db_name="peak_fp8_flop_per_s",
            factor=units.TFLOP_PER_S,
            db_unit="FLOP/s",
            ceiling=ceilings.FLOP_PER_S,
        ),
        Column(
            "peak_fp4_tflop_per_s",
            "float",
            "TFLOP/s",
            "Dense FP4 peak (blank if not supported)",
            positive=True,
            db_name="peak_fp4_flop_per_s",
            factor=units.TFLOP_PER_S,
            db_unit="FLOP/s",
            ceiling=ceilings.FLOP_PER_S,
        ),
        Column(
            "peak_int8_tera_op_per_s",
            "float",
            "TOP/s",
            "Dense INT8 peak (blank if not published)",
            optional=True,
            positive=True,
            db_name="peak_int8_op_per_s",
            factor=units.TERA,
            db_unit="OP/s",
            ceiling=ceilings.FLOP_PER_S,
        ),
        Column(
            "hbm_capacity_gb",
            "float",
            "GB",
            "HBM capacity per chip (decimal GB)",
            required=True,
            positive=True,
            db_name="hbm_capacity_bytes",
            factor=units.GB,
            db_unit="bytes",
            ceiling=ceilings.HBM_BYTES,
        ),
        Column(
            "hbm_bandwidth_tb_per_s",
            "float",
            "TB/s",
            "HBM bandwidth per chip",
            required=True,
            positive=True,
            db_name="hbm_bandwidth_bytes_per_s",
            factor=units.TB_PER_S,
            db_unit="bytes/s",
            ceiling=ceilings.HBM_BANDWIDTH,
        ),
        Column(
            "scale_up_domain_chips",
            "int",
            "chips",
            "Chips in one scale-up (NVLink/ICI/NeuronLink) domain",
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(
            "scale_up_bandwidth_gb_per_s",
            "float",
            "GB/s",
            "Scale-up bandwidth per chip, one direction (half the bidirectional figure)",
            positive=True,
            db_name="scale_up_bandwidth_bytes_per_s",
            factor=units.GB_PER_S,
            db_unit="bytes/s",
            ceiling=ceilings.SCALE_UP_BANDWIDTH,
        ),
        Column(
            "scale_out_bandwidth_gbit_per_s",
            "float",
            "Gbit/s",
            "Scale-out (NIC) bandwidth per chip, one direction",
            positive=True,
            db_name="scale_out_bandwidth_bytes_per_s",
            factor=units.GBIT_PER_S,
            db_unit="bytes/s",
            ceiling=ceilings.SCALE_OUT_BANDWIDTH,
        ),
        Column(
            "chips_per_node",
            "int",
            "chips",
            "Chips per server/tray as sold (8 for HGX, 4 for a GB200 tray)",
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(
            "chips_per_rack",
            "int",
            "chips",
            "Chips per rack in the vendor's reference rack",
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(
            "tdp_w",
            "float",
            "W",
            "Thermal design power per chip",
            positive=True,
            ceiling=ceilings.CHIP_POWER_W,
        ),
        Column("source_url", "str", "", "Primary source of the row's figures", required=True),
        Column("notes", "str", "", "How figures were read; other sources"),
    ),
    min_rows=1,
)

# ---------------------------------------------------------------------------- rental prices

RENTAL_PRICES = TableSpec(
    name="rental_prices",
    grain="one row per chip x seller x price kind x quote date",
    description="Dated $/chip-hour quotes: on-demand, reserved, capacity blocks, market indices, owner TCO",
    key=("chip", "provider", "kind", "as_of"),
    columns=(
        Column("chip", "str", "", "Accelerator id", required=True, ref=("hardware", "chip")),
        Column("provider", "str", "", "Who quotes the price (cloud, neocloud, index)", required=True),
        Column("kind", "str", "", "Price kind", required=True, allowed=RENTAL_KINDS),
        Column(
            "usd_per_chip_hour",
            "float",
            "USD/chip-hour",
            "Price per chip per hour",
            required=True,
            positive=True,
            ceiling=ceilings.USD_PER_CHIP_HOUR,
        ),
        Column("as_of", "date", "", "Date the quote refers to", required=True),
        Column("source_url", "str", "", "Where the quote was read", required=True),
        Column("notes", "str", "", "Instance type, region, how the per-chip figure was derived"),
    ),
)

# ---------------------------------------------------------------------------- models


def _check_models(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    problems = []
    for row in _rows(frame, pl.col("params_active") > pl.col("params_total")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "params_active_b",
                "active parameters exceed total parameters",
                "check params_active_b and params_total_b",
            )
        )
    for row in _rows(frame, pl.col("experts_per_token") > pl.col("num_routed_experts")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "experts_per_token",
                "more active experts than routed experts",
                "check experts_per_token and num_routed_experts",
            )
        )
    layers = pl.col("num_layers")
    typed = pl.sum_horizontal(
        pl.col("num_full_attention_layers").fill_null(0),
        pl.col("num_sliding_window_layers").fill_null(0),
        pl.col("num_linear_attention_layers").fill_null(0),
    )
    consistency = (
        (
            pl.col("num_kv_heads") > pl.col("num_attention_heads"),
            "num_kv_heads",
            "more KV heads than query heads",
            "KV heads are at most the query heads (equal for MHA, fewer for GQA/MQA)",
        ),
        (
            pl.col("sliding_num_kv_heads") > pl.col("num_attention_heads"),
            "sliding_num_kv_heads",
            "more KV heads in the sliding layers than query heads",
            "check sliding_num_kv_heads against num_attention_heads",
        ),
        (
            typed > layers,
            "num_full_attention_layers",
            "full-attention, sliding-window and linear-attention layers add up to more than num_layers",
            "each layer has one kind; their counts add up to at most num_layers",
        ),
        (
            pl.col("num_dense_layers") > layers,
            "num_dense_layers",
            "more dense layers than layers",
            "check num_dense_layers against num_layers",
        ),
    )
    for mask, column, what, hint in consistency:
        for row in _rows(frame, mask):
            problems.append(Problem(row[FILE], row[LINE], column, what, hint))
    mla_missing = (pl.col("attention") == "mla") & (
        pl.col("kv_lora_rank").is_null() | pl.col("qk_rope_head_dim").is_null()
    )
    for row in _rows(frame, mla_missing):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "kv_lora_rank",
                "MLA needs kv_lora_rank and qk_rope_head_dim",
                "fill both from the model's config.json",
            )
        )
    return problems


MODELS = TableSpec(
    name="models",
    grain="one row per open-weight model architecture",
    description="Open-weight architectures from config.json: parameters, attention layout, experts, KV-cache bytes "
    "per token (computed)",
    key=("model",),
    columns=(
        Column("model", "str", "", "Model name", required=True),
        Column("hf_repo", "str", "", "Hugging Face repository id (joins OpenRouter's hugging_face_id)"),
        Column("lab", "str", "", "Lab that released the model", required=True),
        Column("release_date", "date", "", "Release date of the weights"),
        Column(
            "attention",
            "str",
            "",
            "Attention of the full-context layers (hybrid: some layers are sliding-window or linear)",
            required=True,
            allowed=ATTENTION,
        ),
        Column(
            "params_total_b",
            "float",
            "billion params",
            "Total parameters",
            required=True,
            positive=True,
            db_name="params_total",
            factor=units.BILLION,
            db_unit="params",
            ceiling=ceilings.PARAMS,
        ),
        Column(
            "params_active_b",
            "float",
            "billion params",
            "Parameters active per token",
            required=True,
            positive=True,
            db_name="params_active",
            factor=units.BILLION,
            db_unit="params",
            ceiling=ceilings.PARAMS,
        ),
        Column(
            "num_layers",
            "int",
            "layers",
            "Transformer blocks (num_hidden_layers)",
            positive=True,
            ceiling=ceilings.LAYERS,
        ),
        Column(
            "hidden_size",
            "int",
            "",
            "Model width d_model",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "num_attention_heads",
            "int",
            "heads",
            "Query heads per layer",
            positive=True,
            ceiling=ceilings.HEADS,
        ),
        Column(
            "num_kv_heads",
            "int",
            "heads",
            "KV heads per full-attention layer (MHA: = query heads)",
            positive=True,
            ceiling=ceilings.HEADS,
        ),
        Column(
            "head_dim",
            "int",
            "",
            "Query/key head dimension (MLA: qk_nope + qk_rope)",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "v_head_dim",
            "int",
            "",
            "Value head dimension when it differs from head_dim",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "kv_lora_rank",
            "int",
            "",
            "MLA compressed KV latent dimension",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "qk_rope_head_dim",
            "int",
            "",
            "MLA decoupled RoPE key dimension",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "q_lora_rank",
            "int",
            "",
            "MLA query latent dimension",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "num_full_attention_layers",
            "int",
            "layers",
            "Layers whose KV cache grows with context (blank: all layers)",
            min=0,
            ceiling=ceilings.LAYERS,
        ),
        Column(
            "num_sliding_window_layers",
            "int",
            "layers",
            "Sliding-window or chunked-attention layers",
            min=0,
            ceiling=ceilings.LAYERS,
        ),
        Column(
            "sliding_window_tokens",
            "int",
            "tokens",
            "Window (or chunk) of the sliding layers",
            positive=True,
            ceiling=ceilings.TOKENS,
        ),
        Column(
            "sliding_num_kv_heads",
            "int",
            "heads",
            "KV heads of the sliding layers when they differ",
            positive=True,
            ceiling=ceilings.HEADS,
        ),
        Column(
            "sliding_head_dim",
            "int",
            "",
            "K and V head dimension of the sliding layers when it differs",
            positive=True,
            ceiling=ceilings.WIDTH,
        ),
        Column(
            "num_linear_attention_layers",
            "int",
            "layers",
            "Linear-attention / SSM layers (fixed-size state)",
            min=0,
            ceiling=ceilings.LAYERS,
        ),
        Column(
            "num_routed_experts",
            "int",
            "experts",
            "Routed experts per MoE layer (blank: dense)",
            positive=True,
            ceiling=ceilings.EXPERTS,
        ),
        Column(
            "num_shared_experts",
            "int",
            "experts",
            "Always-active shared experts per MoE layer",
            min=0,
            ceiling=ceilings.EXPERTS,
        ),
        Column(
            "experts_per_token",
            "int",
            "experts",
            "Routed experts activated per token",
            positive=True,
            ceiling=ceilings.EXPERTS,
        ),
        Column(
            "num_dense_layers",
            "int",
            "layers",
            "Dense (non-MoE) FFN layers",
            min=0,
            ceiling=ceilings.LAYERS,
        ),
        Column(
            "max_position_embeddings",
            "int",
            "tokens",
            "Native context from config.json",
            positive=True,
            ceiling=ceilings.TOKENS,
        ),
        Column(
            "pretrain_tokens_t",
            "float",
            "trillion tokens",
            "Reported pre-training tokens",
            positive=True,
            db_name="pretrain_tokens",
            factor=units.TRILLION,
            db_unit="tokens",
            ceiling=ceilings.TRAINING_TOKENS,
        ),
        Column("pretrain_tokens_source_url", "str", "", "Where the pre-training token count was reported"),
        Column("source_url", "str", "", "config.json the architecture was read from", required=True),
        Column("notes", "str", "", "Caveats"),
    ),
    checks=(_check_models,),
    min_rows=1,
)

# ---------------------------------------------------------------------------- prices

_PRICE_COLUMNS = (
    Column(
        "provider",
        "str",
        "",
        "Seller of the tokens at this price (LiteLLM's litellm_provider for imports)",
        required=True,
    ),
    Column("model", "str", "", "Model id as the seller names it", required=True),
    Column("variant", "str", "", "Service variant", required=True, allowed=VARIANTS),
    Column(
        "tier_min_prompt_tokens",
        "int",
        "tokens",
        "Long-context tier: the whole request is billed at this row once the prompt exceeds this many tokens (0 = "
        "base tier)",
        required=True,
        min=0,
        ceiling=ceilings.TOKENS,
    ),
    Column(
        "input_usd_per_mtok",
        "float",
        "USD/MTok",
        "Uncached input (prompt) price",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "output_usd_per_mtok",
        "float",
        "USD/MTok",
        "Output (completion) price",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_read_usd_per_mtok",
        "float",
        "USD/MTok",
        "Prompt-cache hit (read) price",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_write_5m_usd_per_mtok",
        "float",
        "USD/MTok",
        "Prompt-cache write price, default (5-minute) retention",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_write_1h_usd_per_mtok",
        "float",
        "USD/MTok",
        "Prompt-cache write price, 1-hour retention",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_write_12h_usd_per_mtok",
        "float",
        "USD/MTok",
        "Prompt-cache write price, 12-hour retention",
        min=0,
        optional=True,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_storage_usd_per_mtok_hour",
        "float",
        "USD/MTok/hour",
        "Explicit-cache storage price per million tokens per hour",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "max_input_tokens",
        "int",
        "tokens",
        "Largest prompt the seller accepts",
        positive=True,
        ceiling=ceilings.TOKENS,
    ),
    Column(
        "speed_ratio",
        "float",
        "ratio",
        "Published output speed of this variant over the standard variant (fast mode)",
        positive=True,
        ceiling=ceilings.SPEED_RATIO,
    ),
    Column("hugging_face_id", "str", "", "Hugging Face repo of the open weights served (joins models.hf_repo)"),
    Column("source_url", "str", "", "Page the price was read from", required=True),
)


def _check_price_periods(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """to_date after from_date; periods of one price key do not overlap."""
    problems = []
    for row in _rows(frame, pl.col("to_date") <= pl.col("from_date")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "to_date",
                f"to_date {row['to_date']} is not after from_date {row['from_date']}",
                "to_date is exclusive and must be later than from_date",
            )
        )
    key = ["provider", "model", "variant", "tier_min_prompt_tokens"]
    ordered = frame.sort([*key, "from_date"]).with_columns(
        pl.col("from_date").shift(-1).over(key).alias("_next_from"),
        pl.col(LINE).shift(-1).over(key).alias("_next_line"),
    )
    overlap = pl.col("_next_from").is_not_null() & (
        pl.col("to_date").is_null() | (pl.col("to_date") > pl.col("_next_from"))
    )
    for row in _rows(ordered, overlap):
        problems.append(
            Problem(
                row[FILE],
                row["_next_line"],
                "from_date",
                f"price period from {row['_next_from']} overlaps the period from {row['from_date']} on line "
                f"{row[LINE]}",
                f"set to_date on line {row[LINE]} to {row['_next_from']} or earlier",
            )
        )
    return problems


def _check_tiers(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """Within one model, variant and period, tiers start at 0 and thresholds increase down the file."""
    problems = []
    group = ["provider", "model", "variant"] + (["from_date"] if "from_date" in frame.columns else [])
    ordered = frame.sort(LINE).with_columns(
        pl.col("tier_min_prompt_tokens").shift(1).over(group).alias("_prev_tier"),
        pl.col("tier_min_prompt_tokens").min().over(group).alias("_min_tier"),
        pl.col(LINE).min().over(group).alias("_first_line"),
    )
    for row in _rows(ordered, pl.col("_prev_tier") >= pl.col("tier_min_prompt_tokens")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "tier_min_prompt_tokens",
                f"tier threshold {row['tier_min_prompt_tokens']} does not increase (previous tier: "
                f"{row['_prev_tier']})",
                "list a model's tiers in increasing order of tier_min_prompt_tokens",
            )
        )
    for row in _rows(ordered, (pl.col("_min_tier") > 0) & (pl.col(LINE) == pl.col("_first_line"))):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "tier_min_prompt_tokens",
                f"{row['model']} ({row['variant']}) has tiers but no base tier",
                "add the row with tier_min_prompt_tokens 0",
            )
        )
    over = pl.col("max_input_tokens").is_not_null() & (pl.col("tier_min_prompt_tokens") >= pl.col("max_input_tokens"))
    for row in _rows(ordered, over):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "tier_min_prompt_tokens",
                f"tier threshold {row['tier_min_prompt_tokens']} is not below max_input_tokens "
                f"{row['max_input_tokens']}",
                "a tier must start below the largest accepted prompt",
            )
        )
    return problems


PRICES = TableSpec(
    name="prices",
    grain="one row per provider x model x variant x context tier x effective period (hand-kept, first-party)",
    description="First-party API prices kept by hand, with effective periods",
    key=("provider", "model", "variant", "tier_min_prompt_tokens", "from_date"),
    columns=(
        *_PRICE_COLUMNS[:4],
        Column("from_date", "date", "", "First day the price applies (inclusive)", required=True),
        Column("to_date", "date", "", "First day the price no longer applies (exclusive; blank = still current)"),
        *_PRICE_COLUMNS[4:],
        Column("notes", "str", "", "Caveats"),
    ),
    checks=(_check_price_periods, _check_tiers),
)

PRICE_SNAPSHOT = TableSpec(
    name="price_snapshot",
    grain="one row per provider x model x variant x context tier, in one dated import of a public price map",
    description="Normalised rows of one LiteLLM or OpenRouter price map, as imported",
    key=("provider", "model", "variant", "tier_min_prompt_tokens"),
    columns=(
        *_PRICE_COLUMNS,
        Column("source_key", "str", "", "Entry key in the imported file", required=True),
    ),
    checks=(_check_tiers,),
)

# ---------------------------------------------------------------------------- memory tiers

MEMORY_TIERS = TableSpec(
    name="memory_tiers",
    grain="one row per memory technology x device",
    description="Where a KV cache can be held: capacity, bandwidth to the accelerator and cost per hour of one device",
    key=("tier", "device"),
    columns=(
        Column("tier", "str", "", "Memory tier", required=True, allowed=TIERS),
        Column("device", "str", "", "The device the figures describe", required=True),
        Column(
            "capacity_gb",
            "float",
            "GB",
            "Capacity of one device",
            required=True,
            positive=True,
            db_name="capacity_bytes",
            factor=units.GB,
            db_unit="bytes",
            ceiling=ceilings.TIER_BYTES,
        ),
        Column(
            "bandwidth_gb_per_s",
            "float",
            "GB/s",
            "Read bandwidth of one device towards the accelerator",
            required=True,
            positive=True,
            db_name="bandwidth_bytes_per_s",
            factor=units.GB_PER_S,
            db_unit="bytes/s",
            ceiling=ceilings.HBM_BANDWIDTH,
        ),
        Column(
            "usd_per_hour",
            "float",
            "USD/hour",
            "Cost of one device per hour (rental share or amortised purchase)",
            required=True,
            positive=True,
            ceiling=ceilings.TIER_USD_PER_HOUR,
        ),
        Column("cost_basis", "str", "", "How usd_per_hour was derived", required=True),
        Column("as_of", "date", "", "Date of the price", required=True),
        Column("source_url", "str", "", "Source of capacity, bandwidth and price", required=True),
        Column("notes", "str", "", "Caveats"),
    ),
    min_rows=1,
)

# ---------------------------------------------------------------------------- scenarios


def _check_scenarios(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    problems = []
    for row in _rows(frame, pl.col("low") > pl.col("value")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "low",
                f"low {row['low']:g} is above value {row['value']:g}",
                "low <= value <= high",
            )
        )
    for row in _rows(frame, pl.col("high") < pl.col("value")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "high",
                f"high {row['high']:g} is below value {row['value']:g}",
                "low <= value <= high",
            )
        )
    problems += _check_scenario_ranges(frame)
    neither = pl.col("value").is_null() & pl.col("text").is_null()
    both = pl.col("value").is_not_null() & pl.col("text").is_not_null()
    for row in _rows(frame, neither | both):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "value",
                "give either value (a number) or text (a choice), not both or neither",
                "numbers go in value, categorical choices such as a chip id in text",
            )
        )
    if "base" not in frame["scenario"].to_list():  # the spec's min_rows keeps the frame from being empty
        problems.append(
            Problem(
                frame[FILE][0],
                None,
                "scenario",
                "there is no base scenario",
                "name the lecture's assumptions scenario 'base'; other scenarios override some of its values",
            )
        )
    return problems


EFFICIENCY = r"(^|_)(mfu|mbu)(_|$)|efficiency"
"""Scenario names that are efficiencies (achieved over peak): in (0, 1]."""
SCENARIO_CEILINGS = {
    "USD/chip-hour": ceilings.USD_PER_CHIP_HOUR,
    "tokens/s": ceilings.TOKENS_PER_S,
    "chips": ceilings.CHIPS,
    "params": ceilings.PARAMS,
    "tokens": ceilings.TOKENS,
}


def _check_scenario_ranges(frame: pl.DataFrame) -> list[Problem]:
    """Efficiencies in (0, 1]; fractions in [0, 1]; every other quantity positive and below its unit's ceiling."""
    efficiency = pl.col("name").str.contains(EFFICIENCY)
    fraction = pl.col("unit") == "fraction"
    problems = []
    for column in ("value", "low", "high"):
        x = pl.col(column)
        rules = [
            (efficiency & ((x <= 0) | (x > 1)), "an efficiency (achieved over peak) must be in (0, 1]"),
            (~efficiency & fraction & ((x < 0) | (x > 1)), "a fraction must be in [0, 1]"),
            (~efficiency & ~fraction & (x <= 0), "must be greater than 0 (a rate, price, count or size)"),
        ]
        for unit, ceiling in SCENARIO_CEILINGS.items():
            rules.append(
                ((pl.col("unit") == unit) & (x > ceiling.value), f"must be at most {ceiling.value:g}: {ceiling.why}")
            )
        for mask, hint in rules:
            for row in _rows(frame, x.is_not_null() & mask):
                problems.append(
                    Problem(
                        row[FILE],
                        row[LINE],
                        column,
                        f"{row['name']} = {row[column]:g} {row['unit']} is out of range",
                        hint,
                    )
                )
    return problems


SCENARIOS = TableSpec(
    name="scenarios",
    grain="one row per scenario x assumption",
    description="Stated assumptions (the lecture's are scenario 'base'), each with unit, low/high range and rationale",
    key=("scenario", "name"),
    columns=(
        Column(
            "scenario",
            "str",
            "",
            "Scenario name; 'base' is the lecture's, others override some of its values",
            required=True,
        ),
        Column("name", "str", "", "Assumption name (its unit is in the unit column)", required=True),
        Column("value", "float", "", "Central value (blank for a categorical assumption, which uses text)"),
        Column("text", "str", "", "Value of a categorical assumption, e.g. a chip id or a number format"),
        Column("unit", "str", "", "Unit of value, low and high ('chip', 'format' for categorical ones)", required=True),
        Column("low", "float", "", "Low end of the plausible range"),
        Column("high", "float", "", "High end of the plausible range"),
        Column("alternatives", "str", "", "Other plausible choices of a categorical assumption, separated by |"),
        Column("rationale", "str", "", "Why this value (quote or reasoning)", required=True),
        Column("source_url", "str", "", "Where the value comes from", required=True),
    ),
    checks=(_check_scenarios,),
    min_rows=1,
)

# ---------------------------------------------------------------------------- scaling-law points

SCALING_LAW_POINTS = TableSpec(
    name="scaling_law_points",
    grain="one row per training run read off a published scaling-law figure",
    description="Training runs behind a published scaling law (model size, training compute, final loss), the data the "
    "training analysis refits; Chinchilla's Figure 4 as extracted by Epoch AI",
    key=("study", "params", "training_flop"),
    columns=(
        Column("study", "str", "", "Which figure/paper the point comes from", required=True),
        Column(
            "params",
            "float",
            "params",
            "Model size N",
            required=True,
            positive=True,
            ceiling=ceilings.PARAMS,
        ),
        Column(
            "training_flop",
            "float",
            "FLOP",
            "Training compute C (tokens D = C / 6N)",
            required=True,
            positive=True,
            ceiling=ceilings.TRAINING_FLOP,
        ),
        Column(
            "loss_nats_per_token",
            "float",
            "nats/token",
            "Final training loss",
            required=True,
            positive=True,
            ceiling=ceilings.LOSS_NATS,
        ),
        Column("source_url", "str", "", "Where the point was extracted", required=True),
    ),
)

# ---------------------------------------------------------------------------- deployments

BATCH_POLICIES = ("balance_multiple", "speed_target")
NUMBER_FORMATS = ("bf16", "fp8", "int8", "fp4")


def _check_deployments(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """A price mapping names provider and model together; a scenario's traffic shares add up to at most 1."""
    problems = []
    half = pl.col("price_provider").is_null() != pl.col("price_model").is_null()
    for row in _rows(frame, half):
        missing = "price_model" if row["price_model"] is None else "price_provider"
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                missing,
                "a price mapping needs both price_provider and price_model",
                "fill both (as in prices.provider and prices.model), or leave both blank to match by hf_repo",
            )
        )
    totals = frame.group_by("scenario").agg(
        pl.col("traffic_share_frac").sum().alias("_total"),
        pl.col(LINE).max().alias("_last"),
        pl.col(FILE).first().alias("_file"),
    )
    for row in totals.filter(pl.col("_total") > 1.0 + 1e-9).to_dicts():
        problems.append(
            Problem(
                row["_file"],
                row["_last"],
                "traffic_share_frac",
                f"traffic shares of scenario {row['scenario']} add up to {row['_total']:g}",
                "each share is a fraction of the scenario's tokens_served_per_s; their sum must be <= 1",
            )
        )
    return problems


DEPLOYMENTS = TableSpec(
    name="deployments",
    grain="one row per scenario x deployment (a model served on a chip with a batch policy and a share of the traffic)",
    description="How a scenario's traffic is served: model, chip, number format, replica size, batch policy, traffic "
    "share and the list price it is sold at",
    key=("scenario", "deployment"),
    columns=(
        Column(
            "scenario",
            "str",
            "",
            "Scenario the deployment belongs to (a scenario without rows uses base's)",
            required=True,
            ref=("scenarios", "scenario"),
        ),
        Column("deployment", "str", "", "Short id of the deployment", required=True),
        Column("model", "str", "", "Model served", required=True, ref=("models", "model")),
        Column("chip", "str", "", "Accelerator it is served on", required=True, ref=("hardware", "chip")),
        Column(
            "number_format",
            "str",
            "",
            "Format of the math and the weights (blank: the scenario's weight_format)",
            allowed=NUMBER_FORMATS,
        ),
        Column(
            "replica_chips",
            "int",
            "chips",
            "Chips per replica, prefill and decode alike (blank: the smallest power of two "
            "holding the weights and the KV of the balance-multiple batch, within one scale-up domain)",
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(
            "batch_policy",
            "str",
            "",
            "Decode batch: balance_multiple (the scenario's batch_multiple_over_balance x B*0) or "
            "speed_target (the largest batch giving user_speed_target_tokens_per_s per user); both capped by memory",
            required=True,
            allowed=BATCH_POLICIES,
        ),
        Column(
            "traffic_share_frac",
            "float",
            "fraction",
            "Share of the scenario's tokens_served_per_s this deployment serves",
            required=True,
            min=0,
            max=1,
        ),
        Column(
            "price_source",
            "str",
            "",
            "Price source of the list price (blank: hand, else litellm, else openrouter)",
            allowed=SOURCES,
        ),
        Column(
            "price_provider",
            "str",
            "",
            "prices.provider of the list price (blank with price_model: match models.hf_repo "
            "to prices.hugging_face_id)",
        ),
        Column("price_model", "str", "", "prices.model of the list price"),
        Column("rationale", "str", "", "Why this deployment and share", required=True),
        Column("source_url", "str", "", "Where the deployment choice comes from", required=True),
    ),
    checks=(_check_deployments,),
)

INPUT_TABLES: dict[str, TableSpec] = {
    spec.name: spec
    for spec in (HARDWARE, RENTAL_PRICES, MODELS, PRICES, MEMORY_TIERS, SCENARIOS, SCALING_LAW_POINTS, DEPLOYMENTS)
}
"""Hand-kept tables, one CSV each in data/ (file stem = table name), in load order."""
