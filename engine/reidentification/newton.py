"""A two-dimensional Newton-Raphson solver for the maximum-likelihood equations of the Pitman and SNB models,
configured as ARX's ``ARXSolverConfiguration`` is by default: accuracy 1e-6 on the equations, at most 1000
iterations per start, start values tried in turn (the given one first, then ARX's grid {0, 0.33, 0.66, 0.99}²).

>>> x = solve(lambda v: np.array([v[0] ** 2 - 4, v[1] - 1]), None, (1.0, 0.0))
>>> [round(float(c), 6) for c in x]
[2.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

ACCURACY = 1e-6
ITERATIONS = 1000
GRID = tuple((a, b) for a in (0.0, 0.33, 0.66, 0.99) for b in (0.0, 0.33, 0.66, 0.99))

Vector = np.ndarray


def _jacobian(f: Callable[[Vector], Vector], x: Vector, fx: Vector) -> np.ndarray:
    out = np.empty((2, 2))
    for j in range(2):
        h = 1e-7 * max(1.0, abs(x[j]))
        step = x.copy()
        step[j] += h
        out[:, j] = (f(step) - fx) / h
    return out


def solve(
    f: Callable[[Vector], Vector],
    jacobian: Callable[[Vector], np.ndarray] | None,
    start: Sequence[float] | None,
    starts: Sequence[Sequence[float]] = GRID,
    accuracy: float = ACCURACY,
    iterations: int = ITERATIONS,
    damped: bool = False,
) -> Vector:
    """A root of ``f`` (both equations within ``accuracy``) from the first start that converges; NaNs when none
    does.  ``jacobian`` ``None``: forward differences.  ``damped``: halve a step while it does not lower the
    residual (|f|₁), for equations whose plain Newton steps leave the domain from ARX's start values."""
    tries = ([start] if start is not None else []) + list(starts)
    with np.errstate(all="ignore"):
        for s in tries:
            x = np.asarray(s, dtype=np.float64).copy()
            for _ in range(iterations):
                fx = np.asarray(f(x), dtype=np.float64)
                if not np.all(np.isfinite(fx)):
                    break
                if np.all(np.abs(fx) <= accuracy):
                    return x
                jac = jacobian(x) if jacobian is not None else _jacobian(f, x, fx)
                try:
                    step = np.linalg.solve(jac, fx)
                except np.linalg.LinAlgError:
                    break
                if not np.all(np.isfinite(step)):
                    break
                if damped:  # halve the step while the equations' residual grows or turns NaN
                    norm = float(np.abs(fx).sum())
                    for _ in range(12):
                        trial = np.asarray(f(x - step), dtype=np.float64)
                        if np.all(np.isfinite(trial)) and float(np.abs(trial).sum()) < norm:
                            break
                        step = step / 2
                x = x - step
    return np.array([np.nan, np.nan])
