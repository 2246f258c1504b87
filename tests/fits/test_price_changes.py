"""Price diffs between the two real LiteLLM snapshots (tokencost 2025-09-01, LiteLLM 2026-11-20)."""

from __future__ import annotations

import json
from datetime import date

import polars as pl
import pytest

from econ.fits.price_changes import price_changes, summary
from econ.load.importers import import_file
from econ.load.loader import load_all
from tests.conftest import EXTERNAL

OLD, NEW = date(2025, 9, 1), date(2026, 11, 20)
FIELDS = ["input_cost_per_token", "output_cost_per_token", "cache_read_input_token_cost"]


@pytest.fixture(scope="module")
def prices(tmp_path_factory):
    import shutil

    from tests.conftest import FIXTURE_DATA

    data = tmp_path_factory.mktemp("diff") / "data"
    shutil.copytree(FIXTURE_DATA, data)
    import_file("litellm", EXTERNAL / "tokencost_model_prices_2025-09-01.json", data_dir=data, as_of=OLD)
    import_file("litellm", EXTERNAL / "litellm_model_prices.json", data_dir=data, as_of=NEW)
    return load_all(data)["prices"]


@pytest.fixture(scope="module")
def changes(prices):
    return price_changes(prices, OLD, NEW)


def test_known_change_gemini_25_pro_cache_read(changes):
    row = changes.filter(
        model="gemini/gemini-2.5-pro", component="cache_read_usd_per_mtok", tier_min_prompt_tokens=0, variant="standard"
    )
    assert row.select("change", "old_value", "new_value").row(0) == ("changed", 0.3125, 0.125)
    assert row["change_frac"][0] == pytest.approx(-0.6)


def raw_chat_entries(path):
    data = json.loads(path.read_text())
    return {
        k: v for k, v in data.items() if isinstance(v, dict) and v.get("mode") == "chat" and "input_cost_per_token" in v
    }


def test_changed_and_unchanged_models_match_the_raw_files(changes):
    """Independent of the importer: compare the base-tier per-token prices in the two JSON files directly."""
    old = raw_chat_entries(EXTERNAL / "tokencost_model_prices_2025-09-01.json")
    new = raw_chat_entries(EXTERNAL / "litellm_model_prices.json")
    common = [
        k for k in sorted(old.keys() & new.keys()) if not old[k].get("tiered_pricing") and not new[k].get("alias_of")
    ]
    same = [
        k
        for k in common
        if all(old[k].get(f) == new[k].get(f) for f in FIELDS)
        and old[k].get("litellm_provider") == new[k].get("litellm_provider")
    ]
    moved = [
        k
        for k in common
        if old[k]["input_cost_per_token"] != new[k]["input_cost_per_token"]
        and old[k].get("litellm_provider") == new[k].get("litellm_provider")
    ]
    base = changes.filter(variant="standard", tier_min_prompt_tokens=0)
    changed_components = base.filter(change="changed")
    unchanged_hits = changed_components.filter(
        pl.col("model").is_in(same)
        & pl.col("component").is_in(["input_usd_per_mtok", "output_usd_per_mtok", "cache_read_usd_per_mtok"])
    )
    assert len(same) > 500 and unchanged_hits.height == 0
    moved_found = set(changed_components.filter(component="input_usd_per_mtok")["model"])
    assert len(moved) > 10 and set(moved) <= moved_found
    for k in moved[:20]:
        row = changed_components.filter(model=k, component="input_usd_per_mtok").row(0, named=True)
        assert row["old_value"] == pytest.approx(old[k]["input_cost_per_token"] * 1e6)
        assert row["new_value"] == pytest.approx(new[k]["input_cost_per_token"] * 1e6)


def test_added_and_removed_models(changes):
    """Keys only in the new (old) raw file are added (removed); claude-opus-4-6 is new since 2025-09-01."""
    old = raw_chat_entries(EXTERNAL / "tokencost_model_prices_2025-09-01.json")
    new = raw_chat_entries(EXTERNAL / "litellm_model_prices.json")
    added = set(changes.filter(change="added", source="litellm")["model"])
    removed = set(changes.filter(change="removed", source="litellm")["model"])
    assert "claude-opus-4-6" in added
    assert {k for k in new.keys() - old.keys() if not new[k].get("alias_of")} <= added
    assert {k for k in old.keys() - new.keys()} <= removed
    counts = summary(changes)
    assert counts["models_added"] > 1000 and counts["models_removed"] > 100 and counts["components_changed"] > 100


def test_no_change_between_a_date_and_itself(prices):
    assert price_changes(prices, NEW, NEW).height == 0


def rows(*entries):
    """Price rows (source litellm, provider p, variant standard, tier 0): (model, input, output)."""
    from econ.fits.price_changes import COMPONENTS, KEY

    return pl.DataFrame(
        [("litellm", "p", m, "standard", 0, i, o, *[None] * (len(COMPONENTS) - 2)) for m, i, o in entries],
        schema={
            **{k: (pl.Int64 if k == "tier_min_prompt_tokens" else pl.String) for k in KEY},
            **{c: (pl.Int64 if c == "max_input_tokens" else pl.Float64) for c in COMPONENTS},
        },
        orient="row",
    )


def test_changes_between_on_a_table_worked_by_hand():
    """Added, removed, changed (one row per moved component), a price that was free, a price that went blank."""
    from econ.fits.price_changes import changes_between

    old = rows(("same", 1.0, 5.0), ("cut", 2.0, 8.0), ("was_free", 0.0, 0.0), ("blanked", 1.0, 2.0), ("gone", 3.0, 9.0))
    new = rows(
        ("same", 1.0, 5.0), ("cut", 1.5, 8.0), ("was_free", 0.5, 0.0), ("blanked", 1.0, None), ("new", 4.0, 12.0)
    )
    result = (
        changes_between(old, new).select("change", "model", "component", "old_value", "new_value", "change_frac").rows()
    )
    assert result == [
        ("changed", "blanked", "output_usd_per_mtok", 2.0, None, None),
        ("changed", "cut", "input_usd_per_mtok", 2.0, 1.5, -0.25),
        ("changed", "was_free", "input_usd_per_mtok", 0.0, 0.5, None),  # no relative change from 0
        ("added", "new", "input_usd_per_mtok", None, 4.0, None),
        ("removed", "gone", "input_usd_per_mtok", 3.0, None, None),
    ]


D0, D1, D2 = date(2026, 1, 1), date(2026, 2, 1), date(2026, 3, 1)


def periods(*entries):
    """Price rows with periods: (model, from_date, to_date, input, output, max_input_tokens)."""
    from econ.fits.price_changes import COMPONENTS, KEY

    rest = [c for c in COMPONENTS if c not in ("input_usd_per_mtok", "output_usd_per_mtok", "max_input_tokens")]
    return pl.DataFrame(
        [("litellm", "p", m, "standard", 0, f, t, i, o, n, *[None] * len(rest)) for m, f, t, i, o, n in entries],
        schema={
            **{k: (pl.Int64 if k == "tier_min_prompt_tokens" else pl.String) for k in KEY},
            "from_date": pl.Date,
            "to_date": pl.Date,
            "input_usd_per_mtok": pl.Float64,
            "output_usd_per_mtok": pl.Float64,
            "max_input_tokens": pl.Int64,
            **{c: pl.Float64 for c in rest},
        },
        orient="row",
    )


def keys(*entries):
    """price_keys rows: (model, canonical_model)."""
    return pl.DataFrame(
        [("litellm", "p", m, c, c) for m, c in entries],
        schema=["source", "provider", "model", "canonical_model", "model_name"],
        orient="row",
    )


def test_classify_on_a_history_worked_by_hand():
    """Each class of issue 16 once: a move up and down, a 20x move that is real (no slip, no revert), a unit slip
    (3,200 -> 3.2, the jais-30b case), a revert to the value before, a renamed key, a new and a removed key, a
    limit change."""
    prices = periods(
        ("up", D0, None, 1.0, 5.0, None),
        ("down", D0, None, 1.0, 10.0, None),
        ("real_20x", D0, None, 1.0, 2.0, None),
        ("slip", D0, None, 3200.0, 9710.0, None),
        ("revert", D0, D1, 1.0, 4.0, None),
        ("revert", D1, D2, 50.0, 4.0, None),
        ("revert", D2, None, 1.0, 4.0, None),
        ("old-name", D0, D2, 2.0, 6.0, None),
        ("new-name", D2, None, 2.5, 6.0, None),
        ("brand_new", D2, None, 7.0, 9.0, None),
        ("gone", D0, D2, 3.0, 9.0, None),
        ("limits", D0, None, 1.0, 2.0, 128_000),
    )
    fix = {  # a second period for the keys that move on D2
        "up": (2.0, 5.0, None),
        "down": (1.0, 5.0, None),
        "real_20x": (20.0, 2.0, None),
        "slip": (3.2, 9.71, None),
        "limits": (1.0, 2.0, 200_000),
    }
    prices = pl.concat(
        [
            prices.filter(~pl.col("model").is_in(list(fix))),
            prices.filter(pl.col("model").is_in(list(fix)) & (pl.col("from_date") == D0)).with_columns(
                to_date=pl.lit(D2)
            ),
            periods(*((m, D2, None, *v) for m, v in fix.items())),
        ]
    )
    names = keys(
        *((m, m) for m in ("up", "down", "real_20x", "slip", "revert", "brand_new", "gone", "limits")),
        ("old-name", "model-x"),
        ("new-name", "model-x"),
    )
    result = price_changes(prices, D1, D2 + (D2 - D1) // 2, names=names)
    got = {
        (r["model"], r["component"]): (r["change_class"], r["counterpart_model"]) for r in result.iter_rows(named=True)
    }
    assert got == {
        ("up", "input_usd_per_mtok"): ("price move up", None),
        ("down", "output_usd_per_mtok"): ("price move down", None),
        ("real_20x", "input_usd_per_mtok"): ("price move up", None),
        ("slip", "input_usd_per_mtok"): ("suspected data fix", None),
        ("slip", "output_usd_per_mtok"): ("suspected data fix", None),
        ("revert", "input_usd_per_mtok"): ("suspected data fix", None),  # 50 -> 1, and 1 is what it was before
        ("old-name", "input_usd_per_mtok"): ("renamed key", "new-name"),
        ("new-name", "input_usd_per_mtok"): ("renamed key", "old-name"),
        ("brand_new", "input_usd_per_mtok"): ("new", None),
        ("gone", "input_usd_per_mtok"): ("removed", None),
        ("limits", "max_input_tokens"): ("limit change", None),
    }


def test_a_price_a_key_starts_or_stops_listing_is_a_listing_not_a_move():
    """LiteLLM's map added cache-read prices to Bedrock's nova keys between two snapshots (null -> 0.015): 74 of the
    184 'price move up' rows between 2025-09-01 and 2026-11-20 were such listings, counted as price rises. A price
    that appears on a key, or leaves it, moved nothing the seller charges; the moves beside it still count."""
    prices = periods(
        ("lists", D0, D2, 1.0, 5.0, None),
        ("lists", D2, None, 1.0, 5.0, None),
        ("drops", D0, D2, 1.0, 5.0, None),
        ("drops", D2, None, 2.0, 5.0, None),
    ).with_columns(
        cache_read_usd_per_mtok=pl.when((pl.col("model") == "lists") == (pl.col("from_date") == D2)).then(0.25)
    )
    result = price_changes(prices, D1, D2 + (D2 - D1) // 2, names=keys(("lists", "lists"), ("drops", "drops")))
    got = {(r["model"], r["component"]): r["change_class"] for r in result.iter_rows(named=True)}
    assert got == {
        ("lists", "cache_read_usd_per_mtok"): "price listed",
        ("drops", "cache_read_usd_per_mtok"): "price unlisted",
        ("drops", "input_usd_per_mtok"): "price move up",
    }
    assert result.filter(pl.col("change_class").str.starts_with("price listed"))["fix_reason"].to_list() == [None]


def test_a_revert_is_seen_only_with_the_history():
    """Without the periods around the two dates a 50x move that returns is a price move; a unit slip is seen anyway."""
    from econ.fits.price_changes import changes_between, classify, state_on

    prices = periods(
        ("revert", D0, D1, 1.0, 4.0, None),
        ("revert", D1, D2, 50.0, 4.0, None),
        ("revert", D2, None, 1.0, 4.0, None),
    )
    changes = changes_between(state_on(prices, D1), state_on(prices, D2))
    assert classify(changes, names=keys(("revert", "revert")))["change_class"].to_list() == ["price move down"]
