"""Functions of sets: Deep Sets, PointNet, aggregators and linear equivariant layers
(Section 6.4).

A set of N elements in R^d is a tensor ``X`` of shape ``(B, N, d)`` (a batch of B sets)
whose rows can be listed in any order; a permutation P acts by ``P X`` (rows permuted).

- Deep Sets (Zaheer et al. 2017): ``f(X) = rho(sum_i phi(x_i))``      (eq-sym-deep-sets)
- equivariant linear layer: ``Y = X Lambda + 1 1^T X Gamma (+ bias)``
  (eq-sym-equivariant-layer)
- PointNet (Qi et al. 2017): ``f(X) = gamma(max_i h(x_i))``, max per coordinate
  (eq-sym-pointnet)
- power sums ``p_k = sum_i x_i^k``, k = 1..L: a sum-decomposition with latent dimension
  L that is injective on multisets of n reals exactly when L >= n (eq-sym-power-sums)

The dimension of the space of linear maps ``R^{n^k} -> R^{n^l}`` that commute with
every permutation is computed three ways: by solving the equivariance equations (a null
space), by the trace of the Reynolds (group-averaging) projector,
``1/n! sum_pi fix(pi)^(k+l)``, and by counting set partitions (Maron et al. 2019):
``Bell(k+l)`` once ``n >= k + l``.
"""

from __future__ import annotations

import itertools
import math

import torch
from torch import nn

from flt_lib._validate import check_choice, check_generator, check_int, check_tensor

__all__ = [
    "DeepSets",
    "EquivariantLinear",
    "PointNet",
    "aggregate",
    "bell_number",
    "critical_points",
    "equivariant_basis",
    "knn_regress",
    "partition_count",
    "power_sums",
    "reynolds_dimension",
    "set_from_power_sums",
]


def _sets(X: object, name: str = "X") -> torch.Tensor:
    return check_tensor(X, name, ndim=3, floating=True, shape_doc="(B, N, d)")


def aggregate(X: torch.Tensor, kind: str) -> torch.Tensor:
    """Pool a batch of sets over its elements: ``"sum"``, ``"mean"`` or ``"max"`` (per
    coordinate).

    Args:
        X: sets, (B, N, d).
        kind: the aggregator.

    Returns:
        (B, d), invariant under permutations of the N rows.
    """
    X = _sets(X)
    check_choice(kind, "kind", ["sum", "mean", "max"])
    if kind == "sum":
        return X.sum(dim=1)
    if kind == "mean":
        return X.mean(dim=1)
    return X.amax(dim=1)


def _mlp(sizes: list[int], dtype: torch.dtype) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b, dtype=dtype))
        if i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _init(model: nn.Module, generator: torch.Generator) -> None:
    """PyTorch's default uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) init, drawn from
    ``generator``."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.Linear):
                bound = 1.0 / mod.in_features**0.5
                for t in (mod.weight, mod.bias):
                    t.copy_((torch.rand(t.shape, generator=generator) * 2 - 1) * bound)


class DeepSets(nn.Module):
    """``rho(sum_i phi(x_i))`` with MLPs phi: d -> width -> latent and rho: latent ->
    width -> out.

    The latent dimension is the width of the sum, the quantity Wagstaff et al. (2019)
    show must be at least the set size for some functions (eq. ``eq-sym-deep-sets``).
    """

    def __init__(
        self,
        d: int,
        latent: int,
        out: int,
        *,
        width: int = 32,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        d, latent = (
            check_int(d, "d", min_value=1),
            check_int(latent, "latent", min_value=1),
        )
        out, width = (
            check_int(out, "out", min_value=1),
            check_int(width, "width", min_value=1),
        )
        check_generator(generator)
        self.phi = _mlp([d, width, width, latent], dtype)
        self.rho = _mlp([latent, width, width, out], dtype)
        _init(self, generator)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Sets (B, N, d) to outputs (B, out)."""
        return self.rho(self.phi(_sets(X)).sum(dim=1))  # (B, latent) -> (B, out)


class EquivariantLinear(nn.Module):
    """The general permutation-equivariant linear layer
    ``Y = X Lambda + 1 1^T X Gamma + 1 b^T``.

    For one channel (d_in = d_out = 1) this is ``(lambda I + gamma 1 1^T) x``, the only
    linear equivariant maps (eq. ``eq-sym-equivariant-layer``).
    """

    def __init__(
        self,
        d_in: int,
        d_out: int,
        *,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        d_in, d_out = (
            check_int(d_in, "d_in", min_value=1),
            check_int(d_out, "d_out", min_value=1),
        )
        check_generator(generator)
        scale = 1.0 / d_in**0.5
        self.Lambda = nn.Parameter(
            (torch.randn(d_in, d_out, generator=generator) * scale).to(dtype)
        )
        self.Gamma = nn.Parameter(
            (torch.randn(d_in, d_out, generator=generator) * scale).to(dtype)
        )
        self.bias = nn.Parameter(torch.zeros(d_out, dtype=dtype))

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Sets (B, N, d_in) to (B, N, d_out); permuting the rows of X permutes the rows
        of Y."""
        X = _sets(X)
        pooled = X.sum(dim=1, keepdim=True)  # (B, 1, d_in) = 1^T X
        return X @ self.Lambda + pooled @ self.Gamma + self.bias


class PointNet(nn.Module):
    """``gamma(max_i h(x_i))``: a shared MLP h to K features per point, max-pool, then
    gamma.

    Without the input and feature transformers (T-nets) of Qi et al. (2017), which do
    not change the symmetry argument (eq. ``eq-sym-pointnet``).
    """

    def __init__(
        self, d: int, K: int, out: int, *, width: int = 32, generator: torch.Generator,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        d, K = check_int(d, "d", min_value=1), check_int(K, "K", min_value=1)
        out, width = (
            check_int(out, "out", min_value=1),
            check_int(width, "width", min_value=1),
        )
        check_generator(generator)
        self.h = _mlp([d, width, K], dtype)
        self.gamma = _mlp([K, width, out], dtype)
        _init(self, generator)

    def point_features(self, X: torch.Tensor) -> torch.Tensor:
        """Per-point features h(x_i), (B, N, K)."""
        return self.h(_sets(X))

    def global_feature(self, X: torch.Tensor) -> torch.Tensor:
        """The max-pooled global feature ``u = max_i h(x_i)``, (B, K)."""
        return self.point_features(X).amax(dim=1)

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        """Sets (B, N, d) to outputs (B, out)."""
        return self.gamma(self.global_feature(X))


def critical_points(features: torch.Tensor) -> torch.Tensor:
    """PointNet's critical set: for each of the K coordinates, one point attaining the
    max.

    Qi et al. (2017, Theorem 2): keeping only these points (at most K of them) leaves
    the max-pooled global feature unchanged.

    Args:
        features: per-point features of one set, (N, K).

    Returns:
        The sorted, distinct indices of the critical points, int64 (c,) with c <= K.
    """
    features = check_tensor(
        features, "features", ndim=2, floating=True, shape_doc="(N, K)"
    )
    return _critical_points(features)


def _critical_points(features):
    return torch.unique(features.argmax(dim=0))  # (c,)


def bell_number(k: int) -> int:
    """The Bell number B_k: the number of partitions of a k-element set (B_0 = 1)."""
    k = check_int(k, "k", min_value=0, max_value=30)
    row = [1]
    for _ in range(k):  # Bell triangle
        nxt = [row[-1]]
        for v in row:
            nxt.append(nxt[-1] + v)
        row = nxt
    return row[0]


def partition_count(k: int, max_blocks: int) -> int:
    """Partitions of a k-element set into at most ``max_blocks`` blocks (sum of Stirling
    numbers)."""
    k = check_int(k, "k", min_value=0, max_value=30)
    max_blocks = check_int(max_blocks, "max_blocks", min_value=0)

    def stirling2(k: int, j: int) -> int:
        return sum(
            (-1) ** i * math.comb(j, i) * (j - i) ** k for i in range(j + 1)
        ) // math.factorial(j)

    return sum(stirling2(k, j) for j in range(0, min(k, max_blocks) + 1)) if k else 1


def reynolds_dimension(n: int, k_in: int, k_out: int) -> int:
    """Dimension of the permutation-equivariant linear maps R^{n^k_in} -> R^{n^k_out}.

    The Reynolds projector ``R(M) = 1/n! sum_P rho_out(P) M rho_in(P)^T`` maps every
    linear map onto the equivariant ones and fixes those, so the dimension is its trace,
    ``1/n! sum_pi tr(P)^(k_in + k_out) = 1/n! sum_pi fix(pi)^(k_in + k_out)``, computed
    here exactly by running over all n! permutations.

    Args:
        n: set size, 1 <= n <= 8.
        k_in, k_out: tensor orders of input and output (1: a vector per set, 2: a
            matrix).

    Returns:
        The dimension (an integer).
    """
    n = check_int(n, "n", min_value=1, max_value=8)
    k = check_int(k_in, "k_in", min_value=0) + check_int(k_out, "k_out", min_value=0)
    return _reynolds_dimension(n, k)


def _reynolds_dimension(n, k):
    total = sum(
        sum(i == p for i, p in enumerate(perm)) ** k
        for perm in itertools.permutations(range(n))
    )
    dim, rem = divmod(total, math.factorial(n))
    # the trace of a projector is an integer (Burnside); a remainder would be a bug
    if rem:
        raise RuntimeError(f"non-integer Reynolds trace {total}/{math.factorial(n)}")
    return dim


def _tensor_perm(n: int, perm: tuple[int, ...], k: int) -> torch.Tensor:
    """The permutation of the n^k entries of an order-k tensor induced by ``perm`` (as
    indices)."""
    idx = torch.arange(n**k).reshape((n,) * k)
    p = torch.tensor(perm)
    for axis in range(k):
        idx = idx.index_select(axis, p)
    return idx.reshape(-1)


def equivariant_basis(
    n: int, k_in: int, k_out: int, *, tol: float = 1e-9
) -> torch.Tensor:
    """An orthonormal basis of the linear maps M: R^{n^k_in} -> R^{n^k_out} with
    ``M P = P M``.

    Solves the equivariance equations ``rho_out(g) M - M rho_in(g) = 0`` for the
    generators g of the symmetric group (the transposition (0 1) and the n-cycle) as a
    null space: the eigenvectors of ``sum_g B_g^T B_g`` with eigenvalue 0, where
    ``B_g vec(M) = 0`` is the equation for g. The size of the result is the dimension of
    the solution space.

    Args:
        n: set size, 2 <= n; n^(k_in + k_out) <= 1296 (e.g. n <= 6 for 2-tensors to
            2-tensors).
        k_in, k_out: tensor orders (1 or 2 in the book).
        tol: eigenvalues below ``tol`` count as zero.

    Returns:
        float64 tensor (dim, n^k_out, n^k_in).
    """
    n = check_int(n, "n", min_value=2)
    k_in = check_int(k_in, "k_in", min_value=0, max_value=3)
    k_out = check_int(k_out, "k_out", min_value=0, max_value=3)
    N_in, N_out = n**k_in, n**k_out
    if N_in * N_out > 1296:
        raise ValueError(
            "n^(k_in + k_out) must be <= 1296 (the unknowns of the SVD), got "
            f"{N_in * N_out}"
        )
    return _equivariant_basis(n, k_in, k_out, tol=tol)


def _equivariant_basis(
    n: int, k_in: int, k_out: int, *, tol: float = 1e-9
) -> torch.Tensor:
    """The check-free core of :func:`equivariant_basis` (arguments already checked)."""
    N_in, N_out = n**k_in, n**k_out
    generators = [(1, 0, *range(2, n)), tuple((i + 1) % n for i in range(n))]
    eye = torch.eye(N_out * N_in, dtype=torch.float64)
    blocks = []
    for g in generators:
        p_in, p_out = _tensor_perm(n, g, k_in), _tensor_perm(n, g, k_out)
        # (P_out M P_in^T)[a, b] = M[p_out[a], p_in[b]]: a permutation of the entries
        # of M.
        src = (p_out[:, None] * N_in + p_in[None, :]).reshape(-1)
        blocks.append(eye[src] - eye)  # vec(P_out M P_in^T) - vec(M)
    # right singular vectors, ascending
    sing, V = torch.linalg.eigh(sum(B.T @ B for B in blocks))
    return V[:, sing < tol].T.reshape(-1, N_out, N_in)


def power_sums(X: torch.Tensor, L: int) -> torch.Tensor:
    """The first L power sums ``p_k = sum_i x_i^k`` of sets of scalars (eq.
    ``eq-sym-power-sums``).

    This is the Deep Sets sum ``sum_i phi(x_i)`` with ``phi(x) = (x, x^2, ..., x^L)``.

    Args:
        X: sets of n scalars, (B, n).
        L: latent dimension, >= 1.

    Returns:
        (B, L).
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(B, n)")
    L = check_int(L, "L", min_value=1)
    k = torch.arange(1, L + 1, dtype=X.dtype, device=X.device)
    return (X[:, :, None] ** k).sum(dim=1)  # (B, L)


def set_from_power_sums(p: torch.Tensor) -> torch.Tensor:
    """Recover a multiset of n reals from its first n power sums (Newton's identities).

    The elementary symmetric polynomials follow from
    ``k e_k = sum_{i=1}^k (-1)^(i-1) e_{k-i} p_i``; the set is the root set of
    ``t^n - e_1 t^(n-1) + e_2 t^(n-2) - ... + (-1)^n e_n``, computed as the eigenvalues
    of its companion matrix. This is the decoder rho that makes the power-sum embedding
    with L = n a complete sum-decomposition.

    Args:
        p: power sums p_1 .. p_n, (n,).

    Returns:
        The n elements, sorted, (n,) (real parts; the roots are real when p came from
        reals).
    """
    p = check_tensor(p, "p", ndim=1, floating=True, shape_doc="(n,)")
    if p.shape[0] == 0:
        raise ValueError("p must hold at least one power sum")
    return _set_from_power_sums(p)


def _set_from_power_sums(p):
    n = p.shape[0]
    e = [p.new_ones(())]
    for k in range(1, n + 1):
        e.append(
            sum((-1) ** (i - 1) * e[k - i] * p[i - 1] for i in range(1, k + 1)) / k
        )
    # t^n + c_1 t^(n-1) + ...
    coeffs = torch.stack([(-1) ** k * e[k] for k in range(1, n + 1)])
    companion = torch.zeros(n, n, dtype=p.dtype, device=p.device)
    companion[0] = -coeffs
    if n > 1:
        companion[1:, :-1] = torch.eye(n - 1, dtype=p.dtype, device=p.device)
    return torch.sort(torch.linalg.eigvals(companion).real).values


def knn_regress(
    Z_train: torch.Tensor, y_train: torch.Tensor, Z_test: torch.Tensor, k: int
) -> torch.Tensor:
    """k-nearest-neighbour regression: the mean target of the k closest training
    points.

    A flexible, assumption-free decoder rho: if ``y`` is a function of ``z``, its error
    goes to zero with more data; if it is not, an irreducible error remains.

    Args:
        Z_train: training inputs, (m, L).
        y_train: training targets, (m,).
        Z_test: query points, (q, L).
        k: number of neighbours, 1 <= k <= m.

    Returns:
        Predictions, (q,).
    """
    Z_train = check_tensor(
        Z_train, "Z_train", ndim=2, floating=True, shape_doc="(m, L)"
    )
    y_train = check_tensor(
        y_train,
        "y_train",
        shape=(Z_train.shape[0],),
        floating=True,
        shape_doc="(m,)",
    )
    Z_test = check_tensor(
        Z_test,
        "Z_test",
        shape=(None, Z_train.shape[1]),
        floating=True,
        shape_doc="(q, L)",
    )
    k = check_int(k, "k", min_value=1, max_value=Z_train.shape[0])
    idx = torch.cdist(Z_test, Z_train).topk(k, dim=1, largest=False).indices  # (q, k)
    return y_train[idx].mean(dim=1)
