"""Sigmoid networks and universal approximation (Section 2.4).

A one-hidden-layer network with activation ``phi`` is a linear combination of ridge
units, ``g(x) = sum_j v_j phi(w_j . x + b_j)``. This module builds such units, fits the
outer weights by least squares, and runs the Maurey (random m-term average)
approximation behind Barron's theorem {cite}`barron1993universal` on a target with a
closed form.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "best_polynomial_rmse",
    "fit_ridge_network",
    "gaussian_barron_constant",
    "gaussian_cdf",
    "least_squares_outer",
    "maurey_average",
    "probit_mixture_target",
    "random_ridge_units_1d",
    "ridge_features",
    "sample_probit_mixture_units",
    "tanh_from_sigmoid",
]


def tanh_from_sigmoid(z: torch.Tensor) -> torch.Tensor:
    """Hyperbolic tangent computed through the logistic sigmoid, ``2 sigma(2z) - 1``.

    Args:
        z: any tensor.

    Returns:
        Tensor of the same shape as ``z``.
    """
    check_tensor(z, "z", floating=True)
    return 2.0 * torch.sigmoid(2.0 * z) - 1.0


def gaussian_cdf(z: torch.Tensor) -> torch.Tensor:
    """The standard normal CDF ``Phi(z)``, a sigmoidal activation (used for Barron's
    rate).

    Args:
        z: any floating tensor.

    Returns:
        Tensor of the same shape as ``z``.
    """
    check_tensor(z, "z", floating=True)
    return 0.5 * (1.0 + torch.erf(z / math.sqrt(2.0)))


def ridge_features(
    X: torch.Tensor,
    W: torch.Tensor,
    b: torch.Tensor,
    *,
    activation: Callable[[torch.Tensor], torch.Tensor] = torch.sigmoid,
) -> torch.Tensor:
    """Hidden-layer outputs ``phi(X W^T + b)``: one column per ridge unit.

    Args:
        X: inputs, shape (n, d).
        W: inner weights, shape (m, d).
        b: biases, shape (m,).
        activation: elementwise function ``phi``.

    Returns:
        Features, shape (n, m).
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(W, "W", shape=(None, X.shape[1]), floating=True, shape_doc="(m, d)")
    check_tensor(b, "b", shape=(W.shape[0],), floating=True, shape_doc="(m,)")
    if not callable(activation):
        raise TypeError(f"activation must be callable, got {type(activation).__name__}")
    return _ridge_features(X, W, b, activation=activation)


def _ridge_features(
    X: torch.Tensor,
    W: torch.Tensor,
    b: torch.Tensor,
    *,
    activation: Callable[[torch.Tensor], torch.Tensor] = torch.sigmoid,
) -> torch.Tensor:
    """The check-free core of :func:`ridge_features` (arguments already checked)."""
    return activation(X @ W.T + b)  # (n, m)


def random_ridge_units_1d(
    m: int,
    *,
    steepness: float,
    generator: torch.Generator,
    lo: float = -1.0,
    hi: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Random 1-D units ``phi(w (x - c))`` with centres ``c ~ U[lo, hi]`` and ``|w| =
    steepness``.

    Args:
        m: number of units, ``m >= 1``.
        steepness: absolute value of the inner weight, > 0.
        generator: CPU generator for the centres and signs.
        lo: left end of the interval of centres.
        hi: right end, ``hi > lo``.

    Returns:
        ``(W, b)`` with shapes (m, 1) and (m,), float64, on the CPU.
    """
    m = check_int(m, "m", min_value=1)
    steepness = check_real(steepness, "steepness", min_value=0.0, strict_min=True)
    check_generator(generator)
    lo = check_real(lo, "lo")
    hi = check_real(hi, "hi", min_value=lo, strict_min=True)
    c = lo + (hi - lo) * torch.rand(m, generator=generator, dtype=torch.float64)  # (m,)
    sign = torch.where(torch.rand(m, generator=generator) < 0.5, -1.0, 1.0).double()
    w = steepness * sign  # (m,)
    return w[:, None], -w * c


def least_squares_outer(
    features: torch.Tensor, y: torch.Tensor, *, ridge: float = 1e-10
) -> torch.Tensor:
    """Outer weights (with a bias) minimising ``||[F, 1] v - y||^2 + ridge * ||v||^2``.

    The ridge term is solved as an augmented least-squares problem, which is well posed
    on every device even when the features are nearly collinear.

    Args:
        features: hidden-layer outputs, shape (n, m).
        y: targets, shape (n,).
        ridge: Tikhonov parameter, >= 0, relative to ``n``.

    Returns:
        Outer weights, shape (m + 1,); the last entry is the output bias.
    """
    check_tensor(features, "features", ndim=2, floating=True, shape_doc="(n, m)")
    check_tensor(y, "y", shape=(features.shape[0],), floating=True, shape_doc="(n,)")
    ridge = check_real(ridge, "ridge", min_value=0.0)
    n, m = features.shape
    A = torch.cat(
        [features, torch.ones(n, 1, dtype=features.dtype, device=features.device)], 1
    )
    if ridge > 0:
        reg = math.sqrt(ridge * n) * torch.eye(m + 1, dtype=A.dtype, device=A.device)
        A = torch.cat([A, reg], 0)  # (n + m + 1, m + 1)
        y = torch.cat([y, torch.zeros(m + 1, dtype=y.dtype, device=y.device)])
    return torch.linalg.lstsq(A, y[:, None]).solution[:, 0]


def fit_ridge_network(
    X: torch.Tensor,
    y: torch.Tensor,
    W: torch.Tensor,
    b: torch.Tensor,
    *,
    activation: Callable[[torch.Tensor], torch.Tensor] = torch.sigmoid,
    ridge: float = 1e-10,
) -> torch.Tensor:
    """Fit the outer layer of ``g(x) = sum_j v_j phi(w_j . x + b_j) + v_0`` and return
    ``g(X)``.

    Args:
        X: inputs, shape (n, d).
        y: targets, shape (n,).
        W: fixed inner weights, shape (m, d).
        b: fixed biases, shape (m,).
        activation: elementwise ``phi``.
        ridge: see :func:`least_squares_outer`.

    Returns:
        Fitted values ``g(X)``, shape (n,).
    """
    F = ridge_features(X, W, b, activation=activation)  # (n, m)
    v = least_squares_outer(F, y, ridge=ridge)
    return F @ v[:-1] + v[-1]


def best_polynomial_rmse(x: torch.Tensor, y: torch.Tensor, degree: int) -> float:
    """RMS error of the least-squares polynomial of a given degree on the points ``(x,
    y)``.

    Uses a Legendre basis on the rescaled interval, so it is an independent,
    well-conditioned oracle for the error floor of a polynomial activation.

    Args:
        x: 1-D inputs, shape (n,).
        y: targets, shape (n,).
        degree: polynomial degree, ``0 <= degree < n``.

    Returns:
        ``sqrt(mean((p(x) - y)^2))`` for the best polynomial ``p``.
    """
    check_tensor(x, "x", ndim=1, floating=True, shape_doc="(n,)")
    check_tensor(y, "y", shape=(x.shape[0],), floating=True, shape_doc="(n,)")
    degree = check_int(degree, "degree", min_value=0, max_value=x.shape[0] - 1)
    t = (2 * x - (x.max() + x.min())) / (x.max() - x.min())  # in [-1, 1]
    cols = [torch.ones_like(t), t]
    for k in range(1, degree):  # Legendre recursion
        cols.append(((2 * k + 1) * t * cols[k] - k * cols[k - 1]) / (k + 1))
    P = torch.stack(cols[: degree + 1], 1)  # (n, degree + 1)
    coef = torch.linalg.lstsq(P, y[:, None]).solution
    return float(((P @ coef)[:, 0] - y).pow(2).mean().sqrt())


def probit_mixture_target(
    X: torch.Tensor, U: torch.Tensor, beta: torch.Tensor, *, s: float, tau: float
) -> torch.Tensor:
    """Closed form of ``f(x) = E[Phi(w . x + b)]`` for a Gaussian-mixture law of ``(w,
    b)``.

    Component ``k`` (probability ``1/K``) has ``w ~ N(U_k, (s^2/d) I)`` and ``b ~
    N(beta_k, tau^2)``; then ``w . x + b ~ N(U_k . x + beta_k, s^2 |x|^2 / d + tau^2)``
    and ``E[Phi(Z)] = Phi(mean / sqrt(1 + var))`` for Gaussian ``Z``.

    Args:
        X: inputs, shape (n, d).
        U: component means of ``w``, shape (K, d).
        beta: component means of ``b``, shape (K,).
        s: spread of ``w`` (total over all d coordinates), >= 0.
        tau: spread of ``b``, >= 0.

    Returns:
        ``f(X)``, shape (n,).
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(U, "U", shape=(None, X.shape[1]), floating=True, shape_doc="(K, d)")
    check_tensor(beta, "beta", shape=(U.shape[0],), floating=True, shape_doc="(K,)")
    s = check_real(s, "s", min_value=0.0)
    tau = check_real(tau, "tau", min_value=0.0)
    return _probit_mixture_target(X, U, beta, s=s, tau=tau)


def _probit_mixture_target(
    X: torch.Tensor, U: torch.Tensor, beta: torch.Tensor, *, s: float, tau: float
) -> torch.Tensor:
    """The check-free core of :func:`probit_mixture_target`."""
    d = X.shape[1]
    var = s**2 * X.pow(2).sum(1, keepdim=True) / d + tau**2  # (n, 1)
    return gaussian_cdf((X @ U.T + beta) / torch.sqrt(1.0 + var)).mean(1)


def sample_probit_mixture_units(
    m: int,
    U: torch.Tensor,
    beta: torch.Tensor,
    *,
    s: float,
    tau: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``m`` i.i.d. units ``(w_j, b_j)`` from the law in
    :func:`probit_mixture_target`.

    Args:
        m: number of units, ``m >= 1``.
        U: component means of ``w``, shape (K, d).
        beta: component means of ``b``, shape (K,).
        s: spread of ``w``, >= 0.
        tau: spread of ``b``, >= 0.
        generator: CPU generator.

    Returns:
        ``(W, b)`` with shapes (m, d) and (m,), on the CPU, dtype of ``U``.
    """
    m = check_int(m, "m", min_value=1)
    check_tensor(U, "U", ndim=2, floating=True, shape_doc="(K, d)")
    check_tensor(beta, "beta", shape=(U.shape[0],), floating=True, shape_doc="(K,)")
    s = check_real(s, "s", min_value=0.0)
    tau = check_real(tau, "tau", min_value=0.0)
    check_generator(generator)
    K, d = U.shape
    k = torch.randint(0, K, (m,), generator=generator)
    W = U.cpu()[k] + s / math.sqrt(d) * torch.randn(
        m, d, generator=generator, dtype=U.dtype
    )
    b = beta.cpu()[k] + tau * torch.randn(m, generator=generator, dtype=U.dtype)
    return W, b


def maurey_average(
    X: torch.Tensor,
    W: torch.Tensor,
    b: torch.Tensor,
    *,
    activation: Callable[[torch.Tensor], torch.Tensor] = gaussian_cdf,
) -> torch.Tensor:
    """The m-term average ``g_m(x) = (1/m) sum_j phi(w_j . x + b_j)`` (Maurey's
    construction).

    If ``(w_j, b_j)`` are i.i.d. from a law ``P`` with ``f = E_P[phi(w . x + b)]`` and
    ``|phi| <= 1``, then ``E ||f - g_m||^2_mu <= 1/m`` in any dimension (Barron, 1993,
    Lemma 1).

    Args:
        X: inputs, shape (n, d).
        W: inner weights, shape (m, d).
        b: biases, shape (m,).
        activation: bounded ``phi``.

    Returns:
        ``g_m(X)``, shape (n,).
    """
    return ridge_features(X, W, b, activation=activation).mean(1)


def gaussian_barron_constant(d: int) -> float:
    """Barron constant ``C_f = int |omega| |F(omega)| d omega`` of ``f(x) = exp(-|x|^2 /
    2)``.

    With ``f(x) = int exp(i omega . x) F(omega) d omega`` the spectral density is the
    ``N(0, I_d)`` density, so ``C_f = E|omega| = sqrt(2) Gamma((d+1)/2) / Gamma(d/2)``.

    Args:
        d: input dimension, ``d >= 1``.

    Returns:
        ``C_f`` (grows like ``sqrt(d)``).
    """
    d = check_int(d, "d", min_value=1)
    return math.sqrt(2.0) * math.exp(math.lgamma((d + 1) / 2) - math.lgamma(d / 2))
