"""Graphs as adjacency matrices: examples, normalisations, smoothing, and 1-WL
(Sections 6.5-6.6).

A graph on n nodes is a symmetric 0/1 adjacency matrix ``A`` (n, n) with a zero
diagonal; node features are the rows of ``X`` (n, d). A permutation P relabels the
nodes: ``(P X, P A P^T)``.

- renormalised GCN coupling (Kipf & Welling 2017):
  ``A_hat = D~^{-1/2} (A + I) D~^{-1/2}``, ``D~ = diag((A + I) 1)``   (eq-sym-gcn-layer)
- Dirichlet energy with respect to ``A_hat``: ``E(X) = tr(X^T (I - A_hat) X)``
  ``= 1/2 sum_ij (A + I)_ij |x_i / sqrt(d~_i) - x_j / sqrt(d~_j)|^2``
  (eq-sym-dirichlet)
- 1-WL colour refinement: a node's new colour is its old colour together with the
  multiset of its neighbours' colours                                        (eq-sym-wl)
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "binary_tree",
    "complete_bipartite",
    "cycle_graph",
    "dirichlet_energy",
    "disjoint_union",
    "from_edges",
    "grid_graph",
    "hop_distances",
    "kipf_first_order",
    "n_components",
    "normalized_adjacency",
    "path_graph",
    "permute_graph",
    "prism_graph",
    "random_graph",
    "smoothing_factor",
    "stochastic_block_model",
    "triangle_count",
    "wl_colors",
    "wl_equivalent",
]


def _adjacency(A: object, name: str = "A") -> torch.Tensor:
    A = check_tensor(A, name, ndim=2, floating=True, shape_doc="(n, n)")
    if A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise ValueError(
            f"{name} must be a non-empty square matrix (n, n), got shape "
            f"{tuple(A.shape)}"
        )
    if not torch.equal(A, A.T):
        raise ValueError(f"{name} must be symmetric (an undirected graph)")
    if bool((torch.diagonal(A) != 0).any()):
        raise ValueError(
            f"{name} must have a zero diagonal (self-loops are added where needed)"
        )
    return A


def from_edges(
    n: int, edges: list[tuple[int, int]], dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """The adjacency matrix (n, n) of the undirected graph with the given edges
    ``(i, j)``, i != j."""
    n = check_int(n, "n", min_value=1)
    if not isinstance(edges, (list, tuple)):
        raise TypeError(
            f"edges must be a list of pairs (i, j), got {type(edges).__name__}"
        )
    A = torch.zeros(n, n, dtype=dtype)
    for e in edges:
        if not (
            isinstance(e, (list, tuple))
            and len(e) == 2
            and all(isinstance(v, int) for v in e)
        ):
            raise TypeError(f"every edge must be a pair of ints (i, j), got {e!r}")
        i, j = e
        if not (0 <= i < n and 0 <= j < n) or i == j:
            raise ValueError(f"edge {e!r} must join two different nodes in 0..{n - 1}")
        A[i, j] = A[j, i] = 1
    return A


def cycle_graph(n: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The cycle C_n: node i is joined to i - 1 and i + 1 (mod n); n >= 3."""
    n = check_int(n, "n", min_value=3)
    return from_edges(n, [(i, (i + 1) % n) for i in range(n)], dtype)


def path_graph(n: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The path P_n: node i is joined to i + 1; n >= 1."""
    n = check_int(n, "n", min_value=1)
    return from_edges(n, [(i, i + 1) for i in range(n - 1)], dtype)


def complete_bipartite(
    a: int, b: int, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """K_{a,b}: nodes 0..a-1 are each joined to all of a..a+b-1."""
    a, b = check_int(a, "a", min_value=1), check_int(b, "b", min_value=1)
    return from_edges(a + b, [(i, a + j) for i in range(a) for j in range(b)], dtype)


def prism_graph(dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The triangular prism: triangles 0-1-2 and 3-4-5 joined by the rungs
    i -- i + 3."""
    edges = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (0, 3), (1, 4), (2, 5)]
    return from_edges(6, edges, dtype)


def grid_graph(
    rows: int, cols: int, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """The rows x cols grid: node ``r * cols + c`` is joined to its horizontal and
    vertical neighbours."""
    rows, cols = (
        check_int(rows, "rows", min_value=1),
        check_int(cols, "cols", min_value=1),
    )
    edges = [
        (r * cols + c, r * cols + c + 1) for r in range(rows) for c in range(cols - 1)
    ]
    edges += [
        (r * cols + c, (r + 1) * cols + c) for r in range(rows - 1) for c in range(cols)
    ]
    return from_edges(rows * cols, edges, dtype)


def binary_tree(depth: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """The complete binary tree of the given depth (2^(depth+1) - 1 nodes, root 0,
    children 2i+1, 2i+2)."""
    depth = check_int(depth, "depth", min_value=0, max_value=12)
    n = 2 ** (depth + 1) - 1
    return from_edges(n, [((i - 1) // 2, i) for i in range(1, n)], dtype)


def disjoint_union(A1: torch.Tensor, A2: torch.Tensor) -> torch.Tensor:
    """The graph with A1 on the first nodes and A2 on the rest, no edges between
    them."""
    A1, A2 = _adjacency(A1, "A1"), _adjacency(A2, "A2")
    return torch.block_diag(A1, A2.to(A1.dtype))


def random_graph(
    n: int,
    p: float,
    *,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """An Erdos-Renyi graph G(n, p): each of the n(n-1)/2 edges independently with
    probability p."""
    return stochastic_block_model(
        [check_int(n, "n", min_value=1)], p, p, generator=generator, dtype=dtype
    )[0]


def stochastic_block_model(
    sizes: list[int],
    p_in: float,
    p_out: float,
    *,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A stochastic block model: edges inside a block with probability p_in, across with
    p_out.

    Args:
        sizes: the number of nodes in each block, each >= 1.
        p_in, p_out: edge probabilities in [0, 1].
        generator: a CPU torch.Generator.

    Returns:
        ``(A, block)``: adjacency (n, n) and the block of every node, int64 (n,).
    """
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise TypeError(f"sizes must be a non-empty list of ints, got {sizes!r}")
    sizes = [check_int(s, f"sizes[{i}]", min_value=1) for i, s in enumerate(sizes)]
    p_in = check_real(p_in, "p_in", min_value=0.0, max_value=1.0)
    p_out = check_real(p_out, "p_out", min_value=0.0, max_value=1.0)
    check_generator(generator)
    block = torch.repeat_interleave(
        torch.arange(len(sizes)), torch.tensor(sizes)
    )  # (n,)
    n = block.shape[0]
    prob = torch.where(block[:, None] == block[None, :], p_in, p_out)
    upper = torch.triu(torch.rand(n, n, generator=generator) < prob, diagonal=1)
    A = (upper | upper.T).to(dtype)
    return A, block


def permute_graph(
    A: torch.Tensor, X: torch.Tensor, perm: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Relabel the nodes: ``(P A P^T, P X)`` with ``P X = X[perm]``."""
    A = _adjacency(A)
    X = check_tensor(X, "X", ndim=2, shape_doc="(n, d)")
    perm = check_tensor(perm, "perm", shape=(A.shape[0],), shape_doc="(n,)")
    return A[perm][:, perm], X[perm]


def normalized_adjacency(A: torch.Tensor, *, self_loops: bool = True) -> torch.Tensor:
    """The symmetric normalisation ``D^{-1/2} A D^{-1/2}``, after adding self-loops by
    default.

    With ``self_loops=True`` this is the renormalised GCN coupling of eq.
    ``eq-sym-gcn-layer``; its eigenvalues lie in (-1, 1] with a top eigenvalue exactly
    1. Isolated nodes (degree 0, possible only without self-loops) get a zero row.

    Args:
        A: adjacency, (n, n).
        self_loops: add the identity before normalising.

    Returns:
        (n, n), symmetric.
    """
    A = _adjacency(A)
    if self_loops:
        A = A + torch.eye(A.shape[0], dtype=A.dtype, device=A.device)
    deg = A.sum(dim=1)  # (n,)
    inv_sqrt = torch.where(
        deg > 0, deg.clamp_min(1e-300).rsqrt(), torch.zeros_like(deg)
    )
    return inv_sqrt[:, None] * A * inv_sqrt[None, :]


def kipf_first_order(A: torch.Tensor) -> torch.Tensor:
    """The un-renormalised first-order filter ``I + D^{-1/2} A D^{-1/2}``: eigenvalues
    in [0, 2]."""
    A = _adjacency(A)
    return (
        torch.eye(A.shape[0], dtype=A.dtype, device=A.device)
        + normalized_adjacency(A, self_loops=False)
    )


def dirichlet_energy(X: torch.Tensor, A_hat: torch.Tensor) -> float:
    """``E(X) = tr(X^T (I - A_hat) X)``, the smoothness of node features (eq.
    ``eq-sym-dirichlet``), summed over edges.

    For the renormalised coupling ``A_hat = D^{-1/2} (A + I) D^{-1/2}`` the energy is
    the edge sum ``(1/2) sum_ij (A + I)_ij ||x_i / sqrt(d_i) - x_j / sqrt(d_j)||^2``, a
    sum of non-negative terms. We compute that form: the algebraically equal
    ``||X||^2 - <X, A_hat X>`` subtracts two nearly equal numbers once X is close to the
    fixed point, and loses every digit after about 80 propagation steps on a 30-node
    graph. The degrees are read off the diagonal, ``A_hat_ii = 1 / d_i``.

    Args:
        X: node features, (n, d).
        A_hat: the GCN coupling, as :func:`normalized_adjacency` with self-loops,
            (n, n).

    Returns:
        The energy, >= 0.

    Raises:
        ValueError: if A_hat is not such a coupling (``A_hat sqrt(d) != sqrt(d)``).
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    A_hat = check_tensor(
        A_hat,
        "A_hat",
        shape=(X.shape[0], X.shape[0]),
        floating=True,
        shape_doc="(n, n)",
    )
    diag = torch.diagonal(A_hat)
    if not bool((diag > 0).all()):
        raise ValueError(
            "A_hat must be a renormalised GCN coupling normalized_adjacency(A) with "
            "positive diagonal 1/d_i; got smallest diagonal entry "
            f"{diag.min().item():.3g}"
        )
    u = diag.rsqrt()  # sqrt(d_i), (n,)
    resid = (A_hat @ u - u).abs().max().item()
    if resid > 1e-8 * u.abs().max().item():
        raise ValueError(
            "A_hat must be a renormalised GCN coupling D^{-1/2}(A + I)D^{-1/2}, whose "
            "eigenvector sqrt(d) has eigenvalue 1; got |A_hat sqrt(d) - sqrt(d)| = "
            f"{resid:.3g}"
        )
    return _dirichlet_energy(X, A_hat)


def _dirichlet_energy(X, A_hat):
    u = torch.diagonal(A_hat).rsqrt()  # sqrt(d_i), (n,)
    i, j = torch.nonzero(torch.triu(A_hat, diagonal=1), as_tuple=True)  # edges i < j
    Y = X / u[:, None]  # x_i / sqrt(d_i), (n, d)
    w = A_hat[i, j] * u[i] * u[j]  # (A + I)_ij, (E,)
    return (w * ((Y[i] - Y[j]) ** 2).sum(dim=1)).sum().item()


def smoothing_factor(A_hat: torch.Tensor) -> float:
    """lambda: the largest |eigenvalue| of A_hat once the eigenvalue 1 of each component
    is removed.

    For the GCN coupling ``E(A_hat X) <= lambda^2 E(X)`` (book
    ``thm-sym-oversmoothing``).

    Args:
        A_hat: the renormalised coupling of a graph, (n, n).

    Returns:
        lambda in [0, 1).
    """
    A_hat = check_tensor(A_hat, "A_hat", ndim=2, floating=True, shape_doc="(n, n)")
    evals = torch.linalg.eigvalsh(A_hat)  # ascending
    k = n_components((A_hat != 0).to(A_hat.dtype).fill_diagonal_(0))
    rest = evals[: evals.shape[0] - k]
    return rest.abs().max().item() if rest.numel() else 0.0


def hop_distances(A: torch.Tensor) -> torch.Tensor:
    """Shortest-path distances by breadth-first search on all nodes at once; inf if
    unreachable.

    Args:
        A: adjacency, (n, n).

    Returns:
        float64 (n, n); entry (i, j) is the number of edges on a shortest path from i
        to j.
    """
    A = _adjacency(A)
    n = A.shape[0]
    reach = torch.eye(n, dtype=torch.bool, device=A.device)
    dist = torch.full((n, n), float("inf"), dtype=torch.float64, device=A.device)
    dist[reach] = 0
    adj = A != 0
    for k in range(1, n):
        new = (reach.to(torch.float64) @ adj.to(torch.float64) > 0) & ~reach
        if not bool(new.any()):
            break
        dist[new] = k
        reach = reach | new
    return dist


def n_components(A: torch.Tensor) -> int:
    """The number of connected components (isolated nodes count as components)."""
    reach = torch.isfinite(hop_distances(A))  # (n, n): True when i and j are connected
    # smallest node index in the component of i
    first = reach.to(torch.int64).argmax(dim=1)
    return int(torch.unique(first).numel())


def triangle_count(A: torch.Tensor) -> int:
    """The number of triangles, ``tr(A^3) / 6``."""
    A = _adjacency(A)
    return int(round(torch.trace(A @ A @ A).item() / 6))


def wl_colors(A: torch.Tensor, *, rounds: int | None = None) -> list[list[int]]:
    """1-WL colour refinement (Weisfeiler & Leman 1968), eq. ``eq-sym-wl``.

    All nodes start with the same colour. In each round a node's new colour is a name
    for the pair (its colour, the sorted list of its neighbours' colours): the rank of
    that pair among all pairs present. To compare two graphs, refine their disjoint
    union (:func:`wl_equivalent`), so that both share one set of names.

    Args:
        A: adjacency, (n, n).
        rounds: number of refinement rounds (default n, enough for the partition to be
            stable).

    Returns:
        The colouring after each round, round 0 first: ``rounds + 1`` lists of n ints.
    """
    A = _adjacency(A)
    rounds = A.shape[0] if rounds is None else check_int(rounds, "rounds", min_value=0)
    return _wl_colors(A, rounds)


def _wl_colors(A: torch.Tensor, rounds: int) -> list[list[int]]:
    """The check-free core of :func:`wl_colors` (arguments already checked)."""
    n = A.shape[0]
    neighbours = [torch.nonzero(A[i]).flatten().tolist() for i in range(n)]
    colors = [0] * n
    history = [colors]
    for _ in range(rounds):
        signature = [
            (colors[i], tuple(sorted(colors[j] for j in neighbours[i])))
            for i in range(n)
        ]
        # canonical: sorted order
        name = {s: k for k, s in enumerate(sorted(set(signature)))}
        colors = [name[s] for s in signature]
        history.append(colors)
    return history


def wl_equivalent(A1: torch.Tensor, A2: torch.Tensor) -> bool:
    """True if 1-WL cannot tell the two graphs apart (equal colour histograms in every
    round).

    The graphs are refined together, as one disjoint union, so that colour names are
    shared.
    """
    A1, A2 = _adjacency(A1, "A1"), _adjacency(A2, "A2")
    if A1.shape != A2.shape:
        return False
    n = A1.shape[0]
    for colors in wl_colors(disjoint_union(A1, A2)):
        if sorted(colors[:n]) != sorted(colors[n:]):
            return False
    return True
