"""Scalar ReLU networks on an interval as exact piecewise-linear functions.

Exact knots and values of a network R -> R (rational arithmetic), the number of linear
pieces, the composed tent maps of Telgarsky (2016), Montufar et al.'s construction for
input dimension 1, and piecewise-linear interpolation by a sum of ReLUs. Part of
:mod:`flt_lib.feedforward.regions`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import torch

from flt_lib._validate import check_int, check_tensor
from flt_lib.feedforward.regions.arrangements import Number

__all__ = [
    "count_linear_pieces",
    "eval_relu_sum",
    "montufar_1d_params",
    "relu_interpolant",
    "relu_net_1d",
    "sawtooth_params",
]


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
    return _relu_interpolant(knots, values)


def _relu_interpolant(
    knots: torch.Tensor, values: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, float]:
    """The check-free core of :func:`relu_interpolant` (arguments already checked)."""
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
