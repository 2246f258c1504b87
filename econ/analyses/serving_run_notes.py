"""The notes and the reason of a serving run read by :func:`econ.analyses.serving_runs.configurations`: what the
reading repaired or assumed (the measured file's known defects, the InferenceX launch a run took, assumed workers, a
batch that disagrees with the stated concurrency) and why a run cannot be predicted. Expressions over the reading's
working columns (``_stored``, ``_<pool>_wide``, ``_launch_key``, …), kept apart so the reading stays one page."""

from __future__ import annotations

import polars as pl

from econ.analyses import launch_layouts

POOLS = ("decode", "prefill")


def _int(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.Int64)


def _per_pool(flag: str, template: str, *values) -> list[pl.Expr]:
    """One note a pool, where its working flag ``_<pool>_<flag>`` holds: ``template`` over the pool's name and
    ``values`` (each a function of the pool giving an expression)."""
    return [
        pl.when(pl.col(f"_{pool}_{flag}")).then(pl.format(template, pl.lit(pool), *(v(pool) for v in values)))
        for pool in POOLS
    ]


def beyond_context(tokens: pl.Expr, model: pl.Expr, context: pl.Expr) -> pl.Expr:
    """The note on a request longer than its model's native context (null: within it, or the context unknown)."""
    return pl.when(tokens > context).then(
        pl.format(
            "{} tokens (prompt + output) exceed {}'s native context of {} (models.max_position_embeddings): predicted "
            "as if served, as a deployment that extends the context (YaRN, say) would serve them",
            tokens.cast(pl.Int64),
            model,
            context.cast(pl.Int64),
        )
    )


def notes() -> pl.Expr:
    """What reading a run repaired or assumed, one clause each (null: nothing): the ``notes`` of
    :func:`econ.analyses.serving_runs.configurations`, over its working columns."""
    parts = (
        _per_pool(
            "wide",
            "{} stored as {} tp {}, which divides none of the model's {} heads: read as a disaggregated wide-EP pool "
            "of attention dp {} x expert parallel {}",
            lambda _: pl.col("_stored"),
            lambda pool: _int(f"_{pool}_stored"),
            lambda _: _int("_heads"),
            lambda pool: _int(f"{pool}_attention_data_parallel"),
            lambda pool: _int(f"{pool}_expert_parallel"),
        )
        + _per_pool(
            "squared",
            "{} layout stored with {} chips on a {}-chip system: read as tp {} x dp {}",
            lambda pool: _int(f"_{pool}_stored"),
            lambda _: _int("_domain"),
            lambda pool: _int(f"{pool}_tensor_parallel"),
            lambda pool: _int(f"{pool}_attention_data_parallel"),
        )
        + _per_pool(
            "under",
            "{} experts stored over {} chips (moe tp x ep) but attention over {}: the worker is read as the experts' "
            "chips, tensor parallel {}",
            lambda pool: (pl.col(f"_{pool}_moe_tp_size") * pl.col(f"_{pool}_moe_ep_size")).cast(pl.Int64),
            lambda pool: _int(f"_{pool}_stored"),
            lambda pool: _int(f"{pool}_tensor_parallel"),
        )
        + _per_pool("respread", "{} MoE degrees do not multiply to tp x dp: experts spread over the stage")
        + [
            beyond_context(pl.col("isl") + pl.col("osl"), pl.col("arch_model"), pl.col("_context")),
            pl.when(pl.col("_launch_key").is_not_null() & pl.col("_layout_key").is_null()).then(
                pl.format("the stated pools are InferenceX's launch {} (inferencex_launches)", pl.col("_launch_key"))
            ),
            pl.when(pl.col("_launch_key").is_not_null() & pl.col("_layout_key").is_not_null()).then(
                pl.format(
                    "workers and layouts not stated: InferenceX's launch {} ({} prefill x {} chips, {} decode x {} "
                    "chips; inferencex_launches){}",
                    pl.col("_launch_key"),
                    pl.col("prefill_workers").cast(pl.Int64),
                    (pl.col("_prefill_tp_size") * pl.col("_prefill_attention_dp_size")).cast(pl.Int64),
                    pl.col("decode_workers").cast(pl.Int64),
                    (pl.col("_decode_tp_size") * pl.col("_decode_attention_dp_size")).cast(pl.Int64),
                    pl.when(pl.col(launch_layouts.CHOICES) > 1)
                    .then(
                        pl.format(
                            ", the median in chips of the {} sets of pools its matching launches state",
                            pl.col(launch_layouts.CHOICES).cast(pl.Int64),
                        )
                    )
                    .otherwise(pl.lit("")),
                )
            ),
            pl.when(pl.col(launch_layouts.SPECULATION)).then(
                pl.lit(
                    "launched with MTP (InferenceX's configs state no draft length or acceptance): TPOT over the "
                    "calibrated speculation speed-up, the roofline bound without it"
                )
            ),
            pl.when(pl.col(launch_layouts.BALANCED) > 0).then(
                pl.lit(
                    "decode experts placed by the launch's load balancer (eplbN in every matching recipe): the busiest "
                    "expert rank is uniform routing's, not the router's fitted skew"
                )
            ),
            pl.when(pl.col("_fixed_lengths")).then(
                pl.lit(
                    "measured by AIConfigurator's own eval (fixed lengths, not InferenceX's [0.8·L, L]): timed at the "
                    "stated prompt and output lengths"
                )
            ),
            pl.when(pl.col("workers_assumed")).then(
                pl.lit(
                    "worker counts not stated: decode workers enough for 64 sequences per rank within the largest "
                    "system a stated run used on the chip, and for the KV cache to hold every user; prefill workers "
                    "at the median ratio, a prefill worker larger than any stated on the chip cut to the largest"
                )
            ),
            pl.when(
                pl.col("silicon_data_source").is_not_null()  # a measurement's provenance, not a user's own point
                & pl.col("_stated").is_null()
                & pl.col("_from_batch").is_not_null()
            ).then(
                pl.format(
                    "concurrency not stated (no silicon_concurrency in silicon_data_source): read from the batch as "
                    "{}, as AIConfigurator reads it; clients beyond the engine's batch would queue unseen by this "
                    "reading",
                    pl.col("_from_batch").cast(pl.Int64),
                )
            ),
            pl.when(
                pl.col("_stated").is_not_null()
                & pl.col("_from_batch").is_not_null()
                & ((pl.col("_stated") - pl.col("_from_batch")).abs() > 0.5)
            ).then(
                pl.format(
                    "batch implies concurrency {}, the run states {}: the run's used",
                    pl.col("_from_batch").cast(pl.Int64),
                    pl.col("_stated").cast(pl.Int64),
                )
            ),
        ]
    )
    return pl.concat_str(parts, separator="; ", ignore_nulls=True).replace("", None)


def reason() -> pl.Expr:
    """Why a run cannot be predicted (null: it can): the ``reason`` of
    :func:`econ.analyses.serving_runs.configurations`, over its working columns."""
    tp_d, tp_p = pl.col("decode_tensor_parallel"), pl.col("prefill_tensor_parallel")
    return (
        pl.when(pl.col("arch_model").is_null())
        .then(pl.format("model '{}' is not in data/models.csv (by name or Hugging Face id)", pl.col("model_path")))
        .when(pl.col("chip").is_null())
        .then(pl.format("system '{}' names no chip of data/hardware.csv", pl.col("system")))
        .when(~pl.col("mode").is_in(["agg", "disagg"]))
        .then(pl.format("mode '{}' is neither agg nor disagg", pl.col("mode")))
        .when(pl.col("weight_format").is_null() | pl.col("expert_weight_format").is_null())
        .then(
            pl.format("unknown quantisation mode '{}'", pl.coalesce("gemm_quant_mode", "moe_quant_mode", "precision"))
        )
        .when(pl.col("kvcache_quant_mode").is_not_null() & pl.col("_kv").is_null())
        .then(pl.format("unknown KV-cache format '{}'", pl.col("kvcache_quant_mode")))
        .when(pl.col("concurrency").is_null() | (pl.col("concurrency") <= 0))
        .then(pl.lit("no concurrency: neither silicon_concurrency in silicon_data_source nor a batch size"))
        .when(pl.col("isl").is_null() | pl.col("osl").is_null() | (pl.col("isl") <= 0) | (pl.col("osl") <= 0))
        .then(pl.lit("isl and osl must be positive token counts"))
        .when(pl.col("_heads").is_not_null() & ((pl.col("_heads") % tp_d != 0) | (pl.col("_heads") % tp_p != 0)))
        .then(
            pl.format(
                "tensor parallel {} does not divide the model's {} attention heads (no engine runs that: the "
                "stored layout is not the run's)",
                tp_d.cast(pl.Int64),
                pl.col("_heads").cast(pl.Int64),
            )
        )
        .when((pl.col("nextn") > 0) & pl.col("nextn_accept_rate").is_null())
        .then(pl.lit("nextn (MTP draft tokens) without nextn_accept_rate"))
        .otherwise(None)
    )
