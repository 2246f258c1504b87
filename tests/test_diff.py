"""econ.diff: what econ diff shows of classified changes (summary, sections, filters), on a table worked by hand."""

from __future__ import annotations

import polars as pl

from econ.diff import compact, filtered, view

CHANGES = pl.DataFrame(
    [
        ("changed", "a", "m/x-1", "standard", 0, "input_usd_per_mtok", 1.0, 2.0, 1.0, "x-1", None, "price move up"),
        (
            "changed",
            "a",
            "m/x-1",
            "standard",
            0,
            "output_usd_per_mtok",
            8.0,
            2.0,
            -0.75,
            "x-1",
            None,
            "price move down",
        ),
        ("changed", "b", "x-1", "standard", 0, "input_usd_per_mtok", 1.0, 1.1, 0.1, "x-1", None, "price move up"),
        (
            "changed",
            "b",
            "y",
            "standard",
            0,
            "input_usd_per_mtok",
            3200.0,
            3.2,
            -0.999,
            "y",
            None,
            "suspected data fix",
        ),
        ("added", "b", "z", "batch", 0, "input_usd_per_mtok", None, 4.0, None, "z", None, "new"),
        ("removed", "a", "old", "standard", 0, "input_usd_per_mtok", 2.0, None, None, "w", "new", "renamed key"),
        ("added", "a", "new", "standard", 0, "input_usd_per_mtok", None, 2.0, None, "w", "old", "renamed key"),
    ],
    schema=[
        "change",
        "provider",
        "model",
        "variant",
        "tier_min_prompt_tokens",
        "component",
        "old_value",
        "new_value",
        "change_frac",
        "canonical_model",
        "counterpart_model",
        "change_class",
    ],
    orient="row",
).with_columns(pl.lit("litellm").alias("source"))
IMPLIED = pl.DataFrame(schema={"source": pl.String, "provider": pl.String, "model": pl.String})


def test_summary_and_sections():
    v = view(CHANGES, IMPLIED, top=1)
    # one rename (old -> new) is one renamed key, not its two rows
    assert v.summary.startswith("3 price moves (2 up, 1 down), 1 new and 0 removed keys, 1 renamed, 1 suspected")
    assert [(s.heading.split(" (")[0], s.total, len(s.rows)) for s in v.sections] == [
        ("largest price moves", 3, 1),
        ("suspected upstream data fixes", 1, 1),
        ("renamed keys", 1, 1),  # one row per rename, not two
        ("new keys", 1, 1),
    ]
    assert v.sections[0].rows[0][:2] == ("a", "m/x-1") and v.sections[0].rows[0][-1] == -75.0  # 4x beats 2x
    assert v.sections[2].columns == ["provider", "old_key", "new_key"] and v.sections[2].rows == [("a", "old", "new")]
    assert v.by_provider.rows[0][0] in ("a", "b") and v.by_provider.total == 2


def test_every_class_is_listed_in_one_section():
    from econ.diff import SECTIONS
    from econ.fits.price_changes import CLASSES

    listed = [c for _, classes, _, _ in SECTIONS for c in classes]
    assert sorted(listed) == sorted(CLASSES)


def test_a_listed_price_is_counted_and_listed_apart_from_the_moves():
    """A cache-read price a key starts to list (null -> 0.1) is no price move: the summary counts it apart, the
    providers' table under listing, and it has its own section after the moves."""
    listed = pl.DataFrame(
        [
            (
                "changed",
                "b",
                "x-1",
                "standard",
                0,
                "cache_read_usd_per_mtok",
                None,
                0.1,
                None,
                "x-1",
                None,
                "price listed",
            )
        ],
        schema=CHANGES.drop("source").columns,
        orient="row",
    ).with_columns(pl.lit("litellm").alias("source"))
    v = view(pl.concat([CHANGES, listed]), IMPLIED)
    assert v.summary.startswith("3 price moves (2 up, 1 down), 1 prices newly listed and 0 unlisted (no move), 1 new")
    assert v.by_provider.columns[:4] == ["provider", "up", "down", "listing"]
    assert dict((r[0], r[3]) for r in v.by_provider.rows) == {"a": 0, "b": 1}
    assert [s.heading.split(" (")[0] for s in v.sections][
        -1
    ] == "prices a source newly listed or stopped listing on a key it kept"
    assert "listed" not in view(CHANGES, IMPLIED).summary  # none: not said


def test_model_filter_takes_any_spelling_of_the_canonical_model():
    for spelling in ("x-1", "X-1"):
        changes, _ = filtered(CHANGES, IMPLIED, None, provider=None, model=spelling)
        assert changes["model"].to_list() == ["m/x-1", "m/x-1", "x-1"], spelling
    changes, _ = filtered(CHANGES, IMPLIED, None, provider="b", model="x-1")
    assert changes["model"].to_list() == ["x-1"]


def test_compact_drops_only_columns_at_their_default_everywhere():
    frame = pl.DataFrame({"model": ["a", "b"], "variant": ["standard", "standard"], "tier_tokens": [0, 200_000]})
    assert compact(frame).columns == ["model", "tier_tokens"]
    assert compact(frame.with_columns(variant=pl.lit("batch"))).columns == ["model", "variant", "tier_tokens"]


def test_a_removed_key_counts_once_whatever_its_variants_and_tiers():
    """Issue 26: two removed keys, one with a batch variant and a long-context tier on both (four rows) and one with
    five variants, were "9 removed keys". Counted by hand: 2 keys."""
    rows = [
        ("removed", "p", "k1", v, t, "input_usd_per_mtok", 1.0, None, None, "k1", None, "removed")
        for v in ("standard", "batch")
        for t in (0, 200_000)
    ] + [
        ("removed", "p", "k2", v, 0, "input_usd_per_mtok", 2.0, None, None, "k2", None, "removed")
        for v in ("standard", "batch", "flex", "priority", "fast")
    ]
    changes = pl.DataFrame(rows, schema=CHANGES.drop("source").columns, orient="row").with_columns(
        pl.lit("litellm").alias("source")
    )
    v = view(changes, IMPLIED)
    assert "0 new and 2 removed keys" in v.summary
    assert v.by_provider.rows == [("p", 0, 0, 0, 0, 2, 0, 0, 0)]
    (section,) = v.sections
    assert section.total == 2 and [r[:3] for r in section.rows] == [
        ("p", "k1", "batch, standard"),
        ("p", "k2", "batch, fast, flex, priority, standard"),
    ]
