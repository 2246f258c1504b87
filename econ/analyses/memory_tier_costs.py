"""``memory_tier_costs``: what keeping a token's KV cache for a hold time costs in each tier, or recomputing it.

Lecture g.2–g.4; the arithmetic is :mod:`econ.physics.memory_tiers`. Recompute runs on the scenario's
serving chip in its weight format at its prefill mfu and $/chip-hour.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.analyses.inputs import models_at
from econ.errors import EconError
from econ.physics import hardware, memory_tiers
from econ.results import ResultColumn as C
from econ.results import ResultTable
from econ.units import usd_per_token_to_usd_per_mtok

NAME = "memory_tier_costs"
INPUTS = ("models", "model_derived", "hardware", "hardware_derived", "memory_tiers", "scenarios")

HOLD_TIMES_S = np.unique(np.concatenate([10.0 ** np.arange(-3.0, 6.5, 0.5), [300.0, 3600.0]]))
"""Hold times: 1 ms … ~1 month on a half-decade grid, plus the 5-minute and 1-hour cache TTLs."""

MEMORY_TIER_COSTS = ResultTable(
    name="memory_tier_costs",
    grain="model x mechanism device x hold time",
    key=("model", "mechanism", "device", "hold_time_s"),
    description=(
        "Keeping a token's KV cache for a hold time: retrieve + hold cost per mechanism (recompute on the scenario's "
        "serving chip and weight format at its prefill mfu and $/chip-hour, or a memory tier), KV at the scenario's "
        "kv_cache_format (lecture g.2-g.4)"
    ),
    columns=(
        C("model", "str", "", "key", "Model (models.model)"),
        C("mechanism", "str", "", "key", "recompute, or the memory tier (hbm, ddr, flash, disk) of memory_tiers"),
        C("device", "str", "", "key", "The device the figures describe (recompute: the scenario's chip and format)"),
        C("hold_time_s", "float", "s", "key", "How long the token's KV is kept before it is read back"),
        C(
            "retrieve_usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "One-off cost to get the KV back: a forward pass (recompute), a read at the tier's bandwidth, 0 for HBM",
            memory_tiers.tier_retrieve_usd_per_token,
        ),
        C(
            "hold_usd_per_mtok_s",
            "float",
            "USD/MTok/s",
            "bound",
            "Cost per second of holding (0 for recompute)",
            memory_tiers.hold_usd_per_token_s,
        ),
        C(
            "cost_usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "Retrieve + hold x hold time",
            memory_tiers.tier_cost_usd_per_token,
        ),
        C(
            "cheapest",
            "bool",
            "",
            "check",
            "True for the cheapest mechanism at this model and hold time",
            memory_tiers.cheapest_mask,
        ),
        C(
            "drain_time_s",
            "float",
            "s",
            "derived",
            "Device capacity / bandwidth: the hold time where its hold and retrieve costs are equal (lecture g.4)",
            hardware.drain_time_s,
        ),
    ),
)
TABLES = (MEMORY_TIER_COSTS,)


def costs(models: pl.DataFrame, chip_row: pl.DataFrame, tiers: pl.DataFrame, s) -> pl.DataFrame:
    """The table for ``models`` (KV at the scenario's format), the serving chip's row of hardware_derived and tiers."""
    if not chip_row.height:
        raise EconError(
            f"scenario serving_chip {s.serving_chip} has no {s.weight_format} peak (the scenario's weight_format)",
            "set weight_format to a format the chip has a peak for in data/scenarios.csv",
        )

    def a(frame, name):
        return frame[name].cast(pl.Float64).fill_null(np.nan).to_numpy()

    models = models.filter(pl.col("kv_bytes_per_token").is_not_null())
    kv = a(models, "kv_bytes_per_token")[:, None]
    tiers = tiers.sort("tier", "device")
    mechanisms = [memory_tiers.RECOMPUTE, *tiers["tier"].to_list()]
    devices = [f"{s.serving_chip} {s.weight_format} forward pass", *tiers["device"].to_list()]
    cap, bw, usd = (a(tiers, c)[None, :] for c in ("capacity_bytes", "bandwidth_bytes_per_s", "usd_per_hour"))
    remat = memory_tiers.recompute_usd_per_token(
        a(models, "params_active"), float(chip_row["peak_flop_per_s"][0]), s.usd_per_chip_hour, mfu=s.prefill_mfu_frac
    )[:, None]
    stored = memory_tiers.tier_retrieve_usd_per_token(tiers["tier"].to_numpy()[None, :], kv, bw, usd)
    retrieve = np.concatenate([remat, stored], axis=1)
    hold = np.concatenate([np.zeros_like(remat), memory_tiers.hold_usd_per_token_s(kv, cap, usd)], axis=1)
    drain = np.concatenate(
        [[np.nan], hardware.drain_time_s(a(tiers, "capacity_bytes"), a(tiers, "bandwidth_bytes_per_s"))]
    )
    cost = memory_tiers.tier_cost_usd_per_token(retrieve[:, :, None], hold[:, :, None], HOLD_TIMES_S[None, None, :])
    n_m, n_k, n_t = cost.shape
    return pl.DataFrame(
        {
            "model": np.repeat(models["model"].to_numpy(), n_k * n_t),
            "mechanism": np.tile(np.repeat(mechanisms, n_t), n_m),
            "device": np.tile(np.repeat(devices, n_t), n_m),
            "hold_time_s": np.tile(HOLD_TIMES_S, n_m * n_k),
            "retrieve_usd_per_mtok": usd_per_token_to_usd_per_mtok(np.repeat(retrieve.reshape(-1), n_t)),
            "hold_usd_per_mtok_s": usd_per_token_to_usd_per_mtok(np.repeat(hold.reshape(-1), n_t)),
            "cost_usd_per_mtok": usd_per_token_to_usd_per_mtok(cost.reshape(-1)),
            "cheapest": memory_tiers.cheapest_mask(cost, axis=1).reshape(-1),
            "drain_time_s": np.tile(np.repeat(drain, n_t), n_m),
        }
    ).with_columns(pl.col("drain_time_s").fill_nan(None))


def run(ctx) -> None:
    s = ctx.scenario("base")
    known = ctx.query("select chip from hardware where chip = ?", [s.serving_chip])
    if not known.height:
        raise EconError(
            f"scenario serving_chip {s.serving_chip!r} is not in hardware", "use a chip id from data/hardware.csv"
        )
    chip = ctx.query(
        "select * from hardware_derived where chip = ? and number_format = ?", [s.serving_chip, s.weight_format]
    )
    ctx.write(
        MEMORY_TIER_COSTS, costs(models_at(ctx, s.kv_cache_format), chip, ctx.query("select * from memory_tiers"), s)
    )
