"""Scenarios, read once into one typed object whose field names are the assumption names (with their units).

Scenario ``base`` holds the lecture's assumptions; another scenario lists only what it changes and
inherits the rest from ``base``. :data:`NUMERIC` and :data:`CATEGORICAL` declare every assumption an
analysis reads, with the default used when a scenario has none (``None``: required). Decode and
prefill efficiencies are separate fields; nothing is renamed on the way from ``data/scenarios.csv``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields

import duckdb
import polars as pl

from econ.errors import EconError
from econ.formats import BYTES_PER_VALUE, FORMATS

NUMERIC: dict[str, float | None] = {
    # serving and price inference
    "usd_per_chip_hour": None,
    "gross_margin_frac": 0.0,  # price = cost
    "prefill_mfu_frac": 1.0,  # efficiencies default to the pure roofline
    "prefill_mbu_frac": 1.0,
    "decode_mfu_frac": 1.0,
    "decode_mbu_frac": 1.0,
    "expert_mfu_frac": 1.0,
    "context_tokens": 32_000.0,
    "tier_context_density_exponent_ratio": 0.0,  # 0: prompts spread evenly over a tier (the midpoint rule)
    "frontier_active_params": 1e11,
    "batch_multiple_over_balance_ratio": 2.0,
    "step_time_target_s": 0.02,
    # deployment (layouts, communication, speculation): defaults are the idealised bound
    "ttft_target_s": 2.0,
    "link_bandwidth_frac": 1.0,
    "scale_up_latency_s": 0.0,
    "scale_out_latency_s": 0.0,
    "step_overhead_s": 0.0,
    "speculative_tokens": 0.0,
    "speculative_acceptance_frac": 0.0,
    "hbm_reserve_frac": 0.0,
    "max_replica_chips": 512.0,
    # the calibrated serving model's further terms (econ.physics.step_time): 0 in the idealised bound
    "attention_mfu_frac": float("nan"),  # NaN: attention at the pool's mfu
    "expert_mbu_frac": float("nan"),  # NaN: the routed experts' weight reads at the pool's mbu
    "layer_overhead_s": 0.0,
    "sequence_overhead_s": 0.0,
    "expert_imbalance_scale_ratio": 0.0,
    "ttft_overhead_s": 0.0,
    "ttft_stream_steps": 0.0,
    "queue_wait_frac": 0.0,
    "burst_wait_frac": 0.0,
    # traffic and fleet
    "tokens_served_per_s": None,
    "input_output_token_ratio": None,
    "prompt_cache_hit_frac": None,
    "user_speed_target_tokens_per_s": None,
    "pue_ratio": None,
    "server_power_ratio": None,
    "serving_peak_to_mean_ratio": None,
    "training_fleet_chips": None,
    # training and the token balance
    "deployment_months": None,
    "models_per_family": None,
    "model_discard_frac": 0.0,
    "cost_share_pretrain_frac": None,
    "cost_share_rl_frac": None,
    "cost_share_inference_frac": None,
    "rl_flop_per_param_token": None,
    "rl_efficiency_ratio": None,
    "decode_efficiency_ratio": None,
    "chinchilla_tokens_per_param": None,
    "equal_cost_exponent_ratio": 1.0,
    "pretrain_mfu_frac": None,
}
"""Numeric assumptions and their defaults (None = the scenario must give it)."""

CATEGORICAL: dict[str, str | None] = {
    "serving_chip": None,
    "weight_format": "bf16",
    "kv_cache_format": "bf16",
    "training_chip": "",  # '' = none (the training tables price on serving_chip)
}
"""Categorical assumptions (the ``text`` column) and their defaults."""

CONTEXT_SHARE = re.compile(r"^context_share_(\d+)_tokens_frac$")
"""The prompt-length mix: ``context_share_<tokens>_tokens_frac`` rows, shares that add up to 1."""


@dataclass(frozen=True)
class Assumption:
    """One row of ``scenarios``: value (numeric) or text (categorical), unit, range, alternatives, why."""

    name: str
    value: float | None
    text: str | None
    unit: str
    low: float | None
    high: float | None
    alternatives: tuple[str, ...]
    rationale: str
    source_url: str

    @property
    def range(self) -> tuple[float, float]:
        """(low, high), falling back to the value where a bound is blank."""
        return (self.value if self.low is None else self.low, self.value if self.high is None else self.high)


@dataclass(frozen=True)
class Scenario:
    """Every assumption of one scenario, typed; a field's name is its ``scenarios.name`` (units in the name).

    ``assumptions`` holds the rows (ranges, alternatives, rationale); ``defaulted`` the fields the scenario
    did not give, which took the default of :data:`NUMERIC` / :data:`CATEGORICAL`.
    """

    name: str
    # serving and price inference
    usd_per_chip_hour: float
    gross_margin_frac: float
    prefill_mfu_frac: float
    prefill_mbu_frac: float
    decode_mfu_frac: float
    decode_mbu_frac: float
    expert_mfu_frac: float
    context_tokens: float
    tier_context_density_exponent_ratio: float
    frontier_active_params: float
    batch_multiple_over_balance_ratio: float
    step_time_target_s: float
    # deployment
    ttft_target_s: float
    link_bandwidth_frac: float
    scale_up_latency_s: float
    scale_out_latency_s: float
    step_overhead_s: float
    speculative_tokens: float
    speculative_acceptance_frac: float
    hbm_reserve_frac: float
    max_replica_chips: float
    attention_mfu_frac: float
    expert_mbu_frac: float
    layer_overhead_s: float
    sequence_overhead_s: float
    expert_imbalance_scale_ratio: float
    ttft_overhead_s: float
    ttft_stream_steps: float
    queue_wait_frac: float
    burst_wait_frac: float
    # traffic and fleet
    tokens_served_per_s: float
    input_output_token_ratio: float
    prompt_cache_hit_frac: float
    user_speed_target_tokens_per_s: float
    pue_ratio: float
    server_power_ratio: float
    serving_peak_to_mean_ratio: float
    training_fleet_chips: float
    # training and the token balance
    deployment_months: float
    models_per_family: float
    model_discard_frac: float
    cost_share_pretrain_frac: float
    cost_share_rl_frac: float
    cost_share_inference_frac: float
    rl_flop_per_param_token: float
    rl_efficiency_ratio: float
    decode_efficiency_ratio: float
    chinchilla_tokens_per_param: float
    equal_cost_exponent_ratio: float
    pretrain_mfu_frac: float
    # categorical
    serving_chip: str
    weight_format: str
    kv_cache_format: str
    training_chip: str
    # the prompt-length mix: (prompt tokens, share of requests), shares add up to 1
    context_shares: tuple[tuple[float, float], ...]
    assumptions: dict[str, Assumption] = field(repr=False)
    defaulted: tuple[str, ...] = ()
    # the calibrated scenario's efficiencies per architecture family (hardware.architecture): field -> value
    efficiencies_by_architecture: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)
    # ... and per attention kind of the model (model_derived.attention: gqa, mla, hybrid): field -> value
    efficiencies_by_attention: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)
    efficiency_basis: str = "assumed"  # "bound" (every efficiency 1), "assumed" (scenarios.csv) or "calibrated"
    # a stated mix of output lengths (output tokens, share of requests); () for one length (input_output_token_ratio)
    output_shares: tuple[tuple[float, float], ...] = ()

    def assumption(self, name: str) -> Assumption:
        """The row behind a field (a defaulted field has none: an error naming the row to add)."""
        try:
            return self.assumptions[name]
        except KeyError:
            raise EconError(
                f"scenario {self.name!r} has no assumption {name!r}", f"add a row 'base,{name},…' to data/scenarios.csv"
            ) from None

    def range(self, name: str) -> tuple[float, float]:
        """(low, high) of a numeric field; (value, value) for a defaulted one."""
        row = self.assumptions.get(name)
        value = getattr(self, name)
        return row.range if row is not None else (value, value)

    def alternatives(self, name: str) -> tuple[str, ...]:
        """A categorical field's value followed by its listed alternatives (no duplicates)."""
        row = self.assumptions.get(name)
        return tuple(dict.fromkeys((getattr(self, name), *(row.alternatives if row is not None else ()))))

    @property
    def contexts_tokens(self) -> tuple[float, ...]:
        return tuple(c for c, _ in self.context_shares)

    @property
    def shares_frac(self) -> tuple[float, ...]:
        return tuple(s for _, s in self.context_shares)


def _rows(frame: pl.DataFrame) -> dict[str, dict[str, Assumption]]:
    by_name: dict[str, dict[str, Assumption]] = {}
    for row in frame.iter_rows(named=True):
        alternatives = tuple(a.strip() for a in (row.get("alternatives") or "").split("|") if a.strip())
        by_name.setdefault(row["scenario"], {})[row["name"]] = Assumption(
            row["name"],
            row["value"],
            row.get("text"),
            row["unit"],
            row["low"],
            row["high"],
            alternatives,
            row["rationale"],
            row["source_url"],
        )
    return by_name


def _typed(name: str, rows: dict[str, Assumption]) -> Scenario:
    values, texts, defaulted = {}, {}, []
    for field_name, default in NUMERIC.items():
        row = rows.get(field_name)
        if row is not None and row.value is None:
            raise EconError(
                f"assumption {field_name!r} of scenario {name!r} has no value",
                "give it a number in the value column of data/scenarios.csv",
            )
        if row is None:
            if default is None:
                raise EconError(
                    f"scenario {name!r} has no assumption {field_name!r}",
                    f"add a row 'base,{field_name},…' to data/scenarios.csv",
                )
            defaulted.append(field_name)
        values[field_name] = float(row.value) if row is not None else float(default)
    for field_name, default in CATEGORICAL.items():
        row = rows.get(field_name)
        if row is None or not row.text:
            if default is None:
                raise EconError(
                    f"scenario {name!r} has no assumption {field_name!r}",
                    f"add a row 'base,{field_name},,<value>,…' to data/scenarios.csv (text column)",
                )
            defaulted.append(field_name)
        texts[field_name] = row.text if row is not None and row.text else default
    for field_name, allowed in (("weight_format", FORMATS), ("kv_cache_format", tuple(BYTES_PER_VALUE))):
        if texts[field_name] not in allowed:  # a typo must not fall back silently
            raise EconError(
                f"scenario {name!r} sets {field_name} to {texts[field_name]!r}, not a number format econ can use here",
                f"use one of {', '.join(allowed)} in data/scenarios.csv",
            )
    mix = sorted(
        (float(m.group(1)), row.value)
        for key, row in rows.items()
        if (m := CONTEXT_SHARE.match(key)) and row.value is not None
    )
    if mix:
        total = sum(w for _, w in mix)
        if abs(total - 1.0) > 1e-3:
            raise EconError(
                f"the context_share_*_tokens_frac assumptions of scenario {name!r} add up to {total:g}",
                "make the shares of the prompt-length mix add up to 1 in data/scenarios.csv",
            )
    else:
        mix = [(values["context_tokens"], 1.0)]
        defaulted.append("context_share_*_tokens_frac")
    return Scenario(
        name=name,
        **values,
        **texts,
        context_shares=tuple(mix),
        assumptions=rows,
        defaulted=tuple(defaulted),
        efficiency_basis=efficiency_basis(values),
    )


EFFICIENCY_FIELDS = (
    "prefill_mfu_frac",
    "decode_mfu_frac",
    "expert_mfu_frac",
    "prefill_mbu_frac",
    "decode_mbu_frac",
    "link_bandwidth_frac",
)
"""The serving efficiencies (with ``step_overhead_s``) a calibration replaces."""


OWN_EFFICIENCY_FIELDS = ("attention_mfu_frac", "expert_mbu_frac")
"""Efficiencies of one kernel class that default to NaN (the pool's own value): stated, they time that class apart."""
FIXED_COST_FIELDS = ("step_overhead_s", "layer_overhead_s", "sequence_overhead_s")


def efficiency_basis(values: dict) -> str:
    """``bound`` when every serving efficiency is 1 (a class's own one unset or 1) and there is no fixed cost per step,
    layer or sequence, else ``assumed``: a scenario that states any of them is not the roofline."""
    ideal = (
        all(values[k] == 1.0 for k in EFFICIENCY_FIELDS)
        and all(math.isnan(values[k]) or values[k] == 1.0 for k in OWN_EFFICIENCY_FIELDS)
        and all(values[k] == 0.0 for k in FIXED_COST_FIELDS)
    )
    return "bound" if ideal else "assumed"


def scenarios_from_frame(frame: pl.DataFrame) -> dict[str, Scenario]:
    """Every scenario of a ``scenarios`` frame, each completed with ``base``'s rows, typed."""
    by_name = _rows(frame)
    base = by_name.get("base", {})
    return {name: _typed(name, base | own) for name, own in by_name.items()}


def load_scenarios(con: duckdb.DuckDBPyConnection) -> dict[str, Scenario]:
    """All scenarios of the database (the one place the ``scenarios`` table is read)."""
    return scenarios_from_frame(pl.DataFrame(con.sql("select * from scenarios order by scenario, name")))


def load_scenario(con: duckdb.DuckDBPyConnection, name: str = "base") -> Scenario:
    scenarios = load_scenarios(con)
    if name not in scenarios:
        raise EconError(f"no scenario {name!r}", f"known scenarios: {', '.join(sorted(scenarios))}")
    return scenarios[name]


_DECLARED = {f.name for f in fields(Scenario)} - {
    "name",
    "context_shares",
    "assumptions",
    "defaulted",
    "efficiencies_by_architecture",
    "efficiencies_by_attention",
    "efficiency_basis",
    "output_shares",
}
if _DECLARED != set(NUMERIC) | set(CATEGORICAL):  # the field list and the defaults are one declaration
    raise RuntimeError(
        f"Scenario fields and NUMERIC/CATEGORICAL differ: {sorted(_DECLARED ^ (set(NUMERIC) | set(CATEGORICAL)))}"
    )
