"""``markup_costs``: what each price component of an open model costs to serve, per chip it could run on — the cost
side of the markup model (:mod:`econ.fits.markups`, ``fit_markups``) and of every seller's implied margin
(``implied_margins``).

Per open model × chip (the scenario's serving chip at its $/chip-hour, and every chip with a rental quote at the
median of its quotes), at that chip's calibrated efficiencies (:func:`econ.analyses.inference_efficiencies.
serving_scenario`), the model's default layout and the fleet's traffic mix (:func:`econ.analyses.inference_serving.
traffic_costs`):

- **input**: prefill cost per uncached prompt token;
- **output**: decode cost per generated token at the largest batch of the grid whose tokens/s per user meet the
  scenario's ``user_speed_target_tokens_per_s`` (t/s/user = chips·p/(c·B): the step time from the cost), within memory;
  not costed (null, ``speed_target_met`` false) where even the replica's fastest batch is slower than the target: the
  default layout is the fewest chips that hold the weights, and a dense 405B model on 4 GB200s cannot decode 50
  tokens/s per user, so the batch-1 cost ($46/MTok) would be a cost no seller pays;
- **cache read / write / storage** (reference chip): the ``ddr`` tier of ``memory_tier_costs`` — read back from host
  memory (its retrieve cost), a write = computing the prompt (input cost) + holding it for the duration sold, storage
  = holding for an hour.

Selection and joins only; the physics is the deployment model's.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs
from econ.analyses.inference_efficiencies import serving_scenario
from econ.analyses.inference_serving import INPUTS as SERVING_INPUTS
from econ.analyses.inference_serving import serving_from, traffic_costs
from econ.formula import formula
from econ.physics import memory_tiers
from econ.results import ResultColumn as C
from econ.results import ResultTable
from econ.units import MEGA, SECONDS_PER_HOUR

NAME = "markup_costs"
INPUTS = (*SERVING_INPUTS, "rental_prices", "memory_tier_costs")
"""What :func:`chip_costs` and :func:`cache_costs` read."""


RENTAL_KINDS = ("on_demand", "market_index", "capacity_block")
"""Rental quotes a seller could pay for a chip (reserved and owner-TCO figures are not a market price)."""

RENTAL_SQL = f"""
select chip, median(usd_per_chip_hour) as usd_per_chip_hour, count(*) as quotes,
       min(usd_per_chip_hour) as low_usd_per_chip_hour, max(usd_per_chip_hour) as high_usd_per_chip_hour
from rental_prices
where kind in ({", ".join(f"'{k}'" for k in RENTAL_KINDS)})
group by chip order by chip
"""

CACHE_TIER = "ddr"
"""Memory tier whose cost the cache components are set against (host memory next to the chip)."""


@formula("B_ref = max B with chips·p/(c(B)·B) ≥ target tokens/s per user; c_out = c(B_ref)", "deployment model")
def output_cost_at_speed(decode_usd_per_token, batch, replica_chips, usd_per_chip_hour, target_tokens_per_s):
    """(decode cost per token [$/token], batch [sequences], best tokens/s per user of the replica) at the largest grid
    batch meeting the per-user speed target. NaN cost and batch where no batch of the replica meets it (its fastest
    batch is slower than the target): no seller serves at that speed on that replica, and the batch-1 cost would be
    a cost nobody pays (Llama-3.1-405B on 4 GB200s: $46/MTok), so it is not costed."""
    cost = np.asarray(decode_usd_per_token, dtype=float)
    b = np.broadcast_to(np.asarray(batch, dtype=float), cost.shape)
    chips = np.asarray(replica_chips, dtype=float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        speed = chips * (usd_per_chip_hour / SECONDS_PER_HOUR) / (cost * b)
    ok = np.isfinite(cost) & (speed >= target_tokens_per_s)
    last = cost.shape[1] - 1 - np.argmax(ok[:, ::-1], axis=1)
    met = ok.any(axis=1)
    rows = np.arange(cost.shape[0])
    chosen = np.where(met, cost[rows, last], np.nan)
    fastest = np.nanmax(np.where(np.isfinite(speed), speed, np.nan), axis=1, initial=-np.inf)
    fastest = np.where(np.isfinite(fastest), fastest, np.nan)
    return chosen, np.where(np.isfinite(chosen), b[rows, last], np.nan), fastest


@formula("c_in = prefill $/token at the mix; c_out at the speed-target batch; × chip rental / scenario $/h", "module")
def chip_costs(con, base, as_of=None) -> pl.DataFrame:
    """One row per open model × chip: ``usd_per_chip_hour`` (the rental median, or the scenario's on its serving
    chip), ``reference`` (the serving chip), input and output cost per MTok, the output's batch."""
    rentals = pl.DataFrame(con.sql(RENTAL_SQL))
    price = {r["chip"]: float(r["usd_per_chip_hour"]) for r in rentals.iter_rows(named=True)}
    cases = pl.DataFrame(con.sql(deployment_inputs.CASES_SQL))
    chips = [base.serving_chip, *sorted(c for c in price if c != base.serving_chip)]
    frames = []
    for chip in chips:  # one deployment per chip (a handful), each vectorised over the models
        scenario = serving_scenario(dataclasses.replace(base, serving_chip=chip), chip, con)
        deployed = serving_from(scenario, cases)
        if deployed.cases.height == 0:
            continue
        costs = traffic_costs(deployed)
        p = scenario.usd_per_chip_hour if chip == base.serving_chip else price[chip]
        scale = p / scenario.usd_per_chip_hour  # costs are linear in the chip-hour price
        out, batch, fastest = output_cost_at_speed(
            costs.decode,
            costs.batch,
            costs.frame["replica_chips"].fill_null(np.nan).to_numpy(),
            scenario.usd_per_chip_hour,
            scenario.user_speed_target_tokens_per_s,
        )
        frames.append(
            costs.frame.select(
                pl.col("model").alias("arch_model"),
                pl.lit(chip).alias("chip"),
                pl.lit(chip == base.serving_chip).alias("reference"),
                pl.lit(p).alias("usd_per_chip_hour"),
                (pl.col("prefill_usd_per_input_token") * MEGA * scale).alias("input_cost_usd_per_mtok"),
                pl.Series("output_cost_usd_per_mtok", out * MEGA * scale),
                pl.Series("output_batch_seqs", batch),
                pl.Series("fastest_tokens_per_s_per_user", fastest),
                pl.Series("speed_target_met", np.isfinite(out)),
            )
        )
    if not frames:
        return pl.DataFrame(
            schema={
                "arch_model": pl.String,
                "chip": pl.String,
                "reference": pl.Boolean,
                "usd_per_chip_hour": pl.Float64,
                "input_cost_usd_per_mtok": pl.Float64,
                "output_cost_usd_per_mtok": pl.Float64,
                "output_batch_seqs": pl.Float64,
                "fastest_tokens_per_s_per_user": pl.Float64,
                "speed_target_met": pl.Boolean,
            }
        )
    return pl.concat(frames).with_columns(pl.col(pl.Float64).fill_nan(None))


def cache_costs(con) -> pl.DataFrame:
    """Per model: the cache tier's retrieve cost [USD/MTok] and hold cost [USD/MTok per second]."""
    return pl.DataFrame(
        con.sql(
            f"""
        select model as arch_model, any_value(retrieve_usd_per_mtok) as cache_retrieve_usd_per_mtok,
               any_value(hold_usd_per_mtok_s) as cache_hold_usd_per_mtok_s, any_value(device) as cache_device
        from memory_tier_costs where mechanism = '{CACHE_TIER}' group by model order by model
        """
        )
    )


MARKUP_COSTS = ResultTable(
    name="markup_costs",
    grain="open model x chip it could run on (the scenario's serving chip and every chip with a rental quote)",
    key=("arch_model", "chip"),
    description=(
        "The calibrated serving cost of each price component of an open model on each chip it could run on: "
        "prefill per uncached prompt token and decode per generated token at the largest batch meeting the "
        "scenario's tokens/s per user, null where the default replica's fastest batch is slower (the fleet's "
        "traffic mix, the chip's calibrated efficiencies, the default layout, the chip's median rental quote or "
        "the scenario's $/chip-hour on its serving chip); the cache "
        "components on the ddr tier of memory_tier_costs (retrieve, and hold per second)"
    ),
    columns=(
        C("arch_model", "str", "", "key", "Open model (models.model)"),
        C("chip", "str", "", "key", "Chip (hardware.chip)"),
        C("reference", "bool", "", "label", "The scenario's serving chip: the cost the markup model is fitted to"),
        C(
            "usd_per_chip_hour",
            "float",
            "USD/chip-hour",
            "input",
            "Median rental quote of the chip (on-demand, index, capacity block), or the scenario's on its chip",
        ),
        C(
            "input_cost_usd_per_mtok",
            "float",
            "USD/MTok",
            "calibrated",
            "Prefill cost per uncached prompt token at the traffic mix",
            chip_costs,
        ),
        C(
            "output_cost_usd_per_mtok",
            "float",
            "USD/MTok",
            "calibrated",
            "Decode cost per generated token at the batch meeting the per-user speed target",
            output_cost_at_speed,
        ),
        C(
            "output_batch_seqs",
            "float",
            "sequences",
            "calibrated",
            "The decode batch that cost is at",
            output_cost_at_speed,
        ),
        C(
            "fastest_tokens_per_s_per_user",
            "float",
            "tokens/s",
            "calibrated",
            "The replica's fastest decode per user (its smallest batch); below the scenario's target the output is "
            "not costed",
            output_cost_at_speed,
        ),
        C(
            "speed_target_met",
            "bool",
            "",
            "check",
            "Some batch of the default replica meets the per-user speed target (false: output cost left null)",
        ),
        C(
            "cache_retrieve_usd_per_mtok",
            "float",
            "USD/MTok",
            "bound",
            "Reading a cached token's KV back from the cache tier (memory_tier_costs.retrieve_usd_per_mtok)",
            memory_tiers.tier_retrieve_usd_per_token,
        ),
        C(
            "cache_hold_usd_per_mtok_s",
            "float",
            "USD/MTok/s",
            "bound",
            "Holding a cached token's KV in the cache tier per second (memory_tier_costs.hold_usd_per_mtok_s)",
            memory_tiers.hold_usd_per_token_s,
        ),
        C("cache_device", "str", "", "label", "The cache tier's device (memory_tiers)"),
    ),
)
TABLES = (MARKUP_COSTS,)


def run(ctx) -> None:
    costs = chip_costs(ctx.con, ctx.scenario("base"))
    cache = cache_costs(ctx.con)
    ctx.write(MARKUP_COSTS, costs.join(cache, on="arch_model", how="left").sort("arch_model", "chip"))
