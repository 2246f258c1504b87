"""What a request costs at a seller's published prices, as the sellers bill it (pure, vectorised).

Tokens of a request: ``input_tokens`` (uncached prompt tokens, Anthropic's ``usage.input_tokens``),
``cached_input_tokens`` (prompt-cache reads), ``cache_write_tokens`` at a retention (``cache_ttl`` 5m or 1h) and
``output_tokens``; optionally ``cache_storage_hours`` of explicit-cache storage (Google) for the cached tokens.

- **Long-context tiers bill the whole request.** The tier is the row with the largest ``tier_min_prompt_tokens``
  the prompt *exceeds* (strictly; at or above it where the seller's ``tier_boundary`` rule is ``reaches``: xAI's
  "≥ 200k"), where the prompt counts every input token: uncached, cache reads and cache writes
  (Anthropic: "The 200K threshold is based solely on input tokens (including cache reads/writes) … If the total
  exceeds 200,000 tokens, the entire request was billed at 1M context rates"). Every component, output included, is
  then priced at that tier's row; cache prices of a tier row are the tier's (caching multipliers stack on top of
  long-context pricing).
- **Cache prices** are the row's ``cache_read`` and ``cache_write_5m`` / ``cache_write_1h`` prices, after the
  seller's billing rules (:func:`econ.fits.billing_rules.effective_prices`). A write with no price is billed as
  ordinary input where the seller's ``unlisted_cache_write`` rule says so (the default: "billed for the input tokens
  used to create the cache at the standard input token price") and has no known cost where it says ``unknown``; a
  read without a price gives no discount. Both are said in ``note``.
- **Variants** (batch, flex, priority, fast) are their own rows: a batch row's prices already carry the discount
  (and, where the seller says so, its cache discount), so they stack as the seller publishes them.
- **Time of day**: every price of the row is multiplied by ``window_ratio`` (1 unless the request falls in a
  ``billing_windows`` window: DeepSeek's off-peak hours).
"""

from __future__ import annotations

import polars as pl

from econ import units
from econ.formula import formula

TOKENS = ("input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
TTLS = ("5m", "1h")


@formula(
    "prompt = input + cache read + cache write; tier = max{t : prompt > t} (prompt >= t where the boundary reaches)",
    "Anthropic pricing page (long context pricing); OpenAI and Google price the full request alike; xAI's >= 200k",
)
def billed_tier(requests: pl.DataFrame, schedules: pl.DataFrame, on: str | None = None) -> pl.DataFrame:
    """Each request × each schedule (a seller's rows of one model and variant) with the tier row it is billed at.

    ``requests``: ``request`` (id) and :data:`TOKENS`; ``schedules``: price rows with ``schedule`` (id),
    ``tier_min_prompt_tokens`` and optionally ``rule_tier_boundary`` (``exceeds`` when absent). Returns one row per
    request × schedule with the columns of both and ``prompt_tokens``; a schedule whose base tier the request does not
    reach (none: every schedule has tier 0) is absent. With ``on`` (a column of both), a request meets only the
    schedules of its own value of it (several bills at once).
    """
    prompt = pl.col("input_tokens") + pl.col("cached_input_tokens") + pl.col("cache_write_tokens")
    with_prompt = requests.with_columns(prompt.alias("prompt_tokens"))
    pairs = with_prompt.join(schedules, on=on) if on else with_prompt.join(schedules, how="cross")
    reaches = pl.col("rule_tier_boundary") == "reaches" if "rule_tier_boundary" in pairs.columns else pl.lit(False)
    threshold = pl.col("tier_min_prompt_tokens")
    reached = pairs.filter(
        (threshold == 0) | (pl.col("prompt_tokens") > threshold) | (reaches & (pl.col("prompt_tokens") >= threshold))
    )
    return reached.filter(
        pl.col("tier_min_prompt_tokens") == pl.col("tier_min_prompt_tokens").max().over("request", "schedule")
    )


@formula(
    "cost = (input·p_in + read·p_read + write·p_write(ttl) + output·p_out)/10⁶ + (read + write)·hours·p_storage/10⁶, "
    "all at the billed tier's row",
    "sellers' pricing pages (Anthropic, Google, OpenAI); econ.fits.request_cost",
)
def request_costs(billed: pl.DataFrame) -> pl.DataFrame:
    """The cost in USD of each request × schedule of :func:`billed_tier`, per component and in total.

    Adds ``input_usd``, ``cached_input_usd``, ``cache_write_usd``, ``output_usd``, ``cache_storage_usd``,
    ``cost_usd`` (null when a component with tokens has no price) and ``note`` (how a missing price was billed).
    Optional columns: ``window_ratio`` (time-of-day multiplier, 1 when absent) and ``rule_unlisted_cache_write``
    (``input`` when absent).
    """
    per_token = (pl.col("window_ratio") if "window_ratio" in billed.columns else pl.lit(1.0)) / units.MTOK
    unknown_write = (
        pl.col("rule_unlisted_cache_write") == "unknown"
        if "rule_unlisted_cache_write" in billed.columns
        else pl.lit(False)
    )
    write_rate = (
        pl.when(pl.col("cache_ttl") == "1h")
        .then(pl.col("cache_write_1h_usd_per_mtok"))
        .otherwise(pl.col("cache_write_5m_usd_per_mtok"))
    )
    read_missing = (pl.col("cached_input_tokens") > 0) & pl.col("cache_read_usd_per_mtok").is_null()
    write_missing = (pl.col("cache_write_tokens") > 0) & write_rate.is_null()
    storing = (pl.col("cache_storage_hours") > 0) & (pl.col("cached_input_tokens") + pl.col("cache_write_tokens") > 0)
    storage_missing = storing & pl.col("cache_storage_usd_per_mtok_hour").is_null()
    read = pl.coalesce("cache_read_usd_per_mtok", "input_usd_per_mtok")
    write = pl.when(unknown_write).then(write_rate).otherwise(pl.coalesce(write_rate, pl.col("input_usd_per_mtok")))

    def part(tokens: str, rate: pl.Expr) -> pl.Expr:
        return pl.when(pl.col(tokens) == 0).then(0.0).otherwise(pl.col(tokens) * rate * per_token)

    stored = pl.col("cached_input_tokens") + pl.col("cache_write_tokens")
    storage = (
        pl.when(~storing)
        .then(0.0)
        .otherwise(stored * pl.col("cache_storage_hours") * pl.col("cache_storage_usd_per_mtok_hour") / units.MTOK)
    )
    notes = pl.concat_str(
        [
            pl.when(read_missing).then(pl.lit("no cache-read price: reads billed as input")),
            pl.when(write_missing).then(
                pl.concat_str(
                    pl.lit("no "),
                    pl.col("cache_ttl"),
                    pl.when(unknown_write)
                    .then(pl.lit(" cache-write price: the write's cost is unknown"))
                    .otherwise(pl.lit(" cache-write price: writes billed as input")),
                )
            ),
            pl.when(storage_missing).then(pl.lit("no storage price: storage not billed")),
        ],
        separator="; ",
        ignore_nulls=True,
    )
    out = billed.with_columns(
        part("input_tokens", pl.col("input_usd_per_mtok")).alias("input_usd"),
        part("cached_input_tokens", read).alias("cached_input_usd"),
        part("cache_write_tokens", write).alias("cache_write_usd"),
        part("output_tokens", pl.col("output_usd_per_mtok")).alias("output_usd"),
        storage.fill_null(0.0).alias("cache_storage_usd"),
        notes.alias("note"),
    )
    total = pl.sum_horizontal("input_usd", "cached_input_usd", "cache_write_usd", "output_usd", "cache_storage_usd")
    unpriced = pl.any_horizontal(
        pl.col(c).is_null() for c in ("input_usd", "cached_input_usd", "cache_write_usd", "output_usd")
    )
    return out.with_columns(pl.when(unpriced).then(None).otherwise(total).alias("cost_usd"))
