"""The comparison of econ's bill with pydantic's genai-prices on every first-party model both know (helpers of
tests/analyses/test_genai_prices_crosscheck.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl

from econ.analyses.billing import bill_each
from econ.analyses.cost_command import single_request

GENAI_PROVIDER = {
    "anthropic": "anthropic",
    "google": "google",
    "openai": "openai",
    "xai": "x-ai",
    "deepseek": "deepseek",
    "minimax": "minimax",
    "moonshot": "moonshotai",
    "zai": "zai",
}
"""econ's first-party sellers and genai-prices' provider ids (genai-prices has no Alibaba Model Studio)."""

AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
"""When the requests are made: the build date, 20:00 in Beijing on a Monday (DeepSeek off-peak in both tools)."""

SHAPES = {  # name: (uncached input, cache reads, cache writes, ttl, output)
    "plain": (10_000, 0, 0, "5m", 1_000),
    "cache read": (10_000, 50_000, 0, "5m", 1_000),
    "cache write 5m": (5_000, 0, 20_000, "5m", 1_000),
    "cache write 1h": (5_000, 0, 20_000, "1h", 1_000),
}


RETIRED = (
    ("anthropic", "claude-sonnet-4-20250514"),
    ("anthropic", "claude-opus-4-20250514"),
    ("xai", "grok-code-fast-1"),
    ("xai", "grok-4-0709"),
    ("xai", "grok-3"),
    ("xai", "grok-4-fast-reasoning"),
    ("xai", "grok-4-1-fast-reasoning"),
)
"""Models data/billing_rules.csv retires (seller, model id): genai-prices still prices them."""


def _genai_tiers(model) -> set[int]:
    """Where genai-prices' tiers of a model start (a tier bills above its start)."""
    from genai_prices.types import TieredPrices

    prices = model.get_prices(AT)
    return {t.start for v in vars(prices).values() if isinstance(v, TieredPrices) for t in v.tiers}


def known_by_both(prices: pl.DataFrame) -> list[tuple[str, str, str, tuple[int, ...], tuple[str, ...]]]:
    """(econ seller, price key, genai-prices model id, prompt sizes to try, variants) of every hand-kept first-party
    model genai-prices also prices, and of the retired ones (:data:`RETIRED`)."""
    from genai_prices import data_snapshot

    snapshot = data_snapshot.get_snapshot()
    hand = prices.filter((pl.col("source") == "hand") & pl.col("provider").is_in(list(GENAI_PROVIDER)))
    listed = [
        (
            provider,
            model,
            rows.filter(pl.col("variant") == "standard")["tier_min_prompt_tokens"].to_list(),
            sorted(set(rows["variant"]) & {"standard", "batch"}),
        )
        for (provider, model), rows in hand.group_by("provider", "model", maintain_order=True)
    ]
    out = []
    for provider, model, tiers, variants in [*listed, *((p, m, [], ["standard"]) for p, m in RETIRED)]:
        try:
            _, found = snapshot.find_provider_model(model, None, GENAI_PROVIDER[provider], None)
        except LookupError:
            continue
        theirs = _genai_tiers(found)
        sizes = {t for t in tiers if t} | {t + 1 for t in tiers if t} | theirs | {t + 1 for t in theirs}
        sizes |= {t + 2 for t in theirs}
        out.append((provider, model, found.id, tuple(sorted(sizes)), tuple(variants)))
    return out


def shapes(sizes: tuple[int, ...]) -> dict[str, tuple]:
    """The request shapes billed for a model: SHAPES, and a prompt of each size (at and around each threshold)."""
    return dict(SHAPES) | {f"prompt {n:,}": (n, 0, 0, "5m", 1_000) for n in sizes}


def genai_usd(provider: str, model_id: str, variant: str, shape: tuple) -> float | None:
    from genai_prices import Usage, calc_price

    inp, read, write, ttl, out = shape
    usage = {"input_tokens": inp + read + write, "output_tokens": out}
    if read:
        usage["cache_read_tokens"] = read
    if write:
        usage["cache_write_tokens"] = write
        usage[f"cache_write_{ttl}_tokens"] = write
    context = {"processing": "batch"} if variant == "batch" else None
    try:
        got = calc_price(
            Usage(**usage),
            model_id,
            provider_id=GENAI_PROVIDER[provider],
            genai_request_timestamp=AT,
            price_context=context,
        )
    except (LookupError, ValueError):
        return None
    if variant == "batch" and not any(v.when == {"processing": "batch"} for v in got.model.price_variants or ()):
        return None  # no batch prices in genai-prices: nothing to compare
    return float(got.total_price)


def econ_bills(tables, provider: str, model: str, variant: str, shaped: dict[str, tuple]) -> dict[str, dict]:
    """econ's bill of every shape at the seller (one bill, the shapes as separate requests)."""
    requests = pl.concat(
        single_request(
            input_tokens=inp,
            output_tokens=out,
            cached_input_tokens=read,
            cache_write_tokens=write,
            cache_ttl=ttl,
            at=AT,
        ).with_columns(pl.lit(i, pl.Int64).alias("request"))
        for i, (inp, read, write, ttl, out) in enumerate(shaped.values())
    )
    return dict(zip(shaped, bill_each(tables, provider=provider, model=model, variant=variant, requests=requests)))


def comparisons(tables) -> pl.DataFrame:
    """Every (seller, model, variant, shape) both tools bill, with both bills."""
    rows = []
    for provider, model, genai_id, sizes, variants in known_by_both(tables.prices):
        for variant in variants:
            theirs = {name: genai_usd(provider, genai_id, variant, shape) for name, shape in shapes(sizes).items()}
            shaped = {name: shape for name, shape in shapes(sizes).items() if theirs[name] is not None}
            if not shaped:
                continue
            for name, ours in econ_bills(tables, provider, model, variant, shaped).items():
                rows.append(
                    {
                        "provider": provider,
                        "model": model,
                        "genai_model": genai_id,
                        "variant": variant,
                        "shape": name,
                        "econ_usd": ours["cost_usd"],
                        "econ_refusal": ours["refusal"],
                        "genai_usd": theirs[name],
                    }
                )
    return pl.DataFrame(
        rows, schema_overrides={"econ_usd": pl.Float64, "genai_usd": pl.Float64, "econ_refusal": pl.String}
    )


def disagreements(compared: pl.DataFrame) -> pl.DataFrame:
    """The comparisons where the bills differ by more than 1e-9 relative (or econ refuses what genai-prices bills)."""
    apart = (pl.col("econ_usd") - pl.col("genai_usd")).abs() > 1e-9 * pl.max_horizontal(1.0, pl.col("genai_usd").abs())
    return compared.filter(apart.fill_null(True))
