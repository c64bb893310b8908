"""Transformers as graph networks, Laplacian positional encodings, and remedies for
over-smoothing and over-squashing (Section 6.9).

- :func:`edge_attention`: attention as message passing over an edge list, eq.
  ``eq-sym-graph-attention``; on the complete graph it is a transformer's self-attention
- :func:`laplacian_pe`: eigenvectors of the normalised Laplacian (Dwivedi & Bresson
  2021), defined only up to sign and, for repeated eigenvalues, up to a basis
- :func:`sign_invariant_pe`: ``phi(v) + phi(-v)`` per eigenvector (SignNet, Lim et al.
  2022); :func:`eigenspace_projectors`: the basis-free projectors ``V V^T``
- :func:`propagate`: deep linear propagation, plain, with an initial residual, or with
  PairNorm; :func:`add_virtual_node`, :func:`rewire_two_hop`: graph rewiring
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_choice, check_int, check_real, check_tensor
from flt_lib.symmetry.graphs import normalized_adjacency
from flt_lib.symmetry.spectral import laplacian

__all__ = [
    "add_virtual_node",
    "edge_attention",
    "eigenspace_projectors",
    "laplacian_pe",
    "pair_norm",
    "propagate",
    "rewire_two_hop",
    "sign_invariant_pe",
]


def _edge_attention(Q, K, V, src, dst):
    """Eq. ``eq-sym-graph-attention``. No argument checks: call
    :func:`edge_attention`."""
    n, d = Q.shape
    score = (Q[dst] * K[src]).sum(-1) / d**0.5  # s_ij for edge j -> i, (E,)
    top = torch.full((n,), float("-inf"), dtype=Q.dtype).scatter_reduce(
        0, dst, score, "amax"
    )  # max_j s_ij, for stability
    w = torch.exp(score - top[dst])  # (E,)
    Z = torch.zeros(n, dtype=Q.dtype).index_add(0, dst, w)  # sum_j exp(s_ij)
    msg = torch.zeros(n, V.shape[1], dtype=Q.dtype).index_add(
        0, dst, w[:, None] * V[src]
    )
    return msg / Z[:, None]  # sum_j alpha_ij v_j, (n, d_v)


def edge_attention(
    Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, A: torch.Tensor
) -> torch.Tensor:
    """Attention restricted to the edges of a graph, computed as message passing.

    ``h_i = sum_{j: A_ij = 1} softmax_j(q_i . k_j / sqrt(d)) v_j``; with A all ones it
    is the self-attention of a transformer (eq. ``eq-sym-graph-attention``).

    Args:
        Q, K: queries and keys, (n, d).
        V: values, (n, d_v).
        A: adjacency with self-loops allowed, (n, n); every row needs an edge.

    Returns:
        (n, d_v).
    """
    Q = check_tensor(Q, "Q", ndim=2, floating=True, shape_doc="(n, d)")
    K = check_tensor(K, "K", shape=tuple(Q.shape), floating=True, shape_doc="(n, d)")
    V = check_tensor(
        V, "V", shape=(Q.shape[0], None), floating=True, shape_doc="(n, d_v)"
    )
    n = Q.shape[0]
    A = check_tensor(A, "A", shape=(n, n), shape_doc="(n, n)")
    if not bool((A != 0).any(dim=1).all()):
        raise ValueError("A must give every node at least one edge (add self-loops)")
    dst, src = torch.nonzero(A, as_tuple=True)  # edge j -> i: A[i, j] != 0
    return _edge_attention(Q, K, V, src, dst)


def laplacian_pe(A: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k eigenvectors of the normalised Laplacian after the first (smallest
    eigenvalues), as node features.

    Args:
        A: adjacency of a connected graph, (n, n).
        k: number of eigenvectors, 1 <= k < n.

    Returns:
        ``(eigenvalues (k,), eigenvectors (n, k))``, in ``torch.linalg.eigh``'s signs.
    """
    A = check_tensor(A, "A", ndim=2, floating=True, shape_doc="(n, n)")
    k = check_int(k, "k", min_value=1, max_value=A.shape[0] - 1)
    lam, U = torch.linalg.eigh(laplacian(A, "normalized"))
    return lam[1 : k + 1], U[:, 1 : k + 1]


def sign_invariant_pe(
    U: torch.Tensor, W1: torch.Tensor, b1: torch.Tensor, W2: torch.Tensor
) -> torch.Tensor:
    """SignNet-style features: ``phi(u) + phi(-u)`` for each eigenvector u, with the
    entrywise network ``phi(u) = tanh(u W1 + b1) W2``, concatenated.

    The bias matters: without it phi is odd and ``phi(u) + phi(-u)`` vanishes.

    Args:
        U: eigenvectors as columns, (n, k).
        W1: (1, h); b1: (h,); W2: (h, p).

    Returns:
        (n, k p), unchanged when any column of U changes sign.
    """
    U = check_tensor(U, "U", ndim=2, floating=True, shape_doc="(n, k)")
    W1 = check_tensor(W1, "W1", shape=(1, None), floating=True, shape_doc="(1, h)")
    b1 = check_tensor(b1, "b1", shape=(W1.shape[1],), floating=True, shape_doc="(h,)")
    W2 = check_tensor(
        W2, "W2", shape=(W1.shape[1], None), floating=True, shape_doc="(h, p)"
    )
    u = U[..., None]  # (n, k, 1)
    phi = lambda z: torch.tanh(z @ W1 + b1) @ W2  # (n, k, p)
    return (phi(u) + phi(-u)).flatten(1)


def eigenspace_projectors(
    A: torch.Tensor, *, tol: float = 1e-8
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """The distinct eigenvalues of the normalised Laplacian and the orthogonal
    projectors ``V V^T`` onto their eigenspaces, which do not depend on the basis V.

    Args:
        A: adjacency, (n, n).
        tol: eigenvalues closer than ``tol`` count as equal.

    Returns:
        ``(values (r,), [P_1, ..., P_r])``, each P (n, n).
    """
    A = check_tensor(A, "A", ndim=2, floating=True, shape_doc="(n, n)")
    tol = check_real(tol, "tol", min_value=0.0, strict_min=True)
    lam, U = torch.linalg.eigh(laplacian(A, "normalized"))
    groups, start = [], 0
    for i in range(1, len(lam) + 1):
        if i == len(lam) or lam[i] - lam[i - 1] > tol:
            groups.append((start, i))
            start = i
    values = torch.stack([lam[a:b].mean() for a, b in groups])
    return values, [U[:, a:b] @ U[:, a:b].T for a, b in groups]


def pair_norm(H: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
    """PairNorm (Zhao & Akoglu 2020): centre the node features, then rescale them to
    mean squared norm ``scale^2``, (n, d) -> (n, d)."""
    H = check_tensor(H, "H", ndim=2, floating=True, shape_doc="(n, d)")
    scale = check_real(scale, "scale", min_value=0.0, strict_min=True)
    Hc = H - H.mean(0, keepdim=True)
    return scale * Hc / Hc.pow(2).sum(1).mean().sqrt()


def propagate(
    H0: torch.Tensor, A_hat: torch.Tensor, depth: int, *, kind: str, alpha: float = 0.1
) -> list[torch.Tensor]:
    """``depth`` layers of linear propagation with the GCN coupling, as used to measure
    over-smoothing.

    - ``"plain"``: ``H_{k+1} = A_hat H_k``
    - ``"residual"``: ``H_{k+1} = (1 - alpha) A_hat H_k + alpha H_0`` (an initial
      residual connection, APPNP, Klicpera et al. 2019)
    - ``"pairnorm"``: ``H_{k+1} = PairNorm(A_hat H_k)``

    Args:
        H0: node features, (n, d).
        A_hat: the renormalised coupling, (n, n).
        depth: number of layers, >= 1.
        kind: one of the three above.
        alpha: weight of the initial residual, in (0, 1).

    Returns:
        The list ``[H_0, H_1, ..., H_depth]``.
    """
    H0 = check_tensor(H0, "H0", ndim=2, floating=True, shape_doc="(n, d)")
    A_hat = check_tensor(
        A_hat, "A_hat", shape=(H0.shape[0],) * 2, floating=True, shape_doc="(n, n)"
    )
    depth = check_int(depth, "depth", min_value=1)
    check_choice(kind, "kind", ["plain", "residual", "pairnorm"])
    alpha = check_real(alpha, "alpha", min_value=0.0, max_value=1.0, strict_min=True)
    out = [H0]
    for _ in range(depth):
        H = A_hat @ out[-1]
        if kind == "residual":
            H = (1 - alpha) * H + alpha * H0
        elif kind == "pairnorm":
            H = pair_norm(H)
        out.append(H)
    return out


def add_virtual_node(A: torch.Tensor) -> torch.Tensor:
    """The graph with one extra node joined to every node, (n + 1, n + 1)."""
    A = check_tensor(A, "A", ndim=2, floating=True, shape_doc="(n, n)")
    n = A.shape[0]
    out = torch.zeros(n + 1, n + 1, dtype=A.dtype)
    out[:n, :n] = A
    out[n, :n] = out[:n, n] = 1.0
    return out


def rewire_two_hop(A: torch.Tensor) -> torch.Tensor:
    """The graph with an edge added between every pair of nodes at distance 2,
    (n, n)."""
    A = check_tensor(A, "A", ndim=2, floating=True, shape_doc="(n, n)")
    normalized_adjacency(A)  # validates: square, symmetric, zero diagonal
    reach = ((A + A @ A) > 0).to(A.dtype)
    return reach.fill_diagonal_(0.0)
