"""Sparse-coding data and the symmetric two-layer ReLU network (Allen-Zhu & Li, "Feature
purification").

Data model (every quantity is fixed here, nothing is left implicit):

- a dictionary ``M`` in R^{d x d} with orthonormal columns ``M_j`` (the "features");
- a sparse code ``z`` in {-1, 0, +1}^d with exactly ``k`` nonzero entries, support
  uniform among the k-subsets of [d], signs uniform;
- the input ``x = M z + xi`` with ``xi ~ N(0, sigma_xi^2 I_d)``;
- the label ``y = sign(<w*, z>)`` with ``w*`` in {-1, +1}^d (``k`` odd, so ``<w*, z> !=
  0``).

Model: f(x) = sum_i [ReLU(<w_i, x> - b_i) - ReLU(-<w_i, x> - b_i)], the symmetric
network of Allen-Zhu & Li (2021). The biases are *not* trained:
``b_i = beta * ||w_i||`` is recomputed at every step from the current weight and treated
as a constant in the gradient (a relative threshold; the paper uses a bias that grows
during training for the same purpose). Training is full-batch gradient descent on the
logistic loss from a small Gaussian initialisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.rng import random_orthogonal

__all__ = [
    "SparseCodingConfig",
    "SparseCodingHistory",
    "alignment",
    "purity",
    "random_dictionary",
    "sample_sparse_coding",
    "symmetric_gd_step",
    "symmetric_relu_net",
    "train_symmetric_net",
    "winner_init_rank",
]


@dataclass(frozen=True)
class SparseCodingConfig:
    """Parameters of the sparse-coding experiment."""

    d: int = 32  # input dimension = number of dictionary features
    # number of nonzero entries of the sparse code z (odd, so labels never tie)
    k: int = 3
    # standard deviation of each coordinate of the dense noise xi
    sigma_xi: float = 0.02
    m: int = 64  # number of hidden neurons w_i
    sigma0: float = 0.01  # standard deviation of the Gaussian initialisation of w_i
    beta: float = 0.5  # relative threshold: b_i = beta * ||w_i||
    lr: float = 0.5  # gradient-descent step size
    steps: int = 400  # number of full-batch gradient steps
    record_every: int = 20  # record the alignment matrix every this many steps

    def __post_init__(self) -> None:
        check_int(self.d, "d", min_value=1)
        check_int(self.k, "k", min_value=1, max_value=self.d)
        if self.k % 2 == 0:
            raise ValueError(
                f"k must be odd (so that <w*, z> is never 0), got {self.k}"
            )
        check_real(self.sigma_xi, "sigma_xi", min_value=0.0)
        check_int(self.m, "m", min_value=1)
        check_real(self.sigma0, "sigma0", min_value=0.0, strict_min=True)
        check_real(self.beta, "beta", min_value=0.0)
        check_real(self.lr, "lr", min_value=0.0, strict_min=True)
        check_int(self.steps, "steps", min_value=1)
        check_int(self.record_every, "record_every", min_value=1)


def random_dictionary(d: int, *, generator: torch.Generator) -> torch.Tensor:
    """A uniformly (Haar) random orthogonal dictionary, in float32.

    :func:`flt_lib.rng.random_orthogonal` with ``rows = cols = d``.

    Args:
        d: dimension, d >= 1.
        generator: CPU torch generator.

    Returns:
        M of shape (d, d) with orthonormal columns M_j = M[:, j].
    """
    d = check_int(d, "d", min_value=1)
    return random_orthogonal(d, d, generator=generator, dtype=torch.float32)


def sample_sparse_coding(
    n: int,
    M: torch.Tensor,
    w_star: torch.Tensor,
    *,
    k: int,
    sigma_xi: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Draw n examples x = M z + xi, y = sign(<w*, z>) of the sparse-coding model
    (def-sc-data).

    Args:
        n: number of examples.
        M: dictionary, shape (d, d), orthonormal columns.
        w_star: label vector, shape (d,).
        k: number of nonzero entries of each code z (1 <= k <= d).
        sigma_xi: noise standard deviation (>= 0).
        generator: CPU torch generator.

    Returns:
        X of shape (n, d), y of shape (n,) in {-1, +1}, Z of shape (n, d) (the codes).
    """
    n = check_int(n, "n", min_value=1)
    check_tensor(M, "M", ndim=2, floating=True, shape_doc="(d, d)")
    d = M.shape[0]
    check_tensor(M, "M", shape=(d, d), shape_doc="(d, d)")
    check_tensor(w_star, "w_star", shape=(d,), shape_doc="(d,)")
    k = check_int(k, "k", min_value=1, max_value=d)
    sigma_xi = check_real(sigma_xi, "sigma_xi", min_value=0.0)
    check_generator(generator)
    return _sample_sparse_coding(
        n, M, w_star, k=k, sigma_xi=sigma_xi, generator=generator
    )


def _sample_sparse_coding(
    n: int,
    M: torch.Tensor,
    w_star: torch.Tensor,
    *,
    k: int,
    sigma_xi: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The check-free core of :func:`sample_sparse_coding`."""
    d = M.shape[0]
    # (n, k) uniform k-subset
    support = torch.rand(n, d, generator=generator).argsort(dim=1)[:, :k]
    signs = torch.randint(0, 2, (n, k), generator=generator).float() * 2 - 1  # (n, k)
    Z = torch.zeros(n, d).scatter_(1, support, signs).to(M.device, M.dtype)  # (n, d)
    # (n, d)
    xi = (sigma_xi * torch.randn(n, d, generator=generator)).to(M.device, M.dtype)
    X = Z @ M.T + xi  # (n, d): row i is M z_i + xi_i
    s = Z @ w_star.to(M.dtype)
    y = torch.where(s >= 0, 1.0, -1.0).to(M.dtype)  # sign with the tie at 0 sent to +1
    return X, y, Z


def symmetric_relu_net(
    X: torch.Tensor, W: torch.Tensor, b: torch.Tensor
) -> torch.Tensor:
    """Output of f(x) = sum_i [ReLU(<w_i,x> - b_i) - ReLU(-<w_i,x> - b_i)].

    Args:
        X: inputs, shape (n, d).
        W: neuron weights, shape (m, d), row i is w_i.
        b: biases, shape (m,).

    Returns:
        f(X) of shape (n,).
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(W, "W", shape=(None, X.shape[1]), shape_doc="(m, d)")
    check_tensor(b, "b", shape=(W.shape[0],), shape_doc="(m,)")
    return _symmetric_relu_net(X, W, b)


def _symmetric_relu_net(X, W, b):
    u = X @ W.T  # (n, m)
    return (torch.relu(u - b) - torch.relu(-u - b)).sum(dim=1)


def alignment(W: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """Neuron-feature alignment matrix A[i, j] = <w_i, M_j>.

    Args:
        W: weights, shape (m, d). M: dictionary, shape (d, d).

    Returns:
        A of shape (m, d).
    """
    check_tensor(W, "W", ndim=2, shape_doc="(m, d)")
    check_tensor(M, "M", shape=(W.shape[1], W.shape[1]), shape_doc="(d, d)")
    return W @ M


def purity(A: torch.Tensor) -> torch.Tensor:
    """Purity max_j |<w_i, M_j>| / ||w_i|| of each neuron, from its alignment row.

    Equals 1 for a neuron along a single feature and 1/sqrt(d) for an equal-weight
    mixture of all d features (M orthonormal, so ||w_i|| = ||A[i]||).

    Args:
        A: alignment matrix, shape (m, d).

    Returns:
        purity of shape (m,), values in [1/sqrt(d), 1].
    """
    check_tensor(A, "A", ndim=2, floating=True, shape_doc="(m, d)")
    return _purity(A)


def _purity(A: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`purity` (arguments already checked)."""
    return A.abs().amax(dim=1) / A.norm(dim=1).clamp_min(1e-30)


def symmetric_gd_step(
    W: torch.Tensor, X: torch.Tensor, y: torch.Tensor, *, beta: float, lr: float
) -> torch.Tensor:
    """One GD step on the logistic loss of the symmetric network (eq-sc-network),
    unchecked.

    Gradient of mean_n log(1 + exp(-y_n f(x_n))) with respect to w_i, with the bias
    b_i = beta ||w_i|| held fixed inside the step:
    -mean_n sigmoid(-y_n f(x_n)) y_n x_n 1[|<w_i, x_n>| > b_i].

    Args:
        W: weights, (m, d). X: inputs, (n, d). y: labels, (n,). beta: relative
            threshold.
        lr: step size.

    Returns:
        The new weights, (m, d).
    """
    b = beta * W.norm(dim=1)  # (m,)
    u = X @ W.T  # (n, m)
    f = (torch.relu(u - b) - torch.relu(-u - b)).sum(dim=1)  # (n,)
    g = -torch.sigmoid(-y * f) * y / X.shape[0]  # (n,) d loss / d f
    active = (u.abs() > b).to(X.dtype)  # (n, m): derivative of the symmetric unit in u
    return W - lr * (active * g.unsqueeze(1)).T @ X  # (m, d)


@dataclass(frozen=True)
class SparseCodingHistory:
    """What :func:`train_symmetric_net` records, every ``cfg.record_every`` steps and at
    the end."""

    steps: torch.Tensor  # (R,) the recorded step numbers
    A: torch.Tensor  # (R, m, d) alignment matrices <w_i, M_j>
    loss: torch.Tensor  # (R,) training loss, CPU
    train_acc: torch.Tensor  # (R,) training accuracy, CPU
    W: torch.Tensor  # (m, d) final weights
    W0: torch.Tensor  # (m, d) initial weights


def train_symmetric_net(
    X: torch.Tensor,
    y: torch.Tensor,
    M: torch.Tensor,
    cfg: SparseCodingConfig,
    *,
    generator: torch.Generator,
) -> SparseCodingHistory:
    """Full-batch GD on the logistic loss for the symmetric ReLU network, tracking <w_i,
    M_j>.

    Each step is :func:`symmetric_gd_step`; w_i starts from N(0, sigma0^2 I).

    Args:
        X: training inputs, shape (n, d). y: labels in {-1, +1}, shape (n,).
        M: dictionary, shape (d, d) (only used to record alignments).
        cfg: the experiment configuration.
        generator: CPU generator for the initialisation.

    Returns:
        A :class:`SparseCodingHistory`.
    """
    check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    check_tensor(y, "y", shape=(X.shape[0],), shape_doc="(n,)")
    check_tensor(M, "M", shape=(X.shape[1], X.shape[1]), shape_doc="(d, d)")
    if not isinstance(cfg, SparseCodingConfig):
        raise TypeError(f"cfg must be a SparseCodingConfig, got {type(cfg).__name__}")
    check_generator(generator)
    d = X.shape[1]
    # (m, d)
    W = (cfg.sigma0 * torch.randn(cfg.m, d, generator=generator)).to(X.device, X.dtype)
    W0 = W.clone()
    snaps, rec_steps, losses, accs = [], [], [], []
    for t in range(cfg.steps + 1):
        if t % cfg.record_every == 0 or t == cfg.steps:
            margin = y * symmetric_relu_net(X, W, cfg.beta * W.norm(dim=1))
            snaps.append(alignment(W, M))
            rec_steps.append(t)
            losses.append(torch.nn.functional.softplus(-margin).mean())
            accs.append((margin > 0).float().mean())
        if t == cfg.steps:
            break
        W = symmetric_gd_step(W, X, y, beta=cfg.beta, lr=cfg.lr)
    return SparseCodingHistory(
        steps=torch.tensor(rec_steps),
        A=torch.stack(snaps),
        loss=torch.stack(losses).cpu(),
        train_acc=torch.stack(accs).cpu(),
        W=W,
        W0=W0,
    )


def winner_init_rank(A0: torch.Tensor, AT: torch.Tensor) -> torch.Tensor:
    """For each feature j, the initial rank of the neuron that ends most aligned with
    M_j.

    The winner of feature j is argmax_i |AT[i, j]|; its rank is its position (0 =
    largest) when the neurons are sorted by |A0[i, j]|. Rank 0 means the winner was
    already the best at init.

    Args:
        A0: alignment at initialisation, shape (m, d). AT: final alignment, shape (m,
            d).

    Returns:
        ranks, shape (d,), integers in [0, m).
    """
    check_tensor(A0, "A0", ndim=2, shape_doc="(m, d)")
    check_tensor(AT, "AT", shape=tuple(A0.shape), shape_doc="(m, d)")
    return _winner_init_rank(A0, AT)


def _winner_init_rank(A0: torch.Tensor, AT: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`winner_init_rank` (arguments already checked)."""
    winners = AT.abs().argmax(dim=0)  # (d,)
    # (m, d): order[r, j] = neuron of rank r
    order = A0.abs().argsort(dim=0, descending=True)
    return (order == winners.unsqueeze(0)).float().argmax(dim=0)
