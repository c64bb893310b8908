"""Orthogonal equivariance and the shape of attention (Ma & Ying 2023; Section 6.7).

In this module a sequence of n tokens in R^d is a matrix ``X`` of shape ``(d, n)``: one
token per **column**, as in Ma & Ying. An orthogonal ``Q`` (d, d) changes the
embedding, ``X -> Q X``.

- orthogonal equivariance: ``f(Q X) = Q f(X)`` for all orthogonal Q
  (eq-sym-orthogonal-equivariance)
- representation: such f have the form ``f(X) = X g(X^T X)``          (eq-sym-gram-form)
- Gram attention ``X softmax(X^T X)`` (softmax down each column) is of that form;
  bilinear attention ``X softmax(X^T W X)`` with a fixed W is not
- with knowledge Z (d, k) that rotates with X: ``f(Q X, Q Z) = Q f(X, Z)``; attention
  with query and key parameters ``Z = [Z_q, Z_k]`` is
  ``X softmax((X^T Z_k)(X^T Z_q)^T)``, a function ``X g(X^T Z)``
  (eq-sym-knowledge-attention)
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from flt_lib._validate import check_generator, check_int, check_tensor

__all__ = [
    "bilinear_attention",
    "column_space_residual",
    "gram_attention",
    "gram_coefficients",
    "knowledge_attention",
    "orthogonal_equivariance_error",
    "procrustes",
    "random_orthogonal",
    "streaming_attention",
]


def _tokens(X: object, name: str = "X") -> torch.Tensor:
    return check_tensor(X, name, ndim=2, floating=True, shape_doc="(d, n)")


def random_orthogonal(
    d: int, *, generator: torch.Generator, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """A Haar-random orthogonal matrix (d, d): QR of a Gaussian matrix with the signs
    fixed."""
    d = check_int(d, "d", min_value=1)
    check_generator(generator)
    G = torch.randn(d, d, generator=generator, dtype=torch.float64)
    Q, R = torch.linalg.qr(G)
    return (Q * torch.sign(torch.diagonal(R))[None, :]).to(dtype)


def procrustes(X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """The orthogonal Q (d, d) minimising ``||Q X - Y||_F``: ``Q = U V^T`` from
    ``Y X^T = U S V^T``.

    If ``X^T X = Y^T Y`` then ``Q X = Y`` exactly (the lemma behind
    ``thm-sym-gram-form``).

    Args:
        X, Y: (d, n) each.
    """
    X, Y = _tokens(X), _tokens(Y, "Y")
    if X.shape != Y.shape:
        raise ValueError(
            f"Y must have the shape of X {tuple(X.shape)}, got {tuple(Y.shape)}"
        )
    return _procrustes(X, Y)


def _procrustes(X, Y):
    U, _, Vh = torch.linalg.svd(Y @ X.T)
    return U @ Vh


def gram_attention(X: torch.Tensor) -> torch.Tensor:
    """``X softmax(X^T X)``: token i becomes ``sum_j x_j softmax_j(x_j . x_i)``.

    Orthogonally equivariant, because it depends on X only through ``X`` and ``X^T X``.

    Args:
        X: tokens as columns, (d, n).

    Returns:
        (d, n).
    """
    X = _tokens(X)
    return X @ torch.softmax(X.T @ X, dim=0)  # column i: weights over j sum to 1


def bilinear_attention(X: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """``X softmax(X^T W X)`` with a fixed (d, d) matrix W (for example W = W_K^T W_Q).

    Args:
        X: tokens as columns, (d, n).
        W: (d, d).

    Returns:
        (d, n).
    """
    X = _tokens(X)
    d = X.shape[0]
    W = check_tensor(
        W, "W", shape=(d, d), floating=True, shape_doc=f"(d, d) = ({d}, {d})"
    )
    return X @ torch.softmax(X.T @ W @ X, dim=0)


def knowledge_attention(
    X: torch.Tensor, Z_q: torch.Tensor, Z_k: torch.Tensor
) -> torch.Tensor:
    """Attention whose parameters are knowledge vectors:
    ``X softmax((X^T Z_k)(X^T Z_q)^T)``.

    The score of key j for query i is ``(Z_k^T x_j) . (Z_q^T x_i)``, so this is
    :func:`bilinear_attention` with ``W = Z_k Z_q^T``, written as a function
    ``X g(X^T Z)`` of the inner products with ``Z = [Z_q, Z_k]`` (eq.
    ``eq-sym-knowledge-attention``).

    Args:
        X: tokens as columns, (d, n).
        Z_q, Z_k: query and key knowledge, (d, k) each.

    Returns:
        (d, n).
    """
    X = _tokens(X)
    Z_q = check_tensor(Z_q, "Z_q", ndim=2, floating=True, shape_doc="(d, k)")
    Z_k = check_tensor(
        Z_k, "Z_k", shape=tuple(Z_q.shape), floating=True, shape_doc="(d, k) like Z_q"
    )
    if Z_q.shape[0] != X.shape[0]:
        raise ValueError(
            f"Z_q must have d = {X.shape[0]} rows, like X, got {Z_q.shape[0]}"
        )
    return _knowledge_attention(X, Z_q, Z_k)


def _knowledge_attention(X, Z_q, Z_k):
    # (n, k) each: inner products with the knowledge
    keys, queries = X.T @ Z_k, X.T @ Z_q
    return X @ torch.softmax(keys @ queries.T, dim=0)


def orthogonal_equivariance_error(
    f: Callable[[torch.Tensor], torch.Tensor], X: torch.Tensor, Q: torch.Tensor
) -> float:
    """``max |f(Q X) - Q f(X)|`` (0 for an orthogonally equivariant f,
    eq-sym-orthogonal-equivariance)."""
    X = _tokens(X)
    d = X.shape[0]
    Q = check_tensor(
        Q, "Q", shape=(d, d), floating=True, shape_doc=f"(d, d) = ({d}, {d})"
    )
    return (f(Q @ X) - Q @ f(X)).abs().max().item()


def column_space_residual(F: torch.Tensor, X: torch.Tensor) -> float:
    """``|| (I - X X^+) F ||_max``: how far the columns of F are from the span of the
    tokens."""
    X = _tokens(X)
    F = check_tensor(F, "F", ndim=2, floating=True, shape_doc="(d, n')")
    if F.shape[0] != X.shape[0]:
        raise ValueError(f"F must have d = {X.shape[0]} rows, like X, got {F.shape[0]}")
    return (F - X @ (torch.linalg.pinv(X) @ F)).abs().max().item()


def gram_coefficients(F: torch.Tensor, X: torch.Tensor) -> torch.Tensor:
    """The coefficients C with ``F = X C`` (least squares, ``X^+ F``), (n, n').

    If ``F = f(X)`` for an orthogonally equivariant f and X has full column rank, then C
    is ``g(X^T X)`` of eq. ``eq-sym-gram-form``: it depends on X only through its Gram
    matrix.
    """
    X = _tokens(X)
    F = check_tensor(F, "F", ndim=2, floating=True, shape_doc="(d, n')")
    if F.shape[0] != X.shape[0]:
        raise ValueError(f"F must have d = {X.shape[0]} rows, like X, got {F.shape[0]}")
    return torch.linalg.pinv(X) @ F


def streaming_attention(X: torch.Tensor, i: int, W: torch.Tensor) -> torch.Tensor:
    """Token i of ``bilinear_attention(X, W)``, read in one pass over the tokens.

    Keeps only two running sums, ``s = sum_j exp(a_j) x_j`` (d numbers) and
    ``z = sum_j exp(a_j)`` (one number), with ``a_j = x_j^T W x_i`` (shifted by a
    running max for stability). However long the sequence, token i receives d + 1
    numbers from the rest: the "finite information" form of attention.

    Args:
        X: tokens as columns, (d, n).
        i: the query token.
        W: (d, d).

    Returns:
        (d,).
    """
    X = _tokens(X)
    i = check_int(i, "i", min_value=0, max_value=X.shape[1] - 1)
    W = check_tensor(
        W, "W", shape=(X.shape[0], X.shape[0]), floating=True, shape_doc="(d, d)"
    )
    return _streaming_attention(X, i, W)


def _streaming_attention(X, i, W):
    q = W @ X[:, i]  # (d,)
    m = torch.tensor(float("-inf"), dtype=X.dtype, device=X.device)
    s, z = torch.zeros_like(q), torch.zeros((), dtype=X.dtype, device=X.device)
    for j in range(X.shape[1]):
        a = X[:, j] @ q
        m_new = torch.maximum(m, a)
        s = s * torch.exp(m - m_new) + torch.exp(a - m_new) * X[:, j]
        z = z * torch.exp(m - m_new) + torch.exp(a - m_new)
        m = m_new
    return s / z
