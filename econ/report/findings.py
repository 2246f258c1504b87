"""The findings each page opens with: one sentence per claim, every number read from a result table's row.

A function per page returns its findings (:class:`~econ.report.page.Finding`, built by
:meth:`~econ.report.page.SiteContext.finding`); a finding whose row or value is absent from this database is left
out. Each sentence says how sure it is: the status is a bound, a calibrated prediction with its cross-validated
error, a measured fact, or an inference with its validation; a status read from a fit (``ok`` or not) or from a
validation error decides whether the sentence calls itself weak. No number is typed into a sentence. The findings
of the Validation, Serving and Fleet pages are in :mod:`econ.report.serving_findings`, the price-inference pages' in
:mod:`econ.report.inference_findings`.
"""

from __future__ import annotations

from econ.report.page import Finding, SiteContext, anchor


def kept(findings: list[Finding | None]) -> list[Finding]:
    """The findings whose rows this database has (a finding is None where its row or value is absent)."""
    return [f for f in findings if f is not None]


def training(ctx: SiteContext) -> list[Finding]:
    fit = ("scaling_law_fits", "law = 'refit_hoffmann_2022_fig4'")
    fit_ok = ctx.scalar(f"select status = 'ok' from {fit[0]} where {fit[1]}") if ctx.has(fit[0]) else None
    return kept(
        [
            ctx.finding(
                "Refitting Chinchilla's published points gives exponents α = {f.alpha_exponent:sig3} and "
                "β = {f.beta_exponent:sig3} from {f.n_points:int} points"
                + ("." if fit_ok else ", but the fit's status is not ok: read them as unsettled."),
                {"f": fit},
                status="fitted" if fit_ok else "weak",
                evidence=anchor("Chinchilla: the data, the fitted law and the compute-optimal line"),
            ),
            ctx.finding(
                "Llama-3.1-8B was trained on {o.overtraining_active_ratio:sig3} times the Chinchilla-optimal tokens "
                "for its size (interval {o.overtraining_active_low_ratio:sig3}–{o.overtraining_active_high_ratio:sig3}"
                " from the law's uncertainty).",
                {"o": ("overtraining", "model = 'Llama-3.1-8B'")},
                status="fitted",
                evidence=anchor("Over-training by model"),
            ),
            ctx.finding(
                "The scenario's token balance puts the over-training factor of a lab's model at "
                "{t.central_value:sig3}, {t.p5_value:sig3}–{t.p95_value:sig3} over independent draws of its "
                "assumptions' ranges (5–95%); every assumption at its worst end at once bounds it to "
                "{t.low_value:sig3}–{t.high_value:sig3}.",
                {"t": ("token_balance", "scenario = 'base' and quantity = 'overtraining_ratio'")},
                status="weak",
                evidence=anchor("Token balance and its sensitivity"),
            ),
        ]
    )


def prices(ctx: SiteContext) -> list[Finding]:
    return kept(
        [
            ctx.finding(
                "The newest price snapshot is {s.source:text}'s of {s.snapshot_date:date}, with {s.rows:int} price "
                "rows.",
                {"s": ("price_snapshots", "true order by snapshot_date desc, source limit 1")},
                status="measured",
                evidence=anchor("Current prices"),
            ),
            ctx.finding(
                "Price history starts with {s.source:text}'s snapshot of {s.snapshot_date:date} ({s.rows:int} rows); "
                "hand-kept first-party prices carry their own dates.",
                {"s": ("price_snapshots", "true order by snapshot_date, source limit 1")},
                status="measured",
                evidence=anchor("History and recent changes"),
            ),
        ]
    )


FIRST_PARTY_CHANGE = (
    "exists (select 1 from price_keys k where k.is_first_party and k.source = price_changes.source "
    "and k.provider = price_changes.provider and k.model = price_changes.model)"
)
"""A change of a key whose seller makes the model (price_keys.is_first_party), the hand-kept pages and the makers'
own keys in the imported maps alike."""


def what_changed(ctx: SiteContext) -> list[Finding]:
    latest = "to_date = (select max(to_date) from price_changes)"
    largest_first_party = (
        f"change_class in ('price move up', 'price move down') and {latest} "
        f"and old_value > 0 and new_value > 0 and {FIRST_PARTY_CHANGE} "
        "order by abs(ln(new_value / old_value)) desc, source, provider, model, variant, "
        "tier_min_prompt_tokens, component limit 1"
    )
    row = ("source", "provider", "model", "variant", "tier_min_prompt_tokens", "component")
    not_that_one = (  # the next finding names another move than the first-party one (it was often the same row)
        f"and not exists (select 1 from (select * from price_changes where {largest_first_party}) f where "
        + " and ".join(f"f.{c} is not distinct from price_changes.{c}" for c in row)
        + ") "
        if ctx.has("price_keys")
        else ""
    )
    return kept(
        [
            ctx.finding(
                "The largest first-party price move in the latest snapshot (the seller makes the model): "
                "{c.model:text} at {c.provider:text}, {c.component:text} from {c.old_value:sig3} to "
                "{c.new_value:sig3} USD/MTok ({c.change_frac:pct}); its source, {c.source:text}, last showed the old "
                "price on {c.window_from_date:date} and first the new one on {c.window_to_date:date}.",
                {"c": ("price_changes", largest_first_party)},
                status="measured",
                evidence=anchor("Between the two newest snapshots"),
            )
            if ctx.has("price_keys")
            else None,
            ctx.finding(
                ("Besides it, the" if not_that_one else "The")
                + " largest price move of at most 10× in the latest snapshot (larger ones may be upstream fixes): "
                "{c.model:text} at {c.provider:text}, "
                "{c.component:text} from {c.old_value:sig3} to {c.new_value:sig3} USD/MTok ({c.change_frac:pct}); "
                "its source, {c.source:text}, last showed the old price on {c.window_from_date:date} and first the "
                "new one on {c.window_to_date:date}.",
                {
                    "c": (
                        "price_changes",
                        f"change_class in ('price move up', 'price move down') and {latest} "
                        f"and abs(ln(new_value / old_value)) <= ln(10) {not_that_one}"
                        "order by abs(ln(new_value / old_value)) desc, source, provider, model, variant, "
                        "tier_min_prompt_tokens, component limit 1",
                    )
                },
                status="measured",
                evidence=anchor("Between the two newest snapshots"),
            ),
            ctx.finding(
                "Not counted as a move: {f.model:text} at {f.provider:text} went from {f.old_value:sig3} to "
                "{f.new_value:sig3} USD/MTok ({f.component:text}), a suspected upstream data fix "
                "({f.fix_reason:text}), not the seller's move.",
                {
                    "f": (
                        "price_changes",
                        f"change_class = 'suspected data fix' and {latest} "
                        "order by abs(ln(new_value / old_value)) desc, provider, model, component limit 1",
                    )
                },
                status="measured",
                evidence=anchor("Between the two newest snapshots"),
            ),
            ctx.finding(
                "The latest first-party price move in effect: {f.canonical_model:text} at {f.provider:text}, "
                "{f.component:text} from {f.old_usd_per_mtok:sig3} to {f.new_usd_per_mtok:sig3} USD/MTok "
                "({f.change_frac:pct}), dated {f.window_to_date:date} by {f.source:text} (its old price last seen "
                "{f.window_from_date:date}).",
                {
                    "f": (
                        "first_party_price_changes",
                        "change_date <= (select max(as_of) from build_info) and tier_min_prompt_tokens = 0 "
                        "and variant = 'standard' and component in ('input', 'output') "
                        "order by change_date desc, exact desc, window_days, abs(change_frac) desc, canonical_model, "
                        "component, source limit 1",
                    )
                },
                status="measured",
                evidence=anchor("Every first-party price change since 2024"),
            ),
        ]
    )


def sources(ctx: SiteContext) -> list[Finding]:
    def newest(table: str) -> tuple[str, str]:
        return ("data_sources", f"table_name = '{table}' order by last_date desc nulls last, origin limit 1")

    return kept(
        [
            ctx.finding(
                "The newest accelerator fact is dated {h.last_date:date}, the newest model card {m.last_date:date} "
                "and the newest rental quote {r.last_date:date}.",
                {"h": newest("hardware"), "m": newest("models"), "r": newest("rental_prices")},
                status="measured",
                evidence=anchor("Data sources"),
            ),
            ctx.finding(
                "The calibration is checked against {c.n_points:int} measured InferenceX runs and published points; "
                "the largest single source of measured_points, {m.source_url:text}, gives {m.row_count:int} rows.",
                {
                    "c": ("calibration_errors", "basis = 'calibrated' and target = 'tpot' and group_kind = 'overall'"),
                    "m": ("data_sources", "table_name = 'measured_points' order by row_count desc, source_url limit 1"),
                },
                status="measured",
                evidence=anchor("Data sources"),
            ),
        ]
    )
