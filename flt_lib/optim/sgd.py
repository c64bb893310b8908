"""Stochastic gradient descent on least squares: minibatch noise, schedules, epochs.

The objective throughout is the average squared loss of Section 2.1
(``flt_lib.feedforward.regression.mse_loss``), with per-example gradients ``g_i``:

    L(w) = (1 / 2n) * sum_i (x_i^T w - y_i)^2,   g_i(w) = x_i (x_i^T w - y_i).

A minibatch gradient is the average of ``g_i`` over a random index set of size ``B``,
drawn with or without replacement (Robbins & Monro, 1951; Bottou, Curtis & Nocedal,
2018). Full-batch gradient descent on the same loss is
``flt_lib.feedforward.regression.least_squares_gd``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import (
    check_generator,
    check_int,
    check_real,
    check_tensor,
    check_xy,
)
from flt_lib.feedforward.regression import mse_loss

__all__ = [
    "SGDRun",
    "decaying_step_sizes",
    "epochs_to_reach",
    "minibatch_gradient",
    "minibatch_variance",
    "per_example_gradients",
    "sample_minibatch_variance",
    "sgd_least_squares",
]


def _check_w(w: object, d: int, name: str = "w") -> torch.Tensor:
    return check_tensor(w, name, shape=(d,), floating=True, shape_doc=f"(d,) = ({d},)")


def per_example_gradients(
    X: torch.Tensor, y: torch.Tensor, w: torch.Tensor
) -> torch.Tensor:
    """Per-example gradients ``g_i(w) = x_i (x_i^T w - y_i)`` of the squared loss (eq.
    ``eq-sgd-ls``).

    Args:
        X: inputs, shape (n, d).
        y: targets, shape (n,).
        w: weights, shape (d,).

    Returns:
        The gradients, one per row, shape (n, d); their mean is the full gradient of L.
    """
    X, y = check_xy(X, y)
    w = _check_w(w, X.shape[1])
    return X * (X @ w - y)[:, None]  # (n, d)


def minibatch_gradient(
    X: torch.Tensor, y: torch.Tensor, w: torch.Tensor, idx: torch.Tensor
) -> torch.Tensor:
    """The minibatch gradient ``g_B(w) = (1/B) sum_{b} g_{I_b}(w)`` (def.
    ``def-sgd-minibatch``).

    Args:
        X: inputs, shape (n, d).
        y: targets, shape (n,).
        w: weights, shape (d,).
        idx: the minibatch ``I_1, ..., I_B`` (repeats allowed), integer tensor of shape
            (B,).

    Returns:
        The average of the per-example gradients over the batch, shape (d,).
    """
    X, y = check_xy(X, y)
    w = _check_w(w, X.shape[1])
    check_tensor(idx, "idx", ndim=1, shape_doc="(B,)")
    if idx.is_floating_point() or idx.numel() == 0:
        raise ValueError(
            f"idx must be a non-empty integer tensor of indices, got {idx.dtype}"
        )
    return _minibatch_gradient(X, y, w, idx)


def _minibatch_gradient(
    X: torch.Tensor, y: torch.Tensor, w: torch.Tensor, idx: torch.Tensor
) -> torch.Tensor:
    """The check-free core of :func:`minibatch_gradient` (arguments already checked)."""
    Xb, yb = X[idx], y[idx]  # (B, d), (B,)
    return Xb.T @ (Xb @ w - yb) / idx.shape[0]


def minibatch_variance(
    G: torch.Tensor, *, batch_size: int, replacement: bool = True
) -> float:
    """Exact ``E||g_B - g||^2`` of the minibatch mean of the rows of ``G`` (eq.
    ``eq-sgd-variance``).

    With ``sigma^2 = (1/n) sum_i ||g_i - g||^2`` (the population variance, ``g`` the
    mean row): sampling ``B`` rows with replacement gives ``sigma^2 / B``; without
    replacement it gives ``sigma^2 / B * (n - B) / (n - 1)`` (the finite-population
    correction).

    Args:
        G: per-example gradients, shape (n, d), n >= 2.
        batch_size: B, with 1 <= B (and B <= n without replacement).
        replacement: whether the B indices are drawn with replacement.

    Returns:
        The exact expected squared distance between the minibatch and full gradients.
    """
    G = check_tensor(G, "G", ndim=2, floating=True, shape_doc="(n, d)")
    n = G.shape[0]
    if n < 2:
        raise ValueError(f"G must have at least 2 rows, got {n}")
    B = check_int(
        batch_size, "batch_size", min_value=1, max_value=None if replacement else n
    )
    return _minibatch_variance(G, B=B, replacement=replacement)


def _minibatch_variance(G: torch.Tensor, *, B: int, replacement: bool = True) -> float:
    """The check-free core of :func:`minibatch_variance` (arguments already checked)."""
    n = G.shape[0]
    sigma2 = ((G - G.mean(0)) ** 2).sum(1).mean().item()
    if replacement:
        return sigma2 / B
    return sigma2 / B * (n - B) / (n - 1)


def _draw_batches(
    n: int, B: int, count: int, generator: torch.Generator, replacement: bool
) -> torch.Tensor:
    """``count`` minibatches of ``B`` indices in ``{0, ..., n-1}``, shape (count, B), on
    the CPU."""
    if replacement:
        return torch.randint(0, n, (count, B), generator=generator)
    return torch.rand(count, n, generator=generator).argsort(dim=1)[:, :B]


def sample_minibatch_variance(
    G: torch.Tensor,
    *,
    batch_size: int,
    n_draws: int,
    generator: torch.Generator,
    replacement: bool = True,
) -> float:
    """Monte-Carlo estimate of ``E||g_B - g||^2`` from ``n_draws`` random minibatches.

    Args:
        G: per-example gradients, shape (n, d).
        batch_size: B.
        n_draws: number of independent minibatches.
        generator: CPU generator for the indices.
        replacement: whether the indices are drawn with replacement.

    Returns:
        The average of ``||g_B - g||^2`` over the draws.
    """
    G = check_tensor(G, "G", ndim=2, floating=True, shape_doc="(n, d)")
    n = G.shape[0]
    B = check_int(
        batch_size, "batch_size", min_value=1, max_value=None if replacement else n
    )
    n_draws = check_int(n_draws, "n_draws", min_value=1)
    check_generator(generator)
    idx = _draw_batches(n, B, n_draws, generator, replacement).to(G.device)  # (S, B)
    gB = G[idx].mean(1)  # (S, d)
    return ((gB - G.mean(0)) ** 2).sum(1).mean().item()


def decaying_step_sizes(*, c: float, t0: float, steps: int) -> torch.Tensor:
    """The Robbins-Monro schedule ``eta_t = c / (t + t0)``, ``t = 0, ..., steps - 1``.

    It satisfies ``sum eta_t = infinity`` and ``sum eta_t^2 < infinity`` (Robbins &
    Monro, 1951; thm. ``thm-sgd-robbins-monro``).

    Args:
        c: numerator, c > 0.
        t0: offset, t0 > 0 (keeps the first steps stable).
        steps: number of steps.

    Returns:
        The step sizes, shape (steps,), float64.
    """
    c = check_real(c, "c", min_value=0.0, strict_min=True)
    t0 = check_real(t0, "t0", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    return c / (torch.arange(steps, dtype=torch.float64) + t0)


@dataclass(frozen=True)
class SGDRun:
    """What :func:`sgd_least_squares` returns."""

    # (T // record_every + 1,) full loss L(w_t) at t = 0, k, 2k, ...; CPU
    losses: torch.Tensor
    w: torch.Tensor  # (d,) the final weights w_T


def sgd_least_squares(
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    lrs: torch.Tensor,
    batch_size: int,
    generator: torch.Generator,
    w0: torch.Tensor | None = None,
    record_every: int = 1,
    replacement: bool = True,
) -> SGDRun:
    """Minibatch SGD ``w_{t+1} = w_t - eta_t g_{B_t}(w_t)`` on least squares (def.
    ``def-sgd-minibatch``).

    Every step draws a fresh minibatch (all ``T`` batches are drawn up front from
    ``generator``) and applies :func:`minibatch_gradient`. With ``batch_size = n`` and
    ``replacement=False`` every batch is the whole data set, and this is gradient
    descent.

    Args:
        X: inputs, shape (n, d).
        y: targets, shape (n,).
        lrs: step sizes eta_t, shape (T,); T is the number of steps.
        batch_size: B >= 1 (B <= n without replacement).
        generator: CPU generator for the minibatch indices.
        w0: starting point, shape (d,); default zero.
        record_every: record the full loss ``L(w_t)`` every this many steps (and at t =
            0).
        replacement: whether each batch is drawn with replacement.

    Returns:
        An :class:`SGDRun`.
    """
    X, y = check_xy(X, y)
    n, d = X.shape
    w0 = None if w0 is None else _check_w(w0, d, "w0")
    lrs = check_tensor(lrs, "lrs", ndim=1, shape_doc="(T,)")
    B = check_int(
        batch_size, "batch_size", min_value=1, max_value=None if replacement else n
    )
    k = check_int(record_every, "record_every", min_value=1)
    check_generator(generator)
    return _sgd_least_squares(
        X,
        y,
        lrs=lrs,
        B=B,
        generator=generator,
        w0=w0,
        k=k,
        replacement=replacement,
    )


def _sgd_least_squares(
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    lrs: torch.Tensor,
    B: int,
    generator: torch.Generator,
    w0: torch.Tensor | None = None,
    k: int = 1,
    replacement: bool = True,
) -> SGDRun:
    """The check-free core of :func:`sgd_least_squares` (arguments already checked)."""
    n, d = X.shape
    w = X.new_zeros(d) if w0 is None else w0.to(X).clone()  # (d,)
    T = lrs.shape[0]
    batches = _draw_batches(n, B, T, generator, replacement).to(X.device)  # (T, B)
    losses = [mse_loss(X, y, w)]
    for t, lr in enumerate(lrs.tolist()):
        w = w - lr * minibatch_gradient(X, y, w, batches[t])
        if (t + 1) % k == 0:
            losses.append(mse_loss(X, y, w))
    return SGDRun(losses=torch.stack(losses).cpu(), w=w)


def epochs_to_reach(
    losses: torch.Tensor, *, target: float, epochs_per_record: float
) -> float:
    """First time (in epochs) at which a recorded loss curve is <= target; inf if never.

    Args:
        losses: recorded losses, shape (k,), losses[j] taken after j * epochs_per_record
            epochs.
        target: the loss level to reach.
        epochs_per_record: epochs between consecutive records (e.g. record_every * B /
            n).

    Returns:
        The number of epochs, or ``float('inf')``.
    """
    losses = check_tensor(losses, "losses", ndim=1, shape_doc="(k,)")
    target = check_real(target, "target")
    e = check_real(
        epochs_per_record, "epochs_per_record", min_value=0.0, strict_min=True
    )
    hit = torch.nonzero(losses <= target)
    return float("inf") if hit.numel() == 0 else float(hit[0, 0].item()) * e
