"""The Chinchilla refit against Besiroglu et al. 2024's published estimates, SciPy, and synthetic data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy.optimize import minimize

from econ.errors import FitError
from econ.fits import chinchilla as ch
from econ.physics import scaling_laws as sl

REPO = Path(__file__).resolve().parents[2]
EXTERNAL_POINTS = REPO / "tests" / "fixtures" / "external" / "chinchilla_svg_extracted_data.csv"
EPOCH_LOG_PARAMS = np.array(
    [6.17795598, 7.64273236, 0.59711196, 0.34781303, 0.36585412]
)  # their baseline fit (a, b, e, α, β)


def epoch_points():
    """The real third-party file (Epoch's extraction of Hoffmann et al.'s Figure 4); D = FLOP/(6N)."""
    if not EXTERNAL_POINTS.exists():
        pytest.skip(f"{EXTERNAL_POINTS} is not present")
    df = pl.read_csv(EXTERNAL_POINTS)
    n, c, loss = (df[col].to_numpy() for col in ("Model Size", "Training FLOP", "loss"))
    return n, c / (6 * n), loss


@pytest.fixture(scope="module")
def refit():
    n, d, loss = epoch_points()
    return ch.fit_chinchilla(n, d, loss, n_bootstrap=400, seed=42)


@pytest.mark.parametrize("name", ch.PARAMETERS)
def test_reproduces_epochs_estimates_within_their_standard_errors(refit, name):
    published = getattr(sl.BESIROGLU_2024, name)
    assert refit.status == "ok", refit.status_detail
    assert abs(refit.estimates[name] - published) < sl.BESIROGLU_2024_SE[name]


@pytest.mark.parametrize("name, tight", [("E", 0.005), ("alpha", 0.002), ("beta", 0.002)])
def test_point_estimates_are_close_to_epochs(refit, name, tight):
    assert refit.estimates[name] == pytest.approx(getattr(sl.BESIROGLU_2024, name), abs=tight)


@pytest.mark.parametrize("name", ch.PARAMETERS)
def test_bootstrap_standard_errors_match_the_published_ones(refit, name):
    """Our 400-resample SEs against Epoch's 4,000-resample SEs: same order, within a factor 1.5."""
    ratio = refit.std_errors[name] / sl.BESIROGLU_2024_SE[name]
    assert 1 / 1.5 < ratio < 1.5
    assert refit.interval_low[name] < refit.estimates[name] < refit.interval_high[name]


def test_drops_the_five_highest_losses(refit):
    assert (refit.n_points, refit.n_dropped, refit.n_bootstrap, refit.huber_delta) == (240, 5, 400, 1e-3)
    assert refit.n_bootstrap_converged == 400


def objective(theta, n, d, loss):
    """Epoch's objective written out independently: Huber(δ=1e-3) of LSE − log L, summed."""
    a, b, e, alpha, beta = theta
    pred = np.logaddexp(np.logaddexp(a - alpha * np.log(n), b - beta * np.log(d)), e)
    r = np.abs(pred - np.log(loss))
    return np.sum(np.where(r <= 1e-3, 0.5 * r**2, 1e-3 * (r - 0.5e-3)))


def test_our_minimum_is_at_least_as_low_as_epochs(refit):
    n, d, loss = epoch_points()
    keep = ch.highest_loss_mask(loss)
    e = refit.estimates
    ours = np.array([np.log(e["A"]), np.log(e["B"]), np.log(e["E"]), e["alpha"], e["beta"]])
    assert objective(ours, n[keep], d[keep], loss[keep]) == pytest.approx(refit.objective, rel=1e-9)
    assert refit.objective <= objective(EPOCH_LOG_PARAMS, n[keep], d[keep], loss[keep])


def test_batched_bootstrap_matches_scipy_per_resample():
    """Second method: each resample refitted on its own with SciPy's L-BFGS-B from the same warm start."""
    n, d, loss = epoch_points()
    keep = ch.highest_loss_mask(loss)
    ln_n, ln_d, ln_l = np.log(n[keep]), np.log(d[keep]), np.log(loss[keep])
    theta0, _, _ = ch.best_of_grid(ln_n, ln_d, ln_l)
    counts = ch.bootstrap_counts(ln_n.size, 6, seed=7)
    batched, ok = ch.bootstrap_fits(theta0, ln_n, ln_d, ln_l, counts)
    assert ok.all()
    for k in range(counts.shape[0]):
        idx = np.repeat(np.arange(ln_n.size), counts[k].astype(int))

        def f(t, idx=idx):
            v, g = ch.objective_and_gradient(t[None], ln_n[idx], ln_d[idx], ln_l[idx], np.ones(idx.size))
            return v[0], g[0]

        ref = minimize(f, theta0, jac=True, method="L-BFGS-B", options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-12})
        ours = f(batched[k])[0]
        assert ours <= ref.fun * (1 + 1e-6)
        assert batched[k][3:] == pytest.approx(ref.x[3:], abs=2e-3)  # α, β


@pytest.mark.parametrize("law", [sl.BESIROGLU_2024, sl.HOFFMANN_2022_UNROUNDED], ids=lambda law: law.name)
def test_synthetic_round_trip_without_noise(law):
    """Losses generated from a known law at the real (N, D) points are fitted back to that law."""
    n, d, _ = epoch_points()
    fit = ch.fit_chinchilla(n, d, sl.loss_nats_per_token(law, n, d), n_bootstrap=0)
    assert fit.status == "ok"
    for name in ch.PARAMETERS:
        assert fit.estimates[name] == pytest.approx(getattr(law, name), rel=1e-3)


def test_synthetic_round_trip_with_noise_recovers_within_the_bootstrap_interval():
    n, d, _ = epoch_points()
    rng = np.random.default_rng(3)
    loss = sl.loss_nats_per_token(sl.BESIROGLU_2024, n, d) * np.exp(rng.normal(0, 0.01, n.size))
    fit = ch.fit_chinchilla(n, d, loss, n_bootstrap=200, seed=1)
    assert fit.status == "ok"
    for name in ("E", "alpha", "beta"):
        truth = getattr(sl.BESIROGLU_2024, name)
        assert fit.interval_low[name] - fit.std_errors[name] < truth < fit.interval_high[name] + fit.std_errors[name]


def test_same_seed_same_answer():
    n, d, loss = epoch_points()
    a = ch.fit_chinchilla(n[::3], d[::3], loss[::3], n_bootstrap=50, seed=5)
    b = ch.fit_chinchilla(n[::3], d[::3], loss[::3], n_bootstrap=50, seed=5)
    assert a.std_errors == b.std_errors and a.estimates == b.estimates


def test_too_few_points_is_underdetermined_not_a_number():
    n, d, loss = epoch_points()
    fit = ch.fit_chinchilla(n[:10], d[:10], loss[:10], n_bootstrap=10)
    assert fit.status == "underdetermined"
    assert fit.status_detail == "5 point(s) after dropping 5; the law has 5 parameters"
    assert all(np.isnan(v) for v in fit.estimates.values())


def test_a_bootstrap_of_barely_enough_points_is_underdetermined():
    """6 points for 5 parameters: most resamples hold 5 or fewer distinct points, so no interval is meaningful."""
    n, d, loss = epoch_points()
    fit = ch.fit_chinchilla(n[:11], d[:11], loss[:11], n_bootstrap=200)
    assert (fit.n_points, fit.status) == (6, "underdetermined")
    assert (
        "bootstrap resamples of 6 points hold no more distinct points than the law has parameters" in fit.status_detail
    )


def test_a_term_the_data_cannot_see_is_rank_deficient():
    """Losses that do not depend on model size: the A/N^α term is not identified."""
    n, d, _ = epoch_points()
    loss = 1.8 + 2000.0 / d**0.37
    fit = ch.fit_chinchilla(n, d, loss, n_bootstrap=0)
    assert fit.status == "rank_deficient", fit.estimates
    assert "A/N^alpha" in fit.status_detail or "exponent collapsed" in fit.status_detail


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ([1e9, 2e9], [1e10], [3.0, 2.9]),
            "params, tokens and loss differ in length (2, 1, 2) — pass one value of each per training run",
        ),
        (
            ([1e9, -2e9], [1e10, 2e10], [3.0, 2.9]),
            "1 point(s) with a missing, zero or negative value (first at index 1) — params, tokens and loss must all "
            "be positive numbers",
        ),
        (
            ([1e9, 2e9], [1e10, np.nan], [3.0, 2.9]),
            "1 point(s) with a missing, zero or negative value (first at index 1) — params, tokens and loss must all "
            "be positive numbers",
        ),
    ],
)
def test_bad_input_raises_a_fit_error(args, message):
    with pytest.raises(FitError) as err:
        ch.fit_chinchilla(*args)
    assert str(err.value) == message


@pytest.mark.parametrize(
    "loss, n_drop, kept",
    [
        ([3.0, 5.0, 2.0, 4.0], 1, [True, False, True, True]),
        ([3.0, 5.0, 2.0, 4.0], 2, [True, False, True, False]),
        ([3.0, 5.0], 0, [True, True]),
        ([3.0, 5.0], 2, [False, False]),
    ],
)
def test_highest_loss_mask(loss, n_drop, kept):
    assert ch.highest_loss_mask(loss, n_drop).tolist() == kept


def test_huber_has_a_quadratic_core_and_linear_tails():
    r = np.array([0.0, 5e-4, 1e-3, 2e-3, -0.1])
    assert ch.huber(r) == pytest.approx([0.0, 0.5 * 25e-8, 0.5e-6, 1e-3 * 1.5e-3, 1e-3 * 0.0995])


def _written_out(theta, log_params, log_tokens, log_loss, weights, delta=ch.HUBER_DELTA):
    """The objective and gradient as the formulas read (LSE with its max taken out, :func:`econ.fits.chinchilla.huber`),
    one fresh array per step: what the in-place version must equal bit for bit."""
    t1 = theta[:, 0:1] - theta[:, 3:4] * log_params
    t2 = theta[:, 1:2] - theta[:, 4:5] * log_tokens
    t3 = theta[:, 2:3]
    m = np.maximum(np.maximum(t1, t2), t3)
    e1, e2, e3 = np.exp(t1 - m), np.exp(t2 - m), np.exp(t3 - m)
    s = e1 + e2 + e3
    r = m + np.log(s) - log_loss
    f = (weights * ch.huber(r, delta)).sum(axis=1)
    psi = np.clip(r, -delta, delta) * weights / s
    g1, g2 = psi * e1, psi * e2
    grad = np.stack([g1.sum(1), g2.sum(1), (psi * e3).sum(1), -(g1 * log_params).sum(1), -(g2 * log_tokens).sum(1)], 1)
    return f, grad


@pytest.mark.parametrize("per_start_weights", [False, True])
def test_the_in_place_objective_is_the_written_out_one_bit_for_bit(per_start_weights):
    n, d, loss = epoch_points()
    rng = np.random.default_rng(7)
    theta = ch._start_grid()[rng.choice(len(ch._start_grid()), 300, replace=False)]
    theta[:5] = EPOCH_LOG_PARAMS  # residuals inside the Huber core as well as in its tails
    weights = ch.bootstrap_counts(n.size, theta.shape[0], 3) if per_start_weights else np.ones(n.size)
    args = (np.log(n), np.log(d), np.log(loss), weights)
    f, grad = ch.objective_and_gradient(theta, *args)
    f_ref, grad_ref = _written_out(theta, *args)
    assert np.array_equal(f, f_ref) and np.array_equal(grad, grad_ref)
