"""A measured InferenceX run read with what InferenceX launched: the pools of a disaggregated run that states no worker
counts, and whether a run speculated (MTP).

Most of ``inferencex_train``'s disaggregated rows state neither pool's worker count, and many store a layout that is
not the run's (a GB200 ``dep32`` decode pool stored as ``tp_size=32, moe_ep_size=4``: the prefill's expert degree
copied). InferenceX's master configs state every multi-node launch (``inferencex_launches``, written from the
repository's history by ``scripts/inferencex_launches.py``): model, chip, engine, format, lengths, concurrency and
each pool's workers, chips, expert degree and attention data parallelism. A row takes the pools of the launches that
match it (:func:`match`), of median size where they state several sets (:data:`CHOICES`):

- the same architecture, chip, engine, checkpoint format, input and output length;
- its concurrency is the launch's, or the launch's times its decode workers (how the dump states some runs);
- it was measured while a config version held the launch (``first_date`` − 3 days to ``last_date`` + 3 days).

A run whose every matching launch names ``eplbN`` (N > 0) in its recipe (TensorRT-LLM's MoE load balancer over N
expert slots: 256 places DeepSeek's experts by their routing statistics, 288 adds 32 redundant copies) has its
decode pool's experts balanced (:data:`BALANCED`). Which launch ran (MTP or not) may stay ambiguous, and so may the
pools: InferenceX's configs often sweep several systems at one concurrency, and a row that states no workers does not
say which ran. Such a row takes, of the launches whose chips a worker its stored layout states (where any are), the
set of median size: the 131 runs this reads differently from workers assumed by rule
(:mod:`econ.analyses.assumed_workers`) read closer held out by model, TTFT 2.15x / 5.19x -> 1.69x / 3.44x and TPOT
1.41x / 2.49x -> 1.31x / 1.99x (docs/design-notes.md). A row that states both pools keeps them, and takes the
speculation, balancer and decode batch limit of the launches whose pools are the ones it states (so two runs of one
configuration read alike whether or not the file wrote their workers).
A launch whose pool is a placeholder (attention data parallel over one chip, or an expert degree above the pool's
chips: early SGLang GB200 entries, whose layouts live in the recipe files they name) is not used. A run every
matching launch of which speculates is marked :data:`SPECULATION`; an aggregated run is matched to the single-node
entries (``inferencex_node_launches``) by the engine image it ran as well (:func:`node_speculation`).
"""

from __future__ import annotations

import polars as pl

SLACK_DAYS = 3
"""Days a run may be measured before a config version's commit date or after its last one (a config is committed
on the day it runs, and runs of a version go on for a day or two after the next commit)."""

SPECULATION = "speculation_launched"
"""True for a run every launch it matches speculates (MTP): the configs name no acceptance (the multi-node recipes
name a draft length, not used: docs/design-notes.md), so the calibration times its TPOT with a fitted speed-up
(``speculation_speedup`` of :mod:`econ.fits.calibration`)."""

LIMIT = "launch_max_running"
"""Requests a decode worker runs at once, where its launch's recipe states its batch limit (``batchN`` per attention
rank, times the ranks when attention runs data parallel); null: not stated."""

BALANCED = "decode_expert_balanced"
"""1.0 for a run every launch it matches balances its decode pool's routed experts (``eplbN`` with N > 0 in the
recipe's name), else 0.0: :func:`econ.physics.deployment.expert_balanced`."""

CHOICES = "launch_choices"
"""How many sets of pools the InferenceX launches that match a disaggregated run without worker counts state, of
those whose chips a worker its stored layout states where any do (null: none match, or the run states its pools).
Where several match (a config sweeps several systems at one concurrency, or a version changed them), the run takes
the set of median size in chips (:func:`_median_pools`); its regime stays one whose workers are not stated
(``calibration_tables.workers_unstated``)."""

EPLB = r"eplb(\d+)"
"""The expert slots of a recipe's load balancer, as its name states them (``…_eplb288_mtp1.yaml``; eplb0: none)."""

POOLS = ("prefill", "decode")
POOL_KEYS = tuple(f"{pool}_{k}" for pool in POOLS for k in ("workers", "tp", "ep", "dp_attention"))


KEYS = ("architecture_group", "chip", "engine", "precision", "isl", "osl")
"""What a run and a launch must share: architecture (``model_derived.architecture_group``: InferenceX launches
``dsr1``, and a DeepSeek-R1 run stored as DeepSeek-V3 is the same weights' shape), chip, engine, checkpoint format,
input and output length."""


def _runs(rows: pl.DataFrame, *extra: pl.Expr) -> pl.DataFrame:
    """The runs' side of a match: :data:`KEYS`, concurrency and measured day (rows without them match nothing)."""
    return rows.select(
        "_row",
        "architecture_group",
        "chip",
        pl.col("backend").str.to_lowercase().alias("engine"),
        pl.col("precision").str.to_lowercase(),
        pl.col("isl").cast(pl.Int64),
        pl.col("osl").cast(pl.Int64),
        pl.col("_stated").alias("_conc"),
        pl.col("_measured_date").str.to_date(strict=False).alias("_measured"),
        *extra,
    ).drop_nulls(["architecture_group", "chip", "_conc"])


def _launches(launches: pl.DataFrame, *extra) -> pl.DataFrame:
    """The launches' side: :data:`KEYS`, MTP or not, and the days (with :data:`SLACK_DAYS`) a version held it."""
    return launches.select(
        "architecture_group",
        "chip",
        "engine",
        pl.col("precision").str.to_lowercase(),
        pl.col("isl").cast(pl.Int64),
        pl.col("osl").cast(pl.Int64),
        "speculative_decoding",
        pl.col("first_date").dt.offset_by(f"-{SLACK_DAYS}d").alias("_from"),
        pl.col("last_date").dt.offset_by(f"{SLACK_DAYS}d").alias("_to"),
        *extra,
    )


def _stated_pools() -> list[pl.Expr]:
    """A row's own pools as a launch states them: workers, chips (tensor × attention data parallel) and whether the
    attention runs data parallel."""
    out = []
    for pool in ("prefill", "decode"):
        dp = pl.col(f"{pool}_attention_dp_size").cast(pl.Float64).fill_null(1.0)
        out += [
            pl.col(f"{pool}_num_workers").cast(pl.Float64).alias(f"_stated_{pool}_workers"),
            (pl.col(f"{pool}_tp_size").cast(pl.Float64).fill_null(1.0) * dp).alias(f"_stated_{pool}_tp"),
            (dp > 1.0).cast(pl.Int64).alias(f"_stated_{pool}_dp_attention"),
        ]
    return out


def match(rows: pl.DataFrame, launches: pl.DataFrame, *, stated_pools: bool = False) -> pl.DataFrame:
    """``(_row, speculation_launched, launch pools, _layout_key, _launch_key, _balanced, launch_choices)`` of every row
    of ``rows`` that a launch matches: ``speculation_launched`` when every matching launch speculates (MTP),
    ``_balanced`` when every one balances its experts (:data:`EPLB`); the pools of median size among the sets the
    matches state (:func:`_median_pools`), with their launch as ``_launch_key`` and ``_layout_key``. ``rows``
    has ``_row``, ``architecture_group``, ``chip``, ``backend``, ``precision``, ``isl``, ``osl``, ``_stated``
    (concurrency) and ``_measured_date``; ``launches`` the table's columns with ``architecture_group`` and ``chip``
    resolved. With ``stated_pools`` (rows that state both pools) only a launch whose pools are the row's own
    (:func:`_stated_pools`) matches, and no ``_layout_key`` is given: the row keeps its layout and takes the launch's
    speculation, balancer and batch limit."""
    left = _runs(rows, *_stated_pools())
    eplb = pl.col("recipe").str.extract(EPLB).cast(pl.Int64).fill_null(0).alias("_eplb")
    right = _launches(
        launches, pl.col("concurrency").cast(pl.Float64), *POOL_KEYS, "config_key", "decode_max_batch", eplb
    )
    placeholder = pl.any_horizontal(
        ((pl.col(f"{pool}_dp_attention") == 1) & (pl.col(f"{pool}_tp") == 1))
        | (pl.col(f"{pool}_ep").fill_null(1) > pl.col(f"{pool}_tp"))
        for pool in ("prefill", "decode")
    )
    j = left.join(right.filter(~placeholder), on=KEYS, how="inner")
    conc = (pl.col("_conc") == pl.col("concurrency")) | (
        pl.col("_conc") == pl.col("concurrency") * pl.col("decode_workers")
    )
    when = pl.col("_measured").is_null() | pl.col("_measured").is_between(pl.col("_from"), pl.col("_to"))
    j = j.filter(conc & when)
    if stated_pools:
        keys = ("workers", "tp", "dp_attention")
        j = j.filter(pl.all_horizontal(pl.col(f"{p}_{k}") == pl.col(f"_stated_{p}_{k}") for p in POOLS for k in keys))
    else:  # the launches whose workers' chips are the ones the row's stored layout states, where any are
        fits = pl.sum_horizontal((pl.col(f"{p}_tp") == pl.col(f"_stated_{p}_tp")).cast(pl.Int64) for p in POOLS)
        j = j.with_columns(fits.fill_null(0).alias("_fits"))
        j = j.filter(pl.col("_fits") == pl.col("_fits").max().over("_row")).drop("_fits")
    j = j.sort("_row", *POOL_KEYS, "config_key", "speculative_decoding")
    specs = j.group_by("_row").agg(pl.col("speculative_decoding").unique().alias("_specs"))
    speculation = specs.select("_row", (pl.col("_specs") == ["mtp"]).alias(SPECULATION))
    found = _median_pools(j).select(
        "_row",
        *POOL_KEYS,
        CHOICES,
        pl.col("config_key").alias("_launch_key"),
        pl.col("config_key").alias("_layout_key"),
    )
    if stated_pools:  # the row's own layout stands (the launch's is the same, as the launch states it)
        found = found.with_columns(
            pl.lit(None, dtype=pl.String).alias("_layout_key"), pl.lit(None, pl.Float64).alias(CHOICES)
        )
    limit = j.group_by("_row").agg(pl.col("decode_max_batch").unique().alias("_limits"))
    rank_limit = pl.col("_limits").list.drop_nulls()
    limit = limit.filter((pl.col("_limits").list.len() == 1) & (rank_limit.list.len() == 1))
    found = found.join(limit.select("_row", rank_limit.list.first().alias("_rank_limit")), on="_row", how="left")
    balanced = j.group_by("_row").agg((pl.col("_eplb") > 0).all().alias("_balanced"))
    return speculation.join(balanced, on="_row").join(found, on="_row", how="left")


def _median_pools(j: pl.DataFrame) -> pl.DataFrame:
    """One set of pools per row of the matches ``j`` (sorted by row and pools), with :data:`CHOICES`, how many sets
    matched: the set of median size in chips (the lower of the two middle ones), ties in size by the pools."""
    chips = pl.col("prefill_workers") * pl.col("prefill_tp") + pl.col("decode_workers") * pl.col("decode_tp")
    sets = j.unique(["_row", *POOL_KEYS], keep="first", maintain_order=True).with_columns(chips.alias("_chips"))
    sets = sets.sort("_row", "_chips", *POOL_KEYS).with_columns(
        pl.int_range(pl.len()).over("_row").alias("_k"), pl.len().cast(pl.Float64).over("_row").alias(CHOICES)
    )
    return sets.filter(pl.col("_k") == (pl.col(CHOICES) - 1) // 2)


def _image(column: str) -> pl.Expr:
    """An engine image as one spelling (``nvcr.io#nvidia/…`` and ``nvcr.io/nvidia/…`` name the same image)."""
    return pl.col(column).str.replace("#", "/", literal=True).str.strip_chars()


def node_speculation(rows: pl.DataFrame, node_launches: pl.DataFrame) -> pl.DataFrame:
    """``(_row, speculation_launched)`` of every stored ``agg`` row of ``rows`` that a single-node launch matches:
    the same architecture, chip, engine, format, lengths and engine image (``_image``), its concurrency within the
    launch's sweep, measured while a version held it; true when every such launch speculates. A single-node config's
    MTP and plain entries often sweep the same degrees and concurrencies: only the image they ran tells them apart."""
    left = _runs(rows.filter(pl.col("mode") == "agg"), _image("_image").alias("_img")).drop_nulls("_img")
    right = _launches(node_launches, _image("image").alias("_img"), "concurrency_start", "concurrency_end")
    j = left.join(right, on=[*KEYS, "_img"], how="inner").filter(
        pl.col("_conc").is_between(pl.col("concurrency_start"), pl.col("concurrency_end"))
        & (pl.col("_measured").is_null() | pl.col("_measured").is_between(pl.col("_from"), pl.col("_to")))
    )
    specs = j.group_by("_row").agg(pl.col("speculative_decoding").unique().alias("_specs"))
    return specs.select("_row", (pl.col("_specs") == ["mtp"]).alias(SPECULATION))


def apply(rows: pl.DataFrame, launches: pl.DataFrame | None, node_launches: pl.DataFrame | None = None) -> pl.DataFrame:
    """``rows`` (stored ``disagg`` rows without both worker counts matched by :func:`match`, those with both by
    ``match(…, stated_pools=True)``, stored ``agg`` rows by :func:`node_speculation`) with the launch's pools
    in the AIConfigurator columns (``*_num_workers``, ``*_tp_size``, ``*_attention_dp_size``, ``*_moe_tp_size``,
    ``*_moe_ep_size``, ``*_pp_size`` 1), ``_launch_key`` (null: no launch matches), :data:`CHOICES` and
    :data:`SPECULATION`."""
    unstated = (pl.col("mode") == "disagg") & (
        pl.col("prefill_num_workers").is_null()
        | (pl.col("prefill_num_workers") <= 0)
        | pl.col("decode_num_workers").is_null()
        | (pl.col("decode_num_workers") <= 0)
    )
    rows = rows.with_row_index("_row")
    empty = {
        "_row": pl.UInt32,
        SPECULATION: pl.Boolean,
        "_launch_key": pl.String,
        "_layout_key": pl.String,
        "_rank_limit": pl.Int64,
        "_balanced": pl.Boolean,
        CHOICES: pl.Float64,
        **dict.fromkeys(POOL_KEYS, pl.Int64),
    }
    parts = [pl.DataFrame(schema=empty)]
    if launches is not None and not launches.is_empty():
        parts.append(match(rows.filter(unstated), launches))
        parts.append(match(rows.filter((pl.col("mode") == "disagg") & ~unstated), launches, stated_pools=True))
    if node_launches is not None and not node_launches.is_empty():
        parts.append(node_speculation(rows, node_launches))
    rows = rows.join(pl.concat(parts, how="diagonal_relaxed"), on="_row", how="left")
    hit = pl.col("_launch_key").is_not_null()
    layout = pl.col("_layout_key").is_not_null()
    out = []
    for pool in ("prefill", "decode"):
        dp = pl.col(f"{pool}_dp_attention") == 1
        chips = pl.col(f"{pool}_tp").cast(pl.Float64)
        ep = pl.col(f"{pool}_ep").cast(pl.Float64).fill_null(1.0)
        stated = {
            "num_workers": pl.col(f"{pool}_workers").cast(pl.Float64),
            "tp_size": pl.when(dp).then(1.0).otherwise(chips),
            "attention_dp_size": pl.when(dp).then(chips).otherwise(1.0),
            "pp_size": pl.lit(1.0),
            "moe_ep_size": ep,
            "moe_tp_size": chips / ep,
        }
        out += [
            pl.when(hit if k == "num_workers" else layout)
            .then(v)
            .otherwise(pl.col(f"{pool}_{k}").cast(pl.Float64))
            .alias(f"{pool}_{k}")
            for k, v in stated.items()
        ]
    ranks = pl.when(pl.col("decode_dp_attention") == 1).then(pl.col("decode_tp")).otherwise(1)
    limit = pl.when(hit).then(pl.col("_rank_limit") * ranks).cast(pl.Float64).alias(LIMIT)
    balanced = pl.col("_balanced").fill_null(False).cast(pl.Float64).alias(BALANCED)
    return rows.with_columns(*out, limit, balanced, pl.col(SPECULATION).fill_null(False)).drop(
        "_row", "_rank_limit", "_balanced", *POOL_KEYS
    )
