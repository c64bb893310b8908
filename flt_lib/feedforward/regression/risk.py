"""Empirical, validation and expected risk of least squares on Gaussian data (Section
2.1).

The data model: ``x ~ N(0, I_d)`` and ``y = w*.x + s eps`` with ``eps ~ N(0, 1)``.
Everything about ordinary least squares is explicit there, so the measured
generalisation gap can be compared with its exact expectation.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.feedforward.regression.least_squares import least_squares_normal, mse_loss

__all__ = [
    "RiskCurves",
    "generalisation_gaps",
    "linear_gaussian_data",
    "linear_gaussian_risk",
    "ols_expected_gap",
]


def linear_gaussian_data(
    n: int,
    w_star: torch.Tensor,
    *,
    noise: float,
    generator: torch.Generator,
    scales: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Sample ``x ~ N(0, diag(scales)^2)`` and ``y = w*.x + noise * eps``, ``eps ~ N(0,
    1)``.

    Drawn on the CPU with ``generator`` (first ``X``, then ``eps``); move the result to
    a device afterwards with ``flt_lib.device.to_device``.

    Args:
        n: number of examples, ``n >= 1``.
        w_star: the true weights, shape (d,).
        noise: noise standard deviation ``s >= 0``.
        generator: a CPU ``torch.Generator``.
        scales: standard deviation of each input coordinate, shape (d,); default all
            ones, i.e. ``x ~ N(0, I_d)``.

    Returns:
        ``(X, y)`` with shapes (n, d) and (n,), in ``w_star``'s dtype, on the CPU.
    """
    n = check_int(n, "n", min_value=1)
    w_star = check_tensor(
        w_star, "w_star", ndim=1, floating=True, shape_doc="(d,)"
    ).cpu()
    noise = check_real(noise, "noise", min_value=0.0)
    generator = check_generator(generator)
    d = w_star.shape[0]
    X = torch.randn(n, d, generator=generator, dtype=w_star.dtype)  # (n, d)
    if scales is not None:
        scales = check_tensor(
            scales, "scales", shape=(d,), floating=True, shape_doc="(d,)"
        )
        X = X * scales.to(X)
    eps = torch.randn(n, generator=generator, dtype=w_star.dtype)  # (n,)
    return X, X @ w_star + noise * eps


def linear_gaussian_risk(
    w: torch.Tensor, w_star: torch.Tensor, *, noise: float
) -> float:
    """Exact expected halved squared loss of ``w`` under :func:`linear_gaussian_data`.

    With ``x ~ N(0, I)``: ``R(w) = E[(w.x - y)^2] / 2 = (||w - w*||^2 + s^2) / 2``.

    Args:
        w: weights, shape (d,).
        w_star: true weights, shape (d,).
        noise: noise standard deviation ``s >= 0``.

    Returns:
        The risk as a Python float.
    """
    w_star = check_tensor(w_star, "w_star", ndim=1, floating=True, shape_doc="(d,)")
    d = w_star.shape[0]
    w = check_tensor(w, "w", shape=(d,), floating=True, shape_doc=f"(d,) with d={d}")
    noise = check_real(noise, "noise", min_value=0.0)
    diff = (w - w_star.to(w.device)).double()
    return 0.5 * (float(diff @ diff) + noise**2)


@dataclass(frozen=True)
class RiskCurves:
    """What :func:`generalisation_gaps` returns: averages over the repeats, one per
    size."""

    n: torch.Tensor  # (k,) training sizes
    train: torch.Tensor  # (k,) mean empirical (training) risk of the fit
    val: torch.Tensor  # (k,) mean risk on the validation set
    true: torch.Tensor  # (k,) mean exact expected risk of the fit
    gap: torch.Tensor  # (k,) mean generalisation gap, true - train
    gap_se: torch.Tensor  # (k,) standard error of that mean over the repeats


def generalisation_gaps(
    ns: list[int],
    w_star: torch.Tensor,
    *,
    noise: float,
    n_val: int,
    repeats: int,
    generator: torch.Generator,
) -> RiskCurves:
    """Fit least squares at several sample sizes and compare empirical, validation and
    true risk.

    For each ``n`` in ``ns`` and each of ``repeats`` draws: fit ``w_hat`` by
    :func:`least_squares_normal` on ``n`` training points, then record the training
    (empirical) risk, the risk on ``n_val`` fresh validation points, and the exact risk
    from :func:`linear_gaussian_risk` (eq. ``eq-ff-risks``). Results are averaged over
    the repeats.

    Args:
        ns: training sizes, each ``> d``.
        w_star: true weights, shape (d,).
        noise: noise standard deviation.
        n_val: validation size, ``>= 1``.
        repeats: number of independent draws per size, ``>= 2``.
        generator: a CPU ``torch.Generator``.

    Returns:
        A :class:`RiskCurves` of float64 tensors of shape (len(ns),).
    """
    w_star = check_tensor(w_star, "w_star", ndim=1, floating=True, shape_doc="(d,)")
    d = w_star.shape[0]
    if not isinstance(ns, (list, tuple)) or not ns:
        raise TypeError(f"ns must be a non-empty list of ints, got {type(ns).__name__}")
    ns = [check_int(n, "ns[i]", min_value=d + 1) for n in ns]
    n_val = check_int(n_val, "n_val", min_value=1)
    repeats = check_int(repeats, "repeats", min_value=2)
    generator = check_generator(generator)
    risks = torch.zeros(3, len(ns), repeats, dtype=torch.float64)  # train, val, true
    for i, n in enumerate(ns):
        for k in range(repeats):
            X, y = linear_gaussian_data(n, w_star, noise=noise, generator=generator)
            Xv, yv = linear_gaussian_data(
                n_val, w_star, noise=noise, generator=generator
            )
            w_hat = least_squares_normal(X, y)
            risks[0, i, k] = float(mse_loss(X, y, w_hat))
            risks[1, i, k] = float(mse_loss(Xv, yv, w_hat))
            risks[2, i, k] = linear_gaussian_risk(w_hat, w_star, noise=noise)
    gaps = risks[2] - risks[0]  # (k, repeats)
    train, val, true = risks.mean(-1)
    return RiskCurves(
        n=torch.tensor(ns, dtype=torch.float64),
        train=train,
        val=val,
        true=true,
        gap=gaps.mean(-1),
        gap_se=gaps.std(-1) / repeats**0.5,
    )


def ols_expected_gap(n: int, d: int, *, noise: float) -> float:
    """Exact expected gap ``E[R(w_hat) - R_hat(w_hat)]`` for OLS with Gaussian inputs.

    With ``E[R_hat] = s^2 (n - d) / (2n)`` and ``E[R] = s^2 / 2 * (1 + d / (n - d -
    1))`` (valid for ``n > d + 1``), the gap is ``s^2 / 2 * (d / n + d / (n - d - 1))``,
    about ``s^2 d / n`` for large ``n``.

    Args:
        n: training size, ``n > d + 1``.
        d: input dimension, ``d >= 1``.
        noise: noise standard deviation ``s``.

    Returns:
        The expected gap as a float.
    """
    d = check_int(d, "d", min_value=1)
    n = check_int(n, "n", min_value=d + 2)
    noise = check_real(noise, "noise", min_value=0.0)
    return _ols_expected_gap(n, d, noise=noise)


def _ols_expected_gap(n: int, d: int, *, noise: float) -> float:
    """The check-free core of :func:`ols_expected_gap` (arguments already checked)."""
    return 0.5 * noise**2 * (d / n + d / (n - d - 1))
