"""ReLU networks and linear regions (Section 2.5).

Exact region counts for arrangements of lines in the plane (rational arithmetic, no
sampling); the maximal count of ``m`` hyperplanes in general position (Schlaefli; Buck
1943) and Zaslavsky's (1975) count through the characteristic polynomial; Montufar et
al.'s (2014) lower bound for deep networks; exact piecewise-linear bookkeeping for ReLU
networks on an interval (tent maps, Telgarsky 2016); and piecewise-linear interpolation
by ReLUs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import torch

from flt_lib._validate import check_int, check_tensor

__all__ = [
    "activation_pattern",
    "count_linear_pieces",
    "count_regions_2d",
    "eval_relu_sum",
    "general_position_regions",
    "in_general_position_2d",
    "montufar_1d_params",
    "montufar_lower_bound",
    "region_sign_vectors_2d",
    "relu_interpolant",
    "relu_net_1d",
    "sawtooth_params",
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


def relu_net_1d(
    weights: Sequence[Sequence[Sequence[Number]]],
    biases: Sequence[Sequence[Number]],
    lo: Number,
    hi: Number,
) -> tuple[list[Fraction], list[Fraction]]:
    """Exact knots and values of a scalar ReLU network ``R -> R`` on ``[lo, hi]``.

    Layers ``h <- ReLU(W h + b)`` for all but the last (affine, output) layer. Each
    hidden pre-activation is piecewise linear on the current knots; ReLU adds a knot at
    every sign change, found exactly in rational arithmetic.

    Args:
        weights: list of matrices, layer ``l`` of shape (m_l, m_{l-1}) with ``m_0 = 1``
            and one output row in the last layer.
        biases: list of vectors, layer ``l`` of length m_l.
        lo: left end of the interval.
        hi: right end, ``hi > lo``.

    Returns: ``(knots, values)``: sorted knots including ``lo`` and ``hi``, and the
        output there; the network is linear between consecutive knots.
    """
    if len(weights) != len(biases) or len(weights) < 1:
        raise ValueError(
            "weights and biases must be non-empty lists of equal length, got "
            f"{len(weights)} and {len(biases)}"
        )
    lo, hi = Fraction(lo), Fraction(hi)
    if not hi > lo:
        raise ValueError(f"hi must be > lo, got lo={lo}, hi={hi}")
    knots = [lo, hi]
    h = [[lo, hi]]  # one row per unit: values at the knots
    for l, (W, b) in enumerate(zip(weights, biases)):
        W = [[Fraction(v) for v in row] for row in W]
        b = [Fraction(v) for v in b]
        if len(W) != len(b) or any(len(row) != len(h) for row in W):
            raise ValueError(
                f"layer {l}: weights must have shape ({len(b)}, {len(h)}) to match, "
                "got "
                f"{len(W)} rows of lengths {sorted({len(r) for r in W})}"
            )
        pre = [
            [sum(w * hj[k] for w, hj in zip(row, h)) + bi for k in range(len(knots))]
            for row, bi in zip(W, b)
        ]
        if l == len(weights) - 1:
            if len(pre) != 1:
                raise ValueError(f"the last layer must have one output, got {len(pre)}")
            return knots, pre[0]
        new = set()
        for row in pre:
            for k in range(len(knots) - 1):
                u, v = row[k], row[k + 1]
                if (u < 0 < v) or (v < 0 < u):
                    new.add(knots[k] + (knots[k + 1] - knots[k]) * u / (u - v))
        if new:
            merged = sorted(set(knots) | new)
            pre = [_interp(knots, row, merged) for row in pre]
            knots = merged
        h = [[max(v, Fraction(0)) for v in row] for row in pre]
    raise AssertionError("unreachable")


def _interp(
    knots: list[Fraction], vals: list[Fraction], at: list[Fraction]
) -> list[Fraction]:
    out, k = [], 0
    for t in at:
        while k < len(knots) - 2 and t > knots[k + 1]:
            k += 1
        x0, x1, y0, y1 = knots[k], knots[k + 1], vals[k], vals[k + 1]
        out.append(y0 + (y1 - y0) * (t - x0) / (x1 - x0))
    return out


def count_linear_pieces(knots: Sequence[Number], values: Sequence[Number]) -> int:
    """Number of maximal intervals on which a piecewise-linear function is affine.

    Args:
        knots: sorted breakpoints, length ``K >= 2``.
        values: function values at the knots, length ``K``.

    Returns: ``1 +`` the number of interior knots where the slope changes (exact for
        Fractions).
    """
    if len(knots) != len(values) or len(knots) < 2:
        raise ValueError(
            f"knots and values must have the same length >= 2, got {len(knots)} and "
            f"{len(values)}"
        )
    slopes = [
        (values[k + 1] - values[k]) / (knots[k + 1] - knots[k])
        for k in range(len(knots) - 1)
    ]
    return 1 + sum(s != t for s, t in zip(slopes, slopes[1:]))


def sawtooth_params(
    depth: int,
) -> tuple[list[list[list[Fraction]]], list[list[Fraction]]]:
    """Weights of the ``depth``-fold composed tent map ``T(x) = 2 ReLU(x) - 4 ReLU(x -
    1/2)``.

    Each hidden layer has width 2; the outer combination ``(2, -4)`` of one tent is
    folded into the next layer's weights. The network computes ``T o ... o T``
    (Telgarsky, 2016), which on ``[0, 1]`` has exactly ``2^depth`` linear pieces.

    Args:
        depth: number of tent maps ``L >= 1``.

    Returns:
        ``(weights, biases)`` for :func:`relu_net_1d`.
    """
    depth = check_int(depth, "depth", min_value=1)
    half = Fraction(1, 2)
    weights = [[[Fraction(1)], [Fraction(1)]]]
    biases = [[Fraction(0), -half]]
    for _ in range(depth - 1):
        weights.append([[Fraction(2), Fraction(-4)], [Fraction(2), Fraction(-4)]])
        biases.append([Fraction(0), -half])
    weights.append([[Fraction(2), Fraction(-4)]])
    biases.append([Fraction(0)])
    return weights, biases


def montufar_1d_params(
    depth: int,
) -> tuple[list[list[list[Fraction]]], list[list[Fraction]]]:
    """Montufar et al.'s construction for input dimension 1 and width 2, as exact
    weights.

    The first ``depth - 1`` hidden layers fold ``[0, 1]`` with tent maps (as in
    :func:`sawtooth_params`), so ``u = T^(depth-1)(x)`` sweeps ``[0, 1]``
    ``2^(depth-1)`` times. The last hidden layer cuts the folded coordinate at ``1/3``
    and ``2/3`` with the units ``ReLU(u - 1/3)`` and ``ReLU(2/3 - u)``, and the output
    ``ReLU(u - 1/3) + 2 ReLU(2/3 - u)`` has slopes ``-2, -1, 1`` (all non-zero and
    distinct), so no pieces merge at the folds. On ``[0, 1]`` the network has ``3 *
    2^(depth-1)`` linear pieces, which equals :func:`montufar_lower_bound` ``(2, 1,
    depth)``.

    Args:
        depth: number of hidden layers ``L >= 1``.

    Returns:
        ``(weights, biases)`` for :func:`relu_net_1d`.
    """
    depth = check_int(depth, "depth", min_value=1)
    half, third = Fraction(1, 2), Fraction(1, 3)
    if depth == 1:
        return [[[Fraction(1)], [Fraction(-1)]], [[Fraction(1), Fraction(2)]]], [
            [-third, 2 * third],
            [Fraction(0)],
        ]
    weights, biases = sawtooth_params(depth - 1)
    weights, biases = weights[:-1], biases[:-1]  # drop the affine read-out of T^(L-1)
    # u - 1/3 and 2/3 - u
    weights.append([[Fraction(2), Fraction(-4)], [Fraction(-2), Fraction(4)]])
    biases.append([-third, 2 * third])
    weights.append([[Fraction(1), Fraction(2)]])
    biases.append([Fraction(0)])
    return weights, biases


def relu_interpolant(
    knots: torch.Tensor, values: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, float]:
    """Write the piecewise-linear interpolant of ``(knots, values)`` as ``m - 1`` ReLUs.

    ``g(x) = values[0] + sum_{i=1}^{m-1} c_i ReLU(x - knots[i-1])`` with ``c_1 = s_1``
    and ``c_i = s_i - s_{i-1}``, where ``s_i`` is the slope on the ``i``-th interval.
    Exact on ``[knots[0], knots[-1]]``.

    Args:
        knots: strictly increasing, shape (m,), ``m >= 2``.
        values: shape (m,).

    Returns:
        ``(thresholds, coefs, offset)``: shapes (m-1,), (m-1,) and a float.
    """
    check_tensor(knots, "knots", ndim=1, floating=True, shape_doc="(m,)")
    check_tensor(
        values, "values", shape=(knots.shape[0],), floating=True, shape_doc="(m,)"
    )
    if knots.shape[0] < 2:
        raise ValueError(f"knots must have at least 2 entries, got {knots.shape[0]}")
    if not bool((knots[1:] > knots[:-1]).all()):
        raise ValueError("knots must be strictly increasing")
    slopes = (values[1:] - values[:-1]) / (knots[1:] - knots[:-1])  # (m-1,)
    coefs = torch.cat([slopes[:1], slopes[1:] - slopes[:-1]])  # (m-1,)
    return knots[:-1], coefs, float(values[0])


def eval_relu_sum(
    x: torch.Tensor, thresholds: torch.Tensor, coefs: torch.Tensor, offset: float
) -> torch.Tensor:
    """Evaluate ``offset + sum_i coefs_i ReLU(x - thresholds_i)``.

    Args:
        x: points, shape (n,).
        thresholds: shape (k,).
        coefs: shape (k,).
        offset: output bias.

    Returns:
        Values, shape (n,).
    """
    check_tensor(x, "x", ndim=1, shape_doc="(n,)")
    check_tensor(thresholds, "thresholds", ndim=1, shape_doc="(k,)")
    check_tensor(coefs, "coefs", shape=(thresholds.shape[0],), shape_doc="(k,)")
    return offset + torch.relu(x[:, None] - thresholds) @ coefs  # (n,)
