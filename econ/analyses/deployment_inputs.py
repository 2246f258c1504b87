"""What the deployment model reads: architectures, chips in a format, layouts and a scenario's run settings.

Selection, joins and the mapping of scenario fields onto :data:`econ.physics.deployment.SETTINGS`; every
number comes from ``model_derived``, ``hardware`` / ``hardware_derived``, ``layouts`` or the scenario.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.model_derived_columns import MODEL_DERIVED
from econ.analyses.scenario import Scenario
from econ.formats import kv_scale
from econ.physics import deployment, layout_search

MODEL_COLUMNS = {
    "params_active": "params_active",
    "rest_params": "rest_params",
    "shared_expert_params": "shared_expert_params",
    "dense_ffn_params": "dense_ffn_params",
    "embedding_params": "embedding_params",
    "head_params": "head_params",
    "routed_expert_params": "routed_expert_params",
    "moe_layers": "moe_layers",
    "num_routed_experts": "num_routed_experts",
    "experts_per_token": "experts_per_token",
    "params_per_expert": "params_per_expert",
    "hidden_size": "hidden_size",
    "num_layers": "num_layers",
    "kernel_layers": "kernel_layers",
    "num_dense_layers": "num_dense_layers",
    "num_shared_experts": "num_shared_experts",
    "kv_shard_limit": "kv_shard_limit",
    "sparse_topk_tokens": "sparse_topk_tokens",
    "dense_attention_frac": "dense_attention_frac",
    "full_slope_decode": "full_slope_decode_flop_per_token",
    "full_slope_prefill": "full_slope_prefill_flop_per_token",
    "window_slope": "window_slope_flop_per_token",
    "chunk_slope": "chunk_slope_flop_per_token",
    "index_slope": "index_slope_flop_per_token",
    "state_flop_per_token": "state_flop_per_token",
    "kv_bytes_per_token": "kv_bytes_per_token",
    "kv_index_bytes_per_token": "kv_index_bytes_per_token",
    "kv_window_bytes_per_sequence": "kv_window_bytes_per_sequence",
    "sliding_window_tokens": "sliding_window_tokens",
    "kv_chunk_bytes_per_token": "kv_chunk_bytes_per_token",
    "attention_chunk_tokens": "attention_chunk_tokens",
    "state_bytes_per_sequence": "state_bytes_per_sequence",
}
"""``deployment.MODEL_KEYS`` -> the ``model_derived`` column that holds it."""

CASES_SQL = """
select d.model, d.params_total, h.chip, h.number_format, h.format_order, h.weight_bytes_per_param,
       h.peak_flop_per_s, h.hbm_capacity_bytes, h.hbm_bandwidth_bytes_per_s, h.scale_up_domain_chips,
       hw.scale_up_bandwidth_bytes_per_s, hw.scale_out_bandwidth_bytes_per_s, hw.peak_bf16_flop_per_s,
       hw.peak_fp8_flop_per_s, hw.architecture, d.* exclude (model, params_total)
from model_derived as d cross join hardware_derived as h join hardware as hw using (chip)
where d.kv_bytes_per_token is not null and (d.params_per_expert is not null or d.num_routed_experts is null)
order by d.model, h.chip, h.format_order
"""
"""Every model with a modelled cache × chip × number format the chip has a peak in (``hardware_derived``)."""


NAMING_COLUMNS = ("model", "lab", "architecture_group", "pretrain_tokens", "pretrain_tokens_per_active_param_ratio")
"""The ``model_derived`` columns that name a model or count its training: none enters the serving model."""


def one_per_architecture(cases: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the cases of one model of each set whose ``model_derived`` rows agree in every column but
    :data:`NAMING_COLUMNS`, the first in the cases' order; ``model`` -> ``computed_as``, the model computed in its
    place, for every model of ``cases``). A model and its re-releases (DeepSeek-V3, -R1, -V3.1) have the same serving
    points on every chip: the sweeps compute them once and copy them (:func:`with_twins`): 15 of the 44 models swept
    on the shipped data."""
    own = [c for c in MODEL_DERIVED.names if c in cases.columns and c not in NAMING_COLUMNS]
    models = cases.unique("model", keep="first", maintain_order=True)
    computed_as = models.select("model", pl.col("model").first().over(pl.struct(own)).alias("computed_as"))
    kept = computed_as.filter(pl.col("model") == pl.col("computed_as")).select("model")
    return cases.join(kept, on="model", how="semi", maintain_order="left"), computed_as


def with_twins(frame: pl.DataFrame, computed_as: pl.DataFrame) -> pl.DataFrame:
    """``frame`` (rows with a ``model`` computed for the models :func:`one_per_architecture` kept) and a copy of each
    kept model's rows for every model computed as it."""
    twins = computed_as.filter(pl.col("model") != pl.col("computed_as"))
    if twins.is_empty() or frame.is_empty():
        return frame
    copies = (
        frame.rename({"model": "computed_as"})
        .join(twins, on="computed_as", how="inner", maintain_order="left")
        .select(frame.columns)
    )
    return pl.concat([frame, copies])


def arrays(frame: pl.DataFrame, columns) -> dict[str, np.ndarray]:
    """Float arrays of ``frame`` columns (null -> NaN), keyed as given: a mapping of key -> column, or names."""
    pairs = list(columns.items()) if isinstance(columns, dict) else [(c, c) for c in columns]
    # one select for all columns: polars 2 runs every Series operation as a query of its own (~0.2 ms each)
    floats = frame.select(
        [pl.col(c).cast(pl.Float64).fill_null(np.nan).alias(f"_{i}") for i, (_, c) in enumerate(pairs)]
    )
    return {k: floats[f"_{i}"].to_numpy() for i, (k, _) in enumerate(pairs)}


BOUNDS = ("compute", "communication", "memory")


def bound_series(name: str, compute_bound: np.ndarray, comm_over_memory: np.ndarray) -> pl.Series:
    """What bounds each point's step (:data:`BOUNDS`): compute where the step is compute bound, else communication
    where it takes longer than memory, else memory. Gathered from the three words by code: a numpy array of strings
    took ~80 ms to become a column of serving_curves' 336,000 rows."""
    code = np.where(compute_bound, 0, np.where(comm_over_memory, 1, 2)).astype(np.uint32)
    return pl.Series(BOUNDS).gather(code).alias(name)


def model_arrays(frame: pl.DataFrame) -> dict[str, np.ndarray]:
    return arrays(frame, MODEL_COLUMNS)


def chip_arrays(frame: pl.DataFrame, kv_cache_format: str = "bf16") -> dict[str, np.ndarray]:
    """The chip columns :mod:`econ.physics.deployment` reads; attention runs at the peak of the cache's format
    (FP8 where the cache is FP8 and the chip has an FP8 peak, else BF16: ``hardware.peak_*_flop_per_s``)."""
    out = arrays(frame, [k for k in deployment.CHIP_KEYS if k != "attention_peak_flop_per_s"])
    bf16 = frame["peak_bf16_flop_per_s"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    fp8 = frame["peak_fp8_flop_per_s"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    out["attention_peak_flop_per_s"] = np.where((kv_cache_format == "fp8") & ~np.isnan(fp8), fp8, bf16)
    return out


def efficiency(s: Scenario, name: str, architecture=None, attention=None):
    """A scenario efficiency field, per case where the scenario has values per group (calibrated): an array over the
    cases' ``architecture`` (a chip of another family takes the shared value) or, for a field the model's attention
    kind moves (``efficiencies_by_attention``: the calibration moves ``attention_mfu_frac`` by it and nothing else by
    the chip's family), over ``attention``; else the scalar."""
    shared = getattr(s, name)
    for by_group, groups in ((s.efficiencies_by_attention, attention), (s.efficiencies_by_architecture, architecture)):
        if groups is None or not any(name in values for values in by_group.values()):
            continue
        flat = np.asarray(groups, dtype=object).ravel()
        value_of = {g: by_group.get(g, {}).get(name, shared) for g in set(flat)}  # a few groups, many cases
        return np.fromiter(map(value_of.__getitem__, flat), dtype=float, count=flat.size).reshape(np.shape(groups))
    return shared


def settings(s: Scenario, pool: str, weight_bytes_per_param, architecture=None, attention=None) -> dict:
    """The scenario's run settings of a pool (decode or prefill) as :func:`econ.physics.deployment.decode_terms`
    takes them; FP8/FP4 math dispatches 1-byte activations to the experts (DeepSeek), BF16 2-byte. With
    ``architecture`` (``hardware.architecture`` per case, shaped like the cases) and ``attention``
    (``model_derived.attention`` per case) a calibrated scenario's efficiencies are those of each case's chip family
    and model's attention kind."""
    b_w = np.asarray(weight_bytes_per_param, dtype=float)
    return {
        "weight_bytes_per_param": b_w,
        "activation_bytes": 2.0,
        "dispatch_bytes": np.where(b_w < 2.0, 1.0, 2.0),
        "mfu": efficiency(s, f"{pool}_mfu_frac", architecture),
        "expert_mfu": efficiency(s, "expert_mfu_frac", architecture),
        "mbu": efficiency(s, f"{pool}_mbu_frac", architecture),
        "link_frac": s.link_bandwidth_frac,
        "step_overhead_s": s.step_overhead_s,
        "scale_up_latency_s": s.scale_up_latency_s,
        "scale_out_latency_s": s.scale_out_latency_s,
        "speculative_tokens": s.speculative_tokens if pool == "decode" else 0.0,
        "acceptance_frac": s.speculative_acceptance_frac,
        "hbm_reserve_frac": s.hbm_reserve_frac,
        "usd_per_chip_hour": s.usd_per_chip_hour,
        "attention_mfu": efficiency(s, "attention_mfu_frac", architecture, attention),
        "expert_mbu": efficiency(s, "expert_mbu_frac", architecture),
        "layer_overhead_s": s.layer_overhead_s,
        "sequence_overhead_s": s.sequence_overhead_s,
        "expert_imbalance_scale": s.expert_imbalance_scale_ratio,
        "kernel_serial": 1.0 if s.efficiency_basis == "calibrated" else 0.0,
    }


def cache_scale(s: Scenario) -> float:
    """Scale of the BF16 cache columns to the scenario's KV format."""
    return kv_scale(s.kv_cache_format)


def grid_layouts(domains: np.ndarray, moe: np.ndarray, max_chips: int) -> pl.DataFrame:
    """The layout grid of every distinct (scale-up domain, MoE or not), one row per layout, with its key."""
    frames = []
    for domain, is_moe in sorted({(int(d), bool(m)) for d, m in zip(domains, moe, strict=True)}):
        grid = layout_search.layout_grid(domain, moe=is_moe, max_chips=max_chips)
        frames.append(
            pl.DataFrame(grid).with_columns(
                pl.lit(domain, dtype=pl.Float64).alias("scale_up_domain_chips"),
                pl.lit(is_moe).alias("moe"),
                pl.lit("grid").alias("layout"),
                pl.lit(False).alias("idealised"),
                pl.lit(0.0).alias("overlap_comm"),
            )
        )
    return pl.concat(frames)


def named_layouts(layouts: pl.DataFrame, pool: str) -> pl.DataFrame:
    """Named layouts of a pool as layout rows (a blank replica = one scale-up domain, resolved per chip)."""
    rows = layouts.filter(pl.col("pool") == pool)
    return rows.select(
        "layout",
        "applies_to",
        pl.col("replica_chips").cast(pl.Float64),
        pl.col("tensor_parallel").cast(pl.Float64),
        pl.col("pipeline_parallel").cast(pl.Float64),
        *(
            pl.col(c).fill_null(0).cast(pl.Boolean)
            for c in ("replicate_attention", "replicate_shared_experts", "replicate_dense", "replicate_embeddings")
        ),
        pl.col("redundant_expert_slots").fill_null(0).cast(pl.Float64),
        (pl.col("idealised").fill_null(0) == 1).alias("idealised"),
        (pl.col("overlap_comm") if "overlap_comm" in rows.columns else pl.lit(0))
        .fill_null(0)
        .cast(pl.Float64)
        .alias("overlap_comm"),
    )


def layouts_for(cases: pl.DataFrame, named: pl.DataFrame, pool: str, max_chips: int) -> pl.DataFrame:
    """Every case × layout of a pool: the grid of its chip's domain and its kind (MoE or dense), and the named
    layouts that apply, with the attention data-parallel degree and the expert-parallel span."""
    moe = cases["num_routed_experts"].is_not_null().to_numpy()
    keyed = cases.with_columns(pl.Series("moe", moe), pl.col("scale_up_domain_chips").fill_null(1).cast(pl.Float64))
    grid = keyed.join(
        grid_layouts(keyed["scale_up_domain_chips"].to_numpy(), moe, max_chips),
        on=["scale_up_domain_chips", "moe"],
    ).with_columns(
        (pl.col("tensor_parallel") * pl.col("attention_data_parallel") * pl.col("pipeline_parallel")).alias(
            "replica_chips"
        )
    )
    rows = named_layouts(named, pool)
    given = keyed.join(rows, how="cross").filter(
        (pl.col("applies_to") == "any") | ((pl.col("applies_to") == "moe") == pl.col("moe"))
    )
    given = given.with_columns(
        pl.col("replica_chips").fill_null(pl.min_horizontal(pl.col("scale_up_domain_chips"), pl.lit(float(max_chips))))
    ).with_columns(
        (pl.col("replica_chips") / (pl.col("tensor_parallel") * pl.col("pipeline_parallel"))).alias(
            "attention_data_parallel"
        )
    )
    given = given.filter(
        (pl.col("attention_data_parallel") >= 1)
        & (pl.col("attention_data_parallel").round(0) == pl.col("attention_data_parallel"))
    ).drop("applies_to")
    out = pl.concat([grid, given.select(grid.columns)], how="vertical_relaxed")
    return out.with_columns(
        pl.when(pl.col("moe"))
        .then(pl.col("tensor_parallel") * pl.col("attention_data_parallel"))
        .otherwise(1.0)
        .alias("expert_parallel")
    )


def sized_rows(cases: pl.DataFrame, rows: pl.DataFrame, pool: str) -> pl.DataFrame:
    """Layout rows of a stated replica size the grid lacks (``<pool>_replica_chips`` of 3, 144, 48 …): every case's
    layouts of exactly that size (:func:`econ.physics.layout_search.sized_layouts`), keyed like the grid's."""
    size_col = f"{pool}_replica_chips"
    if size_col not in cases.columns:
        return rows.clear()
    wanted = cases.filter(pl.col(size_col).is_not_null())
    if not wanted.height:
        return rows.clear()
    have = rows.filter(pl.col("layout") == "grid").select("_case", "replica_chips").unique()
    frames = []
    for case in wanted.iter_rows(named=True):
        size = float(case[size_col])
        if have.filter((pl.col("_case") == case["_case"]) & (pl.col("replica_chips") == size)).height:
            continue
        moe = case["num_routed_experts"] is not None
        domain = int(case["scale_up_domain_chips"] or 1)
        grid = pl.DataFrame(layout_search.sized_layouts(domain, int(size), moe=moe))
        base = wanted.filter(pl.col("_case") == case["_case"]).drop([c for c in grid.columns if c in wanted.columns])
        frames.append(
            base.join(grid, how="cross").with_columns(
                pl.lit(moe).alias("moe"),
                pl.col("scale_up_domain_chips").fill_null(1).cast(pl.Float64),
                pl.lit("grid").alias("layout"),
                pl.lit(False).alias("idealised"),
                pl.lit(0.0).alias("overlap_comm"),
                (pl.col("tensor_parallel") * pl.col("attention_data_parallel") * pl.col("pipeline_parallel")).alias(
                    "replica_chips"
                ),
                pl.when(pl.lit(moe))
                .then(pl.col("tensor_parallel") * pl.col("attention_data_parallel"))
                .otherwise(1.0)
                .alias("expert_parallel"),
            )
        )
    if not frames:
        return rows.clear()
    return pl.concat(frames, how="vertical_relaxed").select(rows.columns)
