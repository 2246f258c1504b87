"""What ``econ diff`` and ``econ refresh`` show of a :class:`econ.refresh.Diff`: a summary first (moves up and down,
new, removed and renamed keys, suspected upstream data fixes, per provider), then the largest moves, each list cut to
``top`` rows; filters by seller and by canonical model. Selection and ordering only: the classes are
:func:`econ.fits.price_changes.classify`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from econ.errors import EconError
from econ.fits.model_identity import match_key, model_name
from econ.fits.price_changes import CLASSES

SECTIONS = (  # (class, heading, order)
    ("price move", "largest price moves", "size"),
    (
        "suspected data fix",
        "suspected upstream data fixes (a move of more than 10x that is a unit slip or a revert)",
        "size",
    ),
    ("renamed key", "renamed keys (one key removed and one added for the same model)", "name"),
    ("new", "new keys", "name"),
    ("removed", "removed keys", "name"),
    ("limit change", "limit changes (max_input_tokens, speed_ratio)", "size"),
)
SHORT = {
    "price move up": "up",
    "price move down": "down",
    "new": "new",
    "removed": "removed",
    "renamed key": "renamed",
    "suspected data fix": "data_fix",
    "limit change": "limits",
}


@dataclass
class Section:
    heading: str
    columns: list[str]
    rows: list[tuple]
    total: int


@dataclass
class DiffView:
    """The summary line, the per-provider counts and the sections of a diff, after the filters."""

    summary: str
    by_provider: Section
    sections: list[Section]
    changes: pl.DataFrame
    implied: pl.DataFrame


def _component(name: pl.Expr) -> pl.Expr:
    return name.str.replace(r"_usd_per_mtok(_hour)?$", "")


def filtered(changes: pl.DataFrame, implied: pl.DataFrame, names: pl.DataFrame | None, *, provider, model):
    """``changes`` and ``implied`` of one seller and/or one canonical model (any spelling; a price key also works)."""
    if provider is not None:
        if names is not None and names.height:
            _known_provider(names, provider)
        changes = changes.filter(pl.col("provider") == provider)
        implied = implied.filter(pl.col("provider") == provider) if implied.height else implied
    if model is not None:
        wanted = pl.select(match_key(model_name(pl.lit(model)))).item()
        if names is not None and names.height:
            _known_model(names, model, wanted)
        keep = (match_key(pl.col("canonical_model")) == wanted).fill_null(False) | (pl.col("model") == model)
        changes = changes.filter(keep | (pl.col("counterpart_model") == model).fill_null(False))
        if implied.height and names is not None:
            canon = names.select("source", "provider", "model", "canonical_model").unique(
                subset=["source", "provider", "model"], keep="first"
            )
            implied = (
                implied.join(canon, on=["source", "provider", "model"], how="left").filter(keep).drop("canonical_model")
            )
    return changes, implied


def check_filters(names: pl.DataFrame | None, *, provider: str | None, model: str | None) -> None:
    """Raise :class:`EconError` for a seller or a model no price row names (before anything is printed)."""
    if names is None or not names.height:
        return
    if provider is not None:
        _known_provider(names, provider)
    if model is not None:
        _known_model(names, model, pl.select(match_key(model_name(pl.lit(model)))).item())


def _known_provider(names: pl.DataFrame, provider: str) -> None:
    """Raise unless ``provider`` sells at least one price row (an empty diff of a misspelt seller says nothing)."""
    import difflib

    sellers = sorted(set(names["provider"].drop_nulls().to_list()))
    if provider in sellers:
        return
    close = difflib.get_close_matches(provider.lower(), sellers, n=3, cutoff=0.6)
    hint = (
        f"did you mean {', '.join(close)}?"
        if close
        else f"sellers are {', '.join(sellers[:12])}"
        + (", … (select distinct provider from prices)" if len(sellers) > 12 else "")
    )
    raise EconError(f"unknown provider {provider!r} (no price row of that seller)", hint)


def _known_model(names: pl.DataFrame, model: str, wanted: str) -> None:
    """Raise unless ``model`` names a canonical model (in any spelling) or a price key of ``names``."""
    import difflib

    if names.filter(pl.col("model") == model).height:
        return
    canonical = names.select(pl.col("canonical_model").drop_nulls().unique()).with_columns(
        match_key(pl.col("canonical_model")).alias("key")
    )
    if canonical.filter(pl.col("key") == wanted).height:
        return
    close = difflib.get_close_matches(model.lower(), sorted(canonical["canonical_model"].to_list()), n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close)}?" if close else "the names are in model_catalog.canonical_model"
    raise EconError(f"unknown model {model!r} (no canonical_model or price key of that name)", hint)


def view(changes: pl.DataFrame, implied: pl.DataFrame, *, top: int = 20) -> DiffView:
    """The summary, per-provider table and sections (largest moves first) of classified ``changes``."""
    counts = {c: changes.filter(pl.col("change_class") == c).height for c in CLASSES}
    moves = counts["price move up"] + counts["price move down"]
    summary = (
        f"{moves:,} price moves ({counts['price move up']:,} up, {counts['price move down']:,} down), "
        f"{counts['new']:,} new and {counts['removed']:,} removed keys, {counts['renamed key']:,} renamed, "
        f"{counts['suspected data fix']:,} suspected upstream data fixes, {counts['limit change']:,} limit changes; "
        f"{changes['provider'].n_unique() if changes.height else 0} providers; "
        f"{implied.height:,} inferred quantities moved"
    )
    per = (
        changes.group_by("provider")
        .agg(*(pl.col("change_class").eq(c).sum().alias(SHORT[c]) for c in CLASSES), pl.len().alias("total"))
        .sort("total", "provider", descending=[True, False])
    )
    by_provider = Section(
        "by provider (most changes first)",
        ["provider", *SHORT.values()],
        per.head(top).drop("total").rows(),
        per.height,
    )
    sections = []
    ratio = pl.col("new_value") / pl.col("old_value")
    size = ratio.abs().log10().abs().fill_nan(None)
    for cls, heading, order in SECTIONS:
        rows = changes.filter(pl.col("change_class").str.starts_with(cls))
        if cls == "renamed key":
            rows = rows.filter(pl.col("change") == "removed")
        if rows.height == 0:
            continue
        if order == "size":
            rows = rows.sort(size, "provider", "model", descending=[True, False, False], nulls_last=True)
        else:
            rows = rows.sort("provider", "model", "variant", "tier_min_prompt_tokens")
        shown = rows.head(top).with_columns(_component(pl.col("component")).alias("component"))
        if cls == "renamed key":
            columns = ["provider", "model", "counterpart_model", "variant", "tier_min_prompt_tokens"]
            frame = shown.select(*columns).rename({"model": "old_key", "counterpart_model": "new_key"})
        elif cls in ("new", "removed"):
            price = "new_value" if cls == "new" else "old_value"
            frame = shown.select(
                "provider", "model", "variant", "tier_min_prompt_tokens", pl.col(price).alias("input_usd_per_mtok")
            )
        else:
            frame = shown.select(
                "provider",
                "model",
                "variant",
                "tier_min_prompt_tokens",
                "component",
                "old_value",
                "new_value",
                (pl.col("change_frac") * 100).round(1).alias("change_pct"),
            )
        frame = compact(frame.rename({"tier_min_prompt_tokens": "tier_tokens"}))
        sections.append(Section(heading, frame.columns, frame.rows(), rows.height))
    return DiffView(summary, by_provider, sections, changes, implied)


def ordered(changes: pl.DataFrame) -> pl.DataFrame:
    """All classified changes, largest moves first (csv and json output of ``econ diff``)."""
    rank = {c: i for i, (cls, _, _) in enumerate(SECTIONS) for c in CLASSES if c.startswith(cls)}
    size = (pl.col("new_value") / pl.col("old_value")).abs().log10().abs().fill_nan(None)
    return changes.sort(
        pl.col("change_class").replace_strict(rank, default=len(SECTIONS), return_dtype=pl.Int64),
        size,
        "provider",
        "model",
        descending=[False, True, False, False],
        nulls_last=True,
    )


DEFAULTS = {"variant": "standard", "tier_tokens": 0, "tier_min_prompt_tokens": 0, "detail": None}
"""Columns a table for people leaves out when every row shown has this value (the standard variant, the base tier, no
detail), so the model column gets the room."""


def compact(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` without the :data:`DEFAULTS` columns whose every row holds the default (blank text counts as None)."""
    drop = []
    for name, default in DEFAULTS.items():
        if name not in frame.columns or not frame.height:
            continue
        col = frame[name]
        if default is None:
            col = col.cast(pl.String).replace("", None) if col.dtype == pl.String else col
            if col.null_count() == frame.height:
                drop.append(name)
        elif col.null_count() == 0 and (col == default).all():
            drop.append(name)
    return frame.drop(drop)


def implied_ordered(implied: pl.DataFrame) -> pl.DataFrame:
    """Inferred-quantity changes, largest relative move first, then those that appeared or vanished."""
    if not implied.height or "change_frac" not in implied.columns:
        return implied
    size = (pl.col("change_frac") + 1).abs().log10().abs().fill_nan(None)
    return implied.sort(size, "provider", "model", "quantity", descending=[True, False, False, False], nulls_last=True)


IMPLIED_COLUMNS = ("provider", "model", "variant", "detail", "quantity", "old_value", "new_value")
"""What a table of ``econ diff --implied`` shows (csv and json give every column)."""


def implied_section(implied: pl.DataFrame, *, top: int = 20) -> Section:
    """The inferred quantities that moved, largest first, ``top`` of them, for people."""
    moved = implied_ordered(implied)
    heading = "what the price changes imply (scenario base), largest moves first"
    if not moved.width:
        return Section(heading, ["quantity"], [], 0)
    frame = compact(
        moved.head(top).select(
            *(c for c in IMPLIED_COLUMNS if c in moved.columns),
            (pl.col("change_frac") * 100).round(1).alias("change_pct"),
        )
    )
    return Section(heading, frame.columns, frame.rows(), moved.height)
