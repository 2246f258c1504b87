"""``serving_curves``, ``serving_summary`` and ``serving_sparsity``: the serving bounds (lecture a–d) on each case's
reference layout.

- ``serving_curves``: every model × chip × number format at its default layout
  (:func:`econ.physics.layout_search.default_layout`: MoE with data-parallel attention and experts over the
  scale-up domain; dense with the least tensor parallelism that holds it) over a batch × context grid, by the
  step functions of :mod:`econ.physics.deployment` (streamed);
- ``serving_summary``: per case, the lecture's B*₀ and L* (closed forms), the weight bytes a batch of 1 and 16
  really touches, the batch-1 step (latency floor) and what fits on the default layout, cost floors;
- ``serving_sparsity``: the balance batch at the lecture's round R = 300 by parameters, by experts and
  by the lecture's own figure (b.2).

Scenario fields read: ``decode_mfu_frac`` / ``decode_mbu_frac`` (decode steps), ``prefill_mfu_frac`` /
``prefill_mbu_frac`` (prefill passes), ``context_tokens``, ``kv_cache_format`` and ``usd_per_chip_hour``, the price
of a chip no rental quote prices: each chip is priced at its own newest on-demand quote (``rental_prices``, the
median of the newest date's quotes on or before the build's date; ``price_basis`` says which), so costs compare
chips at what they rent for, not throughput at one flat price. Every number is a roofline bound at those
efficiencies: step times are lower bounds, throughputs upper bounds, costs lower bounds; a configuration where not
one sequence fits has no cost.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs as inputs
from econ.analyses.fleet_inputs import newest_rental
from econ.analyses.inputs import MODELS_SQL
from econ.analyses.serving_columns import CURVES, SPARSITY, SUMMARY
from econ.physics import deployment, layout_search, memory, roofline, sharding, weights
from econ.physics.model import kv_window_bytes
from econ.units import MEGA

NAME = "serving"
INPUTS = ("models", "model_derived", "hardware", "hardware_derived", "scenarios", "rental_prices")
RENTAL_KIND = "on_demand"
"""The rental quote a chip is priced at: what anyone can rent it for by the hour."""
TABLES = (CURVES, SUMMARY, SPARSITY)

BATCH_GRID = 2.0 ** np.arange(0, 17)  # 1 … 65,536 sequences
CONTEXT_GRID = 2.0 ** np.arange(10, 21)  # 1,024 … 1,048,576 tokens
CONTEXT_8K, CONTEXT_128K = 8_192, 131_072
DEGREES = ("tensor_parallel", "attention_data_parallel", "pipeline_parallel")
DECODE_TERMS = (
    "compute_time_s",
    "weight_time_s",
    "kv_time_s",
    "memory_time_s",
    "comm_time_s",
    "overhead_time_s",
    "step_time_s",
)

LECTURE_R = 300.0
"""The lecture's round hardware ratio ("on most GPUs … around 300", b.1)."""

LECTURE_SPARSITY = {"deepseek-v3": (256, 32)}
"""What the lecture said per model (b.2): "I activate 32 out of 256 experts, so this would be 8 for DeepSeek"."""


def default_layouts(cases: pl.DataFrame, s) -> dict[str, np.ndarray]:
    """The reference layout of every case (:func:`econ.physics.layout_search.default_layout`)."""
    return layout_search.default_layout(
        inputs.model_arrays(cases),
        inputs.chip_arrays(cases, s.kv_cache_format),
        weight_bytes_per_param=cases["weight_bytes_per_param"].to_numpy(),
        context_tokens=s.context_tokens,
        kv_scale=inputs.cache_scale(s),
        hbm_reserve_frac=s.hbm_reserve_frac,
    )


def with_chip_prices(cases: pl.DataFrame, rental: pl.DataFrame, s, as_of) -> pl.DataFrame:
    """``cases`` with ``usd_per_chip_hour`` and ``price_basis``: the chip's newest on-demand quote
    (:func:`econ.analyses.fleet_inputs.newest_rental`: the median of the newest date's quotes on or before
    ``as_of``), else the scenario's price, said so."""
    quotes = newest_rental(rental, as_of).filter(pl.col("price_kind") == RENTAL_KIND)
    return (
        cases.join(
            quotes.select(
                "chip",
                pl.col("usd_per_chip_hour").alias("_quote"),
                pl.concat_str(pl.lit(f"{RENTAL_KIND} "), "price_basis").alias("_basis"),
            ),
            on="chip",
            how="left",
        )
        .with_columns(
            pl.coalesce("_quote", pl.lit(float(s.usd_per_chip_hour))).alias("usd_per_chip_hour"),
            pl.coalesce(
                "_basis", pl.lit(f"no {RENTAL_KIND} quote for this chip: the scenario's usd_per_chip_hour")
            ).alias("price_basis"),
        )
        .drop("_quote", "_basis")
    )


def _prices(cases: pl.DataFrame, s) -> np.ndarray:
    """Per case, the $/chip-hour it is priced at (:func:`with_chip_prices`; the scenario's where not joined)."""
    if "usd_per_chip_hour" in cases.columns:
        return cases["usd_per_chip_hour"].to_numpy().astype(float)
    return np.full(cases.height, float(s.usd_per_chip_hour))


def _with_layout(cases: pl.DataFrame, s) -> pl.DataFrame:
    layout = default_layouts(cases, s)
    return cases.with_columns(
        *(pl.Series(k, layout[k]) for k in deployment.LAYOUT_KEYS),
        pl.Series("replica_chips", sharding.replica_chips(*(layout[k] for k in DEGREES))),
    ).filter(pl.col("tensor_parallel").is_not_nan())


def _grid(cases: pl.DataFrame, s, pool: str, batch, context):
    """The pool's terms of every case at its default layout over batch (axis 1) × context (axis 2)."""

    def col(values):
        return np.asarray(values, dtype=float)[:, None, None]

    model = {k: col(v) for k, v in inputs.model_arrays(cases).items()}
    chip = {k: col(v) for k, v in inputs.chip_arrays(cases, s.kv_cache_format).items()}
    layout = {k: cases[k].to_numpy()[:, None, None] for k in deployment.LAYOUT_KEYS}
    run = inputs.settings(
        s,
        pool,
        col(cases["weight_bytes_per_param"].to_numpy()),
        cases["architecture"].to_numpy()[:, None, None],
        cases["attention"].to_numpy()[:, None, None],
    )
    run["usd_per_chip_hour"] = col(_prices(cases, s))  # each chip at its own price
    b, ctx = np.asarray(batch, dtype=float)[None, :, None], np.asarray(context, dtype=float)[None, None, :]
    if pool == "decode":
        return deployment.decode_terms(model, chip, layout, b, ctx, kv_scale=inputs.cache_scale(s), settings=run)
    return deployment.prefill_terms(model, chip, layout, b, ctx, 0.0, kv_scale=inputs.cache_scale(s), settings=run)


def curve_frames(cases: pl.DataFrame, s, *, batch=BATCH_GRID, context_tokens=CONTEXT_GRID, cases_per_chunk: int = 128):
    """Yield ``serving_curves`` chunks: every case at its default layout over the batch × context grid."""
    per_case = len(batch) * len(context_tokens)
    for start in range(0, cases.height, cases_per_chunk):
        part = cases.slice(start, cases_per_chunk)
        dec, pre = _grid(part, s, "decode", batch, context_tokens), _grid(part, s, "prefill", batch, context_tokens)
        shape = (part.height, len(batch), len(context_tokens))

        def flat(x, shape=shape):
            return np.broadcast_to(np.asarray(x), shape).ravel()

        keys = part.select("model", "chip", "number_format", "replica_chips", *DEGREES)[
            np.repeat(np.arange(part.height), per_case)
        ]
        bound = inputs.bound_series(
            "decode_bound", flat(dec["compute_bound"]), flat(dec["comm_time_s"]) > flat(dec["memory_time_s"])
        )
        yield keys.with_columns(
            pl.Series("batch_seqs", flat(np.asarray(batch)[None, :, None]).astype(np.int64)),
            pl.Series("context_tokens", flat(np.asarray(context_tokens)[None, None, :]).astype(np.int64)),
            *(pl.Series(f"decode_{k}", flat(dec[k]).astype(float)) for k in DECODE_TERMS),
            pl.Series("decode_upper_bound_time_s", flat(dec["step_time_upper_s"])),
            pl.Series("decode_compute_bound", flat(dec["compute_bound"])),
            pl.Series("decode_tokens_per_s", flat(dec["tokens_per_s_per_chip"] * dec["replica_chips"])),
            pl.Series("usd_per_chip_hour", flat(col_prices(part, s))),
            pl.Series("output_usd_per_mtok", flat(dec["usd_per_mtok"])),
            pl.Series("prefill_step_time_s", flat(pre["step_time_s"])),
            pl.Series("prefill_compute_bound", flat(pre["compute_bound"])),
            pl.Series("input_usd_per_mtok", flat(pre["usd_per_mtok"])),
            pl.Series("memory_per_chip_bytes", flat(dec["memory_per_chip_bytes"])),
            pl.Series("fits_in_memory", flat(dec["fits"])),
            bound,
        )


def col_prices(cases: pl.DataFrame, s) -> np.ndarray:
    """:func:`_prices` shaped (case, 1, 1) to broadcast over a batch × context grid."""
    return _prices(cases, s)[:, None, None]


def _finite(x):
    """inf -> NaN (null in the table) where no finite value exists."""
    return np.where(np.isinf(x), np.nan, x)


def summary(cases: pl.DataFrame, s) -> pl.DataFrame:
    """``serving_summary``: one row per model × chip × format at its default layout (vectorised over rows)."""
    a = inputs.arrays(cases, ("params_total", "params_active", "num_routed_experts", "experts_per_token"))
    model, chip = inputs.model_arrays(cases), inputs.chip_arrays(cases, s.kv_cache_format)
    layout = {k: cases[k].to_numpy() for k in deployment.LAYOUT_KEYS}
    b_w = cases["weight_bytes_per_param"].to_numpy()
    peak, bandwidth = chip["peak_flop_per_s"], chip["hbm_bandwidth_bytes_per_s"]
    kv = model["kv_bytes_per_token"] * inputs.cache_scale(s)
    p, d_mfu, d_mbu = _prices(cases, s), s.decode_mfu_frac, s.decode_mbu_frac
    r = roofline.critical_batch_ratio(peak, bandwidth, b_w)
    achieved = roofline.critical_batch_ratio(peak * d_mfu, bandwidth * d_mbu, b_w)
    b0 = roofline.balance_batch(r, a["params_total"], a["params_active"])
    l_star = roofline.critical_context_tokens(r, b_w, a["params_active"], kv)
    run = inputs.settings(s, "decode", b_w, cases["architecture"].to_numpy(), cases["attention"].to_numpy())
    one = deployment.decode_terms(
        model, chip, layout, 1.0, s.context_tokens, kv_scale=inputs.cache_scale(s), settings=run
    )

    def cost_floor(ctx):
        """The floor where at least one sequence of ``ctx`` tokens fits the default layout; none where none does."""
        extra = kv_window_bytes(
            ctx, model["kv_window_bytes_per_sequence"] * inputs.cache_scale(s), model["sliding_window_tokens"]
        )
        floor = MEGA * roofline.decode_cost_floor_usd_per_token(
            ctx, kv, a["params_active"], peak, bandwidth, p, mfu=d_mfu, mbu=d_mbu, kv_extra_bytes_per_sequence=extra
        )
        return np.where(fits(ctx) >= 1, floor, np.nan)

    def fits(ctx):
        return sharding.max_batch_per_replica(
            model,
            layout,
            chip,
            ctx,
            weight_bytes_per_param=b_w,
            kv_scale=inputs.cache_scale(s),
            hbm_reserve_frac=s.hbm_reserve_frac,
        )

    def touched(tokens):
        return weights.weight_bytes_touched(
            tokens,
            rest=model["rest_params"],
            shared=model["shared_expert_params"],
            dense=model["dense_ffn_params"],
            head=model["head_params"],
            moe_layers=model["moe_layers"],
            num_routed_experts=model["num_routed_experts"],
            experts_per_token=model["experts_per_token"],
            params_per_expert=model["params_per_expert"],
            weight_bytes_per_param=b_w,
        )

    columns = {
        "balance_batch_seqs": b0,
        "balance_batch_experts_seqs": roofline.balance_batch(r, a["num_routed_experts"], a["experts_per_token"]),
        "balance_batch_achieved_seqs": roofline.balance_batch(achieved, a["params_total"], a["params_active"]),
        "critical_context_tokens": l_star,
        "critical_context_achieved_tokens": roofline.critical_context_tokens(achieved, b_w, a["params_active"], kv),
        "balance_batch_at_8k_seqs": _finite(roofline.balance_batch_at_context(b0, CONTEXT_8K, l_star)),
        "balance_batch_at_128k_seqs": _finite(roofline.balance_batch_at_context(b0, CONTEXT_128K, l_star)),
        "weight_bytes_touched_batch1_bytes": touched(1.0),
        "weight_bytes_touched_batch16_bytes": touched(16.0),
        "latency_floor_s": one["step_time_s"],
        "max_tokens_per_s_per_sequence": one["tokens_per_s_per_user"],
        "cost_floor_at_8k_usd_per_mtok": cost_floor(CONTEXT_8K),
        "cost_floor_at_128k_usd_per_mtok": cost_floor(CONTEXT_128K),
        "prefill_cost_floor_usd_per_mtok": np.where(
            fits(float(CONTEXT_GRID[0])) >= 1,
            MEGA
            * roofline.prefill_cost_floor_usd_per_token(
                kv, a["params_active"], peak, bandwidth, p, mfu=s.prefill_mfu_frac, mbu=s.prefill_mbu_frac
            ),
            np.nan,
        ),
        "scenario_context_tokens": np.full(len(r), s.context_tokens),
        "cost_floor_at_scenario_context_usd_per_mtok": cost_floor(s.context_tokens),
        "max_batch_at_8k_seqs": fits(CONTEXT_8K),
        "max_batch_at_128k_seqs": fits(CONTEXT_128K),
        "replica_hbm_bytes": memory.replica_hbm_bytes(cases["replica_chips"].to_numpy(), chip["hbm_capacity_bytes"]),
    }
    base = cases.select("model", "chip", "number_format", "replica_chips", *DEGREES)
    out = base.with_columns(*(pl.Series(k, v, dtype=pl.Float64, nan_to_null=True) for k, v in columns.items()))
    basis = (
        cases["price_basis"] if "price_basis" in cases.columns else pl.Series([None] * cases.height, dtype=pl.String)
    )
    return out.with_columns(
        *(
            pl.lit(float(getattr(s, k))).alias(k)
            for k in ("decode_mfu_frac", "decode_mbu_frac", "prefill_mfu_frac", "prefill_mbu_frac")
        ),
        pl.Series("usd_per_chip_hour", p),
        basis.fill_null("the scenario's usd_per_chip_hour").alias("price_basis"),
        pl.lit(s.kv_cache_format).alias("kv_cache_format"),
    )


def sparsity(models: pl.DataFrame) -> pl.DataFrame:
    """The balance batch at the lecture's R = 300, by parameters, by experts and by the lecture's own figure."""
    said = np.array([LECTURE_SPARSITY.get(m.lower(), (np.nan, np.nan)) for m in models["model"]], dtype=float)
    a = inputs.arrays(models, ("params_total", "params_active", "num_routed_experts", "experts_per_token"))

    def f(name, values):
        return pl.Series(name, values, dtype=pl.Float64, nan_to_null=True)

    return models.select("model").with_columns(
        f("lecture_sparsity_ratio", said[:, 0] / said[:, 1]),
        f("balance_batch_param_r300_seqs", roofline.balance_batch(LECTURE_R, a["params_total"], a["params_active"])),
        f(
            "balance_batch_expert_r300_seqs",
            roofline.balance_batch(LECTURE_R, a["num_routed_experts"], a["experts_per_token"]),
        ),
        f("balance_batch_lecture_r300_seqs", roofline.balance_batch(LECTURE_R, said[:, 0], said[:, 1])),
    )


def run(ctx) -> None:
    s = ctx.scenario("base")
    cases = with_chip_prices(
        _with_layout(ctx.query(inputs.CASES_SQL), s), ctx.query("select * from rental_prices"), s, ctx.as_of
    )
    computed, computed_as = inputs.one_per_architecture(cases)  # a model's re-releases: copies of its curves
    ctx.write(CURVES, (inputs.with_twins(chunk, computed_as) for chunk in curve_frames(computed, s)))
    ctx.write(SUMMARY, summary(cases, s))
    ctx.write(SPARSITY, sparsity(ctx.query(MODELS_SQL)))
