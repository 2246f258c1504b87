"""The findings of the price-inference pages (context pricing, input/output & cache, what prices tell us, fast mode).

Only a reading whose validation passes (``inference_quantities.status = 'ok'``, :mod:`econ.fits.validation`) is
headlined as a number; the others are one sentence saying why prices do not tell it. As in
:mod:`econ.report.findings`, every number is read from a result table's row.
"""

from __future__ import annotations

from econ.report.findings import kept
from econ.report.page import Finding, SiteContext, anchor


def _quantity(ctx: SiteContext, quantity: str) -> tuple[tuple[str, str], dict | None]:
    source = ("inference_quantities", f"quantity = '{quantity}'")
    if not ctx.has(source[0]):
        return source, None
    frame = ctx.query(f"select * from {source[0]} where {source[1]}")
    return source, (frame.row(0, named=True) if frame.height == 1 else None)


def _validated(row: dict | None) -> bool:
    """An inference's validation holds: its status (econ.fits.validation) is ok."""
    return bool(row) and row["status"] == "ok"


PASSING = (
    "Read from {q.reading:text}, {q.quantity:text} passes its check on {q.n_architecture_groups:int} architectures "
    "({q.n_models:int} open models), each left out whole: left-out coverage {q.coverage_groups_frac:pct} at "
    "{q.level_frac:pct}, interval score {q.interval_score_log:sig2} against the no-price baseline's "
    "{q.baseline_interval_score_log:sig2} (skill {q.skill_score_frac:pct}), intervals {q.interval_width_ratio:x} wide."
)
"""The one sentence a passing reading is headlined with: its left-out coverage and skill in it (issue 24)."""


def _passing(ctx: SiteContext, quantities: list[str], evidence: str) -> list[Finding | None]:
    """A headline per quantity of ``quantities`` whose status is ok (the others are never headlined)."""
    out = []
    for quantity in quantities:
        source, row = _quantity(ctx, quantity)
        if _validated(row):
            out.append(ctx.finding(PASSING, {"q": source}, status="validated", evidence=evidence))
    return out


def _not_told(ctx: SiteContext, quantities: list[str], what: str, evidence: str) -> Finding | None:
    """One sentence pointing at the readings of ``quantities`` that fail, by their statuses (no value of theirs)."""
    if not ctx.has("inference_quantities"):
        return None
    names = ", ".join(f"'{q}'" for q in quantities)
    failing = ctx.query(
        f"select quantity, status from inference_quantities where quantity in ({names}) and status != 'ok' "
        "order by quantity"
    )
    if failing.is_empty():
        return None
    first = failing.row(0, named=True)
    where = f"quantity = '{first['quantity']}'"
    return ctx.finding(
        f"Not every one of the {what} passes its check: {{q.quantity:text}} is {{q.status:text}} on "
        "{q.n_architecture_groups:int} architectures ({q.status_reason:text}), so it is not headlined.",
        {"q": ("inference_quantities", where)},
        status="weak",
        evidence=evidence,
    )


CONTEXT_QUANTITIES = [
    "decode_kv_read_bytes_per_context_token",
    "prefill_attention_flop_per_context_token",
    "kv_bytes_per_token_crossover",
]


def context_pricing(ctx: SiteContext) -> list[Finding]:
    crossover, row = _quantity(ctx, "kv_bytes_per_token_crossover")
    falsified = row is not None and row["status"] == "falsified"
    return kept(
        [
            *_passing(ctx, CONTEXT_QUANTITIES, anchor("Checked on open models")),
            ctx.finding(
                "The lecture's crossover reading (a tier threshold taken as the roofline crossover) gives "
                "{c.geometric_mean_ratio:x} the KV-cache bytes per token of {c.n_architecture_groups:int} open "
                "architectures (geometric mean), beyond its own interval: {c.status:text}.",
                {"c": crossover},
                status="weak",
                evidence=anchor("Checked on open models"),
            )
            if falsified
            else None,
            _not_told(
                ctx,
                [q for q in CONTEXT_QUANTITIES if q != "kv_bytes_per_token_crossover"],
                "context readings",
                anchor("Checked on open models"),
            ),
        ]
    )


def io_cache(ctx: SiteContext) -> list[Finding]:
    ratio = ("fit_io_market", "quantity = 'flop_over_byte_chip_hour_ratio'")
    status = ctx.scalar(f"select status from {ratio[0]} where {ratio[1]}") if ctx.has(ratio[0]) else None
    nearest = (
        "cache_tier_nearest",
        "schedules = (select max(schedules) from cache_tier_nearest) order by nearest_tier limit 1",
    )
    return kept(
        [
            ctx.finding(
                "Across the market, with every FLOP class at its calibrated efficiency, FLOP prices imply "
                "{f.estimate:usd} per chip-hour ({f.combined_low:usd}–{f.combined_high:usd}) and byte prices "
                "{b.estimate:usd} ({b.combined_low:usd}–{b.combined_high:usd}); their ratio {r.estimate:sig3} "
                "({r.combined_low:sig3}–{r.combined_high:sig3}, efficiencies varied)"
                + (
                    " excludes 1, so one chip-hour cannot cost both."
                    if status == "inconsistent"
                    else " contains 1: one chip-hour price can pay for both."
                ),
                {
                    "f": ("fit_io_market", "quantity = 'implied_usd_per_chip_hour_from_flops'"),
                    "b": ("fit_io_market", "quantity = 'implied_usd_per_chip_hour_from_bytes'"),
                    "r": ratio,
                },
                status="fitted" if status == "ok" else "weak",
                evidence=anchor("The open-weight market regression"),
            ),
            *_passing(ctx, ["prefill_flop_per_input_token"], anchor("Output vs input price and the decode batch")),
            _not_told(
                ctx,
                ["prefill_flop_per_input_token"],
                "input-price readings",
                anchor("Output vs input price and the decode batch"),
            ),
            ctx.finding(
                "On one rental-equivalent $/GB-hour basis with the bytes a cached token holds, "
                "{n.schedules:int} cache schedules sit nearest {n.nearest_tier:text}, a median "
                "{n.median_flip_ratio:x} from the boundary with the next tier.",
                {"n": nearest},
                status="not identified",
                evidence=anchor("Prompt-cache prices and memory tiers"),
            ),
        ]
    )


def inferences(ctx: SiteContext) -> list[Finding]:
    """The What-prices-tell-us page: every passing reading (at most four), then what fails, pointed at."""
    if not ctx.has("inference_quantities"):
        return []
    ok = ctx.query("select quantity from inference_quantities where status = 'ok' order by quantity")["quantity"]
    out = _passing(ctx, ok.to_list()[:4], anchor("Readings that pass"))
    failing = ctx.query("select quantity from inference_quantities where status != 'ok' order by quantity")
    out.append(_not_told(ctx, failing["quantity"].to_list(), "price readings", anchor("What prices do not tell us")))
    return kept(out)


def fast_mode(ctx: SiteContext) -> list[Finding]:
    def row(where: str) -> tuple[str, str]:
        return (
            "fit_fast_mode",
            f"status = 'ok' and tier_min_prompt_tokens = 0 and {where} order by output_price_ratio desc, model limit 1",
        )

    return kept(
        [
            ctx.finding(
                "{f.model:text}'s fast mode ({f.output_price_ratio:sig2}× the price for {f.speed_ratio:sig2}× the "
                "speed) carries a markup of its own: the cheapest way to be that fast costs a median "
                "{f.implied_markup_ratio:x} less than the price multiple ({f.implied_markup_low_ratio:sig2}–"
                "{f.implied_markup_high_ratio:sig2}× over {f.reference_models:int} open architectures), beyond what "
                "any gross margin in the scenario's range explains on {f.any_combination_too_cheap_frac:pct} of them.",
                {"f": row("speed_ratio is not null and any_combination_too_cheap_frac > 0.5")},
                status="not validated",
                evidence=anchor("What the multiples allow"),
            ),
            ctx.finding(
                "{f.model:text}'s fast mode ({f.output_price_ratio:sig2}× the price for {f.speed_ratio:sig2}× the "
                "speed) is explained at the scenario's margin range on {f.any_combination_allowed_frac:pct} of "
                "{f.reference_models:int} open architectures (a smaller batch alone on "
                "{f.smaller_batch_allowed_frac:pct}); its implied markup over standard is "
                "{f.implied_markup_ratio:x}.",
                {"f": row("speed_ratio is not null and any_combination_allowed_frac >= 0.5")},
                status="not identified",
                evidence=anchor("What the multiples allow"),
            ),
            ctx.finding(
                "{f.model:text}'s fast mode ({f.output_price_ratio:sig2}× the price for {f.speed_ratio:sig2}× the "
                "speed) is neither explained nor excluded: the scenario's margin range allows it on "
                "{f.any_combination_allowed_frac:pct} of {f.reference_models:int} open architectures and finds it too "
                "cheap on {f.any_combination_too_cheap_frac:pct}; its implied markup over standard is "
                "{f.implied_markup_ratio:x}.",
                {
                    "f": row(
                        "speed_ratio is not null and any_combination_allowed_frac < 0.5 "
                        "and any_combination_too_cheap_frac <= 0.5"
                    )
                },
                status="not identified",
                evidence=anchor("What the multiples allow"),
            ),
        ]
    )
