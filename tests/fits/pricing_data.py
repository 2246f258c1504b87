"""The real data/ folder and the fixture data set as frames for the pricing fits (views at the tests' AS_OF).

Loads the tables and creates the views in an in-memory database (no analyses run), once per data folder.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import duckdb
import polars as pl

from econ.analyses.scenario import load_scenario
from econ.db import create_views, write_table
from econ.fits.assumptions import from_scenario
from econ.load.loader import load_all

REPO = Path(__file__).resolve().parents[2]
REAL_DATA = REPO / "data"
FIXTURE_DATA = REPO / "tests" / "fixtures" / "data"
AS_OF = "2026-11-30"


@lru_cache(maxsize=2)
def frames(data_dir: Path = REAL_DATA) -> dict:
    """price_current, models, hardware, memory_tiers frames and the base scenario's Assumptions."""
    con = duckdb.connect()
    for name, frame in load_all(Path(data_dir)).items():
        write_table(con, name, frame, description=name, column_comments={})
    con.execute(f"set variable as_of = date '{AS_OF}'")
    create_views(con, REPO / "queries")
    out: dict = {t: con.sql(f"select * from {t}").pl() for t in ("price_current", "models", "hardware", "memory_tiers")}
    out["assumptions"] = from_scenario(load_scenario(con, "base"), out["hardware"])
    con.close()
    return out


def hand_prices(provider: str, model: str) -> pl.DataFrame:
    """The real data's current hand rows of one model."""
    p = frames()["price_current"]
    return p.filter((pl.col("source") == "hand") & (pl.col("provider") == provider) & (pl.col("model") == model))
