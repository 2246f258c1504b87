"""``econ fleet``: the plan of one model on one chip at a traffic, from the built database (read-only).

It plans with :func:`econ.analyses.fleet_plan.build_plan`, the function the build's ``fleet_plan`` comes
from, at the date the database was built for, so the command and the Fleet page agree.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from datetime import date
from pathlib import Path

import polars as pl

from econ.analyses.calibration_scenario import all_scenarios
from econ.analyses.fleet_inputs import CASES_SQL, newest_rental
from econ.analyses.fleet_plan import build_plan
from econ.db import connect_read_only
from econ.errors import EconError
from econ.load.ceilings import CHIPS
from econ.output import human


def _known(con, table: str, column: str, value: str) -> None:
    known = [r[0] for r in con.sql(f"select {column} from {table} order by 1").fetchall()]
    if value not in known:
        close = difflib.get_close_matches(value, known, n=1, cutoff=0.4)
        hint = f"did you mean {close[0]}?" if close else f"known: {', '.join(known)}"
        raise EconError(f"unknown {column} {value!r} (not in {table})", hint)


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
) -> FleetPlan:
    """The plan of one model on one chip serving ``tokens_per_s`` under a scenario (:class:`FleetPlan`: rows for
    people or a table, one object of named numbers for JSON).

    Reads the built database read-only and plans with :func:`build_plan`, the function the build's
    ``fleet_plan`` table comes from, at the date the database was built for unless ``as_of`` is given
    (so the command and the Fleet page agree); the list price is matched by ``models.hf_repo``.
    ``prefill_chips`` / ``decode_chips`` fix a pool's replica size (the layout search picks the degrees);
    ``tokens_per_s_per_user`` / ``ttft_s`` replace the scenario's service targets (a speed target implies the
    ``speed_target`` batch policy).
    """

    if not (math.isfinite(tokens_per_s) and tokens_per_s > 0):
        raise EconError(
            f"--tokens-per-s must be a positive number (got {tokens_per_s:g})", "give the traffic in tokens per second"
        )
    for flag, value in (("--prefill-chips", prefill_chips), ("--decode-chips", decode_chips)):
        if value is not None and not 1 <= value <= CHIPS.value:
            raise EconError(
                f"{flag} must be between 1 and {CHIPS.value:g} (got {value:g})",
                f"give the chips per replica, or leave it out to let the layout search choose ({CHIPS.why})",
            )
    for flag, value in (("--tokens-per-s-per-user", tokens_per_s_per_user), ("--ttft-s", ttft_s)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise EconError(f"{flag} must be a positive number (got {value:g})", "give the service target")
    with connect_read_only(Path(db_path), current=True) as con:
        as_of_used = as_of or con.sql("select as_of from build_info").fetchall()[0][0]
        con.execute(f"set variable as_of = date '{as_of_used.isoformat()}'")
        _known(con, "models", "model", model)
        _known(con, "hardware", "chip", chip)
        known = all_scenarios(con)
        if scenario not in known:
            raise EconError(f"no scenario {scenario!r}", f"known scenarios: {', '.join(sorted(known))}")
        s = known[scenario]
        targets = {}
        if tokens_per_s_per_user is not None:
            targets["user_speed_target_tokens_per_s"] = float(tokens_per_s_per_user)
            batch_policy = "speed_target"
        if ttft_s is not None:
            targets["ttft_target_s"] = float(ttft_s)
        s = dataclasses.replace(s, **targets)
        hardware_derived = con.sql("select * from hardware_derived").pl()
        formats = hardware_derived.filter(pl.col("chip") == chip)["number_format"].to_list()
        if (number_format or s.weight_format) not in formats:
            raise EconError(
                f"{chip} has no {number_format or s.weight_format} peak"
                + ("" if number_format else f" (scenario {scenario}'s weight_format)"),
                f"pass --number-format {' or '.join(formats)}",
            )
        one = (
            "select ? as scenario, 'cli' as deployment, ? as model, ? as chip, ?::varchar as number_format, "
            "null::varchar as decode_layout, ?::bigint as decode_replica_chips, null::varchar as prefill_layout, "
            "?::bigint as prefill_replica_chips, ? as batch_policy, null::double as traffic_share_frac, "
            "null::varchar as price_source, null::varchar as price_provider, null::varchar as price_model"
        )
        cases = con.sql(
            CASES_SQL.format(source=f"({one})"),
            params=[scenario, model, chip, number_format, decode_chips, prefill_chips, batch_policy],
        ).pl()
        cases = cases.with_columns(
            pl.lit(float(tokens_per_s)).alias("tokens_per_s"), pl.lit(scenario).alias("deployment_scenario")
        )
        rental = newest_rental(con.sql("select * from rental_prices").pl(), as_of_used)
        plan = build_plan(
            cases,
            s,
            rental,
            con.sql("select * from inference_prices").pl(),
            hardware_derived,
            con.sql("select * from model_derived").pl(),
            con.sql("select * from layouts order by layout").pl(),
        )
    return FleetPlan(as_of_used, plan)


@dataclasses.dataclass
class FleetPlan:
    """One deployment's plan (``plan``: one row per price kind, the columns of ``fleet_plan``) at ``as_of``."""

    as_of: date
    plan: pl.DataFrame

    def rows(self) -> list[tuple]:
        """(quantity, value, unit) rows, values in the display units of :data:`PLAN_SUMMARY` (csv)."""
        return [("prices as of", self.as_of.isoformat(), "date"), *plan_rows(self.plan)]

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
        out["notes"] = first.get("notes") or ""
        return out


PLAN_SUMMARY = (  # (column, label, unit, scale)
    ("model", "model", "", None),
    ("chip", "chip", "", None),
    ("number_format", "number format", "", None),
    ("scenario", "scenario", "", None),
    ("batch_policy", "batch policy", "", None),
    ("batch_status", "batch", "", None),
    ("tokens_per_s", "traffic", "tokens/s", 1),
    ("input_tokens_per_s", "input", "tokens/s", 1),
    ("output_tokens_per_s", "output", "tokens/s", 1),
    ("requests_per_s", "requests", "requests/s", 1),
    ("mean_prompt_tokens", "mean prompt", "tokens", 1),
    ("output_tokens_per_request", "output per request", "tokens", 1),
    ("decode_context_tokens", "decode context", "tokens", 1),
    ("decode_layout", "decode layout", "", None),
    ("decode_replica_chips", "decode chips per replica", "chips", 1),
    ("decode_tensor_parallel", "decode tensor parallel", "chips", 1),
    ("decode_attention_data_parallel", "decode attention data parallel", "ranks", 1),
    ("decode_pipeline_parallel", "decode pipeline stages", "stages", 1),
    ("prefill_layout", "prefill layout", "", None),
    ("prefill_replica_chips", "prefill chips per replica", "chips", 1),
    ("prefill_tensor_parallel", "prefill tensor parallel", "chips", 1),
    ("prefill_attention_data_parallel", "prefill attention data parallel", "ranks", 1),
    ("prefill_status", "prefill", "", None),
    ("prefill_ttft_max_s", "longest time to first token", "s", 1),
    ("balance_batch_seqs", "balance batch B*0", "sequences", 1),
    ("decode_batch_seqs", "decode batch", "sequences", 1),
    ("decode_step_time_s", "decode step (lower bound)", "ms", 1e3),
    ("decode_comm_time_s", "decode communication", "ms", 1e3),
    ("tokens_per_s_per_user", "speed per user", "tokens/s", 1),
    ("decode_tokens_per_s_per_replica", "decode throughput per replica", "tokens/s", 1),
    ("prefill_tokens_per_s_per_replica", "prefill throughput per replica (uncached)", "tokens/s", 1),
    ("prefill_replicas", "prefill replicas", "replicas", 1),
    ("decode_replicas", "decode replicas", "replicas", 1),
    ("prefill_decode_replica_ratio", "prefill : decode replicas", "ratio", 1),
    ("chips", "chips", "chips", 1),
    ("nodes", "nodes", "nodes", 1),
    ("racks", "racks", "racks", 1),
    ("facility_power_w", "facility power", "MW", 1e-6),
    ("energy_mwh_per_day", "energy", "MWh/day", 1),
    ("tokens_per_mwh", "tokens per MWh", "tokens/MWh", 1),
    ("price_provider", "sold by", "", None),
    ("price_model", "sold as", "", None),
    ("list_input_usd_per_mtok", "list input price", "USD/MTok", 1),
    ("list_output_usd_per_mtok", "list output price", "USD/MTok", 1),
    ("revenue_usd_per_day", "revenue at list prices", "USD/day", 1),
)
PLAN_PER_KIND = (
    ("usd_per_chip_hour", "price", "USD/chip-hour"),
    ("usd_per_day", "cost", "USD/day"),
    ("input_usd_per_mtok", "input cost", "USD/MTok"),
    ("output_usd_per_mtok", "output cost", "USD/MTok"),
    ("gross_margin_frac", "gross margin", "frac"),
)


def plan_rows(plan: pl.DataFrame) -> list[tuple]:
    """A plan (the rows of one deployment, one per price kind) as readable (quantity, value, unit) rows."""
    first = plan.row(0, named=True)
    rows = []
    for column, label, unit, scale in PLAN_SUMMARY:
        value = first.get(column)
        rows.append((label, value * scale if scale is not None and value is not None else value, unit))
    for kind in plan.iter_rows(named=True):
        for column, label, unit in PLAN_PER_KIND:
            rows.append((f"{label} ({kind['price_kind']})", kind[column], unit))
        rows.append((f"price basis ({kind['price_kind']})", kind["price_basis"], ""))
    rows.append(("notes", first.get("notes") or "", ""))
    return rows
