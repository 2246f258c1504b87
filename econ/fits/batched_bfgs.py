"""BFGS on many independent problems at once (the Chinchilla fit's 4,500 starts and its bootstrap resamples)."""

from __future__ import annotations

import numpy as np


def batched_bfgs(fun, x0, *, max_iter, gtol=1e-10, ftol=1e-13, patience=5, c1=1e-4, max_halvings=40):
    """Minimise K independent smooth problems at once with BFGS and a per-problem Armijo backtracking.

    ``fun(x, idx)`` returns (f, g) for the rows ``idx`` of the batch. A problem stops when its
    gradient norm is below ``gtol``, when its relative decrease stays below ``ftol`` for
    ``patience`` iterations, or when its line search cannot decrease f (the precision limit
    of a Huber objective's kinks). Returns (x, f, g, converged, iterations).

    Each problem keeps its own inverse-Hessian estimate ``H``, updated by the BFGS formula
    ``H ← (I − ρ·s·yᵀ)·H·(I − ρ·y·sᵀ) + ρ·s·sᵀ``, ``ρ = 1/(yᵀs)`` (Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
    eq. 6.17), skipped where ``yᵀs ≤ 0``; the step is halved until the Armijo condition
    ``f(x + t·p) ≤ f(x) + c₁·t·∇fᵀp`` holds (ibid., eq. 3.6a). Vectorised over the batch: one call of ``fun``
    per line-search trial for all problems.
    """
    x = np.array(x0, dtype=float)
    k, p = x.shape
    eye = np.eye(p)
    f, g = fun(x, np.arange(k))
    gnorm = np.linalg.norm(g, axis=1)
    h = eye[None] * (0.1 / np.maximum(gnorm, 1e-300))[:, None, None]
    done = ~np.isfinite(f) | (gnorm < gtol)
    converged = gnorm < gtol
    slow = np.zeros(k, dtype=int)
    iterations = np.zeros(k, dtype=int)
    for _ in range(max_iter):
        idx = np.flatnonzero(~done)
        if idx.size == 0:
            break
        xi, fi, gi, hi = x[idx], f[idx], g[idx], h[idx]
        step = -np.einsum("kij,kj->ki", hi, gi)
        slope = (step * gi).sum(1)
        reset = ~(slope < 0)
        if reset.any():  # not a descent direction: restart from the scaled gradient
            hi[reset] = eye * (0.1 / np.maximum(np.linalg.norm(gi[reset], axis=1), 1e-300))[:, None, None]
            step[reset] = -np.einsum("kij,kj->ki", hi[reset], gi[reset])
            slope[reset] = (step[reset] * gi[reset]).sum(1)
        t = np.ones(idx.size)
        accepted = np.zeros(idx.size, dtype=bool)
        f_new, g_new = fi.copy(), gi.copy()
        for _ in range(max_halvings):
            todo = np.flatnonzero(~accepted)
            if todo.size == 0:
                break
            ft, gt = fun(xi[todo] + t[todo, None] * step[todo], idx[todo])
            ok = np.isfinite(ft) & (ft <= fi[todo] + c1 * t[todo] * slope[todo])
            accepted[todo[ok]] = True
            f_new[todo[ok]], g_new[todo[ok]] = ft[ok], gt[ok]
            t[todo[~ok]] *= 0.5
        s = np.where(accepted[:, None], t[:, None] * step, 0.0)
        y = g_new - gi
        sy = (s * y).sum(1)
        update = accepted & (sy > 1e-300)
        rho = np.where(update, 1.0 / np.where(update, sy, 1.0), 0.0)
        v = eye[None] - rho[:, None, None] * np.einsum("ki,kj->kij", s, y)
        h_new = np.einsum("kij,kjl,kml->kim", v, hi, v) + rho[:, None, None] * np.einsum("ki,kj->kij", s, s)
        hi = np.where(update[:, None, None], h_new, hi)
        decrease = (fi - f_new) / np.maximum(np.abs(fi), 1e-300)
        slow[idx] = np.where(decrease < ftol, slow[idx] + 1, 0)
        x[idx], f[idx], g[idx], h[idx] = xi + s, f_new, g_new, hi
        iterations[idx] += 1
        small = np.linalg.norm(g_new, axis=1) < gtol
        stop = small | ~accepted | (slow[idx] >= patience)
        converged[idx] = stop
        done[idx] = stop
    return x, f, g, converged, iterations
