"""HiPPO-LegS: a state that stores the history as Legendre coefficients (Section 4.9).

HiPPO (Gu, Dao, Ermon, Rudra & Ré 2020) asks the state c(t) in R^N of a linear ODE to
hold the coefficients of the best polynomial approximation of the whole input history
f on [0, t], with respect to the uniform measure on [0, t] (the "scaled Legendre"
measure, LegS). The answer is

    dc/dt = (1/t) (A c + B f(t)),                                         (eq-rnn-legs)
    A[n, k] = -sqrt(2n+1) sqrt(2k+1) (n > k),  -(n+1) (n = k),  0 (n < k),
    B[n] = sqrt(2n+1),

written with the sign convention of S4, and c_n(t) = (1/t) int_0^t f(s) g_n(s/t) ds with
g_n(u) = sqrt(2n+1) P_n(2u - 1). A is lower triangular, so its eigenvalues are its
diagonal -(1, 2, ..., N): the S4D-Real initialisation (Gu, Gupta, Goel & Ré 2022) used
by the diagonal SSMs of Section 4.6. A + P P^T with P[n] = sqrt(n + 1/2) is -I/2 plus a
skew-symmetric matrix, the normal-plus-low-rank form of S4 (Gu, Goel & Ré 2022).
"""

from __future__ import annotations


from collections.abc import Callable

import torch

from flt_lib._validate import check_int, check_tensor

__all__ = [
    "legs_matrices",
    "legs_low_rank",
    "legendre",
    "legs_project",
    "legs_run",
    "legs_reconstruct",
]


def legs_matrices(N: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The HiPPO-LegS matrices (eq-rnn-legs): ``(A, B)``, shapes (N, N) and (N,),
    float64."""
    return _legs_matrices(check_int(N, "N", min_value=1))


def _legs_matrices(N: int) -> tuple[torch.Tensor, torch.Tensor]:
    r = torch.sqrt(2 * torch.arange(N, dtype=torch.float64) + 1)     # sqrt(2n + 1)
    A = -torch.tril(r[:, None] * r[None, :], diagonal=-1)             # n > k
    A -= torch.diag(torch.arange(1, N + 1, dtype=torch.float64))      # n = k: -(n+1)
    return A, r.clone()


def legs_low_rank(N: int) -> torch.Tensor:
    """S4's low-rank term P, shape (N,): A + P P^T is -I/2 plus a skew-symmetric
    matrix."""
    N = check_int(N, "N", min_value=1)
    return torch.sqrt(torch.arange(N, dtype=torch.float64) + 0.5)


def legendre(N: int, x: torch.Tensor) -> torch.Tensor:
    """Legendre polynomials P_0..P_{N-1} at x (any shape): shape (N, *x.shape), by
    Bonnet's recursion (n+1) P_{n+1} = (2n+1) x P_n - n P_{n-1}."""
    N = check_int(N, "N", min_value=1)
    check_tensor(x, "x", floating=True)
    P = [torch.ones_like(x), x.clone()]
    for n in range(1, N - 1):
        P.append(((2 * n + 1) * x * P[n] - n * P[n - 1]) / (n + 1))
    return torch.stack(P[:N])


def legs_project(f: Callable[[torch.Tensor], torch.Tensor], t: float, N: int,
                 *, nodes: int = 200) -> torch.Tensor:
    """The exact coefficients c_n(t) = (1/t) int_0^t f(s) g_n(s/t) ds, shape (N,), by
    Gauss-Legendre quadrature with ``nodes`` points."""
    N = check_int(N, "N", min_value=1)
    nodes = check_int(nodes, "nodes", min_value=N)
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    import numpy as np

    x, w = (torch.from_numpy(a) for a in np.polynomial.legendre.leggauss(nodes))
    r = torch.sqrt(2 * torch.arange(N, dtype=torch.float64) + 1)
    g = r[:, None] * legendre(N, x)                                   # g_n at the nodes
    return (g * f(t * (x + 1) / 2) * w).sum(1) / 2                     # (N,)


def legs_run(f_samples: torch.Tensor, dt: float, N: int) -> torch.Tensor:
    """Integrate (eq-rnn-legs) with the bilinear rule on the grid t_k = k dt.

    Args:
        f_samples: f(t_0), ..., f(t_L) at t_k = k dt, shape (L + 1,), float64.
        dt: the grid step, > 0.
        N: state size.

    Returns:
        The states c(t_1), ..., c(t_L), shape (L, N); c(t_1) starts from f(0) e_0.
    """
    check_tensor(f_samples, "f_samples", ndim=1, floating=True, shape_doc="(L + 1,)")
    if not dt > 0:
        raise ValueError(f"dt must be > 0, got {dt}")
    return _legs_run(f_samples, dt, N)


def _legs_run(f_samples: torch.Tensor, dt: float, N: int) -> torch.Tensor:
    """The check-free core of :func:`legs_run` (arguments already checked)."""
    A, B = legs_matrices(N)
    I = torch.eye(N, dtype=torch.float64)
    c = torch.zeros(N, dtype=torch.float64)
    c[0] = f_samples[0]                     # the history on [0, t_1] is about constant
    out = [c]
    for k in range(1, len(f_samples) - 1):
        t0, t1 = k * dt, (k + 1) * dt
        # (I - dt/(2 t1) A) c1 = (I + dt/(2 t0) A) c0 + dt/2 (B f0 / t0 + B f1 / t1)
        rhs = (I + dt / (2 * t0) * A) @ c + dt / 2 * B * (f_samples[k] / t0
                                                          + f_samples[k + 1] / t1)
        c = torch.linalg.solve(I - dt / (2 * t1) * A, rhs)
        out.append(c)
    return torch.stack(out)


def legs_reconstruct(c: torch.Tensor, u: torch.Tensor) -> torch.Tensor:
    """The approximation sum_n c_n g_n(u) of the history at relative times u = s/t in
    [0, 1]: c (N,), u (M,) -> (M,)."""
    check_tensor(c, "c", ndim=1, floating=True, shape_doc="(N,)")
    check_tensor(u, "u", ndim=1, floating=True, shape_doc="(M,)")
    N = c.shape[0]
    r = torch.sqrt(2 * torch.arange(N, dtype=c.dtype) + 1)
    g = r[:, None] * legendre(N, 2 * u - 1)                           # (N, M)
    return c @ g



