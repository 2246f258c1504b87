"""The findings the Validation, Serving and Fleet pages open with: the calibrated serving model's held-out error, the
coverage of its bands, and the plans read from it (each number from a result table's row, as
:mod:`econ.report.findings` says)."""

from __future__ import annotations

from econ.report.findings import kept
from econ.report.page import Finding, SiteContext, anchor

WEAK_ERROR_FACTOR = 1.5
"""A calibrated prediction whose held-out typical error exceeds this factor is called weak in its sentence."""

MODEL_OUT_TPOT = ("calibration_errors", "basis = 'model_out' and target = 'tpot' and group_kind = 'overall'")
MODEL_OUT_TTFT = ("calibration_errors", "basis = 'model_out' and target = 'ttft' and group_kind = 'overall'")
CHIP_OUT_TPOT = ("calibration_errors", "basis = 'chip_out' and target = 'tpot' and group_kind = 'overall'")
BOUND_TPOT = ("calibration_errors", "basis = 'bound' and target = 'tpot' and group_kind = 'overall'")
MIN_GROUP_COVERAGE = 0.85
"""The least share of a group's held-out runs a p90 band must cover (the low end of the 85–95% a printed p90 band is
to cover of runs it never saw): the group covered least below it makes the coverage sentence weak."""
MIN_GROUP_RUNS = 100
"""The fewest runs a group needs for its coverage to be read against :data:`MIN_GROUP_COVERAGE`."""
_GROUP = "basis || '|' || target || '|' || group_kind || '|' || \"group\""
LEAST_COVERED = (
    "calibration_errors",
    f"{_GROUP} = (select {_GROUP} from calibration_errors where basis in ('model_out', 'chip_out') "
    "and target in ('tpot', 'ttft') and group_kind in ('engine', 'chip', 'model') "
    f'and n_points >= {MIN_GROUP_RUNS} order by band_coverage_frac, basis, target, group_kind, "group" limit 1)',
)
"""The engine, chip or model (of :data:`MIN_GROUP_RUNS` runs or more) whose held-out runs, by model or by chip, the
p90 bands covered least."""


def band(ctx: SiteContext, model: str, chip: str, target: str = "tpot", regime: str = "disagg_decode"):
    """The ``calibration_bands`` row of a prediction for ``model`` on ``chip`` by the calibrated scenario (the engines'
    average: no engine stated): its target and regime at its distance from the calibration data (seen, a new model,
    a new chip or both), its chip's and then its model's own cell where the bands have one (as econ predict reads
    them), as a finding source."""
    seen_model = ctx.scalar("select count(*) > 0 from calibration_seen where arch_model = ?", [model])
    seen_chip = ctx.scalar("select count(*) > 0 from calibration_seen where chip = ?", [chip])
    distance = {(True, True): "seen", (False, True): "new_model", (True, False): "new_chip"}.get(
        (bool(seen_model), bool(seen_chip)), "new_model_and_chip"
    )
    cell = f"target = '{target}' and regime = '{regime}' and distance = '{distance}' and not engine_stated"
    chip_q, model_q = chip.replace("'", "''"), model.replace("'", "''")
    deepest = (
        f"select chip || '/' || arch_model from calibration_bands where {cell} and chip in ('', '{chip_q}') "
        f"and arch_model in ('', '{model_q}') order by chip desc, arch_model desc limit 1"
    )
    return ("calibration_bands", f"{cell} and engine = '' and chip || '/' || arch_model = ({deepest})")


def own_error(ctx: SiteContext, model: str, target: str = "tpot"):
    """The held-out error of ``model``'s own measured runs (random configuration folds), as a finding source; None
    when the calibration has none of its runs (then only the band of its regime and distance speaks for it)."""
    where = f"basis = 'random_out' and target = '{target}' and group_kind = 'model' and \"group\" = ?"
    if not ctx.scalar(f"select count(*) > 0 from calibration_errors where {where}", [model]):
        return None
    return ("calibration_errors", where.replace("?", "'" + model.replace("'", "''") + "'"))


def _own_clause(own) -> str:
    return (
        "; this model's own measured runs, held out by configuration, {o.error_factor:x} "
        "(9 in 10 within {o.error_factor_p90:x})"
        if own
        else ""
    )


def _bound_clause(holds) -> str:
    """How the bound fared against the measured runs (``calibration_errors`` basis ``bound``): every run slower than
    it, or the share it holds for (rounded down, so short of all never reads 100%) and what the others mean."""
    if holds is None:
        return "."
    if holds >= 1.0:
        return ", and every run measures slower than it."
    return (
        "; it holds for {b.band_coverage_frac:pct_down} of the runs, and a run measured faster than the bound of the "
        "configuration its row states did not run as stated (worker counts econ had to assume, users queued beyond "
        "what the engine ran at once)."
    )


def validation(ctx: SiteContext) -> list[Finding]:
    evidence = anchor("Predicted against measured")
    # the worst regime with rows enough for a band of its own (calibration_bands not pooled): two runs are no spot
    worst = (
        "calibration_errors",
        "basis = 'model_out' and target = 'ttft' and group_kind = 'regime' and \"group\" = (select \"group\" from "
        "calibration_errors where basis = 'model_out' and target = 'ttft' and group_kind = 'regime' and \"group\" in "
        "(select regime from calibration_bands where target = 'ttft' and distance = 'seen' and engine_stated "
        "and engine = '' and chip = '' and arch_model = '' and not pooled) "
        'order by error_factor desc, "group" limit 1)',
    )
    worst_factor = ctx.scalar(f"select error_factor from {worst[0]} where {worst[1]}") if ctx.has(worst[0]) else None
    weak = worst_factor is not None and worst_factor > WEAK_ERROR_FACTOR
    tpot_factor = ctx.scalar(f"select error_factor from {MODEL_OUT_TPOT[0]} where {MODEL_OUT_TPOT[1]}")
    ttft_factor = ctx.scalar(f"select error_factor from {MODEL_OUT_TTFT[0]} where {MODEL_OUT_TTFT[1]}")
    least = ctx.scalar(f"select band_coverage_frac from {LEAST_COVERED[0]} where {LEAST_COVERED[1]}")
    least_covered = 1.0 if least is None else least
    bound_holds = ctx.scalar(f"select band_coverage_frac from {BOUND_TPOT[0]} where {BOUND_TPOT[1]}")
    return kept(
        [
            ctx.finding(
                "Held out one model at a time, the calibrated serving model predicts the time per output token of "
                "{t.n_points:int} measured InferenceX runs within a typical factor of {t.error_factor:x}; 9 in 10 "
                "fall within {t.error_factor_p90:x} (held out one chip at a time: {c.error_factor:x})"
                + (", more than the report's 1.5× bar." if (tpot_factor or 0) > WEAK_ERROR_FACTOR else "."),
                {"t": MODEL_OUT_TPOT, "c": CHIP_OUT_TPOT},
                status="weak" if (tpot_factor or 0) > WEAK_ERROR_FACTOR else "calibrated",
                evidence=evidence,
            ),
            ctx.finding(
                "Time to first token, held out the same way, is a typical {f.error_factor:x} off (9 in 10 within "
                "{f.error_factor_p90:x}): it carries the queue, the wait for a decode slot and the engine's front "
                "end, which the step model times least well"
                + (", and it is weak." if (ttft_factor or 0) > WEAK_ERROR_FACTOR else "."),
                {"f": MODEL_OUT_TTFT},
                status="weak" if (ttft_factor or 0) > WEAK_ERROR_FACTOR else "calibrated",
                evidence=evidence,
            ),
            ctx.finding(
                "The p90 bands econ prints covered {t.band_coverage_frac:pct} of the runs held out with their model's "
                "architecture group (time per output token; the band computed without that group's runs) and "
                "{f.band_coverage_frac:pct} in time to first token; the group they covered least, of any engine, chip "
                + f"or model with {MIN_GROUP_RUNS} runs or more: "
                + "{g.band_coverage_frac:pct} of {g.group:text}'s runs ({g.target:text}, held out as {g.basis:text})"
                + (
                    f", below the {MIN_GROUP_COVERAGE:.0%} a band must hold: a band measured on the other models and "
                    "chips understates one that errs more than they do."
                    if least_covered < MIN_GROUP_COVERAGE
                    else f", within the {MIN_GROUP_COVERAGE:.0%} a band must hold."
                ),
                {
                    "t": ("calibration_errors", "basis = 'model_out' and target = 'tpot' and group_kind = 'overall'"),
                    "f": MODEL_OUT_TTFT,
                    "g": LEAST_COVERED,
                },
                status="weak" if least_covered < MIN_GROUP_COVERAGE else "calibrated",
                evidence=anchor("Error bands and their coverage"),
            ),
            ctx.finding(
                "The idealised roofline is a typical {b.error_factor:x} faster than the measured time per output "
                "token (9 in 10 within {b.error_factor_p90:x}), so the report uses it only as a bound"
                + _bound_clause(bound_holds),
                {"b": BOUND_TPOT},
                status="bound",
                evidence=evidence,
            ),
            ctx.finding(
                "Measured engines run their dense GEMMs at {f.estimate:pct} of peak FLOP/s on a prompt's tokens "
                "(a prefill pass or a chunk; interval {f.low:pct}–{f.high:pct}) and {d.estimate:pct} in a decode "
                "step alone (interval {d.low:pct}–{d.high:pct}), the routed experts at {e.estimate:pct}, and HBM at "
                "{h.estimate:pct} of its bandwidth ({x.estimate:pct} for the routed experts' weights), plus "
                "{q.estimate:us} per sequence per step.",
                {
                    "f": ("calibration_parameters", "parameter = 'prefill_gemm_mfu_frac' and group_kind = ''"),
                    "d": ("calibration_parameters", "parameter = 'gemm_mfu_frac' and group_kind = ''"),
                    "e": ("calibration_parameters", "parameter = 'expert_mfu_frac' and group_kind = ''"),
                    "h": ("calibration_parameters", "parameter = 'hbm_bandwidth_frac' and group_kind = ''"),
                    "x": ("calibration_parameters", "parameter = 'expert_hbm_bandwidth_frac' and group_kind = ''"),
                    "q": ("calibration_parameters", "parameter = 'sequence_overhead_s' and group_kind = ''"),
                },
                status="calibrated",
                evidence=anchor("The calibrated parameters"),
            ),
            ctx.finding(
                ("Weak spot: " if weak else "Hardest regime: ")
                + "held out with their model's architecture group, the {w.n_points:int} {w.group:text} runs' time to "
                "first token is off by a typical {w.error_factor:x}"
                + (", more than the report's 1.5× bar for a calibrated number." if weak else "."),
                {"w": worst},
                status="weak" if weak else "calibrated",
                evidence=anchor("Held-out error by regime, chip, model and engine"),
            ),
        ]
    )


def serving(ctx: SiteContext) -> list[Finding]:
    cheapest = (
        "serving_layouts",
        "pool = 'decode' and efficiency_basis = 'calibrated' and cheapest_meeting_target and number_format = 'fp8' "
        "order by (model = 'DeepSeek-V3') desc, (chip = 'H200') desc, model, chip limit 1",
    )
    row = ctx.query(f"select model, chip from {cheapest[0]} where {cheapest[1]}") if ctx.has(cheapest[0]) else None
    error = band(ctx, row["model"][0], row["chip"][0]) if row is not None and row.height else MODEL_OUT_TPOT
    own = own_error(ctx, row["model"][0]) if row is not None and row.height else None
    return kept(
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
                "user; decode steps in its regime at its distance from the data are held out a typical "
                "{cv.error_factor_p50:x} off (9 in 10 within {cv.error_factor_p90:x})" + _own_clause(own) + ".",
                {"c": cheapest, "cv": error, **({"o": own} if own else {})},
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
    model = ctx.scalar(f"select model from {plan[0]} where {plan[1]}")
    chip = ctx.scalar(f"select chip from {plan[0]} where {plan[1]}")
    error = band(ctx, model, chip)
    own = own_error(ctx, model)
    return kept(
        [
            ctx.finding(
                "Serving {p.model:text} on {p.chip:text} at the stated traffic takes {p.chips:int} chips and costs "
                "{p.blended_usd_per_mtok:usd} per million tokens at the chip's on-demand rental quote of "
                "{p.usd_per_chip_hour:usd} per chip-hour (calibrated; decode steps in its regime at its distance "
                "from the data are held out a typical {cv.error_factor_p50:x} off, 9 in 10 within "
                "{cv.error_factor_p90:x}" + _own_clause(own) + ").",
                {"p": plan, "cv": error, **({"o": own} if own else {})},
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
