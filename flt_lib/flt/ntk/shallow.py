"""The two-layer ReLU network in the NTK parameterisation, its Jacobian and its
empirical NTK.

    h(x; W, a) = (1 / sqrt(m)) * sum_r a_r * relu(<w_r, x>),   (eq-flt-two-layer-ntk)

with W: (m, d) and a: (m,),

initialised with every entry of W and a drawn i.i.d. from N(0, 1); both layers are
trained.
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_generator, check_int, check_tensor

__all__ = [
    "check_two_layer_params",
    "empirical_ntk",
    "init_two_layer",
    "jacobian_autograd",
    "ntk_features",
    "two_layer",
]


def init_two_layer(
    d: int, m: int, *, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Standard Gaussian initialisation of the two-layer network (NTK parameterisation).

    Args:
        d: input dimension.
        m: width (number of hidden units).
        generator: CPU generator.

    Returns:
        ``(W, a)`` of shapes (m, d) and (m,), entries i.i.d. N(0, 1), on the CPU.
    """
    d = check_int(d, "d", min_value=1)
    m = check_int(m, "m", min_value=1)
    check_generator(generator)
    W = torch.randn(m, d, generator=generator)
    a = torch.randn(m, generator=generator)
    return W, a


def check_two_layer_params(
    X: torch.Tensor, W: torch.Tensor, a: torch.Tensor, name: str = "X"
) -> None:
    """Check inputs X (n, d) against the weights W (m, d) and a (m,) of the two-layer
    net."""
    check_tensor(W, "W", ndim=2, floating=True, shape_doc="(m, d)")
    check_tensor(a, "a", shape=(W.shape[0],), floating=True, shape_doc="(m,)")
    check_tensor(X, name, ndim=2, floating=True, shape_doc="(n, d)")
    if X.shape[1] != W.shape[1]:
        raise ValueError(
            f"{name} must have d = {W.shape[1]} columns like W,"
            f" got shape {tuple(X.shape)}"
        )


def two_layer(X: torch.Tensor, W: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """Output ``h(x) = m^{-1/2} sum_r a_r relu(<w_r, x>)`` of the two-layer net
    (eq-flt-two-layer-ntk).

    Args:
        X: inputs, shape (n, d).
        W: first-layer weights, shape (m, d).
        a: second-layer weights, shape (m,).

    Returns:
        Outputs, shape (n,).
    """
    check_two_layer_params(X, W, a)
    return torch.relu(X @ W.T) @ a / math.sqrt(W.shape[0])  # (n,)


def ntk_features(X: torch.Tensor, W: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """Closed-form parameter Jacobian of :func:`two_layer`, one row per input.

    ``dh/dw_r = m^{-1/2} a_r 1[<w_r, x> > 0] x`` and ``dh/da_r = m^{-1/2} relu(<w_r,
    x>)``; the row is ``[vec(dh/dW), dh/da]`` (row-major ``W``).

    Args:
        X: inputs, shape (n, d).
        W: first-layer weights, shape (m, d).
        a: second-layer weights, shape (m,).

    Returns:
        The Jacobian, shape (n, m*d + m).
    """
    check_two_layer_params(X, W, a)
    m = W.shape[0]
    pre = X @ W.T  # (n, m)
    gW = ((pre > 0).to(X) * a)[:, :, None] * X[:, None, :]  # (n, m, d)
    ga = torch.relu(pre)  # (n, m)
    return torch.cat([gW.reshape(X.shape[0], -1), ga], dim=1) / math.sqrt(m)


def jacobian_autograd(
    X: torch.Tensor, W: torch.Tensor, a: torch.Tensor
) -> torch.Tensor:
    """Parameter Jacobian of :func:`two_layer` by autograd, one backward pass per input
    (oracle).

    Args:
        X: inputs, shape (n, d).
        W: first-layer weights, shape (m, d).
        a: second-layer weights, shape (m,).

    Returns:
        The Jacobian, shape (n, m*d + m), in the layout of :func:`ntk_features`.
    """
    check_two_layer_params(X, W, a)
    Wg = W.detach().clone().requires_grad_(True)
    ag = a.detach().clone().requires_grad_(True)
    rows = []
    for i in range(X.shape[0]):
        out = two_layer(X[i : i + 1], Wg, ag).sum()
        gW, ga = torch.autograd.grad(out, (Wg, ag))
        rows.append(torch.cat([gW.reshape(-1), ga]))
    return torch.stack(rows)  # (n, m*d + m)


def empirical_ntk(
    X1: torch.Tensor, X2: torch.Tensor, W: torch.Tensor, a: torch.Tensor
) -> torch.Tensor:
    """Empirical NTK ``K(x, x') = <grad_theta h(x), grad_theta h(x')>`` of the two-layer
    net.

    Computed without forming the Jacobian (eq-flt-ntk-two-layer):
    ``K = (1/m) [relu(X1 W^T) relu(X2 W^T)^T + (X1 X2^T) * (S1 diag(a^2) S2^T)]`` with
    ``S = 1[X W^T > 0]`` (Jacot et al., 2018).

    Args:
        X1: inputs, shape (n1, d).
        X2: inputs, shape (n2, d).
        W: first-layer weights, shape (m, d).
        a: second-layer weights, shape (m,).

    Returns:
        The kernel matrix, shape (n1, n2).
    """
    check_two_layer_params(X1, W, a, "X1")
    check_two_layer_params(X2, W, a, "X2")
    return _empirical_ntk(X1, X2, W, a)


def _empirical_ntk(X1, X2, W, a):
    m = W.shape[0]
    p1, p2 = X1 @ W.T, X2 @ W.T  # (n1, m), (n2, m)
    k_a = torch.relu(p1) @ torch.relu(p2).T  # (n1, n2): second-layer part
    # first-layer part
    k_w = (X1 @ X2.T) * (((p1 > 0).to(X1) * a**2) @ (p2 > 0).to(X1).T)
    return (k_a + k_w) / m
