"""The catalog row of each canonical model: its architecture, family, version and whether its weights are open."""

from __future__ import annotations

import polars as pl

from econ.fits import catalog_rows as cr
from fits.test_model_identity import FAMILIES, MODELS, key, mapped


def test_the_catalog_links_the_architecture_and_says_open_weights():
    out = mapped(
        [key("openrouter", "openrouter", "openai/gpt-oss-120b"), key("hand", "anthropic", "claude-sonnet-4-5")]
    )
    cat = cr.model_catalog(out, models=MODELS, families=FAMILIES).filter(pl.col("price_key_count") > 0)
    rows = {r["canonical_model"]: r for r in cat.iter_rows(named=True)}
    assert rows["gpt-oss-120b"]["arch_model"] == "gpt-oss-120b" and rows["gpt-oss-120b"]["open_weights"] is True
    assert rows["claude-sonnet-4.5"]["arch_model"] is None and rows["claude-sonnet-4.5"]["open_weights"] is False
    assert (rows["claude-sonnet-4.5"]["family"], rows["claude-sonnet-4.5"]["version"]) == ("claude-sonnet", "4.5")
    assert rows["gpt-oss-120b"]["version"] is None  # 120b is a size, not a version
