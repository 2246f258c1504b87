"""The declared spec of every input table (columns, units, ranges, keys, references).

This module is the contract between ``data/`` and the database: ``data/README.md`` documents
the same columns for people. The hardware, model and price specs live in ``hardware_tables``,
``model_tables`` and ``price_tables`` (each is long); :data:`INPUT_TABLES` lists them all. Vendor
units (TFLOP/s, GB, TB/s, Gbit/s, billions) are converted once, in the specs, with the factors from
:mod:`econ.units`; every number has a physical ceiling (:mod:`econ.load.ceilings`).
"""

from __future__ import annotations

import polars as pl

from econ import units
from econ.errors import Problem
from econ.load import ceilings
from econ.load.billing_tables import BILLING_EXAMPLES, BILLING_RULES, BILLING_WINDOWS
from econ.load.catalog_tables import MODEL_ALIASES, MODEL_FAMILIES, PROVIDERS
from econ.load.hardware_tables import HARDWARE, RENTAL_KINDS, RENTAL_PRICES
from econ.load.layouts import LAYOUTS
from econ.load.measured_tables import MEASURED_POINTS
from econ.load.model_tables import ATTENTION, MODELS
from econ.load.physical import check_scenario_ranges
from econ.load.price_tables import FILE_SOURCES, HISTORY_SOURCES, PRICE_SNAPSHOT, PRICES, SOURCES, VARIANTS
from econ.load.serving_run_tables import INFERENCEX_LAUNCHES, INFERENCEX_NODE_LAUNCHES, SERVING_RUNS
from econ.load.spec import FILE, LINE, Column, TableSpec

__all__ = [
    "ATTENTION",
    "DEPLOYMENTS",
    "FILE_SOURCES",
    "HISTORY_SOURCES",
    "HARDWARE",
    "INPUT_TABLES",
    "LAYOUTS",
    "MEASURED_POINTS",
    "MEMORY_TIERS",
    "MODELS",
    "MODEL_ALIASES",
    "MODEL_FAMILIES",
    "NUMBER_FORMATS",
    "PRICES",
    "PRICE_SNAPSHOT",
    "PROVIDERS",
    "RENTAL_KINDS",
    "RENTAL_PRICES",
    "SCALING_LAW_POINTS",
    "SCENARIOS",
    "SERVING_RUNS",
    "INFERENCEX_LAUNCHES",
    "INFERENCEX_NODE_LAUNCHES",
    "SOURCES",
    "TIERS",
    "VARIANTS",
]

TIERS = ("hbm", "ddr", "flash", "disk")


def _rows(frame: pl.DataFrame, mask: pl.Expr) -> list[dict]:
    return frame.filter(mask).to_dicts()


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
            floor=ceilings.TIER_BYTES_FLOOR,
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
            floor=ceilings.TIER_BANDWIDTH_FLOOR,
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
        Column(
            "rental_usd_per_gb_hour",
            "float",
            "USD/GB-hour",
            "Rental-equivalent price of holding one GB for an hour in this tier (the one cost basis the cache-tier "
            "reading compares every tier on)",
            positive=True,
            ceiling=ceilings.TIER_USD_PER_HOUR,
            optional=True,
        ),
        Column("rental_basis", "str", "", "What the rental-equivalent price is", optional=True),
        Column("rental_source_url", "str", "", "Source of the rental-equivalent price", optional=True),
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
    checks=(_check_scenarios, check_scenario_ranges),
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
            "decode_layout",
            "str",
            "",
            "Named layout of the decode pool (blank: the layout search picks one)",
            ref=("layouts", "layout"),
        ),
        Column(
            "decode_replica_chips",
            "int",
            "chips",
            "Chips per decode replica when no layout is named (blank: the search chooses the size)",
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(
            "prefill_layout",
            "str",
            "",
            "Named layout of the prefill pool (blank: the layout search picks one)",
            ref=("layouts", "layout"),
        ),
        Column(
            "prefill_replica_chips",
            "int",
            "chips",
            "Chips per prefill replica when no layout is named (blank: the search chooses the size)",
            positive=True,
            ceiling=ceilings.CHIPS,
        ),
        Column(
            "batch_policy",
            "str",
            "",
            "Decode batch and layout: speed_target (the cheapest layout and batch giving every user "
            "user_speed_target_tokens_per_s) or balance_multiple (the lecture's batch_multiple_over_balance x B*0 on "
            "the default or given layout); both capped by memory",
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
    for spec in (
        HARDWARE,
        RENTAL_PRICES,
        MODELS,
        PRICES,
        MEMORY_TIERS,
        SCENARIOS,
        SCALING_LAW_POINTS,
        LAYOUTS,
        DEPLOYMENTS,
        MEASURED_POINTS,
        SERVING_RUNS,
        INFERENCEX_LAUNCHES,
        INFERENCEX_NODE_LAUNCHES,
        PROVIDERS,
        MODEL_FAMILIES,
        MODEL_ALIASES,
        BILLING_RULES,
        BILLING_WINDOWS,
        BILLING_EXAMPLES,
    )
}
"""Hand-kept tables, one CSV each in data/ (file stem = table name), in load order."""
