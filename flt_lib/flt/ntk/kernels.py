"""Infinite-width kernels of ReLU networks, and regression with a fixed kernel.

- the arc-cosine NTK of the two-layer network (Jacot et al., 2018; Bietti & Mairal,
  2019);
- the depth-L recursion for the NTK of a deep ReLU network (Jacot et al., 2018, Theorem
  1; the ReLU expectations in closed form as in Bietti & Mairal, 2019);
- kernel (ridge) regression and gradient descent on a fixed-kernel (linearised) model.
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_int, check_real, check_tensor

__all__ = [
    "arccos_ntk",
    "kappa",
    "kappa0",
    "kappa1",
    "kernel_gd",
    "kernel_regression",
    "relu_ntk",
]


def kappa0(u: torch.Tensor) -> torch.Tensor:
    """Arc-cosine kernel of degree 0, ``kappa_0(u) = (pi - arccos u) / pi`` (u clamped
    to [-1, 1]).

    ``E[1[<w,x> > 0] 1[<w,x'> > 0]] = kappa_0(u) / 2`` for w ~ N(0, I) and u = cos(x,
    x').
    """
    check_tensor(u, "u", floating=True)
    return (math.pi - torch.arccos(u.clamp(-1.0, 1.0))) / math.pi


def kappa1(u: torch.Tensor) -> torch.Tensor:
    """Arc-cosine kernel of degree 1, ``kappa_1(u) = (u (pi - arccos u) + sqrt(1 - u^2))
    / pi``.

    ``E[relu(<w,x>) relu(<w,x'>)] = ||x|| ||x'|| kappa_1(u) / 2`` for w ~ N(0, I).
    """
    check_tensor(u, "u", floating=True)
    u = u.clamp(-1.0, 1.0)
    return (u * (math.pi - torch.arccos(u)) + torch.sqrt(1 - u**2)) / math.pi


def kappa(u: torch.Tensor) -> torch.Tensor:
    """Arc-cosine NTK profile ``kappa(u) = (2u(pi - arccos u) + sqrt(1 - u^2)) / pi``
    (eq-flt-arccos-ntk).

    It is ``kappa_1(u) + u kappa_0(u)`` (Bietti & Mairal, 2019).

    Args:
        u: cosines, any shape; values are clamped to [-1, 1].

    Returns:
        ``kappa(u)``, same shape.
    """
    check_tensor(u, "u", floating=True)
    u = u.clamp(-1.0, 1.0)
    return kappa1(u) + u * kappa0(u)


def _check_pair(
    X1: torch.Tensor, X2: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    check_tensor(X1, "X1", ndim=2, floating=True, shape_doc="(n1, d)")
    check_tensor(
        X2, "X2", shape=(None, X1.shape[1]), floating=True, shape_doc="(n2, d)"
    )
    n1, n2 = X1.norm(dim=1), X2.norm(dim=1)  # (n1,), (n2,)
    if (n1 == 0).any() or (n2 == 0).any():
        raise ValueError("X1 and X2 must have no zero rows (the cosine is undefined)")
    return n1, n2


def arccos_ntk(X1: torch.Tensor, X2: torch.Tensor) -> torch.Tensor:
    """Infinite-width NTK of the two-layer net :func:`two_layer` at N(0, 1)
    initialisation.

    ``K_inf(x, x') = (1/2) ||x|| ||x'|| kappa(<x, x'> / (||x|| ||x'||))``
    (eq-flt-arccos-ntk); the factor 1/2 is ``E[relu(g)^2] = E[1[g > 0]] = 1/2`` for ``g
    ~ N(0, 1)``. It equals :func:`relu_ntk` with ``depth=2``.

    Args:
        X1: inputs, shape (n1, d), no zero rows.
        X2: inputs, shape (n2, d), no zero rows.

    Returns:
        The kernel matrix, shape (n1, n2).
    """
    n1, n2 = _check_pair(X1, X2)
    return _arccos_ntk(X1, X2, n1=n1, n2=n2)


def _arccos_ntk(
    X1: torch.Tensor, X2: torch.Tensor, *, n1: torch.Tensor, n2: torch.Tensor
) -> torch.Tensor:
    """The check-free core of :func:`arccos_ntk` (arguments already checked)."""
    u = (X1 @ X2.T) / (n1[:, None] * n2[None, :])
    return 0.5 * n1[:, None] * n2[None, :] * kappa(u)


def relu_ntk(X1: torch.Tensor, X2: torch.Tensor, *, depth: int) -> torch.Tensor:
    """Infinite-width NTK of the depth-L ReLU network :func:`deep_relu_net`
    (eq-flt-deep-ntk).

    With ``Sigma_1(x, x') = <x, x'>`` and ``Theta_1 = Sigma_1``, for l = 1, ..., L - 1:
    ``Sigma_{l+1} = (1/2) sqrt(Sigma_l(x,x) Sigma_l(x',x')) kappa_1(u_l)``,
    ``dSigma_{l+1} = (1/2) kappa_0(u_l)`` and ``Theta_{l+1} = Theta_l dSigma_{l+1} +
    Sigma_{l+1}``, where ``u_l = Sigma_l(x,x') / sqrt(Sigma_l(x,x) Sigma_l(x',x'))``
    (Jacot et al., 2018). The NTK is ``Theta_L``.

    Args:
        X1: inputs, shape (n1, d), no zero rows.
        X2: inputs, shape (n2, d), no zero rows.
        depth: number of weight layers L >= 1 (L = 2 is :func:`arccos_ntk`).

    Returns:
        The kernel matrix, shape (n1, n2).
    """
    n1, n2 = _check_pair(X1, X2)
    depth = check_int(depth, "depth", min_value=1)
    return _relu_ntk(X1, X2, depth, n1, n2)


def _relu_ntk(X1, X2, depth, n1, n2):
    s11, s22 = n1**2, n2**2  # Sigma_l(x, x), Sigma_l(x', x')
    sigma = X1 @ X2.T  # (n1, n2) Sigma_1(x, x')
    theta = sigma.clone()  # Theta_1
    for _ in range(depth - 1):
        norm = torch.sqrt(s11[:, None] * s22[None, :])  # (n1, n2)
        u = sigma / norm
        sigma = 0.5 * norm * kappa1(u)  # Sigma_{l+1}
        theta = theta * (0.5 * kappa0(u)) + sigma  # Theta_{l+1}
        s11, s22 = 0.5 * s11, 0.5 * s22  # kappa_1(1) = 1
    return theta


def kernel_regression(
    K_train: torch.Tensor, y: torch.Tensor, K_test: torch.Tensor, *, ridge: float = 0.0
) -> torch.Tensor:
    """Kernel (ridge) regression predictions ``K_test (K_train + ridge I)^{-1} y``.

    With ``ridge = 0`` this is the minimum-RKHS-norm interpolant, the limit of gradient
    flow on the linearised model from a zero function (Lee et al., 2019).

    Args:
        K_train: train kernel, shape (n, n), symmetric positive definite (if ridge = 0).
        y: targets, shape (n,).
        K_test: test-train kernel, shape (n_test, n).
        ridge: ridge parameter, ``>= 0``.

    Returns:
        Predictions, shape (n_test,).
    """
    check_tensor(K_train, "K_train", ndim=2, floating=True, shape_doc="(n, n)")
    n = K_train.shape[0]
    check_tensor(K_train, "K_train", shape=(n, n), shape_doc="(n, n)")
    check_tensor(y, "y", shape=(n,), floating=True, shape_doc="(n,)")
    check_tensor(
        K_test, "K_test", shape=(None, n), floating=True, shape_doc="(n_test, n)"
    )
    ridge = check_real(ridge, "ridge", min_value=0.0)
    A = K_train + ridge * torch.eye(n, dtype=K_train.dtype, device=K_train.device)
    return K_test @ torch.linalg.solve(A, y)


def kernel_gd(
    K_train: torch.Tensor,
    y: torch.Tensor,
    K_test: torch.Tensor,
    *,
    lr: float,
    steps: int,
) -> torch.Tensor:
    """Predictions of gradient descent on a fixed-kernel (linearised) model started at
    zero.

    Iterates ``f <- f - (lr/n) K (f - y)`` on the training set and the matching update
    of the test predictions (eq-flt-function-flow, discretised); this is what a network
    in the lazy regime does with the loss ``(1/(2n)) sum_i (f(x_i) - y_i)^2`` (Lee et
    al., 2019). As ``steps -> inf`` it tends to :func:`kernel_regression` with ``ridge =
    0``.

    Args:
        K_train: train kernel, shape (n, n).
        y: targets, shape (n,).
        K_test: test-train kernel, shape (n_test, n).
        lr: learning rate, ``> 0``.
        steps: number of steps, ``>= 1``.

    Returns:
        Test predictions after ``steps`` steps, shape (n_test,).
    """
    check_tensor(K_train, "K_train", ndim=2, floating=True, shape_doc="(n, n)")
    n = K_train.shape[0]
    check_tensor(K_train, "K_train", shape=(n, n), shape_doc="(n, n)")
    check_tensor(y, "y", shape=(n,), floating=True, shape_doc="(n,)")
    check_tensor(
        K_test, "K_test", shape=(None, n), floating=True, shape_doc="(n_test, n)"
    )
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    return _kernel_gd(K_train, y, K_test, lr, steps)


def _kernel_gd(K_train, y, K_test, lr, steps):
    n = K_train.shape[0]
    f = torch.zeros_like(y)  # (n,)
    f_test = torch.zeros(K_test.shape[0], dtype=y.dtype, device=y.device)  # (n_test,)
    for _ in range(steps):
        r = f - y
        f, f_test = f - lr / n * (K_train @ r), f_test - lr / n * (K_test @ r)
    return f_test
