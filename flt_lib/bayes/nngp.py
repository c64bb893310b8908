"""Infinitely wide ReLU networks are Gaussian processes: the NNGP kernel (Appendix A.6).

The network (Lee et al., 2018, and Matthews et al., 2018, in the standard
parameterisation): ``L`` hidden layers of width ``m``, ``z^1 = W^0 x + b^0`` with
``W^0_ij ~ N(0, weight_var / d)``, ``z^{l+1} = W^l relu(z^l) + b^l`` with
``W^l_ij ~ N(0, weight_var / m)``, all biases ``N(0, bias_var)``, and a scalar output
``z^{L+1}``. Given the hidden layers, the output is Gaussian with covariance

    K_m(x, x') = bias_var + weight_var (1/m) sum_r relu(z^L_r(x)) relu(z^L_r(x')),

(eq-bayes-empirical-nngp)

and as ``m -> inf`` this tends to the deterministic recursion (eq-bayes-nngp-recursion)

    K^0(x, x') = bias_var + weight_var x^T x' / d,
    K^l(x, x') = bias_var + (weight_var / 2) sqrt(K^{l-1}(x,x) K^{l-1}(x',x'))
                 kappa_1(rho^{l-1}),

with ``rho`` the correlation ``K(x,x') / sqrt(K(x,x) K(x',x'))`` and ``kappa_1`` the
arc-cosine kernel of degree 1 (Cho & Saul, 2009). :func:`two_layer_nngp` is the same
limit for the network of Chapter 7 (:func:`flt_lib.flt.ntk.two_layer`), the companion of
its NTK :func:`flt_lib.flt.ntk.arccos_ntk`.
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "arccos0",
    "arccos1",
    "relu_nngp",
    "random_relu_features",
    "empirical_nngp",
    "two_layer_nngp",
]


def arccos0(u: torch.Tensor) -> torch.Tensor:
    """Arc-cosine kernel of degree 0,
    ``kappa_0(u) = (pi - arccos u) / pi = 2 E[1[g>0] 1[g'>0]]``.

    Args:
        u: correlations, any shape; clamped to [-1, 1].

    Returns:
        ``kappa_0(u)``, same shape.
    """
    u = check_tensor(u, "u", floating=True).clamp(-1.0, 1.0)
    return (math.pi - torch.arccos(u)) / math.pi


def arccos1(u: torch.Tensor) -> torch.Tensor:
    """Arc-cosine kernel of degree 1 (eq-bayes-arccos1).

    ``kappa_1(u) = (sqrt(1 - u^2) + u (pi - arccos u)) / pi``.

    For a standard Gaussian pair ``(g, g')`` with correlation ``u``,
    ``E[relu(g) relu(g')] = kappa_1(u) / 2`` (Cho & Saul, 2009).

    Args:
        u: correlations, any shape; clamped to [-1, 1].

    Returns:
        ``kappa_1(u)``, same shape; ``kappa_1(1) = 1``.
    """
    u = check_tensor(u, "u", floating=True).clamp(-1.0, 1.0)
    return (torch.sqrt(1 - u**2) + u * (math.pi - torch.arccos(u))) / math.pi


def _check_net(
    depth: object, weight_var: object, bias_var: object
) -> tuple[int, float, float]:
    depth = check_int(depth, "depth", min_value=1)
    weight_var = check_real(weight_var, "weight_var", min_value=0.0, strict_min=True)
    bias_var = check_real(bias_var, "bias_var", min_value=0.0)
    return depth, weight_var, bias_var


def relu_nngp(
    X1: torch.Tensor,
    X2: torch.Tensor,
    *,
    depth: int,
    weight_var: float = 2.0,
    bias_var: float = 0.0,
) -> torch.Tensor:
    """NNGP kernel of a deep ReLU network by the arc-cosine recursion
    (eq-bayes-nngp-recursion).

    Args:
        X1: inputs, shape (n1, d), no zero rows when ``bias_var = 0``.
        X2: inputs, shape (n2, d).
        depth: number of hidden layers ``L >= 1``.
        weight_var: ``sigma_w^2 > 0`` (2 is He's initialisation).
        bias_var: ``sigma_b^2 >= 0``.

    Returns:
        The output covariance ``K^L(X1, X2)``, shape (n1, n2).
    """
    X1 = check_tensor(X1, "X1", ndim=2, floating=True, shape_doc="(n1, d)")
    d = X1.shape[1]
    X2 = check_tensor(X2, "X2", shape=(None, d), floating=True, shape_doc=f"(n2, {d})")
    depth, sw, sb = _check_net(depth, weight_var, bias_var)
    if any(bool((sb + sw * (X**2).sum(1) / d <= 0).any()) for X in (X1, X2)):
        raise ValueError("X1 and X2 must have no zero rows when bias_var = 0")
    return _relu_nngp(X1, X2, depth, sw, sb)


def _relu_nngp(X1, X2, depth, sw, sb):
    d = X1.shape[1]
    k12 = sb + sw * X1 @ X2.T / d                                       # (n1, n2)
    k11 = sb + sw * (X1**2).sum(1) / d                                  # (n1,)
    k22 = sb + sw * (X2**2).sum(1) / d                                  # (n2,)
    for _ in range(depth):
        norm = torch.sqrt(k11[:, None] * k22[None, :])
        k12 = sb + 0.5 * sw * norm * arccos1(k12 / norm)
        k11, k22 = sb + 0.5 * sw * k11, sb + 0.5 * sw * k22             # kappa_1(1) = 1
    return k12


def random_relu_features(
    X: torch.Tensor, *, width: int, depth: int, generator: torch.Generator,
    weight_var: float = 2.0, bias_var: float = 0.0,
) -> torch.Tensor:
    """Last hidden layer ``relu(z^L)`` of one randomly initialised ReLU network
    (module docstring).

    Weights are drawn on the CPU in the dtype of ``X``, then moved to its device.

    Args:
        X: inputs, shape (n, d).
        width: hidden width ``m >= 1``.
        depth: number of hidden layers ``L >= 1``.
        generator: CPU generator.
        weight_var: ``sigma_w^2 > 0``.
        bias_var: ``sigma_b^2 >= 0``.

    Returns:
        Post-activations, shape (n, m).
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    m = check_int(width, "width", min_value=1)
    depth, sw, sb = _check_net(depth, weight_var, bias_var)
    check_generator(generator)
    h, fan_in = X, X.shape[1]
    for _ in range(depth):
        W = math.sqrt(sw / fan_in) * torch.randn(
            fan_in, m, generator=generator, dtype=X.dtype
        )
        b = math.sqrt(sb) * torch.randn(m, generator=generator, dtype=X.dtype)
        h = torch.relu(h @ W.to(X.device) + b.to(X.device))               # (n, m)
        fan_in = m
    return h


def empirical_nngp(
    X: torch.Tensor, *, width: int, depth: int, generator: torch.Generator,
    weight_var: float = 2.0, bias_var: float = 0.0,
) -> torch.Tensor:
    """Output covariance of one random network given its hidden layers
    (eq-bayes-empirical-nngp).

    Args:
        X: inputs, shape (n, d).
        width: hidden width ``m``.
        depth: number of hidden layers ``L``.
        generator: CPU generator.
        weight_var: ``sigma_w^2 > 0``.
        bias_var: ``sigma_b^2 >= 0``.

    Returns:
        ``bias_var + weight_var * Phi Phi^T / m``, shape (n, n).
    """
    phi = random_relu_features(X, width=width, depth=depth, generator=generator,
                               weight_var=weight_var, bias_var=bias_var)   # (n, m)
    return bias_var + weight_var * phi @ phi.T / width


def two_layer_nngp(X1: torch.Tensor, X2: torch.Tensor) -> torch.Tensor:
    """NNGP of Chapter 7's network ``m^{-1/2} a^T relu(W x)``, ``W, a ~ N(0, 1)``.

    The kernel is ``|x| |x'| kappa_1(u) / 2`` with ``u`` the cosine of the angle of
    ``x, x'``.

    It is the covariance of the network's output at initialisation as ``m -> inf``; the
    NTK of the same network, :func:`flt_lib.flt.ntk.arccos_ntk`, adds the first-layer
    part ``x^T x' kappa_0(u) / 2``.

    Args:
        X1: inputs, shape (n1, d), no zero rows.
        X2: inputs, shape (n2, d), no zero rows.

    Returns:
        The kernel matrix, shape (n1, n2).
    """
    X1 = check_tensor(X1, "X1", ndim=2, floating=True, shape_doc="(n1, d)")
    d = X1.shape[1]
    X2 = check_tensor(X2, "X2", shape=(None, d), floating=True, shape_doc=f"(n2, {d})")
    if any(bool((X.norm(dim=1) == 0).any()) for X in (X1, X2)):
        raise ValueError("X1 and X2 must have no zero rows (the cosine is undefined)")
    return _two_layer_nngp(X1, X2)


def _two_layer_nngp(X1, X2):
    n1, n2 = X1.norm(dim=1), X2.norm(dim=1)
    norm = n1[:, None] * n2[None, :]
    return 0.5 * norm * arccos1(X1 @ X2.T / norm)
