"""The real data/ folder and the fixture data set as frames for the pricing fits (views at the tests' AS_OF).

Loads the tables, derives model_derived and hardware_derived (the pricing fits' inputs) and creates the views
over input tables in an in-memory database, and runs the calibration (the build runs it before the price
inferences, whose efficiencies it sets), once per data folder.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from pathlib import Path

import duckdb
import polars as pl

from econ.analyses import calibration, deployment_inputs, hardware_derived, model_derived, price_history
from econ.analyses.inference_efficiencies import serving_scenario
from econ.analyses.inference_serving import serving_from
from econ.analyses.inputs import MODELS_SQL
from econ.analyses.runner import run_analyses
from econ.analyses.scenario import load_scenario
from econ.db import write_table
from econ.db.views import create_views
from econ.fits import model_identity
from econ.fits.assumptions import from_scenario
from econ.load.loader import load_all

REPO = Path(__file__).resolve().parents[2]
REAL_DATA = REPO / "data"
FIXTURE_DATA = REPO / "tests" / "fixtures" / "data"
AS_OF = "2026-11-30"


@lru_cache(maxsize=2)
def frames(data_dir: Path = REAL_DATA) -> dict:
    """price_current, models (with KV bytes), hardware, hardware_derived, memory_tiers, the Assumptions of base with
    the calibrated efficiencies (as the build's price inferences read them) and the open models' deployments at the
    scenario chip (``serving``)."""
    con = duckdb.connect()
    tables = load_all(Path(data_dir))
    tables["model_derived"] = model_derived.derived(tables["models"])
    tables["hardware_derived"] = hardware_derived.derived(tables["hardware"])
    tables["price_keys"] = model_identity.map_price_keys(
        tables["prices"].select("source", "provider", "model", "hugging_face_id").unique(),
        models=tables["models"],
        families=tables["model_families"],
        providers=tables["providers"].select("provider", "organisation", pl.col("kind").alias("seller_kind")),
        aliases=tables["model_aliases"],
    )
    tables["price_history"] = price_history.table(
        tables["prices"],
        tables["price_keys"],
        tables["billing_rules"],
        tables["providers"].select("provider", "seller"),
    )
    for name, frame in tables.items():
        write_table(con, name, frame, description=name, column_comments={})
    con.execute(f"set variable as_of = date '{AS_OF}'")
    create_views(con, REPO / "queries", allow_pending=True)
    if "measured_points" in tables:  # the calibration the build runs before the price inferences
        run_analyses(con, [calibration], as_of=date.fromisoformat(AS_OF), cache_dir=None)
    out: dict = {
        t: con.sql(f"select * from {t}").pl() for t in ("price_current", "hardware", "hardware_derived", "memory_tiers")
    }
    out["models"] = con.sql(MODELS_SQL).pl()
    base = load_scenario(con, "base")
    scenario = serving_scenario(base, base.serving_chip, con)  # calibrated efficiencies, as the build's fits use
    out["assumptions"] = from_scenario(scenario, out["hardware_derived"])
    out["serving"] = serving_from(scenario, con.sql(deployment_inputs.CASES_SQL).pl())
    con.close()
    return out


def hand_prices(provider: str, model: str) -> pl.DataFrame:
    """The real data's current hand rows of one model."""
    p = frames()["price_current"]
    return p.filter((pl.col("source") == "hand") & (pl.col("provider") == provider) & (pl.col("model") == model))
