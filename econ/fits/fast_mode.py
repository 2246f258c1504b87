"""Fast mode and priority → what the published (price, speed) multiples allow (lecture a.5 and beyond).

For a fast variant priced at m × the standard output price and streaming s × faster, the lecture's identity
m · s = (G1/G0) · (B0/B1) gives the batch ratio on the same replica (:func:`econ.physics.fast_mode.batch_ratio`;
Claude Opus fast mode: 6 × 2.5 = 15). Whether a real deployment can be s times faster for at most m times the
cost is a question for the deployment model: for each reference architecture (the model's own for an open one,
every deployed open model for a closed one) and each explanation — a smaller batch on the same replica, more chips
per replica, speculative decoding, any combination (:mod:`econ.analyses.fast_mode_search`) — the cheapest point
that is s times faster than the baseline costs some multiple of it
(:func:`econ.physics.fast_mode.cost_multiple_for_speed`). The price multiple is m = need·ρ with ρ = (1 − g_std)/
(1 − g_fast) the ratio of the two modes' markups; with both gross margins anywhere in the scenario's range
[g_lo, g_hi], ρ ∈ [(1 − g_hi)/(1 − g_lo), (1 − g_lo)/(1 − g_hi)]. An explanation is **allowed** (the multiple is
explained at the stated margin range) when m/ρ_hi ≤ need ≤ m/ρ_lo, tested on both sides: **too dear** when even
the most favourable margins cannot pay for it (need > m/ρ_lo), **too cheap** when the price multiple is more than
any margin in the range explains (need < m/ρ_hi: the fast mode carries a markup of its own). The **implied markup**
of the fast mode over standard is m/need. The share of reference architectures for which an explanation is allowed
says how much the published multiples constrain it. L* plays no part: the first tier threshold is not
the crossover (``inference_quantities``).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.formula import formula
from econ.physics import fast_mode

VARIANTS = ("fast", "priority")


def with_standard_prices(variants: pl.DataFrame, prices: pl.DataFrame) -> pl.DataFrame:
    """Attach the standard price that applies at each variant row's tier (same source, provider and model).

    A schedule without a tier at that threshold bills its highest tier below it, so the standard price is the
    standard row with the largest ``tier_min_prompt_tokens`` ≤ the variant row's.
    """
    key = ["source", "provider", "model"]
    std = (
        prices.filter(pl.col("variant") == "standard")
        .select(
            *key,
            "tier_min_prompt_tokens",
            pl.col("tier_min_prompt_tokens").alias("standard_tier_min_prompt_tokens"),
            pl.col("input_usd_per_mtok").alias("standard_input_usd_per_mtok"),
            pl.col("output_usd_per_mtok").alias("standard_output_usd_per_mtok"),
        )
        .sort("tier_min_prompt_tokens")
    )
    return variants.sort("tier_min_prompt_tokens").join_asof(
        std, on="tier_min_prompt_tokens", by=key, strategy="backward", check_sortedness=False
    )


@formula("m = fast/standard output price; B0/B1 = m·s on the same replica", "lecture a.5")
def multiples(frame: pl.DataFrame) -> pl.DataFrame:
    """Add ``output_price_ratio`` (m), ``input_price_ratio`` and the identity's ``batch_ratio`` (m·s)."""
    m_out = pl.col("output_usd_per_mtok") / pl.col("standard_output_usd_per_mtok")
    return frame.with_columns(
        m_out.alias("output_price_ratio"),
        (pl.col("input_usd_per_mtok") / pl.col("standard_input_usd_per_mtok")).alias("input_price_ratio"),
    ).with_columns(
        pl.Series(
            "batch_ratio",
            fast_mode.batch_ratio(
                frame.select(m_out).to_series().cast(pl.Float64).fill_null(np.nan).to_numpy(),
                frame["speed_ratio"].cast(pl.Float64).fill_null(np.nan).to_numpy(),
            ),
            nan_to_null=True,
        )
    )


@formula("ρ ∈ [(1 − g_hi)/(1 − g_lo), (1 − g_lo)/(1 − g_hi)]; allowed when m/ρ_hi ≤ need ≤ m/ρ_lo", "module")
def markup_band(margin_low_frac: float, margin_high_frac: float) -> tuple[float, float]:
    """(ρ_lo, ρ_hi): the range of the fast mode's markup over the standard one when both gross margins lie anywhere
    in [margin_low, margin_high]."""
    lo, hi = float(margin_low_frac), float(margin_high_frac)
    return (1.0 - hi) / (1.0 - lo), (1.0 - lo) / (1.0 - hi)


@formula("allowed when m/ρ_hi ≤ need ≤ m/ρ_lo; implied markup = m/need", "lecture a.5; module")
def explain(
    frame: pl.DataFrame,
    by_context: dict,
    *,
    context_column: str = "context_used_tokens",
    band: tuple[float, float] = (1.0, np.inf),
):
    """(``frame`` with the share of reference architectures each explanation is allowed for and a summary, one row
    per frame row × reference architecture × explanation).

    ``frame``: rows with ``output_price_ratio`` (m), ``speed_ratio`` (s), ``arch_model`` (null for closed) and
    ``context_column``; ``by_context``: {context: points} with ``models``, ``speed``, ``cost``, ``eligible``
    (per explanation), ``baseline_speed``, ``baseline_cost`` (:class:`econ.analyses.fast_mode_search.Points`);
    ``band``: (ρ_lo, ρ_hi) of :func:`markup_band`; the default (1, ∞) is the one-sided reading "cost multiple ≤ m"
    (the same margin, never too cheap).
    """
    rho_lo, rho_hi = band
    m = frame["output_price_ratio"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    s = frame["speed_ratio"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    ctx = frame[context_column].to_numpy()
    own = (
        frame["arch_model"].fill_null("").to_numpy().astype(object)
        if "arch_model" in frame.columns
        else np.full(frame.height, "", dtype=object)
    )
    shares = {e: np.full(frame.height, np.nan) for e in fast_mode.EXPLANATIONS}
    dear = {e: np.full(frame.height, np.nan) for e in fast_mode.EXPLANATIONS}
    cheap = {e: np.full(frame.height, np.nan) for e in fast_mode.EXPLANATIONS}
    markup = np.full((frame.height, 3), np.nan)  # any_combination: median, min, max over reference architectures
    counts = np.zeros(frame.height, dtype=int)
    details = []
    for context, pts in by_context.items():
        rows = np.flatnonzero((ctx == context) & np.isfinite(m) & np.isfinite(s) & (s > 1))
        if rows.size == 0 or not pts.models:
            continue
        names = np.asarray(pts.models, dtype=object)
        own_rows = own[rows]
        mine = own_rows[:, None] == names[None, :]  # an open model is read against itself, a closed one against all
        mine = np.where(mine.any(axis=1, keepdims=True), mine, True)
        counts[rows] = mine.sum(axis=1)
        for e in fast_mode.EXPLANATIONS:
            need, reach = fast_mode.cost_multiple_for_speed(
                pts.speed, pts.cost, pts.eligible[e], pts.baseline_speed, pts.baseline_cost, s[rows]
            )
            mm = m[rows][:, None]
            too_dear = need > mm / rho_lo * (1 + 1e-9)
            too_cheap = need < mm / rho_hi * (1 - 1e-9)
            allowed = np.isfinite(need) & ~too_dear & ~too_cheap
            n_ref = mine.sum(axis=1)
            shares[e][rows] = np.where(mine, allowed, False).sum(axis=1) / n_ref
            dear[e][rows] = np.where(mine, too_dear & np.isfinite(need), False).sum(axis=1) / n_ref
            cheap[e][rows] = np.where(mine, too_cheap, False).sum(axis=1) / n_ref
            with np.errstate(divide="ignore", invalid="ignore"):
                implied = np.where(np.isfinite(need) & (need > 0), mm / need, np.nan)
            if e == "any_combination":
                masked = np.where(mine, implied, np.nan)
                some = np.isfinite(masked).any(axis=1)
                filled = np.where(some[:, None], masked, 0.0)  # rows with no finite markup stay NaN below
                stats = [np.nanmedian(filled, axis=1), np.nanmin(filled, axis=1), np.nanmax(filled, axis=1)]
                markup[rows] = np.where(some[:, None], np.column_stack(stats), np.nan)
            verdict = np.select(
                [~np.isfinite(need), too_dear, too_cheap], ["unreachable", "too dear", "too cheap"], "explained"
            )
            r_i, m_i = np.nonzero(mine)
            details.append(
                pl.DataFrame(
                    {
                        "_row": rows[r_i],
                        "reference_model": names[m_i].astype(str),
                        "explanation": e,
                        "speed_reach_ratio": reach[m_i],
                        "cost_multiple_needed_ratio": need[r_i, m_i],
                        "allowed": allowed[r_i, m_i],
                        "implied_markup_ratio": implied[r_i, m_i],
                        "verdict": verdict[r_i, m_i],
                        "baseline_batch_seqs": np.asarray(pts.baseline_batch, dtype=float)[m_i],
                        "baseline_tokens_per_s_per_user": np.asarray(pts.baseline_speed, dtype=float)[m_i],
                        "baseline_replica_chips": np.asarray(pts.baseline_chips, dtype=float)[m_i],
                    }
                )
            )
    label = {
        "smaller_batch": "smaller batch",
        "more_chips": "more chips",
        "speculation": "speculation alone",
        "any_combination": "any combination",
    }
    summary_cols = [
        pl.Series(f"{e}_{what}_frac", values[e], nan_to_null=True)
        for what, values in (("allowed", shares), ("too_dear", dear), ("too_cheap", cheap))
        for e in fast_mode.EXPLANATIONS
    ]
    out = frame.with_columns(
        *summary_cols,
        pl.Series("reference_models", counts),
        pl.Series("implied_markup_ratio", markup[:, 0], nan_to_null=True),
        pl.Series("implied_markup_low_ratio", markup[:, 1], nan_to_null=True),
        pl.Series("implied_markup_high_ratio", markup[:, 2], nan_to_null=True),
    )

    def count(e, what):
        return (pl.col(f"{e}_{what}_frac") * pl.col("reference_models")).round(0).cast(pl.Int64)

    text = pl.concat_str(
        [
            pl.format(
                "{}: {} of {} explained ({} too dear, {} too cheap)",
                pl.lit(label[e]),
                count(e, "allowed"),
                pl.col("reference_models"),
                count(e, "too_dear"),
                count(e, "too_cheap"),
            )  # fmt: skip
            for e in fast_mode.EXPLANATIONS
        ],
        separator="; ",
    )
    out = out.with_columns(pl.when(pl.col("reference_models") > 0).then(text).alias("explanations"))
    detail = pl.concat(details) if details else pl.DataFrame()
    return out, detail
