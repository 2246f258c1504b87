"""Declarations and frame builders of the scaling-law tables (fits, bootstrap draws, residuals, isoFLOP slices)."""

from __future__ import annotations

import numpy as np
import polars as pl

from econ.fits import chinchilla
from econ.fits.chinchilla import PARAMETERS, ChinchillaFit, highest_loss_mask, objective_and_gradient
from econ.physics import scaling_laws as sl
from econ.results import ResultColumn as C
from econ.results import ResultTable

ESTIMATES = {  # parameter -> (column, unit, meaning)
    "E": ("e_nats_per_token", "nats/token", "Irreducible loss E"),
    "A": ("a_coef", "nats/token·params^alpha", "Model-size coefficient A"),
    "B": ("b_coef", "nats/token·tokens^beta", "Data coefficient B"),
    "alpha": ("alpha_exponent", "", "Model-size exponent alpha"),
    "beta": ("beta_exponent", "", "Data exponent beta"),
}
LAW = C(
    "law", "str", "", "key", "Law id: besiroglu_2024, hoffmann_2022 (rounded), hoffmann_2022_unrounded, refit_<study>"
)

FITS = ResultTable(
    name="scaling_law_fits",
    grain="law",
    key=("law",),
    description=(
        "Chinchilla loss law L(N,D) = E + A/N^alpha + B/D^beta: published constants and our refit (Besiroglu et al. "
        "2024 method) with bootstrap uncertainty; only refits with status ok feed the other training tables"
    ),
    columns=(
        LAW,
        C("kind", "str", "", "label", "published or refit"),
        *(
            C(col, "float", unit, "fit", meaning, chinchilla.fit_chinchilla)
            for col, unit, meaning in ESTIMATES.values()
        ),
        *(
            C(col + "_se", "float", unit, "fit", meaning + ", bootstrap standard error", chinchilla.fit_chinchilla)
            for col, unit, meaning in ESTIMATES.values()
        ),
        *(
            C(col + "_low", "float", unit, "fit", meaning + ", 2.5th bootstrap percentile", chinchilla.fit_chinchilla)
            for col, unit, meaning in ESTIMATES.values()
        ),
        *(
            C(col + "_high", "float", unit, "fit", meaning + ", 97.5th bootstrap percentile", chinchilla.fit_chinchilla)
            for col, unit, meaning in ESTIMATES.values()
        ),
        C("n_points", "int", "points", "check", "Points used in the refit, after dropping the highest-loss ones"),
        C("n_dropped_points", "int", "points", "check", "Highest-loss points dropped before fitting (Epoch: 5)"),
        C("n_bootstrap", "int", "resamples", "check", "Bootstrap resamples of the refit (Epoch used 4,000)"),
        C("n_bootstrap_converged", "int", "resamples", "check", "Resamples whose refit converged"),
        C("huber_delta", "float", "", "assumption", "Huber threshold on the log-loss residual"),
        C(
            "huber_objective",
            "float",
            "",
            "fit",
            "Summed Huber loss of the law on the refit study's kept points (lower fits better)",
            chinchilla.objective_and_gradient,
        ),
        C("method", "str", "", "label", "How the constants were obtained"),
        C(
            "status",
            "str",
            "",
            "check",
            "ok, underdetermined, rank_deficient, not_converged (refits; only ok refits feed the other tables) or "
            "published",
        ),
        C("status_detail", "str", "", "label", "Why the status, or the source note of published constants"),
        C("data_study", "str", "", "input", "The scaling_law_points study a refit used"),
        C("source_url", "str", "", "input", "Where the constants (or the refit's data) come from"),
        C("optimal_params_exponent", "float", "", "derived", "a: N_opt grows as C^a", sl.optimal_exponents),
        C("optimal_tokens_exponent", "float", "", "derived", "b: D_opt grows as C^b", sl.optimal_exponents),
    ),
)

BOOTSTRAP = ResultTable(
    name="scaling_law_bootstrap",
    grain="refit law x bootstrap draw",
    key=("law", "draw"),
    description="Every converged bootstrap draw of each refit's constants (the intervals of scaling_law_fits and "
    "compute_optimal come from these)",
    columns=(
        LAW,
        C("draw", "int", "", "key", "Index of the resample"),
        *(
            C(col, "float", unit, "fit", meaning + " of the resample", chinchilla.fit_chinchilla)
            for col, unit, meaning in ESTIMATES.values()
        ),
    ),
)

RESIDUALS = ResultTable(
    name="scaling_law_residuals",
    grain="law x data point",
    key=("law", "data_study", "params", "training_flop"),
    description="Every scaling-law data point under every law: predicted loss and log residual",
    columns=(
        LAW,
        C("data_study", "str", "", "key", "Study the point belongs to"),
        C("params", "float", "params", "key", "Model size N"),
        C("training_flop", "float", "FLOP", "key", "Training compute C"),
        C("tokens", "float", "tokens", "derived", "Training tokens", sl.tokens_from_flop),
        C("loss_nats_per_token", "float", "nats/token", "input", "Reported final loss"),
        C(
            "predicted_loss_nats_per_token",
            "float",
            "nats/token",
            "fit",
            "Loss the law predicts at (N, D)",
            sl.loss_nats_per_token,
        ),
        C("log_residual_ratio", "float", "", "fit", "Log residual of the prediction", sl.log_residual),
        C("used_in_fit", "bool", "", "check", "False for the highest-loss points the refit drops"),
    ),
)

ISOFLOPS = ResultTable(
    name="scaling_law_isoflops",
    grain="law x compute budget x model size",
    key=("law", "compute_flop", "params"),
    description=(
        "The loss law on isoFLOP slices: L(N, C/(6N)) at half-decade budgets spanning the data and 12 sizes a decade "
        "within a third and three times the data's sizes, up to 0.2 nats above the data's highest loss (what the "
        "Training page draws)"
    ),
    columns=(
        LAW,
        C("budget_label", "str", "", "label", "The budget, e.g. 1.0e+21"),
        C("compute_flop", "float", "FLOP", "key", "Training budget C"),
        C("params", "float", "params", "key", "Model size N"),
        C("tokens", "float", "tokens", "derived", "Training tokens at this size and budget", sl.tokens_from_flop),
        C("loss_nats_per_token", "float", "nats/token", "fit", "Loss the law predicts", sl.loss_nats_per_token),
    ),
)


def _law_row(law: sl.ScalingLaw, kind: str) -> dict:
    return {"law": law.name, "kind": kind} | {col: float(getattr(law, p)) for p, (col, _u, _m) in ESTIMATES.items()}


def fits_frame(
    published, published_se: dict[str, dict[str, float]], refits: dict[str, tuple[str, ChinchillaFit, pl.DataFrame]]
) -> pl.DataFrame:
    """One row per law: published constants (with SEs where published) and each refit with its bootstrap."""
    first = next(iter(refits.values()))[2] if refits else None
    rows = []
    for law in published:
        row = _law_row(law, "published")
        for p, (col, _u, _m) in ESTIMATES.items():
            row[col + "_se"] = published_se.get(law.name, {}).get(p)
            row[col + "_low"] = row[col + "_high"] = None
        objective = (
            huber_objective(law, first, drop_highest=chinchilla.DROP_HIGHEST_LOSS, delta=chinchilla.HUBER_DELTA)
            if first is not None
            else None
        )
        row |= {
            "n_points": None,
            "n_dropped_points": None,
            "n_bootstrap": None,
            "n_bootstrap_converged": None,
            "huber_delta": None,
            "huber_objective": objective,
            "method": "as published",
            "status": "published",
            "status_detail": law.note,
            "data_study": None,
            "source_url": law.source_url,
        }
        rows.append(row)
    for name, (study, fit, points) in refits.items():
        row = _law_row(fit.law(name), "refit")
        for p, (col, _u, _m) in ESTIMATES.items():
            row[col + "_se"], row[col + "_low"], row[col + "_high"] = (
                fit.std_errors[p],
                fit.interval_low[p],
                fit.interval_high[p],
            )
        row |= {
            "n_points": fit.n_points,
            "n_dropped_points": fit.n_dropped,
            "n_bootstrap": fit.n_bootstrap,
            "n_bootstrap_converged": fit.n_bootstrap_converged,
            "huber_delta": fit.huber_delta,
            "huber_objective": fit.objective,
            "method": fit.method,
            "status": fit.status,
            "status_detail": fit.status_detail,
            "data_study": study,
            "source_url": points["source_url"][0] if points.height else None,
        }
        rows.append(row)
    frame = pl.DataFrame(rows, schema={k: v for k, v in FITS.schema.items() if not k.startswith("optimal_")})
    a, b = sl.optimal_exponents(frame["alpha_exponent"].to_numpy(), frame["beta_exponent"].to_numpy())
    return frame.with_columns(pl.Series("optimal_params_exponent", a), pl.Series("optimal_tokens_exponent", b))


def laws_from_fits(fits: pl.DataFrame) -> list[sl.ScalingLaw]:
    """The published laws and the refits with status ok, as :class:`ScalingLaw` (what downstream tables use)."""
    usable = fits.filter((pl.col("kind") == "published") | (pl.col("status") == "ok"))
    return [
        sl.ScalingLaw(
            r["law"],
            E=r["e_nats_per_token"],
            A=r["a_coef"],
            B=r["b_coef"],
            alpha=r["alpha_exponent"],
            beta=r["beta_exponent"],
            source_url=r["source_url"] or "",
            note=r["status_detail"] or "",
        )
        for r in usable.iter_rows(named=True)
    ]


def bootstrap_frame(draws_by_law: dict[str, np.ndarray]) -> pl.DataFrame:
    frames = [
        pl.DataFrame(
            {
                "law": name,
                "draw": np.arange(draws.shape[0]),
                **{ESTIMATES[p][0]: draws[:, i] for i, p in enumerate(PARAMETERS)},
            }
        )
        for name, draws in draws_by_law.items()
        if draws.shape[0]
    ]
    return pl.concat(frames) if frames else BOOTSTRAP.empty_frame()


def draws_of(bootstrap: pl.DataFrame, law: str) -> np.ndarray:
    """One refit's draws as an (n, 5) array in :data:`PARAMETERS` order."""
    rows = bootstrap.filter(pl.col("law") == law).sort("draw")
    return rows.select([ESTIMATES[p][0] for p in PARAMETERS]).to_numpy()


def residuals_frame(laws: list[sl.ScalingLaw], points: pl.DataFrame, *, drop_highest: int) -> pl.DataFrame:
    """Every point of a study under every law: predicted loss, log residual, and whether the fit used it."""
    n, c, loss = (points[c].to_numpy().astype(float) for c in ("params", "training_flop", "loss_nats_per_token"))
    d = sl.tokens_from_flop(n, c)
    kept = highest_loss_mask(loss, drop_highest)
    frames = []
    for law in laws:
        pred = sl.loss_nats_per_token(law, n, d)
        frames.append(
            pl.DataFrame(
                {
                    "law": law.name,
                    "data_study": points["study"],
                    "params": n,
                    "training_flop": c,
                    "tokens": d,
                    "loss_nats_per_token": loss,
                    "predicted_loss_nats_per_token": pred,
                    "log_residual_ratio": sl.log_residual(pred, loss),
                    "used_in_fit": kept,
                }
            )
        )
    return pl.concat(frames)


def huber_objective(law: sl.ScalingLaw, points: pl.DataFrame, *, drop_highest: int, delta: float) -> float:
    """Epoch's summed Huber objective of a law on a study's kept points (lower = fits better)."""
    n, c, loss = (points[c].to_numpy().astype(float) for c in ("params", "training_flop", "loss_nats_per_token"))
    keep = highest_loss_mask(loss, drop_highest)
    theta = np.array([[np.log(law.A), np.log(law.B), np.log(law.E), law.alpha, law.beta]])
    d = c / (sl.TRAIN_FLOP_PER_PARAM_TOKEN * n)
    f, _ = objective_and_gradient(
        theta, np.log(n[keep]), np.log(d[keep]), np.log(loss[keep]), np.ones(int(keep.sum())), delta
    )
    return float(f[0])


def isoflop_frame(laws: list[sl.ScalingLaw], points: pl.DataFrame) -> pl.DataFrame:
    """Each law on half-decade isoFLOP slices spanning the data (see ``ISOFLOPS``)."""
    c, n, loss = (points[k].to_numpy().astype(float) for k in ("training_flop", "params", "loss_nats_per_token"))
    budgets = 10.0 ** (np.arange(np.floor(2 * np.log10(c.min())), np.ceil(2 * np.log10(c.max())) + 1) / 2)
    sizes = 10.0 ** (6 + np.arange(0, 73) / 12)
    sizes = sizes[(sizes >= n.min() / 3) & (sizes <= n.max() * 3)]
    cap = loss.max() + 0.2
    frames = []
    for law in laws:
        cc, nn = np.meshgrid(budgets, sizes, indexing="ij")
        d = sl.tokens_from_flop(nn, cc)
        predicted = sl.loss_nats_per_token(law, nn, d)
        keep = predicted <= cap
        frames.append(
            pl.DataFrame(
                {
                    "law": law.name,
                    "budget_label": [f"{x:.1e}" for x in cc[keep]],
                    "compute_flop": cc[keep],
                    "params": nn[keep],
                    "tokens": d[keep],
                    "loss_nats_per_token": predicted[keep],
                }
            )
        )
    return pl.concat(frames) if frames else ISOFLOPS.empty_frame()
