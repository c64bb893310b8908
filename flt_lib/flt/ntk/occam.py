"""The uniform-convergence baseline: a quantised network class and the Occam
(finite-class) bound."""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_int, check_real, check_tensor

__all__ = ["occam_bound", "quantise"]


def quantise(t: torch.Tensor, *, bits: int, radius: float) -> torch.Tensor:
    """Round every entry to the nearest of ``2^bits`` equally spaced levels in
    ``[-radius, radius]``.

    The grid is fixed before any data is seen, so a quantised network belongs to a
    finite class of at most ``2^(bits * P)`` functions (``P`` numbers quantised).

    Args:
        t: tensor to quantise, any shape.
        bits: bits per entry, ``1 <= bits <= 24``.
        radius: half-width of the grid, ``> 0``; entries outside are clipped.

    Returns:
        Quantised tensor, same shape, dtype and device.
    """
    check_tensor(t, "t", floating=True)
    bits = check_int(bits, "bits", min_value=1, max_value=24)
    radius = check_real(radius, "radius", min_value=0.0, strict_min=True)
    step = 2 * radius / (2**bits - 1)
    return ((t.clamp(-radius, radius) + radius) / step).round() * step - radius


def occam_bound(
    n_params: int, *, bits: int, n: int, delta: float, loss_range: float = 1.0
) -> float:
    """Uniform-convergence (Occam / finite-class) bound on the generalisation gap
    (eq-flt-occam).

    For a class of at most ``2^(bits * n_params)`` functions and a loss with values in
    ``[0, loss_range]``, Hoeffding's inequality and a union bound give, with probability
    at least ``1 - delta`` over ``n`` i.i.d. samples, simultaneously for every function
    in the class, ``risk <= empirical risk + loss_range * sqrt((bits * n_params * ln 2 +
    ln(1/delta)) / (2 n))``.

    Args:
        n_params: number of quantised parameters ``P >= 1``.
        bits: bits per parameter.
        n: number of training samples.
        delta: failure probability in (0, 1).
        loss_range: the loss takes values in ``[0, loss_range]``.

    Returns:
        The gap term (a float).
    """
    n_params = check_int(n_params, "n_params", min_value=1)
    bits = check_int(bits, "bits", min_value=1)
    n = check_int(n, "n", min_value=1)
    delta = check_real(delta, "delta", min_value=0.0, max_value=1.0, strict_min=True)
    if delta >= 1.0:
        raise ValueError(f"delta must be < 1, got {delta}")
    loss_range = check_real(loss_range, "loss_range", min_value=0.0, strict_min=True)
    return _occam_bound(n_params, bits, n, delta, loss_range)


def _occam_bound(n_params, bits, n, delta, loss_range):
    return loss_range * math.sqrt(
        (bits * n_params * math.log(2) + math.log(1 / delta)) / (2 * n)
    )
