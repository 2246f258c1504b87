"""Specs of the price tables: hand-kept ``prices`` (with effective periods) and one imported ``price_snapshot``.

Part of the contract between ``data/`` and the database (``econ.load.tables`` lists every table).
"""

from __future__ import annotations

import polars as pl

from econ.errors import Problem
from econ.load import ceilings
from econ.load.spec import FILE, LINE, Column, TableSpec, shift_in_key

VARIANTS = ("standard", "batch", "flex", "priority", "fast")
FILE_SOURCES = ("litellm", "openrouter")
"""Price maps kept as one dated snapshot file each (``data/snapshots/<source>_<date>.csv``)."""
HISTORY_SOURCES = ("genai_prices", "llm_prices")
"""Price databases that keep their own history in git, kept as a replayed history (``data/history/``): every commit
that changed the data is a dated snapshot, stored as the rows that changed (``econ.load.history``)."""
SOURCES = ("hand", *FILE_SOURCES, *HISTORY_SOURCES)
HISTORY_REPOSITORIES = {
    "genai_prices": "https://github.com/pydantic/genai-prices",
    "llm_prices": "https://github.com/simonw/llm-prices",
}
"""Where each replayed history comes from (its commits are ``<repository>/commit/<id>``)."""


def _rows(frame: pl.DataFrame, mask: pl.Expr) -> list[dict]:
    return frame.filter(mask).to_dicts()


# ---------------------------------------------------------------------------- prices

_PRICE_COLUMNS = (
    Column(
        "provider",
        "str",
        "",
        "Seller of the tokens at this price (LiteLLM's litellm_provider for imports)",
        required=True,
    ),
    Column("model", "str", "", "Model id as the seller names it", required=True),
    Column("variant", "str", "", "Service variant", required=True, allowed=VARIANTS),
    Column(
        "tier_min_prompt_tokens",
        "int",
        "tokens",
        "Long-context tier: the whole request is billed at this row once the prompt exceeds this many tokens (0 = "
        "base tier)",
        required=True,
        min=0,
        ceiling=ceilings.TOKENS,
    ),
    Column(
        "input_usd_per_mtok",
        "float",
        "USD/MTok",
        "Uncached input (prompt) price",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "output_usd_per_mtok",
        "float",
        "USD/MTok",
        "Output (completion) price",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_read_usd_per_mtok",
        "float",
        "USD/MTok",
        "Prompt-cache hit (read) price",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_write_5m_usd_per_mtok",
        "float",
        "USD/MTok",
        "Prompt-cache write price, default (5-minute) retention",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_write_1h_usd_per_mtok",
        "float",
        "USD/MTok",
        "Prompt-cache write price, 1-hour retention",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_write_12h_usd_per_mtok",
        "float",
        "USD/MTok",
        "Prompt-cache write price, 12-hour retention",
        min=0,
        optional=True,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "cache_storage_usd_per_mtok_hour",
        "float",
        "USD/MTok/hour",
        "Explicit-cache storage price per million tokens per hour",
        min=0,
        ceiling=ceilings.USD_PER_MTOK,
    ),
    Column(
        "max_input_tokens",
        "int",
        "tokens",
        "Largest prompt the seller accepts",
        positive=True,
        ceiling=ceilings.TOKENS,
    ),
    Column(
        "speed_ratio",
        "float",
        "ratio",
        "Published output speed of this variant over the standard variant (fast mode)",
        positive=True,
        ceiling=ceilings.SPEED_RATIO,
    ),
    Column("hugging_face_id", "str", "", "Hugging Face repo of the open weights served (joins models.hf_repo)"),
    Column("source_url", "str", "", "Page the price was read from", required=True),
)


def _check_price_periods(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """to_date after from_date; periods of one price key do not overlap."""
    problems = []
    for row in _rows(frame, pl.col("to_date") <= pl.col("from_date")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "to_date",
                f"to_date {row['to_date']} is not after from_date {row['from_date']}",
                "to_date is exclusive and must be later than from_date",
            )
        )
    key = ["provider", "model", "variant", "tier_min_prompt_tokens"]
    ordered = frame.sort([*key, "from_date"]).with_columns(
        shift_in_key("from_date", key, -1).alias("_next_from"),
        shift_in_key(LINE, key, -1).alias("_next_line"),
    )
    overlap = pl.col("_next_from").is_not_null() & (
        pl.col("to_date").is_null() | (pl.col("to_date") > pl.col("_next_from"))
    )
    for row in _rows(ordered, overlap):
        problems.append(
            Problem(
                row[FILE],
                row["_next_line"],
                "from_date",
                f"price period from {row['_next_from']} overlaps the period from {row['from_date']} on line "
                f"{row[LINE]}",
                f"set to_date on line {row[LINE]} to {row['_next_from']} or earlier",
            )
        )
    return problems


def _check_tiers(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """Within one model, variant and period, tiers start at 0 and thresholds increase down the file."""
    problems = []
    group = ["provider", "model", "variant"] + [c for c in ("from_date", "declared_from_date") if c in frame.columns]
    ordered = (
        frame.sort([*group, LINE], nulls_last=False)  # the previous tier of a group down the file, then file order
        .with_columns(
            shift_in_key("tier_min_prompt_tokens", group, 1).alias("_prev_tier"),
            pl.col("tier_min_prompt_tokens").min().over(group).alias("_min_tier"),
            pl.col(LINE).min().over(group).alias("_first_line"),
        )
        .sort(LINE)
    )
    for row in _rows(ordered, pl.col("_prev_tier") >= pl.col("tier_min_prompt_tokens")):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "tier_min_prompt_tokens",
                f"tier threshold {row['tier_min_prompt_tokens']} does not increase (previous tier: "
                f"{row['_prev_tier']})",
                "list a model's tiers in increasing order of tier_min_prompt_tokens",
            )
        )
    for row in _rows(ordered, (pl.col("_min_tier") > 0) & (pl.col(LINE) == pl.col("_first_line"))):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "tier_min_prompt_tokens",
                f"{row['model']} ({row['variant']}) has tiers but no base tier",
                "add the row with tier_min_prompt_tokens 0",
            )
        )
    over = pl.col("max_input_tokens").is_not_null() & (pl.col("tier_min_prompt_tokens") >= pl.col("max_input_tokens"))
    for row in _rows(ordered, over):
        problems.append(
            Problem(
                row[FILE],
                row[LINE],
                "tier_min_prompt_tokens",
                f"tier threshold {row['tier_min_prompt_tokens']} is not below max_input_tokens "
                f"{row['max_input_tokens']}",
                "a tier must start below the largest accepted prompt",
            )
        )
    return problems


PRICES = TableSpec(
    name="prices",
    grain="one row per provider x model x variant x context tier x effective period (hand-kept, first-party)",
    description="First-party API prices kept by hand, with effective periods",
    key=("provider", "model", "variant", "tier_min_prompt_tokens", "from_date"),
    columns=(
        *_PRICE_COLUMNS[:4],
        Column("from_date", "date", "", "First day the price applies (inclusive)", required=True),
        Column("to_date", "date", "", "First day the price no longer applies (exclusive; blank = still current)"),
        *_PRICE_COLUMNS[4:],
        Column("notes", "str", "", "Caveats"),
    ),
    checks=(_check_price_periods, _check_tiers),
)

PRICE_SNAPSHOT = TableSpec(
    name="price_snapshot",
    grain="one row per provider x model x variant x context tier, in one dated import of a public price map",
    description="Normalised rows of one LiteLLM or OpenRouter price map, as imported",
    key=("provider", "model", "variant", "tier_min_prompt_tokens"),
    columns=(
        *_PRICE_COLUMNS,
        Column("source_key", "str", "", "Entry key in the imported file", required=True),
    ),
    checks=(_check_tiers,),
)

# ---------------------------------------------------------------------------- dated snapshots and the history store

_DECLARED = (
    Column(
        "declared_from_date",
        "date",
        "",
        "First day of the row's price by the source's own dating (inclusive; blank: as far back as the source knows)",
    ),
    Column(
        "declared_to_date",
        "date",
        "",
        "First day the row's price no longer applies by the source's own dating (exclusive; blank: open)",
    ),
    Column(
        "match_rule",
        "str",
        "",
        "genai-prices' rule naming the model ids the entry prices (compact JSON: equals, starts_with, contains, "
        "regex, or, and)",
        optional=True,
    ),
)


def _check_declared(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """A declared period ends after it starts."""
    bad = pl.col("declared_to_date") <= pl.col("declared_from_date")
    return [
        Problem(
            row[FILE],
            row[LINE],
            "declared_to_date",
            f"declared_to_date {row['declared_to_date']} is not after declared_from_date {row['declared_from_date']}",
            "the end is exclusive and must be later than the start",
        )
        for row in _rows(frame, bad)
    ]


DATED_SNAPSHOT = TableSpec(
    name="dated_price_snapshot",
    grain="one row per provider x model x variant x context tier x declared period, in one dated snapshot of a "
    "price database with its own history",
    description="Normalised rows of one genai-prices or llm-prices snapshot, with the source's own dated periods",
    key=("provider", "model", "variant", "tier_min_prompt_tokens", "declared_from_date"),
    columns=(*PRICE_SNAPSHOT.columns, *_DECLARED),
    checks=(_check_tiers, _check_declared),
)

CHANGES = ("set", "drop")

HISTORY_COMMITS = TableSpec(
    name="history_commits",
    grain="one row per snapshot (a commit that changed the data, or an imported file) of one price database",
    description="The snapshots of a replayed price history, oldest first",
    key=("snapshot",),
    columns=(
        Column("snapshot", "int", "", "Position of the snapshot, oldest first (0, 1, 2, ...)", required=True, min=0),
        Column(
            "commit",
            "str",
            "",
            "Git commit of the source repository (40 hex digits), or sha256:<digest of the file> for an imported file",
            required=True,
        ),
        Column("committed_at", "str", "", "Commit time in UTC (YYYY-MM-DDTHH:MM:SSZ)", required=True),
        Column("snapshot_date", "date", "", "UTC date of committed_at: the snapshot's date", required=True),
        Column("rows", "int", "rows", "Price rows in the snapshot", required=True, min=0),
        Column("input_path", "str", "", "The source file(s) read at that commit", required=True),
        Column("input_sha256", "str", "", "SHA-256 of the bytes read (files in path order)", required=True),
        Column("subject", "str", "", "First line of the commit message"),
    ),
)


def _check_changes(frame: pl.DataFrame, spec: TableSpec) -> list[Problem]:
    """A ``set`` row names its source and entry; a ``drop`` row (the key left the source) carries no price."""
    problems = []
    for column in ("source_url", "source_key"):
        for row in _rows(frame, (pl.col("change") == "set") & pl.col(column).is_null()):
            problems.append(Problem(row[FILE], row[LINE], column, "is blank", f"a set row needs its {column}"))
    priced = pl.any_horizontal(pl.col(c).is_not_null() for c in ("input_usd_per_mtok", "output_usd_per_mtok"))
    for row in _rows(frame, (pl.col("change") == "drop") & priced):
        problems.append(
            Problem(row[FILE], row[LINE], "change", "a drop row carries a price", "a key that left holds no price")
        )
    return problems


HISTORY_CHANGES = TableSpec(
    name="history_changes",
    grain="one row per snapshot x price key x declared period whose rows changed from the snapshot before",
    description="The rows of a replayed price history that changed: at each snapshot, every row of each price key "
    "whose rows differ from the previous snapshot (set), or one drop row for a key that left",
    key=("snapshot", "provider", "model", "variant", "tier_min_prompt_tokens", "declared_from_date"),
    columns=(
        Column("snapshot", "int", "", "The snapshot (history_commits.snapshot) the rows are new in", required=True),
        Column(
            "change",
            "str",
            "",
            "set: the key's rows from this snapshot on; drop: the key left",
            required=True,
            allowed=CHANGES,
        ),  # fmt: skip
        *(
            Column(
                c.name,
                c.kind,
                c.unit,
                c.description,
                optional=c.optional,
                min=c.min,
                positive=c.positive,
                allowed=c.allowed,
                ceiling=c.ceiling,
                required=c.name in PRICE_SNAPSHOT.key,
            )  # fmt: skip
            for c in PRICE_SNAPSHOT.columns
        ),
        *_DECLARED,
    ),
    checks=(_check_changes, _check_declared),
)
