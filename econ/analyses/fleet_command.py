"""``econ fleet``: the plan of one model on one chip at a traffic, from the built database (read-only).

It plans with :func:`econ.analyses.fleet_plan.build_plan`, the function the build's ``fleet_plan`` comes
from, at the date the database was built for, so the command and the Fleet page agree.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import date
from pathlib import Path

import polars as pl

from econ.analyses.calibration_scenario import all_scenarios, for_engine
from econ.analyses.fleet_checks import check_inputs, output_mix, prompt_mix
from econ.analyses.fleet_inputs import CASES_SQL, PRICES_SQL, newest_rental
from econ.analyses.fleet_layouts import stated_pools
from econ.analyses.fleet_plan import build_plan
from econ.analyses.fleet_rows import PLAN_PER_KIND, PLAN_SUMMARY, plan_rows
from econ.analyses.launch_settings import SPARSE_CACHE_FORMAT as SPARSE_CACHE
from econ.analyses.predict_layouts import PoolSpec
from econ.analyses.prediction_notes import attention_note, sparse_cache_note, speculation_note, vendor_note
from econ.analyses.serving_predict import LENGTHS_SQL, band_factors, distances
from econ.analyses.timed_models import refuse_untimed
from econ.db import connect_read_only
from econ.errors import EconError
from econ.load.ceilings import CHIPS
from econ.names import resolve_chip, resolve_model
from econ.output import human


def plan_for(
    db_path: Path,
    *,
    model: str,
    chip: str,
    tokens_per_s: float,
    scenario: str = "calibrated",
    batch_policy: str = "balance_multiple",
    number_format: str | None = None,
    prefill_chips: int | None = None,
    decode_chips: int | None = None,
    tokens_per_s_per_user: float | None = None,
    ttft_s: float | None = None,
    as_of: date | None = None,
    decode_layout: str | None = None,
    prefill_layout: str | None = None,
    input_tokens: float | None = None,
    output_tokens: float | None = None,
    input_tokens_mix: tuple[tuple[float, float], ...] | None = None,
    output_tokens_mix: tuple[tuple[float, float], ...] | None = None,
    cached_input_frac: float | None = None,
    speculative_tokens: int | None = None,
    acceptance_frac: float | None = None,
    kv_cache_format: str | None = None,
    usd_per_chip_hour: float | None = None,
    decode_degrees: PoolSpec | None = None,
    prefill_degrees: PoolSpec | None = None,
    engine: str | None = None,
    expert_balanced: bool = False,
) -> FleetPlan:
    """The plan of one model on one chip serving ``tokens_per_s`` under a scenario (:class:`FleetPlan`: rows for
    people or a table, one object of named numbers for JSON).

    Reads the built database read-only and plans with :func:`build_plan`, the function the build's
    ``fleet_plan`` table comes from, at the date the database was built for unless ``as_of`` is given
    (so the command and the Fleet page agree); the list price is the one
    :func:`~econ.analyses.fleet_inputs.resolve_prices` finds.
    ``prefill_chips`` / ``decode_chips`` fix a pool's replica size, any size (the layout search picks the degrees);
    ``decode_layout`` / ``prefill_layout`` name a layout of ``data/layouts.csv``; ``tokens_per_s_per_user`` /
    ``ttft_s`` replace the scenario's service targets (a speed target implies the ``speed_target`` batch policy);
    ``input_tokens`` / ``output_tokens`` (per request; ``input_tokens_mix`` / ``output_tokens_mix``: lengths with
    their shares of requests instead of one length), ``cached_input_frac``, ``speculative_tokens`` /
    ``acceptance_frac``, ``kv_cache_format`` and ``usd_per_chip_hour`` replace the scenario's traffic mix and
    settings. ``decode_degrees`` / ``prefill_degrees`` state a pool's tp, dp, pp and ep as ``econ predict`` takes
    them (:mod:`econ.analyses.fleet_layouts`); ``engine`` plans with that engine's calibrated values (``for_engine``);
    ``expert_balanced`` times both pools' routed experts as a load balancer (EPLB) places them.
    """
    check_inputs(
        tokens_per_s,
        prefill_chips,
        decode_chips,
        tokens_per_s_per_user,
        ttft_s,
        input_tokens,
        output_tokens,
        cached_input_frac,
        speculative_tokens,
        acceptance_frac,
        usd_per_chip_hour,
    )
    with connect_read_only(Path(db_path), current=True) as con:
        as_of_used = as_of or con.sql("select as_of from build_info").fetchall()[0][0]
        con.execute(f"set variable as_of = date '{as_of_used.isoformat()}'")
        model, chip = resolve_model(con, model, need="architecture").arch_model, resolve_chip(con, chip)
        refuse_untimed(con, model)
        known = all_scenarios(con)
        if scenario not in known:
            raise EconError(f"no scenario {scenario!r}", f"known scenarios: {', '.join(sorted(known))}")
        s = known[scenario]
        if engine is not None:
            if scenario != "calibrated":
                raise EconError(
                    f"--engine {engine}: scenario {scenario} has no engine values (only calibrated does)",
                    "leave out --engine, or plan with --scenario calibrated",
                )
            params = pl.DataFrame(con.sql("select * from calibration_parameters"))
            s = for_engine(known["base"], params, engine)
        targets = {}
        if tokens_per_s_per_user is not None:
            targets["user_speed_target_tokens_per_s"] = float(tokens_per_s_per_user)
            batch_policy = "speed_target"
        if ttft_s is not None:
            targets["ttft_target_s"] = float(ttft_s)
        mix, outputs = prompt_mix(input_tokens, input_tokens_mix), output_mix(output_tokens, output_tokens_mix)
        if mix is not None:
            targets["context_shares"] = mix
            if outputs is not None:
                targets["input_output_token_ratio"] = sum(t * w for t, w in mix) / sum(t * w for t, w in outputs)
                targets["output_shares"] = outputs if len(outputs) > 1 else ()
        elif outputs is not None:
            flag = "--output-tokens" if output_tokens_mix is None else "--output-tokens-mix"
            raise EconError(f"{flag} needs --input-tokens", "give both lengths of a request (or --input-tokens-mix)")
        if cached_input_frac is not None:
            targets["prompt_cache_hit_frac"] = float(cached_input_frac)
        if speculative_tokens is not None:
            targets["speculative_tokens"] = float(speculative_tokens)
        if acceptance_frac is not None:
            targets["speculative_acceptance_frac"] = float(acceptance_frac)
        if kv_cache_format is not None:
            targets["kv_cache_format"] = kv_cache_format
        sparse = con.execute("select sparse_topk_tokens is not null from model_derived where model = ?", [model])
        sparse = bool(sparse.fetchall()[0][0])
        scenario_cache = s.kv_cache_format
        sparse_cache = kv_cache_format is None and sparse and scenario_cache != SPARSE_CACHE
        if sparse_cache:  # its engines run it on FP8 only (launch_settings.SPARSE_CACHE_FORMAT)
            targets["kv_cache_format"] = SPARSE_CACHE
        if usd_per_chip_hour is not None:
            targets["usd_per_chip_hour"] = float(usd_per_chip_hour)
        s = dataclasses.replace(s, **targets)
        layouts = pl.DataFrame(con.sql("select * from layouts order by layout"))
        moe = bool(
            con.execute("select coalesce(num_routed_experts, 0) > 0 from models where model = ?", [model]).fetchall()[
                0
            ][0]
        )
        for flag, name, pool, size in (
            ("--decode-layout", decode_layout, "decode", decode_chips),
            ("--prefill-layout", prefill_layout, "prefill", prefill_chips),
        ):
            if name is not None:
                row = layouts.filter(pl.col("layout") == name)
                if not row.height:
                    raise EconError(
                        f"no layout {name!r} in data/layouts.csv", f"known: {', '.join(layouts['layout'].to_list())}"
                    )
                if row["pool"][0] != pool:
                    raise EconError(
                        f"{flag} {name} is a {row['pool'][0]} layout", f"give it as --{row['pool'][0]}-layout"
                    )
                if row["applies_to"][0] == "moe" and not moe:
                    raise EconError(
                        f"{flag} {name} is for MoE models and {model} is dense",
                        "pick a layout that applies to this model, or leave it out to let the layout search choose",
                    )
                replica = row["replica_chips"][0]
                if size is not None and (replica is None or int(replica) != int(size)):
                    sized = f"{int(replica)} chips" if replica is not None else "one scale-up domain"
                    raise EconError(
                        f"{flag} {name} sets its replica ({sized}), not the stated --{pool}-chips {size:g}",
                        f"leave out --{pool}-chips (the named layout sets it) or the layout",
                    )
        shape = _shape(con, model, chip, moe, int(s.max_replica_chips))
        stated, (decode_chips, prefill_chips) = stated_pools(
            {
                "decode": (decode_degrees, decode_chips, decode_layout),
                "prefill": (prefill_degrees, prefill_chips, prefill_layout),
            },
            layouts,
            shape=shape,
        )
        hardware_derived = pl.DataFrame(con.sql("select * from hardware_derived"))
        formats = hardware_derived.filter(pl.col("chip") == chip)["number_format"].to_list()
        if (number_format or s.weight_format) not in formats:
            raise EconError(
                f"{chip} has no {number_format or s.weight_format} peak"
                + ("" if number_format else f" (scenario {scenario}'s weight_format)"),
                f"pass --number-format {' or '.join(formats)}",
            )
        one = (
            "select ? as scenario, 'cli' as deployment, ? as model, ? as chip, ?::varchar as number_format, "
            "?::varchar as decode_layout, ?::bigint as decode_replica_chips, ?::varchar as prefill_layout, "
            "?::bigint as prefill_replica_chips, ? as batch_policy, null::double as traffic_share_frac, "
            "null::varchar as price_source, null::varchar as price_provider, null::varchar as price_model"
        )
        cases = pl.DataFrame(
            con.sql(
                CASES_SQL.format(source=f"({one})"),
                params=[
                    scenario if engine is None else f"{scenario} ({engine})",
                    model,
                    chip,
                    number_format,
                    decode_layout,
                    decode_chips,
                    prefill_layout,
                    prefill_chips,
                    batch_policy,
                ],
            )
        )
        cases = cases.with_columns(
            pl.lit(float(tokens_per_s)).alias("tokens_per_s"),
            pl.lit(scenario).alias("deployment_scenario"),
            pl.lit(1.0 if expert_balanced else 0.0).alias("expert_balanced"),
            *(
                pl.lit(",".join(keys) if keys else None, dtype=pl.String).alias(f"{pool}_degrees")
                for pool, keys in stated.items()
            ),
        )
        rental = newest_rental(pl.DataFrame(con.sql("select * from rental_prices")), as_of_used)
        plan = build_plan(
            cases,
            s,
            rental,
            pl.DataFrame(con.sql(PRICES_SQL)),
            hardware_derived,
            derived_models := pl.DataFrame(con.sql("select * from model_derived")),
            layouts,
        )
        seen = pl.DataFrame(con.sql("select arch_model, chip from calibration_seen"))
        errors = _errors(con, model, chip, engine, seen) if s.efficiency_basis == "calibrated" else {}
        lengths = pl.DataFrame(con.sql(LENGTHS_SQL)).row(0, named=True)
        makers = pl.DataFrame(con.sql("select chip, vendor from hardware"))
    said = []
    if sparse_cache:
        said.append(sparse_cache_note(scenario_cache))
    if expert_balanced:
        said.append("routed experts placed by a load balancer (--expert-balanced): uniform routing's busiest rank")
    if errors:
        said.append(_lengths_note(s.context_shares, plan["output_tokens_per_request"][0], lengths))
        said.append(pl.select(speculation_note(pl.lit(s.speculative_tokens), lengths)).item())
        said.append(pl.select(vendor_note(pl.Series([chip]), makers, set(seen["chip"].to_list()))).item())
        seen_models = set(seen["arch_model"].to_list())
        said.append(pl.select(attention_note(pl.Series([model]), derived_models, seen_models)).item())
    said = "; ".join(x for x in said if x)
    if said:
        notes = pl.col("notes").fill_null("")
        plan = plan.with_columns(
            pl.when(notes == "")
            .then(pl.lit(said))
            .otherwise(pl.concat_str([notes, pl.lit(said)], separator="; "))
            .alias("notes")
        )
    _guard(plan, model, chip)
    return FleetPlan(as_of_used, plan, errors)


def _shape(con, model: str, chip: str, moe: bool, max_chips: int) -> dict:
    """The model's and chip's numbers a stated layout is checked against (heads, layers, scale-up domain)."""
    heads, layers = con.execute(
        "select num_attention_heads, num_layers from models where model = ?", [model]
    ).fetchall()[0]
    (domain,) = con.execute("select scale_up_domain_chips from hardware where chip = ?", [chip]).fetchall()[0]
    return {
        "heads": int(heads or 0),
        "layers": int(layers),
        "moe": moe,
        "domain": int(domain or 1),
        "max_chips": max_chips,
    }


def _errors(con, model: str, chip: str, engine: str | None, seen: pl.DataFrame) -> dict[str, float | str | bool]:
    """The calibration's held-out error factors for this plan's pools: the decode step as a disaggregated decode
    pool's time per output token, the prefill as its pool's time to first token, at the plan's distance from the
    calibration data, with its ``engine`` (None: the engines' average; ``calibration_bands``, read as ``econ
    predict`` reads them; ``seen``: ``calibration_seen``)."""
    dist = distances([model], [chip], set(seen["arch_model"].to_list()), set(seen["chip"].to_list()))
    bands = pl.DataFrame(con.sql("select * from calibration_bands"))
    out: dict[str, float | str | bool] = {"error_distance": str(dist[0]), "error_engine_stated": engine is not None}
    for pool, target, regime in (("decode_step", "tpot", "disagg_decode"), ("prefill_ttft", "ttft", "disagg_prefill")):
        where = ([engine or ""], [chip], [model])
        p50, p90, covered, of = band_factors(bands, target, [regime], dist, [engine is not None], *where)
        out |= {
            f"{pool}_error_band_of": str(of[0]),
            f"{pool}_error_factor_p50": float(p50[0]),
            f"{pool}_error_factor_p90": float(p90[0]),
            f"{pool}_band_coverage_frac": float(covered[0]),
        }
    return out


def _lengths_note(prompts: tuple[tuple[float, float], ...], output_tokens: float | None, lengths: dict) -> str:
    """The note of a plan whose traffic lies outside the lengths the error bands were measured on
    (``calibration_lengths``): the share of requests whose prompt does, and the mean output if it does ("": none)."""
    low, high = lengths.get("min_input_tokens"), lengths.get("max_input_tokens")
    parts = []
    if low is not None and high is not None:
        outside = sum(share for tokens, share in prompts if tokens < low or tokens > high)
        if outside > 0:
            parts.append(f"{outside:.0%} of requests have prompts outside the {low:,.0f}-{high:,.0f} tokens")
    low, high = lengths.get("min_output_tokens"), lengths.get("max_output_tokens")
    if low is not None and high is not None and output_tokens is not None and not low <= output_tokens <= high:
        parts.append(f"the mean output of {output_tokens:,.0f} tokens is outside the {low:,.0f}-{high:,.0f}")
    if not parts:
        return ""
    return f"{' and '.join(parts)} of the measured runs: the error factors are measured within that range only"


def _guard(plan: pl.DataFrame, model: str, chip: str) -> None:
    """A plan that cannot be served, or whose derived numbers pass a physical ceiling, is an error naming why."""
    first = plan.row(0, named=True)
    chips = first.get("chips")
    if chips is None or not math.isfinite(chips):
        why = first.get("batch_status") or ""
        if not str(why).startswith("not planned"):
            why = first.get("prefill_status") or why
        raise EconError(
            f"cannot plan {model} on {chip}: {why or 'no layout of the pools fits'}",
            "give more chips per replica (--decode-chips / --prefill-chips), or leave them out to let the layout "
            "search choose",
        )
    if chips > CHIPS.value:
        raise EconError(
            f"the plan needs {chips:,.0f} chips, above the ceiling of {CHIPS.value:,.0f} ({CHIPS.why})",
            "ask for less traffic (--tokens-per-s) or smaller replicas (--decode-chips / --prefill-chips)",
        )


@dataclasses.dataclass
class FleetPlan:
    """One deployment's plan (``plan``: one row per price kind, the columns of ``fleet_plan``) at ``as_of``."""

    as_of: date
    plan: pl.DataFrame
    errors: dict = dataclasses.field(default_factory=dict)
    """The calibration's error factors of the plan's decode step and time to first token (:func:`_errors`; none for a
    roofline scenario, which is a bound)."""

    def rows(self) -> list[tuple]:
        """(quantity, value, unit) rows in the display units of :data:`econ.analyses.fleet_rows.PLAN_SUMMARY` (csv)."""
        return [("prices as of", self.as_of.isoformat(), "date"), *plan_rows(self.plan, self.errors)]

    def human_rows(self) -> list[tuple]:
        """(quantity, value) rows for people: ``1.32 M USD/day`` (:func:`econ.output.human`)."""
        return [(q, v if u == "date" else human(v, u)) for q, v, u in self.rows()]

    def as_object(self) -> dict:
        """One object of named numbers (JSON): the plan's columns by name, in their base units (``facility_power_w``,
        ``decode_step_time_s``), the price kinds' costs under ``by_price_kind``."""
        first = self.plan.row(0, named=True)
        out = {"prices_as_of": self.as_of.isoformat()}
        out |= {column: first.get(column) for column, *_ in PLAN_SUMMARY}
        out["by_price_kind"] = {
            kind["price_kind"]: {
                **{column: kind[column] for column, *_ in PLAN_PER_KIND},
                "price_basis": kind["price_basis"],
            }
            for kind in self.plan.iter_rows(named=True)
        }
        out |= self.errors
        out["notes"] = first.get("notes") or ""
        return out
