"""Activation patterns and exact region counts of line arrangements in the plane.

A hidden ReLU layer cuts its input space by hyperplanes; its regions are the cells of
the arrangement. Exact counts in rational arithmetic (no sampling), the maximal count in
general position (Schlaefli; Buck 1943), Zaslavsky's (1975) count and Montufar et al.'s
(2014) lower bound for deep networks. Part of :mod:`flt_lib.feedforward.regions`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import torch

from flt_lib._validate import check_int, check_tensor

__all__ = [
    "activation_pattern",
    "count_regions_2d",
    "general_position_regions",
    "in_general_position_2d",
    "montufar_lower_bound",
    "region_sign_vectors_2d",
    "zaslavsky_regions_2d",
]


Number = int | float | Fraction


def activation_pattern(
    X: torch.Tensor, W: torch.Tensor, b: torch.Tensor
) -> torch.Tensor:
    """Which ReLU units are active: ``1[X W^T + b > 0]``.

    Args:
        X: inputs, shape (n, d).
        W: weights of the hidden layer, shape (m, d).
        b: biases, shape (m,).

    Returns:
        Boolean tensor, shape (n, m).
    """
    check_tensor(X, "X", ndim=2, shape_doc="(n, d)")
    check_tensor(W, "W", shape=(None, X.shape[1]), shape_doc="(m, d)")
    check_tensor(b, "b", shape=(W.shape[0],), shape_doc="(m,)")
    return _activation_pattern(X, W, b)


def _activation_pattern(
    X: torch.Tensor, W: torch.Tensor, b: torch.Tensor
) -> torch.Tensor:
    """The check-free core of :func:`activation_pattern` (arguments already checked)."""
    return (X @ W.T + b) > 0  # (n, m)


def general_position_regions(m: int, n: int) -> int:
    """Number of regions of ``m`` hyperplanes in general position in ``R^n``:
    ``sum_{i<=n} C(m, i)``.

    This is the maximum over all arrangements of ``m`` hyperplanes (Schlaefli, 1852;
    Buck, 1943), eq. ``eq-regions-general-position``; it is the special case of
    Zaslavsky's count (:func:`zaslavsky_regions_2d`) in which every intersection is as
    small as possible.

    Args:
        m: number of hyperplanes (hidden units), ``m >= 0``.
        n: input dimension, ``n >= 1``.

    Returns:
        The count, an int.
    """
    m = check_int(m, "m", min_value=0)
    n = check_int(n, "n", min_value=1)
    return sum(math.comb(m, i) for i in range(min(n, m) + 1))


def _lines(
    lines: Sequence[Sequence[Number]],
) -> list[tuple[Fraction, Fraction, Fraction]]:
    out = []
    for k, line in enumerate(lines):
        if len(line) != 3:
            raise ValueError(
                f"lines[{k}] must be (a, b, c) for a*x + b*y + c = 0, got {line!r}"
            )
        a, bb, c = (Fraction(v) for v in line)
        if a == 0 and bb == 0:
            raise ValueError(f"lines[{k}] has a = b = 0, which is not a line: {line!r}")
        out.append((a, bb, c))
    return out


def region_sign_vectors_2d(lines: Sequence[Sequence[Number]]) -> set[tuple[int, ...]]:
    """Exact sign vectors (activation patterns) of all regions of a line arrangement in
    ``R^2``.

    Method (exact rational arithmetic, no sampling): the x-coordinates of all crossing
    points and of vertical lines cut the plane into open vertical slabs. Inside a slab
    no two lines cross, so the vertical line through the slab's midpoint meets every
    region that meets the slab; we take one point in each open gap between the lines
    along it. Every region (open and convex) meets some slab, and two points have the
    same sign vector iff they lie in the same region.

    Args:
        lines: ``m`` triples ``(a, b, c)`` meaning ``a x + b y + c = 0`` (int, float or
            Fraction); the unit is active where ``a x + b y + c > 0``.

    Returns: The set of sign vectors in ``{0, 1}^m`` (1 = active); its size is the
        number of regions.
    """
    L = _lines(lines)
    if not L:
        return {()}
    xs = set()
    for i, (a1, b1, c1) in enumerate(L):
        if b1 == 0:
            xs.add(-c1 / a1)
        for a2, b2, c2 in L[i + 1 :]:
            det = a1 * b2 - a2 * b1
            if det != 0:
                xs.add((b1 * c2 - b2 * c1) / det)
    xs = sorted(xs)
    if xs:
        probes_x = (
            [xs[0] - 1] + [(u + v) / 2 for u, v in zip(xs, xs[1:])] + [xs[-1] + 1]
        )
    else:
        probes_x = [Fraction(0)]
    patterns = set()
    for x0 in probes_x:
        ys = sorted({-(a * x0 + c) / bb for a, bb, c in L if bb != 0})
        if ys:
            probes_y = (
                [ys[0] - 1] + [(u + v) / 2 for u, v in zip(ys, ys[1:])] + [ys[-1] + 1]
            )
        else:
            probes_y = [Fraction(0)]
        for y0 in probes_y:
            patterns.add(tuple(int(a * x0 + bb * y0 + c > 0) for a, bb, c in L))
    return patterns


def in_general_position_2d(lines: Sequence[Sequence[Number]]) -> bool:
    """Whether no two lines are parallel and no three pass through one point (exact
    test).

    Args:
        lines: ``m`` triples ``(a, b, c)`` meaning ``a x + b y + c = 0``.

    Returns:
        True if the arrangement is in general position.
    """
    L = _lines(lines)
    points = set()
    for i, (a1, b1, c1) in enumerate(L):
        for a2, b2, c2 in L[i + 1 :]:
            det = a1 * b2 - a2 * b1
            if det == 0:
                return False
            p = ((b1 * c2 - b2 * c1) / det, (c1 * a2 - c2 * a1) / det)
            if p in points:
                return False
            points.add(p)
    return True


def zaslavsky_regions_2d(lines: Sequence[Sequence[Number]]) -> int:
    """Zaslavsky's count of the regions of a line arrangement, from its intersection
    poset.

    Zaslavsky (1975): the number of regions is ``|chi(-1)|``, where ``chi`` is the
    characteristic polynomial of the arrangement. For ``m`` distinct lines in the plane
    the poset has the plane (Moebius value 1), the lines (value -1 each) and the
    crossing points ``p`` (value ``t_p - 1``, with ``t_p`` the number of lines through
    ``p``), so ``chi(t) = t^2 - m t + sum_p (t_p - 1)`` and the count is ``1 + m + sum_p
    (t_p - 1)`` (eq. ``eq-regions-zaslavsky``). Exact rational arithmetic.

    Args:
        lines: ``m`` distinct lines ``(a, b, c)`` meaning ``a x + b y + c = 0``.

    Returns:
        The number of regions (compare with :func:`count_regions_2d`, which counts them
        without the formula).
    """
    L = _lines(lines)
    for i, (a1, b1, c1) in enumerate(L):
        for k, (a2, b2, c2) in enumerate(L[i + 1 :], start=i + 1):
            if a1 * b2 == a2 * b1 and a1 * c2 == a2 * c1 and b1 * c2 == b2 * c1:
                raise ValueError(
                    f"lines must be distinct, but lines[{i}] and lines[{k}] coincide"
                )
    return _zaslavsky_regions_2d(L)


def _zaslavsky_regions_2d(L: list[tuple[Fraction, Fraction, Fraction]]) -> int:
    """The check-free core of :func:`zaslavsky_regions_2d`: ``L`` holds distinct lines
    ``(a, b, c)`` as exact fractions."""
    # crossing point -> its lines
    through: dict[tuple[Fraction, Fraction], set[int]] = {}
    for i, (a1, b1, c1) in enumerate(L):
        for k, (a2, b2, c2) in enumerate(L[i + 1 :], start=i + 1):
            det = a1 * b2 - a2 * b1
            if det != 0:
                p = ((b1 * c2 - b2 * c1) / det, (c1 * a2 - c2 * a1) / det)
                through.setdefault(p, set()).update((i, k))
    return 1 + len(L) + sum(len(ids) - 1 for ids in through.values())


def count_regions_2d(lines: Sequence[Sequence[Number]]) -> int:
    """Exact number of regions of ``R^2`` minus the lines (see
    :func:`region_sign_vectors_2d`).

    Args:
        lines: ``m`` triples ``(a, b, c)``.

    Returns:
        Number of connected regions, ``<= general_position_regions(m, 2)``.
    """
    return len(region_sign_vectors_2d(lines))


def montufar_lower_bound(m: int, n: int, depth: int) -> int:
    """Montufar et al. (2014): regions of a deep ReLU net with ``depth`` layers of width
    ``m >= n``.

    ``prod_{l=1}^{depth-1} floor(m/n)^n * sum_{j=0}^{n} C(m, j)`` linear regions are
    attainable.

    Args:
        m: width of every hidden layer, ``m >= n``.
        n: input dimension, ``n >= 1``.
        depth: number of hidden layers ``L >= 1``.

    Returns:
        The lower bound on the maximal number of linear regions.
    """
    n = check_int(n, "n", min_value=1)
    m = check_int(m, "m", min_value=n)
    depth = check_int(depth, "depth", min_value=1)
    return (m // n) ** (n * (depth - 1)) * general_position_regions(m, n)
