"""The deployment model the price inferences price open models with: each open model on the scenario's chip and
weight format at its reference layout, with the scenario's run settings.

Selection and joins only: the architecture is ``model_derived``, the chip ``hardware`` / ``hardware_derived``,
the layout :func:`econ.physics.layout_search.default_layout` (the one ``serving_curves`` uses) and the
efficiencies those of :func:`econ.analyses.inference_efficiencies.serving_scenario`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from econ.analyses import deployment_inputs
from econ.analyses.inference_efficiencies import serving_scenario
from econ.analyses.scenario import Scenario
from econ.analyses.traffic import TrafficMix, traffic_mix
from econ.physics import deployment, layout_search, roofline, sharding, traffic_cost

INPUTS = ("models", "model_derived", "hardware", "hardware_derived", "scenarios", "calibration_parameters")
"""What :func:`serving` reads (an analysis that calls it lists these among its own INPUTS)."""


@dataclass(frozen=True)
class Serving:
    """Open models at the scenario chip × format, one row per model with its default layout (``cases``)."""

    scenario: Scenario
    cases: pl.DataFrame

    @property
    def kv_scale(self) -> float:
        return deployment_inputs.cache_scale(self.scenario)

    def _picked(self, arch_models) -> tuple[np.ndarray, pl.DataFrame]:
        index = {m: i for i, m in enumerate(self.cases["model"].to_list())}
        wanted = list(arch_models)
        have = np.array([m in index for m in wanted], dtype=bool)
        return have, self.cases[[index[m] for m, h in zip(wanted, have) if h]]

    def rows(self, arch_models) -> tuple[np.ndarray, dict, dict, dict, np.ndarray]:
        """For ``arch_models`` (one per price row): which have a modelled deployment, and the model, chip and
        layout arrays and the bytes per weight of those rows, in order."""
        have, picked = self._picked(arch_models)
        model = deployment_inputs.model_arrays(picked)
        chip = deployment_inputs.chip_arrays(picked, self.scenario.kv_cache_format)
        layout = {k: picked[k].to_numpy() for k in deployment.LAYOUT_KEYS}
        return have, model, chip, layout, picked["weight_bytes_per_param"].to_numpy().astype(float)

    def settings(self, pool: str, arch_models, shape: tuple = (-1,)) -> dict:
        """The scenario's run settings of a pool (decode or prefill) for the rows :meth:`rows` picks of
        ``arch_models``: each row's bytes per weight and the efficiencies of its chip's architecture family and its
        model's attention kind, reshaped to ``shape`` (as the caller broadcasts the rows)."""
        _, picked = self._picked(arch_models)
        b_w, architecture, attention = (
            picked[k].to_numpy().reshape(shape) for k in ("weight_bytes_per_param", "architecture", "attention")
        )
        return deployment_inputs.settings(self.scenario, pool, b_w.astype(float), architecture, attention)


def serving_from(scenario: Scenario, cases: pl.DataFrame) -> Serving:
    """:class:`Serving` of a scenario over ``deployment_inputs.CASES_SQL`` rows: the scenario's chip and weight
    format, each model at its default layout (a model with none that fits is left out)."""
    rows = cases.filter((pl.col("chip") == scenario.serving_chip) & (pl.col("number_format") == scenario.weight_format))
    if rows.height == 0:
        return Serving(scenario, rows)
    layout = layout_search.default_layout(
        deployment_inputs.model_arrays(rows),
        deployment_inputs.chip_arrays(rows),
        weight_bytes_per_param=rows["weight_bytes_per_param"].to_numpy(),
        context_tokens=scenario.context_tokens,
        kv_scale=deployment_inputs.cache_scale(scenario),
        hbm_reserve_frac=scenario.hbm_reserve_frac,
    )
    with_layout = rows.with_columns(pl.Series(k, layout[k]) for k in deployment.LAYOUT_KEYS)
    return Serving(scenario, with_layout.filter(pl.col("tensor_parallel").is_not_nan()))


def serving(ctx) -> Serving:
    """The open models' deployments for the price inferences of the database being built."""
    base = ctx.scenario("base")
    scenario = serving_scenario(base, base.serving_chip, ctx.con)
    return serving_from(scenario, ctx.query(deployment_inputs.CASES_SQL))


@dataclass(frozen=True)
class TrafficCosts:
    """Every deployed open model's prefill and decode at the fleet's traffic mix (``frame``: one row per model with
    ``true_prefill_flop_per_input_token``, ``prefill_usd_per_input_token``, ``decode_flop_per_output_token`` (each
    with its routed-expert and attention parts), ``attention_mfu_over_shared_ratio`` (its attention kind's share over
    the scenario's shared one), ``attention_peak_over_peak_ratio`` (the cache format's peak over the weights'),
    ``decode_kv_read_bytes_per_output_token``, ``weight_bytes_per_step``,
    ``balance_batch_seqs``, ``decode_memory_cap_seqs``, ``replica_chips``), the decode cost per generated token on
    ``batch`` (``decode``: models × batches, inf where a batch does not fit) and the mix it was evaluated at."""

    frame: pl.DataFrame
    decode: np.ndarray
    batch: np.ndarray
    mix: TrafficMix
    prompt_cache_hit_frac: float

    def for_models(self, arch_models) -> tuple[np.ndarray, pl.DataFrame, np.ndarray]:
        """(which of ``arch_models`` are deployed, their rows of ``frame`` and of ``decode``, in order)."""
        index = {m: i for i, m in enumerate(self.frame["model"].to_list())}
        wanted = list(arch_models)
        have = np.array([m in index for m in wanted], dtype=bool)
        rows = [index[m] for m, h in zip(wanted, have) if h]
        return have, self.frame[rows], self.decode[rows]


def traffic_costs(deployed: Serving) -> TrafficCosts:
    """Prefill and decode of every deployed open model at the traffic mix (:mod:`econ.physics.traffic_cost`)."""
    s = deployed.scenario
    mix = traffic_mix(s)
    models = deployed.cases["model"].to_list()
    have, model, chip, layout, b_w = deployed.rows(models)
    if not have.any():
        empty = pl.DataFrame(schema={"model": pl.String})
        decode = np.zeros((0, traffic_cost.DECODE_BATCH.size))
        return TrafficCosts(empty, decode, traffic_cost.DECODE_BATCH, mix, s.prompt_cache_hit_frac)
    pre = traffic_cost.prefill_at_mix(
        model,
        chip,
        layout,
        mix.contexts_tokens,
        mix.shares_frac,
        s.prompt_cache_hit_frac,
        kv_scale=deployed.kv_scale,
        settings=deployed.settings("prefill", models),
    )
    decode_settings = deployed.settings("decode", models)
    dec = traffic_cost.decode_at_context(
        model, chip, layout, mix.decode_context_tokens, kv_scale=deployed.kv_scale, settings=decode_settings
    )
    attention_share = np.broadcast_to(np.asarray(decode_settings["attention_mfu"], dtype=float), (len(models),))
    cap = sharding.max_batch_per_replica(
        model,
        layout,
        chip,
        mix.decode_context_tokens,
        weight_bytes_per_param=b_w,
        kv_scale=deployed.kv_scale,
        hbm_reserve_frac=s.hbm_reserve_frac,
    )
    r = roofline.critical_batch_ratio(chip["peak_flop_per_s"], chip["hbm_bandwidth_bytes_per_s"], b_w)
    frame = pl.DataFrame(
        {
            "model": models,
            "true_prefill_flop_per_input_token": pre["flop_per_token"],
            "prefill_expert_flop_per_input_token": pre["expert_flop_per_token"],
            "prefill_attention_flop_per_input_token": pre["attention_flop_per_token"],
            "prefill_usd_per_input_token": pre["usd_per_token"],
            "decode_flop_per_output_token": dec["flop_per_token"],
            "decode_expert_flop_per_output_token": dec["expert_flop_per_token"],
            "decode_attention_flop_per_output_token": dec["attention_flop_per_token"],
            "decode_kv_read_bytes_per_output_token": dec["kv_read_bytes_per_token"],
            "attention_mfu_over_shared_ratio": attention_share / s.attention_mfu_frac,
            "attention_peak_over_peak_ratio": chip["attention_peak_flop_per_s"] / chip["peak_flop_per_s"],
            "weight_bytes_per_step": deployed.cases["params_total"].to_numpy() * b_w,
            "balance_batch_seqs": roofline.balance_batch(
                r, deployed.cases["params_total"].to_numpy(), model["params_active"]
            ),
            "decode_memory_cap_seqs": cap,
            "replica_chips": sharding.replica_chips(
                layout["tensor_parallel"], layout["attention_data_parallel"], layout["pipeline_parallel"]
            ),
        }
    ).with_columns(pl.col(pl.Float64).fill_nan(None))
    return TrafficCosts(frame, dec["usd_per_token"], traffic_cost.DECODE_BATCH, mix, s.prompt_cache_hit_frac)
