"""Finite groups acting on coordinates: shifts, permutations, symmetrisation
(Section 6.1).

Every group in this module acts by *permuting the entries along one axis* of a tensor.
An element is stored as an index tensor ``p`` of length ``n`` and acts by
``g . x = x[p]`` along that axis, i.e. by the permutation matrix ``P`` with
``P[i, p[i]] = 1`` (so ``g . x = P x``). The cyclic shift by ``s`` is
``p = (arange(n) - s) mod n``, which is ``torch.roll(x, s)``. A group is a tensor of
shape ``(|G|, n)``, one element per row.

Symmetrisation (book eqs. ``eq-sym-invariant-average`` and
``eq-sym-equivariant-average``)::

    f_inv(x) = 1/|G| sum_g f(g . x)            f_eq(x) = 1/|G| sum_g g^{-1} . f(g . x)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "act",
    "cyclic_group",
    "equivariance_error",
    "invariance_error",
    "inverse",
    "min_norm_least_squares",
    "permutation_matrix",
    "quadratic_features",
    "random_permutation",
    "symmetric_group",
    "symmetrize_equivariant",
    "symmetrize_invariant",
]

_MAX_SYMMETRIC = 8  # 8! = 40320 elements; beyond that enumerate a subgroup instead


def _check_perm(p: object, name: str = "perm") -> torch.Tensor:
    p = check_tensor(p, name, ndim=1, shape_doc="(n,)")
    if p.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{name} must be an integer tensor, got dtype {p.dtype}")
    n = p.shape[0]
    if n == 0 or not torch.equal(
        torch.sort(p.cpu()).values, torch.arange(n, dtype=p.dtype)
    ):
        raise ValueError(
            f"{name} must be a permutation of 0..n-1, got {p.tolist()[:12]}"
        )
    return p.long()


def _check_group(group: object) -> torch.Tensor:
    group = check_tensor(group, "group", ndim=2, shape_doc="(|G|, n)")
    if group.dtype not in (torch.int64, torch.int32) or group.shape[0] == 0:
        raise ValueError(
            f"group must be a non-empty integer tensor (|G|, n), got dtype "
            f"{group.dtype} and shape {tuple(group.shape)}"
        )
    return group.long()


def cyclic_group(n: int) -> torch.Tensor:
    """The cyclic group Z_n of shifts, as index tensors: row ``s`` shifts by ``s``.

    Args:
        n: the length of the signals, n >= 1.

    Returns:
        An int64 tensor (n, n); ``act(x, group[s])`` equals
        ``torch.roll(x, s, dims=-1)``.
    """
    n = check_int(n, "n", min_value=1)
    i = torch.arange(n)
    return torch.stack([(i - s) % n for s in range(n)])  # (n, n)


def symmetric_group(n: int) -> torch.Tensor:
    """All n! permutations of ``0..n-1`` (lexicographic order, identity first).

    Args:
        n: the set size, 1 <= n <= 8.

    Returns:
        An int64 tensor (n!, n).
    """
    n = check_int(n, "n", min_value=1, max_value=_MAX_SYMMETRIC)
    return torch.tensor(list(itertools.permutations(range(n))), dtype=torch.long)


def random_permutation(n: int, *, generator: torch.Generator) -> torch.Tensor:
    """A uniformly random permutation of ``0..n-1``, drawn from ``generator`` (CPU,
    int64)."""
    n = check_int(n, "n", min_value=1)
    check_generator(generator)
    return torch.randperm(n, generator=generator)


def inverse(perm: torch.Tensor) -> torch.Tensor:
    """The inverse permutation: ``act(act(x, perm), inverse(perm)) == x``."""
    perm = _check_perm(perm)
    return torch.argsort(perm)


def permutation_matrix(
    perm: torch.Tensor, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """The matrix P with ``P x = x[perm]``, i.e. ``P[i, perm[i]] = 1``; shape (n, n)."""
    perm = _check_perm(perm)
    n = perm.shape[0]
    P = torch.zeros(n, n, dtype=dtype, device=perm.device)
    P[torch.arange(n, device=perm.device), perm] = 1
    return P


def act(x: torch.Tensor, perm: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Apply the group element ``perm`` to ``x`` along axis ``dim``:
    ``x[..., perm, ...]``.

    Args:
        x: any tensor whose axis ``dim`` has length n.
        perm: a permutation of ``0..n-1``, shape (n,).
        dim: the axis the group acts on.

    Returns:
        A tensor of the same shape as ``x``.
    """
    x = check_tensor(x, "x")
    perm = _check_perm(perm)
    if x.ndim == 0 or not -x.ndim <= dim < x.ndim:
        raise ValueError(f"dim must be a valid axis of x (ndim {x.ndim}), got {dim}")
    if x.shape[dim] != perm.shape[0]:
        raise ValueError(
            f"perm has length {perm.shape[0]} but x has {x.shape[dim]} entries along "
            f"dim {dim}"
        )
    return _act(x, perm, dim)


def _act(x, perm, dim):
    return x.index_select(dim, perm.to(x.device))


def symmetrize_invariant(
    f: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    group: torch.Tensor,
    dim: int = -1,
) -> torch.Tensor:
    """The group average ``1/|G| sum_g f(g . x)``, invariant under the group.

    Book eq. ``eq-sym-invariant-average``.

    Args:
        f: any function of ``x`` (batched along other axes is fine).
        x: the input; the group acts on axis ``dim``.
        group: the elements, shape (|G|, n).
        dim: the axis of ``x`` the group acts on.

    Returns:
        The average, with the shape of ``f(x)``.
    """
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    group = _check_group(group)
    return _symmetrize_invariant(f, x, group, dim)


def _symmetrize_invariant(f, x, group, dim):
    total = f(act(x, group[0], dim))
    for p in group[1:]:
        total = total + f(act(x, p, dim))
    return total / group.shape[0]


def symmetrize_equivariant(
    f: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    group: torch.Tensor,
    dim: int = -1,
    out_dim: int | None = None,
) -> torch.Tensor:
    """The equivariant average ``1/|G| sum_g g^{-1} . f(g . x)``.

    Book eq. ``eq-sym-equivariant-average``. The group acts on axis ``dim`` of the input
    and on axis ``out_dim`` of the output (default: the same axis).

    Args:
        f: a function whose output has an axis of the same length n as the input's axis
            ``dim``.
        x: the input.
        group: the elements, shape (|G|, n).
        dim: the axis of ``x`` the group acts on.
        out_dim: the axis of ``f(x)`` the group acts on (default ``dim``).

    Returns:
        The average, with the shape of ``f(x)``.
    """
    if not callable(f):
        raise TypeError(f"f must be callable, got {type(f).__name__}")
    group = _check_group(group)
    return _symmetrize_equivariant(f, x, group, dim, out_dim)


def _symmetrize_equivariant(f, x, group, dim, out_dim):
    out_dim = dim if out_dim is None else out_dim
    total = None
    for p in group:
        term = act(f(act(x, p, dim)), torch.argsort(p), out_dim)
        total = term if total is None else total + term
    return total / group.shape[0]


def invariance_error(
    f: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    perm: torch.Tensor,
    dim: int = -1,
) -> float:
    """``max |f(g . x) - f(x)|`` for one group element ``perm``."""
    return (f(act(x, perm, dim)) - f(x)).abs().max().item()


def equivariance_error(
    f: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    perm: torch.Tensor,
    dim: int = -1,
    out_dim: int | None = None,
) -> float:
    """``max |f(g . x) - g . f(x)|`` for one group element ``perm`` (0 for an
    equivariant f).

    Book eq. ``eq-sym-equivariance``.
    """
    out_dim = dim if out_dim is None else out_dim
    return (f(act(x, perm, dim)) - act(f(x), perm, out_dim)).abs().max().item()


def quadratic_features(X: torch.Tensor) -> torch.Tensor:
    """All degree-2 monomials ``x_i x_j`` (i <= j) of each row: shape (m, n(n+1)/2).

    A linear model on these features can represent every quadratic form ``x^T C x``.

    Args:
        X: inputs, (m, n).
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(m, n)")
    i, j = torch.triu_indices(X.shape[1], X.shape[1], device=X.device)
    return X[:, i] * X[:, j]  # (m, n(n+1)/2)


def min_norm_least_squares(
    Phi: torch.Tensor, y: torch.Tensor, *, rtol: float = 1e-10
) -> torch.Tensor:
    """The minimum-norm least-squares weights ``pinv(Phi) y`` (works when Phi is rank
    deficient).

    Args:
        Phi: features, (m, p).
        y: targets, (m,).
        rtol: singular values below ``rtol * sigma_max`` count as zero (> 0).

    Returns:
        Weights, (p,).
    """
    Phi = check_tensor(Phi, "Phi", ndim=2, floating=True, shape_doc="(m, p)")
    y = check_tensor(y, "y", shape=(Phi.shape[0],), floating=True, shape_doc="(m,)")
    rtol = check_real(rtol, "rtol", min_value=0.0, strict_min=True)
    return torch.linalg.pinv(Phi, rtol=rtol) @ y
