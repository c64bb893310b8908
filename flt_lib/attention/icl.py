"""In-context learning of linear regression (5.10).

Each prompt is a fresh regression task: a weight vector ``w ~ N(0, I_d)``, inputs
``x_i ~ N(0, I_d)`` and targets ``y_i = w . x_i + noise`` for ``i = 1..N``, then a query
``x_q`` whose target the model must predict from the prompt alone (Garg, Tsipras, Liang
& Valiant 2022). Tokens are the rows ``z_i = (x_i, y_i)`` of a (N + 1, d + 1) matrix
whose last row is the query ``(x_q, 0)``.

A linear self-attention (LSA) layer adds ``(1/N) sum_i W_pv z_i (z_i^T W_kq z_j)`` to
every token ``z_j``, the sum running over the N context tokens (eq-attn-lsa). With the
weights of :func:`gd_construction` it performs exactly one step of gradient descent on
the in-context least-squares loss (von Oswald et al. 2023; Akyürek et al. 2023), and
``k`` stacked copies perform ``k`` steps. :func:`train_lsa` fits one LSA layer from
random prompts, to compare it with the construction.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "LSAHistory",
    "LinearSelfAttention",
    "RegressionPrompts",
    "construction_distance",
    "gd_construction",
    "gd_predict",
    "lsa_layer",
    "lsa_predict",
    "one_step_risk",
    "ridge_predict",
    "sample_prompts",
    "train_lsa",
]


@dataclass(frozen=True)
class RegressionPrompts:
    """A batch of in-context regression prompts."""

    tokens: torch.Tensor   # (B, N + 1, d + 1): rows (x_i, y_i), last row (x_q, 0)
    target: torch.Tensor   # (B,): the query's target y_q
    w: torch.Tensor        # (B, d): each prompt's weight vector


def sample_prompts(
    n_prompts: int,
    n_context: int,
    d: int,
    *,
    noise: float = 0.0,
    generator: torch.Generator,
    dtype: torch.dtype = torch.float64,
) -> RegressionPrompts:
    """Draw ``n_prompts`` linear-regression prompts (Garg et al. 2022, Section 3).

    Args:
        n_prompts: batch size B, >= 1.
        n_context: context examples N per prompt, >= 1.
        d: input dimension, >= 1.
        noise: standard deviation sigma of the target noise, >= 0.
        generator: CPU generator.
        dtype: floating dtype of the tokens.

    Returns:
        :class:`RegressionPrompts` with tokens of shape (B, N + 1, d + 1).
    """
    B = check_int(n_prompts, "n_prompts", min_value=1)
    N = check_int(n_context, "n_context", min_value=1)
    d = check_int(d, "d", min_value=1)
    sigma = check_real(noise, "noise", min_value=0.0)
    check_generator(generator)
    w = torch.randn(B, d, generator=generator, dtype=dtype)                 # (B, d)
    x = torch.randn(B, N + 1, d, generator=generator, dtype=dtype)     # (B, N+1, d)
    y = (x @ w[:, :, None])[..., 0]                                         # (B, N+1)
    y = y + sigma * torch.randn(B, N + 1, generator=generator, dtype=dtype)
    tokens = torch.cat([x, y[..., None]], dim=-1)                      # (B, N+1, d+1)
    tokens[:, -1, -1] = 0.0                                                 # hide y_q
    return RegressionPrompts(tokens=tokens, target=y[:, -1], w=w)


def lsa_layer(Z: torch.Tensor, W_kq: torch.Tensor, W_pv: torch.Tensor) -> torch.Tensor:
    """One linear self-attention layer with a residual (eq-attn-lsa; von Oswald et al.
    2023, eq. 5): ``z_j + (1/N) sum_{i <= N} W_pv z_i (z_i^T W_kq z_j)``.

    Args:
        Z: tokens, shape (B, N + 1, D); the last row is the query, which is no key.
        W_kq: merged key-query matrix ``W_K^T W_Q``, shape (D, D).
        W_pv: merged projection-value matrix ``P W_V``, shape (D, D).

    Returns:
        Updated tokens, shape (B, N + 1, D).
    """
    N = Z.shape[-2] - 1
    C = Z[..., :N, :]                                        # (B, N, D) context tokens
    scores = C @ W_kq @ Z.transpose(-2, -1)             # (B, N, N+1): z_i^T W_kq z_j
    return Z + scores.transpose(-2, -1) @ (C @ W_pv.T) / N   # (B, N+1, D)


def gd_construction(d: int, eta: float, *, dtype: torch.dtype = torch.float64):
    """The weights with which :func:`lsa_layer` is one gradient-descent step of step
    size ``eta`` from ``w = 0`` on ``L(w) = (1/2N) sum_i (w . x_i - y_i)^2``
    (prop-attn-lsa-gd; von Oswald et al. 2023, Proposition 1).

    ``W_kq`` reads the inputs (``z_i^T W_kq z_j = x_i . x_j``) and ``W_pv`` writes
    ``-eta y_i`` into the target slot, so the query's slot becomes ``-w_1 . x_q``.

    Args:
        d: input dimension, >= 1.
        eta: step size, > 0.
        dtype: floating dtype.

    Returns:
        ``(W_kq, W_pv)``, each of shape (d + 1, d + 1).
    """
    d = check_int(d, "d", min_value=1)
    eta = check_real(eta, "eta", min_value=0.0, strict_min=True)
    W_kq = torch.zeros(d + 1, d + 1, dtype=dtype)
    W_kq[:d, :d] = torch.eye(d, dtype=dtype)
    W_pv = torch.zeros(d + 1, d + 1, dtype=dtype)
    W_pv[d, d] = -eta
    return W_kq, W_pv


def _check_tokens(tokens: object) -> torch.Tensor:
    tokens = check_tensor(tokens, "tokens", ndim=3, floating=True,
                          shape_doc="(B, N + 1, d + 1)")
    if tokens.shape[1] < 2 or tokens.shape[2] < 2:
        raise ValueError(
            "tokens must have shape (B, N + 1, d + 1) with N >= 1 and d >= 1, got "
            f"{tuple(tokens.shape)}"
        )
    return tokens


def lsa_predict(
    tokens: torch.Tensor, W_kq: torch.Tensor, W_pv: torch.Tensor, *, layers: int = 1
) -> torch.Tensor:
    """Prediction of ``layers`` stacked copies of one LSA layer: minus the query's
    target slot after the last layer (von Oswald et al. 2023).

    Args:
        tokens: prompts, shape (B, N + 1, d + 1).
        W_kq, W_pv: shape (d + 1, d + 1) each.
        layers: number of copies, >= 1.

    Returns:
        Predictions ``y_hat_q``, shape (B,).
    """
    tokens = _check_tokens(tokens)
    D = tokens.shape[-1]
    W_kq = check_tensor(W_kq, "W_kq", shape=(D, D), floating=True)
    W_pv = check_tensor(W_pv, "W_pv", shape=(D, D), floating=True)
    layers = check_int(layers, "layers", min_value=1)
    Z = tokens
    for _ in range(layers):
        Z = lsa_layer(Z, W_kq, W_pv)
    return -Z[:, -1, -1]


def gd_predict(tokens: torch.Tensor, *, eta: float, steps: int) -> torch.Tensor:
    """Predict ``w_k . x_q`` after ``steps`` steps of gradient descent from ``w_0 = 0``
    on ``L(w) = (1/2N) sum_i (w . x_i - y_i)^2`` (eq-attn-icl-gd).

    Args:
        tokens: prompts, shape (B, N + 1, d + 1).
        eta: step size, > 0.
        steps: number of steps k, >= 0.

    Returns:
        Predictions, shape (B,).
    """
    tokens = _check_tokens(tokens)
    eta = check_real(eta, "eta", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=0)
    x, y, x_q = tokens[:, :-1, :-1], tokens[:, :-1, -1], tokens[:, -1, :-1]
    N = x.shape[1]
    w = torch.zeros_like(x_q)                                     # (B, d)
    for _ in range(steps):
        residual = (x @ w[:, :, None])[..., 0] - y                # (B, N)
        w = w - eta * (x.transpose(1, 2) @ residual[:, :, None])[..., 0] / N
    return (w * x_q).sum(-1)


def ridge_predict(tokens: torch.Tensor, *, lam: float) -> torch.Tensor:
    """Predict with ridge regression on the context: ``w = (X^T X + lam I)^{-1} X^T y``.

    With ``w ~ N(0, I_d)`` and noise variance ``sigma^2 = lam`` this is the posterior
    mean, the Bayes-optimal prediction under squared loss.

    Args:
        tokens: prompts, shape (B, N + 1, d + 1).
        lam: ridge penalty, >= 0 (0 gives least squares; needs N >= d).

    Returns:
        Predictions, shape (B,).
    """
    tokens = _check_tokens(tokens)
    lam = check_real(lam, "lam", min_value=0.0)
    x, y, x_q = tokens[:, :-1, :-1], tokens[:, :-1, -1], tokens[:, -1, :-1]
    eye = torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
    gram = x.transpose(1, 2) @ x + lam * eye                       # (B, d, d)
    w = torch.linalg.solve(gram, x.transpose(1, 2) @ y[:, :, None])[..., 0]
    return (w * x_q).sum(-1)


def one_step_risk(eta: float, *, d: int, n_context: int, noise: float = 0.0) -> float:
    """Expected squared error ``E (y_hat - y_q)^2`` of one GD step of size ``eta`` from
    0, for ``w, x ~ N(0, I_d)`` and noise variance ``sigma^2`` (prop-attn-icl-risk):
    ``d (eta^2 (N + d + 1 + sigma^2) / N - 2 eta + 1) + sigma^2``.

    Args:
        eta: step size, > 0.
        d: input dimension, >= 1.
        n_context: context examples N, >= 1.
        noise: noise standard deviation sigma, >= 0.

    Returns:
        The risk, a float.
    """
    eta = check_real(eta, "eta", min_value=0.0, strict_min=True)
    d = check_int(d, "d", min_value=1)
    N = check_int(n_context, "n_context", min_value=1)
    s2 = check_real(noise, "noise", min_value=0.0) ** 2
    return d * (eta**2 * (N + d + 1 + s2) / N - 2 * eta + 1) + s2


class LinearSelfAttention(nn.Module):
    """One trainable LSA layer (:func:`lsa_layer`) reading out ``-z_q[-1]``."""

    def __init__(
        self, d: int, *, init_scale: float, generator: torch.Generator
    ) -> None:
        super().__init__()
        d = check_int(d, "d", min_value=1)
        s = check_real(init_scale, "init_scale", min_value=0.0)
        check_generator(generator)
        D = d + 1
        self.W_kq = nn.Parameter(s * torch.randn(D, D, generator=generator))
        self.W_pv = nn.Parameter(s * torch.randn(D, D, generator=generator))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Predictions, shape (B,), for prompts of shape (B, N + 1, d + 1)."""
        return -lsa_layer(tokens, self.W_kq, self.W_pv)[:, -1, -1]


def construction_distance(W_kq: torch.Tensor, W_pv: torch.Tensor, eta: float) -> float:
    """Relative distance of an LSA layer's prediction map to :func:`gd_construction`.

    The prediction is ``-p^T S A x_q`` with ``p`` the last row of ``W_pv``, ``A`` the
    first d columns of ``W_kq`` and ``S`` the context's second moment, so it depends on
    the weights only through the outer product ``p (x) A`` (rescaling ``p`` by c and
    ``A`` by 1/c changes nothing).
    Returns ``||p (x) A - p* (x) A*||_F / ||p* (x) A*||_F``.

    Args:
        W_kq, W_pv: shape (d + 1, d + 1) each.
        eta: the construction's step size, > 0.

    Returns:
        The relative distance, a float.
    """
    W_kq = check_tensor(W_kq, "W_kq", ndim=2, floating=True)
    W_pv = check_tensor(W_pv, "W_pv", shape=tuple(W_kq.shape), floating=True)
    if W_kq.shape[0] != W_kq.shape[1] or W_kq.shape[0] < 2:
        raise ValueError(f"W_kq must be square (d + 1, d + 1), got {tuple(W_kq.shape)}")
    return _construction_distance(W_kq, W_pv, eta)


def _construction_distance(W_kq: torch.Tensor, W_pv: torch.Tensor, eta: float) -> float:
    """The check-free core of :func:`construction_distance`."""
    d = W_kq.shape[0] - 1
    star_kq, star_pv = gd_construction(d, eta, dtype=torch.float64)
    def outer(kq, pv):
        return pv[-1][:, None, None] * kq[:, :d][None]             # (d+1, d+1, d)
    K = outer(W_kq.detach().double(), W_pv.detach().double())
    K_star = outer(star_kq, star_pv)
    return ((K - K_star).norm() / K_star.norm()).item()


@dataclass(frozen=True)
class LSAHistory:
    """Result of :func:`train_lsa`."""

    model: LinearSelfAttention   # the trained layer
    steps: list[int]             # steps at which the records were taken
    loss: list[float]            # training loss (mean squared error) at those steps
    distance: list[float]        # construction_distance to the optimal step there


def train_lsa(
    d: int,
    n_context: int,
    *,
    noise: float = 0.0,
    steps: int,
    batch: int,
    lr: float,
    init_scale: float = 0.1,
    record_every: int = 50,
    generator: torch.Generator,
) -> LSAHistory:
    """Train one LSA layer with Adam on fresh prompts at every step (von Oswald et al.
    2023, Section 3), in float32, with the learning rate decayed to 0 on a cosine.

    Args:
        d: input dimension, >= 1.
        n_context: context examples N, >= 1.
        noise: target noise standard deviation, >= 0.
        steps: Adam steps, >= 1.
        batch: prompts per step, >= 1.
        lr: Adam's learning rate, > 0.
        init_scale: standard deviation of the initial weights, >= 0.
        record_every: record loss and distance every this many steps, >= 1.
        generator: CPU generator (weights, then prompts).

    Returns:
        An :class:`LSAHistory`; distances are to the construction with the optimal
        step ``eta* = N / (N + d + 1 + sigma^2)`` of prop-attn-icl-risk.
    """
    d = check_int(d, "d", min_value=1)
    N = check_int(n_context, "n_context", min_value=1)
    steps = check_int(steps, "steps", min_value=1)
    batch = check_int(batch, "batch", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    record_every = check_int(record_every, "record_every", min_value=1)
    noise = check_real(noise, "noise", min_value=0.0)
    check_generator(generator)
    eta_star = N / (N + d + 1 + noise**2)
    model = LinearSelfAttention(d, init_scale=init_scale, generator=generator)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
    rec_steps, losses, dists = [], [], []
    for step in range(1, steps + 1):
        p = sample_prompts(batch, N, d, noise=noise, generator=generator,
                           dtype=torch.float32)
        loss = ((model(p.tokens) - p.target) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % record_every == 0 or step == steps:
            rec_steps.append(step)
            losses.append(loss.item())
            dists.append(construction_distance(model.W_kq, model.W_pv, eta_star))
    return LSAHistory(model=model, steps=rec_steps, loss=losses, distance=dists)
