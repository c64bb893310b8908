"""Small statistics the book's checks share (no matplotlib: a test can fit a slope
cheaply)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["loglog_slope"]


def loglog_slope(
    x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray
) -> tuple[float, float]:
    """Least-squares fit of ``log y = slope * log x + intercept``.

    The book uses this to check scaling laws ("the error decays like m^(-1/2)").

    Args:
        x: positive abscissae, shape (k,), k >= 2.
        y: positive ordinates, shape (k,).

    Returns:
        ``(slope, intercept)`` with the intercept in natural-log units.
    """
    xa = np.asarray(x, dtype=float)
    ya = np.asarray(y, dtype=float)
    if xa.ndim != 1 or ya.ndim != 1 or xa.shape != ya.shape:
        raise ValueError(
            "x and y must be 1-D arrays of the same length, "
            f"got shapes {xa.shape} and {ya.shape}"
        )
    if xa.size < 2:
        raise ValueError(f"x must have at least 2 points to fit a slope, got {xa.size}")
    if np.any(xa <= 0) or np.any(ya <= 0):
        raise ValueError(
            "x and y must be strictly positive for a log-log fit, got a value <= 0"
        )
    slope, intercept = np.polyfit(np.log(xa), np.log(ya), 1)
    return float(slope), float(intercept)
