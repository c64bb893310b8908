"""Spectral graph theory: Laplacians, the graph Fourier basis and spectral filters
(Section 6.6).

- combinatorial Laplacian ``L = D - A``; normalised ``L_sym = I - D^{-1/2} A D^{-1/2}``
                                                                      (eq-sym-laplacian)
- graph Fourier basis: the orthonormal eigenvectors U of ``L = U Lambda U^T``; the
  graph Fourier transform of x is ``U^T x``                                (def-sym-gft)
- spectral filter ``G(L) x = U G(Lambda) U^T x``; polynomial filter
  ``sum_k alpha_k L^k x``, which equals ``U (sum_k alpha_k Lambda^k) U^T x``
                                                                    (eq-sym-poly-filter)
- spectral convolution of two signals ``x *_G y = U ((U^T x) . (U^T y))``
                                                                     (eq-sym-graph-conv)
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from flt_lib._validate import check_choice, check_tensor
from flt_lib.symmetry.graphs import normalized_adjacency

__all__ = [
    "graph_conv",
    "graph_fourier_basis",
    "laplacian",
    "polynomial_filter",
    "polynomial_filter_matrix",
    "spectral_filter",
]


def laplacian(A: torch.Tensor, kind: str = "combinatorial") -> torch.Tensor:
    """The graph Laplacian: ``"combinatorial"`` D - A or ``"normalized"`` I - D^{-1/2} A
    D^{-1/2}.

    Both are symmetric positive semidefinite; the nullity of each is the number of
    connected components (book ``thm-sym-laplacian``). The normalised form is computed
    as ``D^{-1/2} (D - A) D^{-1/2}``, so an isolated node gets a zero row (Chung's
    convention) and still counts as a component.

    Args:
        A: adjacency, (n, n) (symmetric, zero diagonal), or a sparse COO tensor
            (combinatorial only).
        kind: which Laplacian.

    Returns:
        (n, n), dense or sparse like ``A``.
    """
    check_choice(kind, "kind", ["combinatorial", "normalized"])
    if isinstance(A, torch.Tensor) and A.is_sparse:
        if kind != "combinatorial":
            raise ValueError(
                f"kind must be 'combinatorial' for a sparse A, got {kind!r}"
            )
    else:
        A = check_tensor(A, "A", ndim=2, floating=True, shape_doc="(n, n)")
        normalized_adjacency(A)  # validates: square, symmetric, zero diagonal
    return _laplacian(A, kind)


def _laplacian(A: torch.Tensor, kind: str) -> torch.Tensor:
    """The check-free core of :func:`laplacian` (arguments already checked)."""
    if A.is_sparse:
        A = A.coalesce()
        n = A.shape[0]
        deg = torch.sparse.sum(A, dim=1).to_dense()
        idx = torch.arange(n, device=A.device)
        D = torch.sparse_coo_tensor(
            torch.stack([idx, idx]), deg, (n, n), check_invariants=True
        )
        return (D - A).coalesce()
    deg = A.sum(dim=1)  # (n,)
    L = torch.diag(deg) - A
    if kind == "combinatorial":
        return L
    inv_sqrt = torch.where(
        deg > 0, deg.clamp_min(1e-300).rsqrt(), torch.zeros_like(deg)
    )
    return inv_sqrt[:, None] * L * inv_sqrt[None, :]  # D^{-1/2} (D - A) D^{-1/2}


def graph_fourier_basis(L: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Eigenvalues (ascending, the graph frequencies) and orthonormal eigenvectors of L.

    Args:
        L: a symmetric Laplacian, (n, n).

    Returns:
        ``(lam, U)``: lam (n,), U (n, n) with ``L = U diag(lam) U^T`` (eq.
        ``def-sym-gft``).
    """
    L = check_tensor(L, "L", ndim=2, floating=True, shape_doc="(n, n)")
    if L.shape[0] != L.shape[1]:
        raise ValueError(f"L must be square, got shape {tuple(L.shape)}")
    return torch.linalg.eigh(L)


def spectral_filter(
    L: torch.Tensor, x: torch.Tensor, g: Callable[[torch.Tensor], torch.Tensor]
) -> torch.Tensor:
    """``U g(Lambda) U^T x``: filter x by the response ``g`` of each graph frequency.
    Costs O(n^3).

    Args:
        L: Laplacian, (n, n).
        x: signals, (n,) or (n, c).
        g: maps the eigenvalues (n,) to the filter response (n,).

    Returns:
        Like x.
    """
    lam, U = graph_fourier_basis(L)
    x = check_tensor(x, "x", floating=True)
    if x.shape[0] != L.shape[0] or x.ndim > 2:
        raise ValueError(
            f"x must have shape (n,) or (n, c) with n = {L.shape[0]}, got "
            f"{tuple(x.shape)}"
        )
    response = g(lam)  # (n,)
    xh = U.T @ x  # graph Fourier transform
    return U @ (response[:, None] * xh if x.ndim == 2 else response * xh)


def _alphas(alphas: object) -> torch.Tensor:
    alphas = check_tensor(alphas, "alphas", ndim=1, floating=True, shape_doc="(K + 1,)")
    if alphas.shape[0] == 0:
        raise ValueError("alphas must have at least one coefficient (alpha_0)")
    return alphas


def polynomial_filter(
    L: torch.Tensor, x: torch.Tensor, alphas: torch.Tensor
) -> torch.Tensor:
    """``sum_k alpha_k L^k x`` by Horner's rule: K products with L, no
    eigendecomposition.

    With a sparse L each product costs O(|E|), so the filter costs O(K |E|) (eq.
    ``eq-sym-poly-filter``).

    Args:
        L: Laplacian, (n, n), dense or sparse.
        x: signals, (n,) or (n, c).
        alphas: coefficients alpha_0 .. alpha_K, (K + 1,).

    Returns:
        Like x.
    """
    alphas = _alphas(alphas)
    x = check_tensor(x, "x", floating=True)
    if not isinstance(L, torch.Tensor) or L.ndim != 2 or L.shape[0] != x.shape[0]:
        raise ValueError(f"L must be an (n, n) tensor with n = {x.shape[0]} rows of x")
    return _polynomial_filter(L, x, alphas)


def _polynomial_filter(L, x, alphas):
    y = alphas[-1] * x
    for a in reversed(alphas[:-1]):
        y = L @ y + a * x  # (... (alpha_K L + alpha_{K-1}) L + ...) x
    return y


def polynomial_filter_matrix(L: torch.Tensor, alphas: torch.Tensor) -> torch.Tensor:
    """The matrix ``sum_k alpha_k L^k``, (n, n); its (i, j) entry vanishes beyond K
    hops."""
    L = check_tensor(L, "L", ndim=2, floating=True, shape_doc="(n, n)")
    return polynomial_filter(
        L, torch.eye(L.shape[0], dtype=L.dtype, device=L.device), alphas
    )


def graph_conv(x: torch.Tensor, y: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
    """Spectral convolution ``U ((U^H x) . (U^H y))`` in a (possibly complex)
    orthonormal basis U.

    Eq. ``eq-sym-graph-conv``. On the cycle, with U the unitary DFT basis, this is
    sqrt(n)^-1 times the circular convolution of Section 6.2.

    Args:
        x, y: signals, (n,).
        U: orthonormal (unitary) basis, (n, n), columns are the basis vectors.

    Returns:
        (n,), real part if U is complex.
    """
    U = check_tensor(U, "U", ndim=2, shape_doc="(n, n)")
    n = U.shape[0]
    x = check_tensor(x, "x", shape=(n,), floating=True, shape_doc="(n,)")
    y = check_tensor(y, "y", shape=(n,), floating=True, shape_doc="(n,)")
    return _graph_conv(x, y, U)


def _graph_conv(x, y, U):
    Uh = U.conj().T
    out = U @ ((Uh @ x.to(U.dtype)) * (Uh @ y.to(U.dtype)))
    return out.real if out.is_complex() else out
