"""Message-passing layers: GCN, GAT and GIN, and the over-squashing bound
(Section 6.5).

Node features are the rows of ``X`` (n, d); every layer takes ``(X, A)`` or
``(X, A_hat)`` and returns new node features, so that relabelling the nodes,
``(P X, P A P^T)``, permutes the output rows (equivariance); a sum over nodes afterwards
is invariant.

- GCN layer (Kipf & Welling 2017): ``H' = sigma(A_hat H W + 1 b^T)``  (eq-sym-gcn-layer)
- GAT layer (Velickovic et al. 2018): ``h'_i = sum_{j in N(i) + i} alpha_ij W^T h_j``
  with ``alpha_ij = softmax_j LeakyReLU(a_dst^T W^T h_i + a_src^T W^T h_j)``
  (eq-sym-gat)
- GIN layer (Xu et al. 2019): ``h'_i = MLP((1 + eps) h_i + sum_{j in N(i)} h_j)``
  (thm-sym-wl)
- over-squashing (Topping et al. 2022): for r ReLU GCN layers,
  ``|| d h_i^(r) / d x_s ||_2 <= prod_l ||W_l||_2 (A_hat^r)_is``  (eq-sym-oversquashing)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "GAT",
    "GATLayer",
    "GCN",
    "GIN",
    "NodeMLP",
    "gcn_layer",
    "jacobian_norms",
    "oversquashing_bound",
    "sbm_node_features",
]


def _features(X: object, name: str = "X") -> torch.Tensor:
    return check_tensor(X, name, ndim=2, floating=True, shape_doc="(n, d)")


def _square(A: object, n: int, name: str) -> torch.Tensor:
    return check_tensor(
        A, name, shape=(n, n), floating=True, shape_doc=f"(n, n) = ({n}, {n})"
    )


def _uniform(
    shape: tuple[int, ...],
    fan_in: int,
    generator: torch.Generator,
    dtype: torch.dtype,
) -> torch.Tensor:
    bound = 1.0 / fan_in**0.5
    return ((torch.rand(shape, generator=generator) * 2 - 1) * bound).to(dtype)


def gcn_layer(
    X: torch.Tensor,
    A_hat: torch.Tensor,
    W: torch.Tensor,
    b: torch.Tensor | None = None,
    *,
    relu: bool = True,
) -> torch.Tensor:
    """One GCN layer ``sigma(A_hat X W + b)`` (eq. ``eq-sym-gcn-layer``).

    Args:
        X: node features, (n, d_in).
        A_hat: the coupling, e.g. ``graphs.normalized_adjacency(A)``, (n, n).
        W: weights, (d_in, d_out).
        b: bias, (d_out,) or None.
        relu: apply ReLU (else the layer is linear).

    Returns:
        (n, d_out).
    """
    X = _features(X)
    A_hat = _square(A_hat, X.shape[0], "A_hat")
    W = check_tensor(W, "W", ndim=2, floating=True, shape_doc="(d_in, d_out)")
    if W.shape[0] != X.shape[1]:
        raise ValueError(f"W must have d_in = {X.shape[1]} rows, got {W.shape[0]}")
    if b is not None:
        b = check_tensor(
            b, "b", shape=(W.shape[1],), floating=True, shape_doc="(d_out,)"
        )
    return _gcn_layer(X, A_hat, W, b, relu)


def _gcn_layer(X, A_hat, W, b, relu):
    H = A_hat @ (X @ W)  # (n, d_out): mix features, then neighbours
    if b is not None:
        H = H + b
    return torch.relu(H) if relu else H


class GCN(nn.Module):
    """A stack of GCN layers ``d -> hidden ... -> out``; ReLU between layers, none at
    the end."""

    def __init__(
        self,
        sizes: list[int],
        *,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        if not isinstance(sizes, (list, tuple)) or len(sizes) < 2:
            raise ValueError(
                f"sizes must list at least an input and an output width, got {sizes!r}"
            )
        sizes = [check_int(s, f"sizes[{i}]", min_value=1) for i, s in enumerate(sizes)]
        check_generator(generator)
        self.weights = nn.ParameterList(
            nn.Parameter(_uniform((a, b), a, generator, dtype))
            for a, b in zip(sizes[:-1], sizes[1:])
        )
        self.biases = nn.ParameterList(
            nn.Parameter(torch.zeros(b, dtype=dtype)) for b in sizes[1:]
        )

    def forward(self, X: torch.Tensor, A_hat: torch.Tensor) -> torch.Tensor:
        """Node features (n, d) and coupling (n, n) to outputs (n, out)."""
        L = len(self.weights)
        for layer, (W, b) in enumerate(zip(self.weights, self.biases)):
            X = gcn_layer(X, A_hat, W, b, relu=layer < L - 1)
        return X


class NodeMLP(nn.Module):
    """The same widths as :class:`GCN` but with ``A_hat`` replaced by the identity: no
    graph."""

    def __init__(
        self,
        sizes: list[int],
        *,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.gcn = GCN(sizes, generator=generator, dtype=dtype)

    def forward(self, X: torch.Tensor, A_hat: torch.Tensor) -> torch.Tensor:
        """Node features (n, d) to outputs (n, out); ``A_hat`` is ignored."""
        X = _features(X)
        return self.gcn(X, torch.eye(X.shape[0], dtype=X.dtype, device=X.device))


class GATLayer(nn.Module):
    """One single-head graph attention layer (eq. ``eq-sym-gat``), as in the authors'
    code.

    Each node attends over its neighbours and itself; the logits are
    ``LeakyReLU_{0.2}(a_dst . W^T h_i + a_src . W^T h_j)``, masked to the edges of
    ``A + I``.
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
        self.W = nn.Parameter(_uniform((d_in, d_out), d_in, generator, dtype))
        self.a_src = nn.Parameter(_uniform((d_out,), d_out, generator, dtype))
        self.a_dst = nn.Parameter(_uniform((d_out,), d_out, generator, dtype))

    def attention(self, X: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        """The coupling alpha (n, n): row i is a probability vector over N(i) and i
        itself."""
        X = _features(X)
        A = _square(A, X.shape[0], "A")
        Z = X @ self.W  # (n, d_out)
        logits = F.leaky_relu(
            (Z @ self.a_dst)[:, None] + (Z @ self.a_src)[None, :], 0.2
        )  # (n, n)
        mask = (A + torch.eye(A.shape[0], dtype=A.dtype, device=A.device)) > 0
        return torch.softmax(logits.masked_fill(~mask, float("-inf")), dim=1)

    def forward(self, X: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        """Node features (n, d_in) and adjacency (n, n) to (n, d_out)."""
        return self.attention(X, A) @ (X @ self.W)


class GAT(nn.Module):
    """Two GAT layers with an ELU between them (single head each)."""

    def __init__(
        self,
        d: int,
        hidden: int,
        out: int,
        *,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.layer1 = GATLayer(d, hidden, generator=generator, dtype=dtype)
        self.layer2 = GATLayer(hidden, out, generator=generator, dtype=dtype)

    def forward(self, X: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        """Node features (n, d) and adjacency (n, n) to (n, out)."""
        return self.layer2(F.elu(self.layer1(X, A)), A)


class GIN(nn.Module):
    """Graph isomorphism network: GIN layers, a sum readout after every layer,
    concatenated.

    ``readout(X, A)`` is a graph-level vector, invariant under relabelling the nodes;
    its distinguishing power is bounded by 1-WL (Xu et al. 2019).
    """

    def __init__(
        self,
        d: int,
        hidden: int,
        layers: int,
        *,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        d, hidden = (
            check_int(d, "d", min_value=1),
            check_int(hidden, "hidden", min_value=1),
        )
        layers = check_int(layers, "layers", min_value=1)
        check_generator(generator)
        self.eps = nn.Parameter(torch.zeros(layers, dtype=dtype))
        self.mlps = nn.ModuleList()
        for k in range(layers):
            mlp = nn.Sequential(
                nn.Linear(d if k == 0 else hidden, hidden, dtype=dtype), nn.ReLU(),
                nn.Linear(hidden, hidden, dtype=dtype), nn.ReLU(),
            )
            with torch.no_grad():
                for lin in (mlp[0], mlp[2]):
                    lin.weight.copy_(
                        _uniform(
                            tuple(lin.weight.shape), lin.in_features, generator, dtype
                        )
                    )
                    lin.bias.copy_(
                        _uniform(
                            tuple(lin.bias.shape), lin.in_features, generator, dtype
                        )
                    )
            self.mlps.append(mlp)

    def forward(self, X: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        """Node embeddings after the last layer, (n, hidden)."""
        return self.node_embeddings(X, A)[-1]

    def node_embeddings(self, X: torch.Tensor, A: torch.Tensor) -> list[torch.Tensor]:
        """The node embeddings after every layer (``thm-sym-wl``), each (n, hidden)."""
        H = _features(X)
        A = _square(A, H.shape[0], "A")
        out = []
        for k, mlp in enumerate(self.mlps):
            H = mlp((1 + self.eps[k]) * H + A @ H)
            out.append(H)
        return out

    def readout(self, X: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        """The graph embedding: sum over nodes after each layer, concatenated,
        (layers * hidden,)."""
        return torch.cat([H.sum(dim=0) for H in self.node_embeddings(X, A)])


def jacobian_norms(f, X: torch.Tensor, i: int) -> torch.Tensor:
    """``|| d f(X)_i / d x_s ||_2`` (spectral norm) for every node s, by autograd.

    Args:
        f: maps node features (n, d) to node outputs (n, d_out).
        X: node features, (n, d).
        i: the node whose output is differentiated.

    Returns:
        (n,): the sensitivity of node i's output to each node's input.
    """
    X = _features(X)
    i = check_int(i, "i", min_value=0, max_value=X.shape[0] - 1)
    J = torch.autograd.functional.jacobian(lambda Z: f(Z)[i], X)  # (d_out, n, d)
    return torch.linalg.matrix_norm(J.permute(1, 0, 2), ord=2)  # (n,)


def oversquashing_bound(
    A_hat: torch.Tensor, weights: list[torch.Tensor], i: int
) -> torch.Tensor:
    """The bound ``prod_l ||W_l||_2 (A_hat^r)_{i, s}`` for all s, with r = len(weights)
    layers.

    Holds for r GCN layers with activations whose derivative lies in [0, 1] (ReLU,
    identity), eq. ``eq-sym-oversquashing``.
    """
    A_hat = check_tensor(A_hat, "A_hat", ndim=2, floating=True, shape_doc="(n, n)")
    if not isinstance(weights, (list, tuple)) or not weights:
        raise TypeError("weights must be a non-empty list of (d_in, d_out) tensors")
    i = check_int(i, "i", min_value=0, max_value=A_hat.shape[0] - 1)
    for k, W in enumerate(weights):
        check_tensor(
            W, f"weights[{k}]", ndim=2, floating=True, shape_doc="(d_in, d_out)"
        )
    return _oversquashing_bound(A_hat, weights, i)


def _oversquashing_bound(A_hat, weights, i):
    scale = 1.0
    for W in weights:
        scale *= torch.linalg.matrix_norm(W.detach(), ord=2).item()
    return scale * torch.linalg.matrix_power(A_hat, len(weights))[i]


def sbm_node_features(
    block: torch.Tensor,
    d: int,
    *,
    signal: float,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float32,
) -> torch.Tensor:
    """Noisy node features ``x_i = signal * e_{block_i} + N(0, I_d)`` for a block model.

    Args:
        block: the block of every node, int64 (n,), values < d.
        d: feature dimension.
        signal: strength of the class direction, >= 0.
        generator: a CPU torch.Generator.

    Returns:
        (n, d).
    """
    block = check_tensor(block, "block", ndim=1, shape_doc="(n,)")
    d = check_int(d, "d", min_value=int(block.max().item()) + 1)
    signal = check_real(signal, "signal", min_value=0.0)
    check_generator(generator)
    X = torch.randn(block.shape[0], d, generator=generator)
    X[torch.arange(block.shape[0]), block] += signal
    return X.to(dtype)
