"""The findings each page opens with: one sentence per claim, every number read from a result table's row.

A function per page returns its findings (:class:`~econ.report.page.Finding`, built by
:meth:`~econ.report.page.SiteContext.finding`); a finding whose row or value is absent from this database is left
out. Each sentence says how sure it is: the status is a bound, a calibrated prediction with its cross-validated
error, a measured fact, or an inference with its validation; a status read from a fit (``ok`` or not) or from a
validation error decides whether the sentence calls itself weak. No number is typed into a sentence.
"""

from __future__ import annotations

from econ.report.page import Finding, SiteContext, anchor

WEAK_ERROR_FACTOR = 1.5
"""A calibrated prediction whose held-out typical error exceeds this factor is called weak in its sentence."""

CV_ALL = ("calibration_errors", "basis = 'cv' and group_kind = 'overall'")


def _keep(findings: list[Finding | None]) -> list[Finding]:
    return [f for f in findings if f is not None]


def validation(ctx: SiteContext) -> list[Finding]:
    evidence = anchor("Predicted against measured")
    worst = (
        "calibration_errors",
        "basis = 'cv' and group_kind = 'regime' and \"group\" = (select \"group\" from calibration_errors "
        "where basis = 'cv' and group_kind = 'regime' order by error_factor desc, \"group\" limit 1)",
    )
    worst_factor = ctx.scalar(f"select error_factor from {worst[0]} where {worst[1]}") if ctx.has(worst[0]) else None
    weak = worst_factor is not None and worst_factor > WEAK_ERROR_FACTOR
    return _keep(
        [
            ctx.finding(
                "Held out one source at a time, the calibrated deployment model predicts the {cv.n_points:int} "
                "measured throughputs within a typical factor of {cv.error_factor:x}; 9 in 10 fall within "
                "{cv.error_factor_p90:x}.",
                {"cv": CV_ALL},
                status="calibrated",
                evidence=evidence,
            ),
            ctx.finding(
                "The idealised roofline is a typical {b.error_factor:x} away from the same measurements (9 in 10 "
                "within {b.error_factor_p90:x}), so the report uses it only as a bound.",
                {"b": ("calibration_errors", "basis = 'bound' and group_kind = 'overall'")},
                status="bound",
                evidence=evidence,
            ),
            ctx.finding(
                "Measured decode steps run their dense and attention math at {d.estimate:pct} of peak FLOP/s "
                "(interval {d.low:pct}–{d.high:pct}), the routed experts at {e.estimate:pct}, and HBM at "
                "{h.estimate:pct} of its bandwidth.",
                {
                    "d": ("calibration_parameters", "parameter = 'decode_mfu_frac' and family = ''"),
                    "e": ("calibration_parameters", "parameter = 'expert_mfu_frac' and family = ''"),
                    "h": ("calibration_parameters", "parameter = 'hbm_bandwidth_frac' and family = ''"),
                },
                status="calibrated",
                evidence=anchor("The calibrated efficiencies"),
            ),
            ctx.finding(
                ("Weak spot: " if weak else "Hardest regime: ")
                + "held out, the {w.n_points:int} {w.group:text} points are off by a typical {w.error_factor:x}"
                + (", more than the report's 1.5× bar for a calibrated number." if weak else "."),
                {"w": worst},
                status="weak" if weak else "calibrated",
                evidence=anchor("Held-out error by chip, architecture, model, source and regime"),
            ),
        ]
    )


def serving(ctx: SiteContext) -> list[Finding]:
    cheapest = (
        "serving_layouts",
        "pool = 'decode' and efficiency_basis = 'calibrated' and cheapest_meeting_target and number_format = 'fp8' "
        "order by (model = 'DeepSeek-V3') desc, (chip = 'H200') desc, model, chip limit 1",
    )
    return _keep(
        [
            ctx.finding(
                "A dense model on an H100 with BF16 weights needs at least {h.critical_batch_ratio:int} sequences "
                "per decode step before its compute, not its memory, sets the step time (B*₀ = R, the lecture's "
                "balance point).",
                {"h": ("hardware_derived", "chip = 'H100' and number_format = 'bf16'")},
                status="bound",
                evidence=anchor("Balance batch and drain time by chip"),
            ),
            ctx.finding(
                "The cheapest decode layout for {c.model:text} on {c.chip:text} in FP8 that meets the speed target "
                "runs {c.replica_chips:int} chips per replica at a batch of {c.batch_per_replica:int}, for "
                "{c.usd_per_mtok:usd} per million output tokens at {c.tokens_per_s_per_user:sig3} tokens/s per "
                "user; the calibration's held-out typical error is {cv.error_factor:x}.",
                {"c": cheapest, "cv": CV_ALL},
                status="calibrated",
                evidence=anchor("Throughput against speed per user"),
            ),
        ]
    )


def fleet(ctx: SiteContext) -> list[Finding]:
    if not ctx.has("fleet_plan"):
        return []
    chosen = ctx.scalar(
        "select deployment from fleet_plan where scenario = 'calibrated' and price_kind = 'on_demand' "
        "order by (deployment = 'deepseek-v3.2-h200') desc, deployment limit 1"
    )
    if chosen is None:
        return []
    plan = ("fleet_plan", f"scenario = 'calibrated' and deployment = '{chosen}' and price_kind = 'on_demand'")
    margin = ctx.scalar(f"select gross_margin_frac from {plan[0]} where {plan[1]}")
    return _keep(
        [
            ctx.finding(
                "Serving {p.model:text} on {p.chip:text} at the stated traffic takes {p.chips:int} chips and costs "
                "{p.blended_usd_per_mtok:usd} per million tokens at the chip's on-demand rental quote of "
                "{p.usd_per_chip_hour:usd} per chip-hour (calibrated efficiencies, held-out typical error "
                "{cv.error_factor:x}).",
                {"p": plan, "cv": CV_ALL},
                status="calibrated",
                evidence=anchor("Serving plan"),
            ),
            ctx.finding(
                "At {p.price_provider:text}'s list price ({p.price_model:text}) that leaves a gross margin of "
                "{p.gross_margin_frac:pct}"
                + (" — a loss, before any discount the seller gets on chips." if (margin or 0) < 0 else ".")
                + " The same plan at the idealised bound needs {b.chips:int} chips.",
                {"p": plan, "b": ("fleet_plan", plan[1].replace("scenario = 'calibrated'", "scenario = 'base'"))},
                status="calibrated",
                evidence=anchor("Serving plan"),
            ),
        ]
    )


def training(ctx: SiteContext) -> list[Finding]:
    fit = ("scaling_law_fits", "law = 'refit_hoffmann_2022_fig4'")
    fit_ok = ctx.scalar(f"select status = 'ok' from {fit[0]} where {fit[1]}") if ctx.has(fit[0]) else None
    return _keep(
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
                "{t.central_value:sig3}, but its range of {t.low_value:sig3}–{t.high_value:sig3} spans the "
                "assumptions' ranges and identifies nothing.",
                {"t": ("token_balance", "scenario = 'base' and quantity = 'overtraining_ratio'")},
                status="not identified",
                evidence=anchor("Token balance and its sensitivity"),
            ),
        ]
    )


def prices(ctx: SiteContext) -> list[Finding]:
    return _keep(
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


def what_changed(ctx: SiteContext) -> list[Finding]:
    latest = "to_date = (select max(to_date) from price_changes)"
    return _keep(
        [
            ctx.finding(
                "The largest price move of at most 10× in the latest snapshot (larger ones may be upstream fixes): "
                "{c.model:text} at {c.provider:text}, "
                "{c.component:text} from {c.old_value:sig3} to {c.new_value:sig3} USD/MTok ({c.change_frac:pct}); "
                "its source, {c.source:text}, last showed the old price on {c.window_from_date:date} and first the "
                "new one on {c.window_to_date:date}.",
                {
                    "c": (
                        "price_changes",
                        f"change_class in ('price move up', 'price move down') and {latest} "
                        "and abs(ln(new_value / old_value)) <= ln(10) "
                        "order by abs(change_frac) desc, provider, model, component limit 1",
                    )
                },
                status="measured",
                evidence=anchor("Between the two newest snapshots"),
            ),
            ctx.finding(
                "Not counted as a move: {f.model:text} at {f.provider:text} went from {f.old_value:sig3} to "
                "{f.new_value:sig3} USD/MTok ({f.component:text}), a change of more than 10× that reads as an "
                "upstream unit fix.",
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

    return _keep(
        [
            ctx.finding(
                "The newest accelerator fact is dated {h.last_date:date}, the newest model card {m.last_date:date} "
                "and the newest rental quote {r.last_date:date}.",
                {"h": newest("hardware"), "m": newest("models"), "r": newest("rental_prices")},
                status="measured",
                evidence=anchor("Data sources"),
            ),
            ctx.finding(
                "The calibration is checked against {c.n_points:int} measured operating points; the largest single "
                "source, {m.source_url:text}, gives {m.row_count:int} rows of measured_points.",
                {
                    "c": CV_ALL,
                    "m": ("data_sources", "table_name = 'measured_points' order by row_count desc, source_url limit 1"),
                },
                status="measured",
                evidence=anchor("Data sources"),
            ),
        ]
    )


def _quantity(ctx: SiteContext, quantity: str) -> tuple[tuple[str, str], dict | None]:
    source = ("inference_quantities", f"quantity = '{quantity}'")
    if not ctx.has(source[0]):
        return source, None
    frame = ctx.query(f"select * from {source[0]} where {source[1]}")
    return source, (frame.row(0, named=True) if frame.height == 1 else None)


def _validated(row: dict | None) -> bool:
    """An inference's validation holds: its status is ok and its error is within the factor it states."""
    return bool(row) and row["status"] == "ok" and bool(row["error_within_factor"])


WIDE_INTERVAL_RATIO = 10.0
"""A validated interval wider than this (high over low) locates a quantity only to its order of magnitude or worse:
the finding calls itself weak."""


def context_pricing(ctx: SiteContext) -> list[Finding]:
    kv, kv_row = _quantity(ctx, "decode_kv_read_bytes_per_context_token")
    crossover, _ = _quantity(ctx, "kv_bytes_per_token_crossover")
    few = kv_row is not None and (kv_row["n_models"] or 0) < 8
    example = (
        "fit_context_tiers",
        "default_rule and not pooled and component = 'output' and source = 'hand' and variant = 'standard' "
        "and arch_model is null and kv_read_bytes_per_context_token is not null "
        "order by (provider = 'google') desc, (model = 'gemini-3.1-pro-preview') desc, provider, model limit 1",
    )
    bounds = (
        ctx.con.execute(
            "select kv_read_validated_low_bytes_per_context_token, kv_read_validated_high_bytes_per_context_token "
            f"from {example[0]} where {example[1]}"
        ).fetchall()
        if ctx.has(example[0])
        else []
    )
    wide = not bounds or None in bounds[0] or bounds[0][1] > WIDE_INTERVAL_RATIO * bounds[0][0]
    unvalidated = ctx.finding(
        "Only {q.n_models:int} open model(s) have tiered prices with a true KV size, too few to validate the KV "
        "bytes read from output-price slopes: every such reading here is unvalidated.",
        {"q": kv},
        status="not validated",
        evidence=anchor("Checked on open models"),
    )
    if kv_row is not None and kv_row["status"] == "too_few_open_models":
        return _keep([unvalidated])
    return _keep(
        [
            ctx.finding(
                "Read from output-price slopes, decode KV bytes per context token fall inside their validated "
                "interval on {q.coverage_models_frac:pct} of {q.n_models:int} open models, with a typical error of "
                "{q.median_error_factor_ratio:x}; the intervals are widened {q.widening_factor_ratio:x} to cover it"
                + (" — few models, so a rough check." if few else "."),
                {"q": kv},
                status="validated" if _validated(kv_row) and not few else "weak",
                evidence=anchor("Checked on open models"),
            ),
            ctx.finding(
                "{e.model:text} ({e.provider:text}) prices a context token of output as if decode read "
                "{e.kv_read_bytes_per_context_token:sig2} bytes of KV, but the validated interval runs "
                "{e.kv_read_validated_low_bytes_per_context_token:sig2}–"
                "{e.kv_read_validated_high_bytes_per_context_token:sig2}"
                + (": the price locates the cache size only to within orders of magnitude." if wide else "."),
                {"e": example},
                status="weak" if wide else "validated",
                evidence=anchor("Checked on open models"),
            ),
            ctx.finding(
                "The lecture's crossover reading (a tier threshold taken as the roofline crossover) is off by a "
                "typical {c.median_error_factor_ratio:x} on the open models, so it is kept only as a hypothesis.",
                {"c": crossover},
                status="weak",
                evidence=anchor("Checked on open models"),
            ),
        ]
    )


def io_cache(ctx: SiteContext) -> list[Finding]:
    ratio = ("fit_io_market", "quantity = 'flop_over_byte_chip_hour_ratio'")
    status = ctx.scalar(f"select status from {ratio[0]} where {ratio[1]}") if ctx.has(ratio[0]) else None
    prefill, prefill_row = _quantity(ctx, "prefill_flop_per_input_token")
    identified = ("cache_tier_outcomes", "outcome like 'identified:%' order by schedules desc, outcome limit 1")
    open_tiers = ("cache_tier_outcomes", "outcome not like 'identified:%' order by schedules desc, outcome limit 1")
    return _keep(
        [
            ctx.finding(
                "Across the market, FLOP prices imply {f.estimate:usd} per chip-hour and byte prices {b.estimate:usd}; "
                "their ratio {r.estimate:sig3} ({r.combined_low:sig3}–{r.combined_high:sig3})"
                + (
                    " excludes 1, so one chip-hour cannot cost both and the regression reads no price."
                    if status == "inconsistent"
                    else " is consistent with one chip-hour price."
                ),
                {
                    "f": ("fit_io_market", "quantity = 'implied_usd_per_chip_hour_from_flops'"),
                    "b": ("fit_io_market", "quantity = 'implied_usd_per_chip_hour_from_bytes'"),
                    "r": ratio,
                },
                status="weak" if status != "ok" else "validated",
                evidence=anchor("The open-weight market regression"),
            ),
            ctx.finding(
                "Read as prefill FLOPs per input token, input prices are a typical {q.median_error_factor_ratio:x} "
                "off on {q.n_models:int} open models"
                + (
                    "."
                    if _validated(prefill_row) and (prefill_row["median_error_factor_ratio"] or 99) < 2
                    else ": the input price says little about prefill cost."
                ),
                {"q": prefill},
                status="validated"
                if _validated(prefill_row) and (prefill_row["median_error_factor_ratio"] or 99) < 2
                else "weak",
                evidence=anchor("Output vs input price and the decode batch"),
            ),
            ctx.finding(
                "Prompt-cache prices identify the memory tier for {i.schedules:int} schedules ({i.outcome:text}); "
                "the largest group, {n.schedules:int} schedules, is {n.outcome:text}.",
                {"i": identified, "n": open_tiers},
                status="not identified",
                evidence=anchor("Prompt-cache prices and memory tiers"),
            ),
        ]
    )


def fast_mode(ctx: SiteContext) -> list[Finding]:
    def row(where: str) -> tuple[str, str]:
        return ("fit_fast_mode", f"status = 'ok' and tier_min_prompt_tokens = 0 and {where} order by model limit 1")

    return _keep(
        [
            ctx.finding(
                "{f.model:text}'s fast mode ({f.output_price_ratio:sig2}× the price for {f.speed_ratio:sig2}× the "
                "speed) is explained by a smaller batch on {f.smaller_batch_allowed_frac:pct} of "
                "{f.reference_models:int} open architectures and by more chips per replica on "
                "{f.more_chips_allowed_frac:pct}: the prices allow several explanations, not one.",
                {"f": row("provider = 'anthropic' and speed_ratio is not null")},
                status="not identified",
                evidence=anchor("What the multiples allow"),
            ),
            ctx.finding(
                "{f.model:text}'s {f.speed_ratio:sig2}× speed for {f.output_price_ratio:sig2}× the price fits no "
                "single explanation on any open architecture (smaller batch {f.smaller_batch_allowed_frac:pct}, more "
                "chips {f.more_chips_allowed_frac:pct}); only a combination reaches it "
                "({f.any_combination_allowed_frac:pct}).",
                {
                    "f": row(
                        "speed_ratio is not null and smaller_batch_allowed_frac = 0 and more_chips_allowed_frac = 0"
                    )
                },
                status="not identified",
                evidence=anchor("What the multiples allow"),
            ),
        ]
    )
