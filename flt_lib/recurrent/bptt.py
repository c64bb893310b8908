"""Backpropagation through time, the gradient bound, truncation and clipping (Section
4.2).

For an Elman layer (eq-rnn-elman) with a linear read-out y_hat_t = W z_t and the loss

    L = 1/2 sum_b sum_t ||W z_t - y_t||^2,                                 (eq-rnn-loss)

:func:`bptt` computes every gradient by hand with the backward recursion (eq-rnn-bptt)

    delta_t = W^T (y_hat_t - y_t) + U^T (phi'(a_{t+1}) * delta_{t+1}),  delta_{T+1} = 0,

where delta_t = dL/dz_t and a_t = U z_{t-1} + V x_t + b (Werbos 1990). With
``truncate=k`` each loss term sends its gradient back through at most k steps (Williams
& Peng 1990's BPTT(k), applied to every term): O(T k) work, against O(T) for full BPTT.
Running the sequence in chunks of k and detaching the state between chunks is a
different estimator, their BPTT(k; k).

The Jacobian of one step is J_t = dz_t/dz_{t-1} = diag(phi'(a_t)) U, so
||dz_T/dz_t|| <= prod ||J_s|| <= (alpha sigma_1(U))^(T-t) with alpha = sup |phi'|
(eq-rnn-gradient-bound; Bengio et al. 1994, Pascanu et al. 2013).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_int, check_real, check_tensor
from flt_lib.optim.train_step import clip_by_norm
from flt_lib.recurrent.elman import ElmanWeights, activation_fn, elman

__all__ = [
    "BPTTResult",
    "readout_loss",
    "bptt",
    "step_jacobians",
    "jacobian_norms",
    "CliffRun",
    "cliff_model",
    "train_cliff",
]


@dataclass(frozen=True)
class BPTTResult:
    """The loss and its gradients, from :func:`bptt`."""

    loss: torch.Tensor  # () the loss (eq-rnn-loss)
    dU: torch.Tensor    # (m, m) dL/dU
    dV: torch.Tensor    # (m, n) dL/dV
    db: torch.Tensor    # (m,) dL/db
    dW: torch.Tensor    # (q, m) dL/dW, the read-out's gradient
    # (B, T, m) dL/dz_t (full BPTT) or the local errors W^T(y_hat - y) (truncated)
    delta: torch.Tensor


def readout_loss(Z: torch.Tensor, W: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
    """L = 1/2 sum ||W z_t - y_t||^2 over the batch and time (eq-rnn-loss).

    Args:
        Z: states, (B, T, m).
        W: read-out, (q, m).
        Y: targets, (B, T, q).
    """
    check_tensor(Z, "Z", ndim=3, floating=True, shape_doc="(B, T, m)")
    check_tensor(W, "W", shape=(None, Z.shape[-1]), floating=True, shape_doc="(q, m)")
    check_tensor(
        Y, "Y", shape=(*Z.shape[:2], W.shape[0]), floating=True, shape_doc="(B, T, q)"
    )
    return 0.5 * ((Z @ W.T - Y) ** 2).sum()


def bptt(
    x: torch.Tensor, w: ElmanWeights, W: torch.Tensor, Y: torch.Tensor, *,
    activation: str = "tanh", truncate: int | None = None,
) -> BPTTResult:
    """Gradients of the read-out loss by hand-written backpropagation through time
    (eq-rnn-bptt).

    Args:
        x: inputs, (B, T, n).
        w: the Elman layer (initial state zero).
        W: read-out, (q, m).
        Y: targets, (B, T, q).
        activation: "tanh", "relu" or "linear".
        truncate: None for full BPTT; k >= 1 to let each loss term reach back only k
            steps.

    Returns:
        A :class:`BPTTResult`.
    """
    Z = elman(x, w, activation=activation)                # (B, T, m)
    loss = readout_loss(Z, W, Y)
    _, dphi = activation_fn(activation)
    k = None if truncate is None else check_int(truncate, "truncate", min_value=1)
    dU, dV, db, dW, delta = _bptt(x, Z, w, W, Y, dphi, k)
    return BPTTResult(loss=loss, dU=dU, dV=dV, db=db, dW=dW, delta=delta)


def _bptt(x, Z, w, W, Y, dphi, k=None):
    B, T, m = Z.shape
    Zprev = torch.cat([Z.new_zeros(B, 1, m), Z[:, :-1]], dim=1)  # z_{t-1}, (B, T, m)
    D = dphi(Zprev @ w.U.T + x @ w.V.T + w.b)         # phi'(a_t), (B, T, m)
    R = Z @ W.T - Y                                   # residuals r_t, (B, T, q)
    E = R @ W                                         # local errors W^T r_t, (B, T, m)
    if k is None:
        delta, G = torch.zeros_like(Z), torch.zeros_like(Z)  # dL/dz_t, dL/da_t
        carry = Z.new_zeros(B, m)                     # U^T (phi'(a_{t+1}) delta_{t+1})
        for t in range(T - 1, -1, -1):                # backwards in time
            delta[:, t] = E[:, t] + carry             # delta_t = W^T r_t + carry
            G[:, t] = D[:, t] * delta[:, t]           # dL/da_t = phi'(a_t) delta_t
            carry = G[:, t] @ w.U
    else:                                             # BPTT(k): each term, k steps back
        delta, G = E, _truncated_sweep(D, E, w.U, k)
    dU = torch.einsum("bti,btj->ij", G, Zprev)        # sum_t g_t z_{t-1}^T
    dV = torch.einsum("bti,btj->ij", G, x)            # sum_t g_t x_t^T
    dW = torch.einsum("btq,btm->qm", R, Z)            # sum_t r_t z_t^T
    return dU, dV, G.sum(dim=(0, 1)), dW, delta


def _truncated_sweep(
    D: torch.Tensor, E: torch.Tensor, U: torch.Tensor, k: int
) -> torch.Tensor:
    """dL/da_t (B, T, m) when each loss term reaches back only ``k`` steps."""
    G = torch.zeros_like(E)
    for s in range(E.shape[1]):                       # loss term l_s ...
        d = E[:, s]
        for t in range(s, max(s - k, -1), -1):        # ... reaches a_s, ..., a_{s-k+1}
            g = D[:, t] * d
            G[:, t] += g
            d = g @ U
    return G


def step_jacobians(
    x: torch.Tensor, w: ElmanWeights, *, activation: str = "tanh"
) -> torch.Tensor:
    """The one-step Jacobians J_t = dz_t/dz_{t-1} = diag(phi'(a_t)) U along one
    trajectory.

    Args:
        x: one input sequence, (T, n).
        w: the Elman layer (initial state zero).
        activation: as in :func:`~flt_lib.recurrent.elman.elman`.

    Returns:
        J, (T, m, m), with J[t] the Jacobian of the step that reads x_{t+1}.
    """
    check_tensor(x, "x", ndim=2, floating=True, shape_doc="(T, n)")
    return _step_jacobians(x, w, activation=activation)


def _step_jacobians(
    x: torch.Tensor, w: ElmanWeights, *, activation: str = "tanh"
) -> torch.Tensor:
    """The check-free core of :func:`step_jacobians` (arguments already checked)."""
    Z = elman(x.unsqueeze(0), w, activation=activation)[0]      # (T, m)
    Zprev = torch.cat([Z.new_zeros(1, w.m), Z[:-1]], dim=0)
    A = Zprev @ w.U.T + x @ w.V.T + w.b                          # (T, m)
    _, dphi = activation_fn(activation)
    # rows scaled: diag(phi') U
    return dphi(A).unsqueeze(-1) * w.U


def jacobian_norms(J: torch.Tensor) -> torch.Tensor:
    """Spectral norms ||dz_T/dz_{T-k}||_2 = ||J_T J_{T-1} ... J_{T-k+1}||_2
    for k = 0, ..., T.

    Args:
        J: step Jacobians, (T, m, m), e.g. from :func:`step_jacobians`.

    Returns:
        (T + 1,) norms indexed by the lag k (k = 0 gives ||I|| = 1).
    """
    check_tensor(J, "J", ndim=3, floating=True, shape_doc="(T, m, m)")
    if J.shape[1] != J.shape[2]:
        raise ValueError(f"J must have shape (T, m, m), got {tuple(J.shape)}")
    return _jacobian_norms(J)


def _jacobian_norms(J: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`jacobian_norms` (arguments already checked)."""
    M = torch.eye(J.shape[1], dtype=J.dtype, device=J.device)
    norms = [M.new_tensor(1.0)]
    for t in range(J.shape[0] - 1, -1, -1):
        M = M @ J[t]                                   # dz_T/dz_{t}, lag T - t
        norms.append(torch.linalg.matrix_norm(M, ord=2))
    return torch.stack(norms)


@dataclass(frozen=True)
class CliffRun:
    """A gradient-descent run on the one-unit cliff model, from :func:`train_cliff`."""

    params: torch.Tensor  # (steps + 1, 2) the iterates (w, b)
    loss: torch.Tensor    # (steps + 1,) the loss at each iterate
    grad_norm: torch.Tensor  # (steps,) the norm of the raw gradient at each step
    step_norm: torch.Tensor  # (steps,) the length of the step actually taken


def cliff_model(params: torch.Tensor, *, T: int = 50, z0: float = 0.5) -> torch.Tensor:
    """Final state of the one-unit linear RNN z_t = w z_{t-1} + b after T steps
    (eq-rnn-cliff).

    z_T = w^T z_0 + b (1 + w + ... + w^(T-1)). For |w| < 1 this is close to b / (1 - w)
    and varies gently; for |w| > 1 it grows like |w|^T, so the loss surface rises as a
    steep wall ("cliff") near |w| = 1, where dz_T/dw is of order T |w|^(T-1). It is a
    linear simplification of the sigmoid unit x_t = w sigma(x_{t-1}) + b of Pascanu et
    al. (2013, Section 2.3).

    Args:
        params: (2,) tensor (w, b), or (..., 2) for many parameter pairs at once.
        T: number of steps, >= 1.
        z0: initial state.

    Returns:
        z_T, shape params.shape[:-1].
    """
    check_tensor(params, "params", floating=True, shape_doc="(..., 2)")
    if params.shape[-1] != 2:
        raise ValueError(
            f"params must have shape (..., 2) = (w, b), got {tuple(params.shape)}"
        )
    T = check_int(T, "T", min_value=1)
    w, b = params[..., 0], params[..., 1]
    z = torch.full_like(w, float(z0))
    for _ in range(T):
        z = w * z + b
    return z


def train_cliff(
    start: torch.Tensor, *, target: float, lr: float, steps: int,
    clip: float | None = None, T: int = 50,
) -> CliffRun:
    """Gradient descent on (z_T(w, b) - target)^2, with or without norm clipping.

    Args:
        start: the initial (w, b), shape (2,).
        target: the desired final state.
        lr: step size, > 0.
        steps: number of steps, >= 1.
        clip: the clipping threshold of :func:`clip_by_norm`, or None for plain GD.
        T: the model's number of steps.

    Returns:
        A :class:`CliffRun`.
    """
    check_tensor(start, "start", shape=(2,), floating=True, shape_doc="(2,) = (w, b)")
    target = check_real(target, "target")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    if clip is not None:
        clip = check_real(clip, "clip", min_value=0.0, strict_min=True)
    p = start.detach().clone()
    ps, losses, gnorms, snorms = [p.clone()], [], [], []
    for _ in range(steps):
        q = p.clone().requires_grad_(True)
        loss = (cliff_model(q, T=T) - target) ** 2
        (g,) = torch.autograd.grad(loss, q)
        losses.append(loss.detach())
        gnorms.append(g.norm())
        if clip is not None:
            (g,), _ = clip_by_norm([g], clip)
        p = p - lr * g
        snorms.append((lr * g).norm())
        ps.append(p.clone())
    with torch.no_grad():
        losses.append((cliff_model(p, T=T) - target) ** 2)
    return CliffRun(params=torch.stack(ps), loss=torch.stack(losses),
                    grad_norm=torch.stack(gnorms), step_norm=torch.stack(snorms))
