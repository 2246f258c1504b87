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

SECTIONS = (  # (name, the classes it lists, heading, order)
    ("price move", ("price move up", "price move down"), "largest price moves", "size"),
    (
        "suspected data fix",
        ("suspected data fix",),
        "suspected upstream data fixes (not the seller's move; reason: a unit slip or revert of more than 10x, "
        "contradicted by the other sources, or first seen where its source changed file; as in price_change_log)",
        "size",
    ),
    ("renamed key", ("renamed key",), "renamed keys (one key removed and one added for the same model)", "name"),
    ("new", ("new",), "new keys", "name"),
    ("removed", ("removed",), "removed keys", "name"),
    ("limit change", ("limit change",), "limit changes (max_input_tokens, speed_ratio)", "size"),
    (
        "listing",
        ("price listed", "price unlisted"),
        "prices a source newly listed or stopped listing on a key it kept (no price moved)",
        "name",
    ),
)
"""The lists econ diff prints after its summary, in order; every class of :data:`CLASSES` is in one."""


SHORT = {
    "price move up": "up",
    "price move down": "down",
    "price listed": "listing",
    "price unlisted": "listing",
    "new": "new",
    "removed": "removed",
    "renamed key": "renamed",
    "suspected data fix": "data_fix",
    "limit change": "limits",
}
"""The per-provider table's column of each class (a price listed or unlisted are both a listing: no price moved)."""


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


def window_label() -> pl.Expr:
    """When a change happened, as its source allows: ``2026-07-24…2026-07-30`` (after the last snapshot with the old
    value, by the first with the new), or the one day the source dates it (``2026-07-30``)."""
    start, end = pl.col("window_from_date").cast(pl.String), pl.col("window_to_date").cast(pl.String)
    return (
        pl.when(pl.col("exact") | (start == end))
        .then(end)
        .otherwise(pl.concat_str(start.fill_null(""), pl.lit("…"), end.fill_null("")))
        .alias("window")
    )


def _component(name: pl.Expr) -> pl.Expr:
    return name.str.replace(r"_usd_per_mtok(_hour)?$", "")


def filtered(changes: pl.DataFrame, implied: pl.DataFrame, names: pl.DataFrame | None, *, provider, model):
    """``changes`` and ``implied`` of one seller and/or one model (its canonical name or a price key: the command
    resolves what the user typed with :func:`econ.names.resolve_model` first)."""
    if provider is not None:
        if names is not None and names.height:
            _known_provider(names, provider)
        changes = changes.filter(pl.col("provider") == provider)
        implied = implied.filter(pl.col("provider") == provider) if implied.height else implied
    if model is not None:
        wanted = pl.select(match_key(model_name(pl.lit(model)))).item()
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


KEYED = ("new", "removed", "renamed key")
"""Classes counted in keys (a seller's price key, whatever its variants and tiers), not in price rows."""


WINDOW = ("window_from_date", "window_to_date", "exact")
"""The columns of a change's window (:func:`window_label`)."""


def check_filters(names: pl.DataFrame | None, *, provider: str | None) -> None:
    """Raise :class:`EconError` for a seller no price row names (before anything is printed; a model name is
    :mod:`econ.names`' to resolve)."""
    if names is None or not names.height:
        return
    if provider is not None:
        _known_provider(names, provider)


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


def _keys(rows: pl.DataFrame) -> pl.DataFrame:
    """One row per price key (source, provider, model) of ``rows``: its variants, tiers, the input price of its
    standard base tier (else its first row) and that row's window."""
    base = (pl.col("variant") != "standard", "tier_min_prompt_tokens")
    first = pl.col("_price").sort_by(*base).first()
    return (
        rows.with_columns(pl.coalesce("new_value", "old_value").alias("_price"))
        .group_by("source", "provider", "model")
        .agg(
            pl.col("variant").unique().sort().str.join(", ").alias("variants"),
            pl.col("tier_min_prompt_tokens").n_unique().alias("tiers"),
            first.alias("input_usd_per_mtok"),
            pl.col("counterpart_model").drop_nulls().first().alias("counterpart_model"),
            pl.col("change").first(),
            *(pl.col(c).sort_by(*base).first() for c in WINDOW if c in rows.columns),
        )
        .sort("provider", "model", "source")
    )


def counted(changes: pl.DataFrame) -> pl.DataFrame:
    """The rows of ``changes`` that count one each: every price row and component of a move, fix or limit change; one
    row per price key (source, provider, model) that is new, removed or renamed (a key removed with its batch variant
    and two tiers is one removed key; a rename counts on its removed side)."""
    keyed = pl.col("change_class").is_in(KEYED)
    rows = changes.filter(~((pl.col("change_class") == "renamed key") & (pl.col("change") != "removed")))
    return pl.concat(
        [
            rows.filter(~keyed),
            rows.filter(keyed).unique(subset=["change_class", "source", "provider", "model"], maintain_order=True),
        ]
    )


def key_counts(changes: pl.DataFrame) -> dict[str, int]:
    """Changes per class (:data:`CLASSES`), as :func:`counted` counts them."""
    per = dict(counted(changes).group_by("change_class").len().rows())
    return {c: per.get(c, 0) for c in CLASSES}


def _columns() -> dict[str, list[str]]:
    """The per-provider table's columns and the classes each counts (:data:`SHORT`)."""
    out: dict[str, list[str]] = {}
    for c in CLASSES:
        out.setdefault(SHORT[c], []).append(c)
    return out


def listings(counts: dict[str, int]) -> str:
    """The summary's words for prices listed or unlisted without a move ('' when there are none)."""
    listed, unlisted = counts["price listed"], counts["price unlisted"]
    return f"{listed:,} prices newly listed and {unlisted:,} unlisted (no move), " if listed or unlisted else ""


def view(changes: pl.DataFrame, implied: pl.DataFrame, *, top: int = 20) -> DiffView:
    """The summary, per-provider table and sections (largest moves first) of classified ``changes``."""
    counts = key_counts(changes)
    moves = counts["price move up"] + counts["price move down"]
    summary = (
        f"{moves:,} price moves ({counts['price move up']:,} up, {counts['price move down']:,} down), "
        f"{listings(counts)}{counts['new']:,} new and {counts['removed']:,} removed keys, "
        f"{counts['renamed key']:,} renamed, "
        f"{counts['suspected data fix']:,} suspected upstream data fixes, {counts['limit change']:,} limit changes; "
        f"{changes['provider'].n_unique() if changes.height else 0} providers; "
        f"{implied.height:,} inferred quantities moved"
    )
    per = (
        counted(changes)
        .group_by("provider")
        .agg(
            *(pl.col("change_class").is_in(classes).sum().alias(short) for short, classes in _columns().items()),
            pl.len().alias("total"),
        )
        .sort("total", "provider", descending=[True, False])
    )
    by_provider = Section(
        "by provider (most changes first)",
        ["provider", *_columns()],
        per.head(top).drop("total").rows(),
        per.height,
    )
    sections = []
    ratio = pl.col("new_value") / pl.col("old_value")
    size = ratio.abs().log10().abs().fill_nan(None)
    for cls, classes, heading, order in SECTIONS:
        rows = changes.filter(pl.col("change_class").is_in(classes))
        if cls == "renamed key":
            rows = rows.filter(pl.col("change") == "removed")
        if rows.height == 0:
            continue
        if cls in KEYED:
            rows = _keys(rows)
        elif order == "size":
            rows = rows.sort(size, "provider", "model", descending=[True, False, False], nulls_last=True)
        else:
            rows = rows.sort("provider", "model", "variant", "tier_min_prompt_tokens")
        shown = rows.head(top)
        dated = [window_label()] if "window_to_date" in shown.columns else []
        if cls == "renamed key":
            frame = shown.select("provider", "model", "counterpart_model", "variants", *dated).rename(
                {"model": "old_key", "counterpart_model": "new_key"}
            )
        elif cls in ("new", "removed"):
            frame = shown.select("provider", "model", "variants", "tiers", "input_usd_per_mtok", *dated)
        else:
            frame = shown.select(
                "provider",
                "model",
                "variant",
                "tier_min_prompt_tokens",
                _component(pl.col("component")).alias("component"),
                "old_value",
                "new_value",
                (pl.col("change_frac") * 100).round(1).alias("change_pct"),
                *dated,
                *(
                    [pl.col("fix_reason").alias("reason")]
                    if cls == "suspected data fix" and "fix_reason" in shown.columns
                    else []
                ),
            )
        frame = frame.insert_column(0, shown["source"])
        frame, shared = _shared(compact(frame.rename({"tier_min_prompt_tokens": "tier_tokens"}, strict=False)))
        sections.append(Section(heading + shared, frame.columns, frame.rows(), rows.height))
    return DiffView(summary, by_provider, sections, changes, implied)


def _shared(frame: pl.DataFrame) -> tuple[pl.DataFrame, str]:
    """``frame`` without its ``source`` and ``window`` columns when every row shown has the same ones (a diff of one
    source's two snapshots), and the heading's note that says them instead."""
    said = [c for c in ("source", "window") if c in frame.columns and frame.height and frame[c].n_unique() == 1]
    if said != [c for c in ("source", "window") if c in frame.columns] or not said:
        return frame, ""
    return frame.drop(said), " (" + ", ".join(str(frame[c][0]) for c in said) + ")"


def ordered(changes: pl.DataFrame) -> pl.DataFrame:
    """All classified changes, largest moves first (csv and json output of ``econ diff``)."""
    rank = {c: i for i, (_, classes, _, _) in enumerate(SECTIONS) for c in classes}
    size = (pl.col("new_value") / pl.col("old_value")).abs().log10().abs().fill_nan(None)
    return changes.sort(
        pl.col("change_class").replace_strict(rank, default=len(SECTIONS), return_dtype=pl.Int64),
        size,
        "provider",
        "model",
        descending=[False, True, False, False],
        nulls_last=True,
    )


DEFAULTS = {
    "variant": "standard",
    "variants": "standard",
    "tier_tokens": 0,
    "tiers": 1,
    "tier_min_prompt_tokens": 0,
    "detail": None,
}
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


def nothing_implied(changes: pl.DataFrame) -> str:
    """Why no inferred quantity moved, when the reason is that no price did (``": …"``), else ``""``.

    Inferred quantities are compared only for schedules whose prices moved: a new key has no older value to move from
    and a removed one no newer value (what a new key's prices imply is in the fit_* tables of the build)."""
    counts = key_counts(changes)
    moves = counts["price move up"] + counts["price move down"] + counts["suspected data fix"]
    if moves:
        return ""
    keys = f"{counts['new']:,} new and {counts['removed']:,} removed keys, {counts['renamed key']:,} renamed"
    return (
        f": no price moved ({keys}); inferred quantities are compared only where a price moved, and what a new key's "
        "prices imply is in the fit_* tables (econ sql \"select * from fit_io_prices where model = '…'\")"
    )


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
