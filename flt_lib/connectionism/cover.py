"""Cover's function counting theorem, and exact tests of linear separability.

For ``s`` points in general position in ``R^n``, the number of labelings ``y in {-1,
+1}^s`` that some homogeneous hyperplane realises (``y_i <w, x_i> > 0`` for all ``i``)
is

    C(s, n) = 2 * sum_{i=0}^{n-1} binom(s - 1, i)            (Cover, 1965)

Section 1.3 of the book checks this against a brute-force count, deciding each labeling
exactly by linear-programming feasibility, and compares the fraction ``C(s, n) / 2^s``
with a Monte Carlo estimate on Gaussian points.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import torch

from flt_lib._validate import check_generator, check_int, check_tensor

__all__ = [
    "count_separable_labelings",
    "cover_count",
    "cover_fraction",
    "in_general_position",
    "is_linearly_separable",
    "monte_carlo_fraction",
]


def cover_count(s: int, n: int) -> int:
    """Cover's count ``C(s, n) = 2 sum_{i=0}^{n-1} binom(s-1, i)`` (eq.
    ``eq-cover-count``).

    Args:
        s: number of points, ``s >= 1``.
        n: dimension, ``n >= 1``.

    Returns: The number of homogeneously linearly separable labelings of ``s`` points in
        general position in ``R^n`` (an exact integer; equals ``2**s`` when ``s <= n``).
    """
    s = check_int(s, "s", min_value=1)
    n = check_int(n, "n", min_value=1)
    return _cover_count(s, n)


def _cover_count(s: int, n: int) -> int:
    """The check-free core of :func:`cover_count` (arguments already checked)."""
    return 2 * sum(math.comb(s - 1, i) for i in range(n))


def cover_fraction(s: int, n: int) -> Fraction:
    """The fraction ``C(s, n) / 2^s`` of separable labelings, as an exact ``Fraction``.

    Args:
        s: number of points, ``s >= 1``.
        n: dimension, ``n >= 1``.

    Returns:
        ``Fraction(C(s, n), 2**s)``; it equals exactly ``1/2`` at ``s = 2n``.
    """
    return Fraction(cover_count(s, n), 2**s)


def is_linearly_separable(X: torch.Tensor, y: torch.Tensor) -> bool:
    """Decide exactly whether some ``w`` has ``y_i <w, x_i> > 0`` for all ``i``
    (homogeneous).

    By scaling ``w``, strict separation is equivalent to feasibility of the linear
    program ``y_i <w, x_i> >= 1`` for all ``i``, which is solved with HiGHS via
    ``scipy.optimize.linprog``. scipy is imported here, not at module level, because it
    is the only place the library needs it: an LP decides separability in finitely many
    steps, whereas the perceptron never stops on non-separable data. For an affine
    separator, pass lifted inputs ``(x, 1)``.

    Args:
        X: inputs, shape ``(s, n)``.
        y: labels in ``{-1, +1}``, shape ``(s,)``.

    Returns:
        True iff the labeling is homogeneously linearly separable.
    """
    from scipy.optimize import linprog  # lazy: scipy is needed only for this exact test

    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(s, n)")
    check_tensor(y, "y", shape=(X.shape[0],), shape_doc="(s,) with s = X.shape[0]")
    if not bool(((y == 1) | (y == -1)).all()):
        raise ValueError(
            f"y must have entries in {{-1, +1}}, got values {torch.unique(y).tolist()}"
        )
    A = (y.to(X)[:, None] * X).double().cpu().numpy()  # (s, n): row i is y_i x_i
    s, n = A.shape
    # HiGHS without presolve is fastest on these tiny LPs; on a degenerate draw (about 1
    # LP in a few thousand) it can end with an "unknown" status, and then presolve, the
    # interior-point and the dual simplex methods decide.
    attempts = [("highs", {"presolve": False}), ("highs", {}), ("highs-ipm", {}),
                ("highs-ds", {})]
    for method, options in attempts:
        res = linprog(
            c=[0.0] * n, A_ub=-A, b_ub=[-1.0] * s, bounds=[(None, None)] * n,
            method=method, options=options,
        )
        if res.status in (0, 2):  # 0: feasible optimum found, 2: infeasible
            return res.status == 0
    raise RuntimeError(f"linprog failed to decide separability: {res.message}")


def count_separable_labelings(X: torch.Tensor) -> int:
    """Brute force: count the labelings of the rows of ``X`` that are homogeneously
    separable.

    All ``2**s`` labelings are enumerated. Since ``y`` is separable iff ``-y`` is (flip
    ``w``), only the ``2**(s-1)`` labelings with ``y_0 = +1`` are tested, each exactly
    by :func:`is_linearly_separable`, and the count is doubled.

    Args:
        X: inputs, shape ``(s, n)`` with ``1 <= s <= 16``.

    Returns:
        The number of separable labelings (compare with :func:`cover_count`).
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(s, n)")
    s = X.shape[0]
    if not 1 <= s <= 16:
        raise ValueError(
            f"X must have between 1 and 16 rows for a brute-force count, got {s}"
        )
    count = 0
    for tail in itertools.product((1.0, -1.0), repeat=s - 1):
        y = torch.tensor((1.0, *tail), dtype=X.dtype, device=X.device)  # (s,)
        count += is_linearly_separable(X, y)
    return 2 * count


def in_general_position(X: torch.Tensor, *, tol: float = 1e-9) -> bool:
    """Whether every subset of at most ``n`` rows of ``X`` (shape ``(s, n)``) is
    linearly independent.

    It suffices to check the subsets of size ``min(s, n)``: a subset of an independent
    set is independent. Independence is judged by the smallest singular value relative
    to the largest.

    Args:
        X: points, shape ``(s, n)``.
        tol: relative tolerance on singular values.

    Returns:
        True iff the points are in general position (the hypothesis of Cover's theorem).
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(s, n)")
    s, n = X.shape
    k = min(s, n)
    if math.comb(s, k) > 100_000:
        raise ValueError(
            f"X has too many subsets to check ({math.comb(s, k)}); use s <= 20"
        )
    Xd = X.double().cpu()
    for subset in itertools.combinations(range(s), k):
        sv = torch.linalg.svdvals(Xd[list(subset)])  # (k,)
        if sv[-1] <= tol * max(sv[0].item(), 1.0):
            return False
    return True


def monte_carlo_fraction(
    s: int, n: int, *, n_trials: int, generator: torch.Generator, affine: bool = False
) -> float:
    """Monte Carlo estimate of the fraction of separable labelings, with exact LP tests.

    Each trial draws ``s`` standard Gaussian points in ``R^n`` (in general position with
    probability one) and independent uniform labels, and tests separability exactly.

    Args:
        s: number of points, ``s >= 1``.
        n: dimension, ``n >= 1``.
        n_trials: number of independent trials, ``n_trials >= 1``.
        generator: a CPU ``torch.Generator``.
        affine: if True, allow affine separators (points lifted to ``(x, 1)``); the
            expected value is then ``C(s, n + 1) / 2^s``.

    Returns:
        The fraction of trials whose labeling was separable; its expectation is
        ``C(s, n) / 2^s`` (or ``C(s, n + 1) / 2^s`` when ``affine``).
    """
    s = check_int(s, "s", min_value=1)
    n = check_int(n, "n", min_value=1)
    n_trials = check_int(n_trials, "n_trials", min_value=1)
    check_generator(generator)
    hits = 0
    for _ in range(n_trials):
        X = torch.randn(s, n, generator=generator, dtype=torch.float64)  # (s, n)
        y = torch.where(
            torch.rand(s, generator=generator) < 0.5, -1.0, 1.0
        ).double()  # (s,)
        if affine:
            X = torch.cat([X, X.new_ones(s, 1)], dim=1)  # (s, n+1)
        hits += is_linearly_separable(X, y)
    return hits / n_trials
