"""What changed in the prices between two dates (pure: frames in, frames out).

The state of a price key (source, provider, model, variant, tier) on a date is the
``prices`` row whose period contains the date (``from_date <= d < to_date``). Between two
dates a key is *added*, *removed* or *changed* (one row per price component that moved,
with old, new and the relative change). A source is compared only where it has prices
on both dates, so a price map first imported after ``from`` does not show as thousands of
"added" models.

Each change is then classified (:func:`classify`): a *price move* up or down; a *new* or *removed*
key; a *renamed key* (a removed and a new key of one seller, variant and tier naming the same model);
a *suspected upstream data fix* (the rule of :mod:`econ.fits.data_fixes`: a unit slip or revert of more than 10x, or a
step the change log finds contradicted by the other sources or first seen at a format switch); a *price listed* or
*price unlisted* (a component the key did not list before, or no longer lists: not a move); or a *limit change*
(``max_input_tokens``, ``speed_ratio``).
"""

from __future__ import annotations

from datetime import date

import polars as pl

from econ.errors import EconError
from econ.fits.change_windows import windows
from econ.fits.data_fixes import FIX_REASONS, fix_reason, slip_and_revert, step_class
from econ.fits.price_ratios import price_change_frac
from econ.formula import formula
from econ.price_values import PRICE_KEY, PRICE_VALUE_COLUMNS

KEY = PRICE_KEY
COMPONENTS = PRICE_VALUE_COLUMNS
CHANGE_SCHEMA = {
    "change": pl.String,
    "source": pl.String,
    "provider": pl.String,
    "model": pl.String,
    "variant": pl.String,
    "tier_min_prompt_tokens": pl.Int64,
    "component": pl.String,
    "old_value": pl.Float64,
    "new_value": pl.Float64,
    "change_frac": pl.Float64,
}


def state_on(prices: pl.DataFrame, day: date) -> pl.DataFrame:
    """The price rows in effect on ``day``."""
    return prices.filter((pl.col("from_date") <= day) & (pl.col("to_date").is_null() | (pl.col("to_date") > day)))


def price_changes(
    prices: pl.DataFrame,
    from_date: date,
    to_date: date,
    *,
    names: pl.DataFrame | None = None,
    log: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Every added/removed model and every changed price component between two dates.

    Returns one row per change: ``change`` is ``added`` or ``removed`` (one row per model,
    variant and tier, showing its input price) or ``changed`` (one row per component that moved;
    ``change_frac`` = new / old - 1, null where either side is blank or the old value is 0). With ``names``
    (``price_keys``) each row is classified (:func:`classify`, reverts seen in ``prices``' periods, and with ``log``,
    ``price_change_log``, the suspected data fixes among the steps the change spans: :func:`logged_fixes`).
    """
    old, new = states_on(prices, from_date, to_date)
    changes = changes_between(old, new)
    if "declared" in prices.columns:  # the periods say where each change was seen (a built database's prices)
        changes = windows(changes, prices, old, new)
    if names is None:
        return changes
    steps = None if log is None else logged_fixes(log, from_date, to_date)
    return classify(changes, names=names, history=neighbours(prices, from_date, to_date), steps=steps)


def states_on(prices: pl.DataFrame, from_date: date, to_date: date) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rows in effect on each date, of the sources that have prices on both dates."""
    old, new = state_on(prices, from_date), state_on(prices, to_date)
    both = sorted(set(old["source"]) & set(new["source"]))
    return old.filter(pl.col("source").is_in(both)), new.filter(pl.col("source").is_in(both))


@formula("added, removed, or changed with new / old − 1", "price periods")
def changes_between(old: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """Added, removed and changed price keys from one set of price rows to another (one row per key each)."""
    cols = KEY + COMPONENTS
    joined = (
        old.select(cols)
        .with_columns(pl.lit(True).alias("_old"))
        .join(
            new.select(cols).with_columns(pl.lit(True).alias("_new")),
            on=KEY,
            how="full",
            coalesce=True,
            suffix="_new",
            nulls_equal=True,
        )
    )

    added = joined.filter(pl.col("_old").is_null()).select(
        pl.lit("added").alias("change"),
        *KEY,
        pl.lit("input_usd_per_mtok").alias("component"),
        pl.lit(None, pl.Float64).alias("old_value"),
        pl.col("input_usd_per_mtok_new").alias("new_value"),
        pl.lit(None, pl.Float64).alias("change_frac"),
    )
    removed = joined.filter(pl.col("_new").is_null()).select(
        pl.lit("removed").alias("change"),
        *KEY,
        pl.lit("input_usd_per_mtok").alias("component"),
        pl.col("input_usd_per_mtok").alias("old_value"),
        pl.lit(None, pl.Float64).alias("new_value"),
        pl.lit(None, pl.Float64).alias("change_frac"),
    )
    kept = joined.filter(pl.col("_old").is_not_null() & pl.col("_new").is_not_null())
    long = pl.concat(
        [
            kept.select(
                pl.lit("changed").alias("change"),
                *KEY,
                pl.lit(c).alias("component"),
                pl.col(c).cast(pl.Float64).alias("old_value"),
                pl.col(f"{c}_new").cast(pl.Float64).alias("new_value"),
            )
            for c in COMPONENTS
        ]
    )
    changed = long.filter(~pl.col("old_value").eq_missing(pl.col("new_value"))).with_columns(
        price_change_frac(pl.col("new_value"), pl.col("old_value")).alias("change_frac")
    )
    out = pl.concat([added, removed, changed], how="vertical_relaxed").cast(CHANGE_SCHEMA)
    order = pl.col("change").replace_strict({"changed": 0, "added": 1, "removed": 2}, return_dtype=pl.Int8)
    return out.sort([order, *KEY, "component"], nulls_last=True)


CLASSES = (
    "price move up",
    "price move down",
    "price listed",
    "price unlisted",
    "new",
    "removed",
    "renamed key",
    "suspected data fix",
    "limit change",
)
"""A change's class. A price component an existing key did not list before (or no longer lists) is *price listed*
(*price unlisted*), not a move: nothing the seller charges moved, the source started (stopped) listing it, as
``price_history.price_change`` calls such a period a listing."""
PRICE_COMPONENTS = [c for c in COMPONENTS if c.endswith(("_usd_per_mtok", "_usd_per_mtok_hour"))]


def with_same_key(frame: pl.DataFrame, key: list[str], shifts: tuple[int, ...]) -> pl.DataFrame:
    """``frame`` (sorted by ``key``, then by date) with one flag per shift n: whether the row n places away has the
    same key, null-safe (a window over the key puts null keys in one group). Read with :func:`shift_within`."""
    return frame.with_columns(
        pl.all_horizontal(pl.col(k).eq_missing(pl.col(k).shift(n)) for k in key).alias(f"_same_key_{n}") for n in shifts
    )


def shift_within(column: str, n: int) -> pl.Expr:
    """``pl.col(column).shift(n).over(key)`` on a frame of :func:`with_same_key`: a plain shift where the row n places
    away has the same key, null elsewhere (the same rows, without grouping the frame once per expression)."""
    return pl.when(pl.col(f"_same_key_{n}")).then(pl.col(column).shift(n))


def neighbours(prices: pl.DataFrame, from_date: date, to_date: date) -> pl.DataFrame:
    """Per key and price component, the value of the period before the one in effect on ``from_date``
    (``before_value``) and of the period after the one in effect on ``to_date`` (``after_value``)."""
    ordered = with_same_key(prices.sort(*KEY, "from_date"), KEY, (1, -1))
    shifted = ordered.with_columns(
        *(shift_within(c, 1).alias(f"_before_{c}") for c in PRICE_COMPONENTS),
        *(shift_within(c, -1).alias(f"_after_{c}") for c in PRICE_COMPONENTS),
    ).drop("_same_key_1", "_same_key_-1")
    before = state_on(shifted, from_date).select(*KEY, *(f"_before_{c}" for c in PRICE_COMPONENTS))
    after = state_on(shifted, to_date).select(*KEY, *(f"_after_{c}" for c in PRICE_COMPONENTS))

    def long(frame: pl.DataFrame, prefix: str, name: str) -> pl.DataFrame:
        return frame.unpivot(index=KEY, variable_name="component", value_name=name).with_columns(
            pl.col("component").str.strip_prefix(prefix)
        )

    return long(before, "_before_", "before_value").join(
        long(after, "_after_", "after_value"), on=[*KEY, "component"], how="full", coalesce=True, nulls_equal=True
    )


@formula(
    "renamed key = removed + new key of one seller, variant, tier and model name; data fix = every step it spans is "
    "one in price_change_log (fix_reason), or old -> new is a unit slip or revert of more than 10x; a price component "
    "without an old (new) value is price listed (unlisted); else price move up/down, new, removed",
    "econ rule (econ.fits.price_changes)",
)
def classify(
    changes: pl.DataFrame,
    *,
    names: pl.DataFrame,
    history: pl.DataFrame | None = None,
    steps: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """``changes`` (:func:`changes_between`) with ``canonical_model``, ``change_class`` (:data:`CLASSES`),
    ``fix_reason`` (why a suspected data fix is one, :func:`fix_reason`) and ``counterpart_model`` (a renamed key's
    other name).

    ``names``: ``source``, ``provider``, ``model``, ``canonical_model`` and ``model_name`` of the keys
    (``price_keys``); ``history``: :func:`neighbours` (without it no revert is seen, only unit slips); ``steps``:
    :func:`logged_fixes`, the change log's verdict on the steps each change spans (without it no move contradicted
    by the other sources or first seen at a format switch is seen). A change of one step gets the log's class and
    reason; a change over several is a data fix when every step is one (their reasons) or when it is a slip or revert
    itself.
    """
    names = (
        names.select("source", "provider", "model", "canonical_model", "model_name")
        .sort("canonical_model", nulls_last=True)
        .unique(subset=["source", "provider", "model"], keep="first")
    )
    frame = changes.join(names, on=["source", "provider", "model"], how="left")
    identity = pl.coalesce("canonical_model", "model_name", "model")
    pair_key = ["source", "provider", "variant", "tier_min_prompt_tokens", "_identity"]
    ends = frame.with_columns(identity.alias("_identity")).filter(pl.col("change").is_in(["added", "removed"]))
    one_each = ends.filter(
        (pl.col("change") == "added").sum().over(pair_key) == 1,
        (pl.col("change") == "removed").sum().over(pair_key) == 1,
    )
    pairs = one_each.group_by(pair_key).agg(
        pl.col("model").filter(pl.col("change") == "removed").first().alias("_old"),
        pl.col("model").filter(pl.col("change") == "added").first().alias("_new"),
    )
    counterpart = pl.concat(
        [
            pairs.select(
                pl.lit("removed").alias("change"),
                *pair_key[:4],
                pl.col("_old").alias("model"),
                pl.col("_new").alias("counterpart_model"),
            ),
            pairs.select(
                pl.lit("added").alias("change"),
                *pair_key[:4],
                pl.col("_new").alias("model"),
                pl.col("_old").alias("counterpart_model"),
            ),
        ]
    )
    frame = frame.join(counterpart, on=["change", *pair_key[:4], "model"], how="left")
    if history is not None and history.height:
        frame = frame.join(history, on=[*KEY, "component"], how="left", nulls_equal=True)
    else:
        frame = frame.with_columns(
            pl.lit(None, pl.Float64).alias("before_value"), pl.lit(None, pl.Float64).alias("after_value")
        )
    if steps is not None and steps.height:
        frame = frame.join(steps, on=[*KEY, "component"], how="left", nulls_equal=True)
    else:
        frame = frame.with_columns(pl.lit(None, pl.String).alias("steps_fix_reason"))
    slip, revert = slip_and_revert(
        pl.col("old_value"), pl.col("new_value"), pl.col("before_value"), pl.col("after_value")
    )
    price = pl.col("change").eq("changed") & pl.col("component").is_in(PRICE_COMPONENTS)
    listed = price & pl.col("old_value").is_null()
    unlisted = price & pl.col("new_value").is_null()
    reason = pl.when(price & ~listed & ~unlisted).then(
        pl.coalesce("steps_fix_reason", fix_reason(slip, revert, pl.lit(False), pl.lit(False)))
    )
    cls = (
        pl.when(pl.col("counterpart_model").is_not_null())
        .then(pl.lit("renamed key"))
        .when(pl.col("change") == "added")
        .then(pl.lit("new"))
        .when(pl.col("change") == "removed")
        .then(pl.lit("removed"))
        .when(~pl.col("component").is_in(PRICE_COMPONENTS))
        .then(pl.lit("limit change"))
        .when(listed)
        .then(pl.lit("price listed"))
        .when(unlisted)
        .then(pl.lit("price unlisted"))
        .otherwise(step_class(pl.col("fix_reason"), pl.col("old_value"), pl.col("new_value")))
    )
    return (
        frame.with_columns(reason.alias("fix_reason"))
        .with_columns(cls.alias("change_class"))
        .drop("before_value", "after_value", "steps_fix_reason", "model_name")
        .select(pl.exclude("fix_reason"), "fix_reason")
    )


def logged_fixes(log: pl.DataFrame, from_date: date, to_date: date) -> pl.DataFrame:
    """Per key and price component (``prices``' column name), the steps of ``log`` (``price_change_log``, the change
    log of :func:`econ.fits.change_log.change_log`) dated after ``from_date`` and by ``to_date`` (the steps a diff
    between the two dates spans): ``steps_fix_reason``, every reason any of them has when each one is a suspected
    data fix, else null (one step that is the seller's move makes the diff a move)."""
    spanned = log.filter((pl.col("change_date") > from_date) & (pl.col("change_date") <= to_date))
    reason = pl.col("fix_reason").fill_null("")
    flags = [reason.str.contains(r, literal=True).any() for r in FIX_REASONS]
    return (
        spanned.group_by(*KEY, "component")
        .agg(pl.when(pl.col("fix_reason").is_not_null().all()).then(fix_reason(*flags)).alias("steps_fix_reason"))
        .with_columns((pl.col("component") + "_usd_per_mtok").alias("component"))
    )


def summary(changes: pl.DataFrame) -> dict[str, int]:
    """Counts for a one-line summary: models added/removed, price rows and components changed."""

    def models(kind):
        return changes.filter(change=kind).select("source", "provider", "model").unique().height

    changed = changes.filter(change="changed")
    return {
        "models_added": models("added"),
        "models_removed": models("removed"),
        "prices_changed": changed.select(KEY).unique().height,
        "components_changed": changed.height,
    }


def default_dates(snapshot_dates: list[date], from_date: date | None, to_date: date | None) -> tuple[date, date]:
    """``to``: the newest snapshot; ``from``: the snapshot before ``to``."""
    dates = sorted(set(snapshot_dates))
    if to_date is None:
        if not dates:
            raise EconError(
                "there are no snapshots to compare",
                "import one with econ import or econ refresh, or pass --from and --to",
            )
        to_date = dates[-1]
    if from_date is None:
        earlier = [d for d in dates if d < to_date]
        if not earlier:
            raise EconError(f"there is no snapshot before {to_date}", "pass --from DATE")
        from_date = earlier[-1]
    if from_date >= to_date:
        raise EconError(f"--from {from_date} is not before --to {to_date}", "swap the dates")
    return from_date, to_date
