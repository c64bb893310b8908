"""Regularisation: weight decay (ridge), early stopping, dropout and data augmentation.

Least squares is ``L(w) = ||X w - y||^2 / (2n)`` with Hessian ``H = X^T X / n``
(eigenvalues ``mu_i``); weight decay adds ``(lambda / 2) ||w||^2`` (Krogh & Hertz,
1992), which is also the MAP estimate under a Gaussian prior and the Lagrangian of a
norm constraint. Early stopping follows Prechelt (1998), dropout Srivastava et al.
(2014), augmentation Shorten & Khoshgoftaar (2019). The training loops are those of
Section 2.1: ``flt_lib.feedforward.regression.least_squares_gd`` and ``logistic_gd``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from flt_lib._validate import (
    check_generator,
    check_int,
    check_real,
    check_tensor,
    check_xy,
)

__all__ = [
    "all_masks",
    "circular_shift",
    "dropout_mask",
    "dropout_mlp",
    "early_stopping_index",
    "gaussian_log_posterior",
    "gd_filter",
    "hessian_eigh",
    "prior_weight_decay",
    "random_circular_shifts",
    "ridge_filter",
    "ridge_solution",
    "shift_invariance_gap",
]


# ----------------------------------------------------------------------------- weight d
def ridge_solution(
    X: torch.Tensor, y: torch.Tensor, *, weight_decay: float
) -> torch.Tensor:
    """Minimiser of ``||X w - y||^2 / (2n) + (lambda / 2) ||w||^2``: ``(H + lambda
    I)^{-1} X^T y / n``.

    Book eq. ``eq-reg-ridge-filter``.

    Args:
        X: inputs, shape (n, d).
        y: targets, shape (n,).
        weight_decay: lambda >= 0 (lambda = 0 needs H invertible).

    Returns:
        w_lambda, shape (d,).
    """
    X, y = check_xy(X, y)
    lam = check_real(weight_decay, "weight_decay", min_value=0.0)
    n, d = X.shape
    A = X.T @ X / n + lam * torch.eye(d, dtype=X.dtype, device=X.device)  # (d, d)
    return torch.linalg.solve(A, X.T @ y / n)


def hessian_eigh(X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Eigen-decomposition H = Q diag(mu) Q^T of the least-squares Hessian H = X^T X /
    n.

    Args:
        X: inputs, shape (n, d).

    Returns: ``(mu, Q)``: eigenvalues in ascending order, shape (d,), and eigenvectors
        as columns (d, d).
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    return torch.linalg.eigh(X.T @ X / X.shape[0])


def ridge_filter(mu: torch.Tensor, *, weight_decay: float) -> torch.Tensor:
    """Ridge filter factors ``mu_i / (mu_i + lambda)`` of each eigen-coordinate
    (eq-reg-ridge-filter).

    Args:
        mu: Hessian eigenvalues, shape (d,), >= 0.
        weight_decay: lambda > 0.

    Returns:
        Factors in [0, 1), shape (d,).
    """
    mu = check_tensor(mu, "mu", ndim=1, floating=True, shape_doc="(d,)")
    lam = check_real(weight_decay, "weight_decay", min_value=0.0, strict_min=True)
    return mu / (mu + lam)


def gd_filter(mu: torch.Tensor, *, lr: float, steps: int) -> torch.Tensor:
    """Filter factors ``1 - (1 - eta mu_i)^t`` of t gradient-descent steps from 0
    (eq-reg-gd-filter).

    Args:
        mu: Hessian eigenvalues, shape (d,).
        lr: step size eta > 0.
        steps: t >= 0.

    Returns:
        Factors, shape (d,); in [0, 1] when 0 <= eta mu_i <= 1.
    """
    mu = check_tensor(mu, "mu", ndim=1, floating=True, shape_doc="(d,)")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=0)
    return 1 - (1 - lr * mu) ** steps


def prior_weight_decay(*, noise_std: float, prior_std: float, n: int) -> float:
    """The weight decay ``lambda = s^2 / (n tau^2)`` whose ridge solution is the MAP
    estimate.

    With likelihood ``y_i ~ N(w.x_i, s^2)`` and prior ``w ~ N(0, tau^2 I)``, maximising
    the log posterior (:func:`gaussian_log_posterior`) is minimising ``||X w - y||^2 /
    (2n) + (lambda / 2) ||w||^2`` with this ``lambda`` (eq. ``eq-reg-map``).

    Args:
        noise_std: ``s > 0``, the standard deviation of the label noise.
        prior_std: ``tau > 0``, the prior standard deviation of each weight.
        n: number of examples, ``n >= 1``.

    Returns:
        ``lambda``.
    """
    s = check_real(noise_std, "noise_std", min_value=0.0, strict_min=True)
    tau = check_real(prior_std, "prior_std", min_value=0.0, strict_min=True)
    n = check_int(n, "n", min_value=1)
    return s**2 / (n * tau**2)


def gaussian_log_posterior(
    X: torch.Tensor,
    y: torch.Tensor,
    w: torch.Tensor,
    *,
    noise_std: float,
    prior_std: float,
) -> torch.Tensor:
    """Log posterior of linear regression, up to a constant: ``-||Xw - y||^2/(2s^2) -
    ||w||^2/(2tau^2)``.

    Likelihood ``y_i ~ N(w.x_i, s^2)``, prior ``w ~ N(0, tau^2 I)`` (eq.
    ``eq-reg-map``).

    Args:
        X: inputs, shape (n, d).
        y: targets, shape (n,).
        w: weights, shape (d,).
        noise_std: ``s > 0``.
        prior_std: ``tau > 0``.

    Returns:
        A scalar tensor (differentiable in ``w``).
    """
    X, y = check_xy(X, y)
    check_tensor(w, "w", shape=(X.shape[1],), floating=True, shape_doc="(d,)")
    s = check_real(noise_std, "noise_std", min_value=0.0, strict_min=True)
    tau = check_real(prior_std, "prior_std", min_value=0.0, strict_min=True)
    r = X @ w - y  # (n,)
    return -(r @ r) / (2 * s**2) - (w @ w) / (2 * tau**2)


def early_stopping_index(val_losses: torch.Tensor, *, patience: int) -> int:
    """Prechelt's patience rule: stop once the validation loss has not improved for
    ``patience`` checks.

    Args:
        val_losses: validation losses at successive checks, shape (k,).
        patience: number of checks without a new minimum before stopping, >= 1.

    Returns: The index of the best check seen when training stops (the parameters one
        restores).
    """
    v = check_tensor(val_losses, "val_losses", ndim=1, shape_doc="(k,)").tolist()
    patience = check_int(patience, "patience", min_value=1)
    return _early_stopping_index(v, patience=patience)


def _early_stopping_index(v: list[float], *, patience: int) -> int:
    """The check-free core of :func:`early_stopping_index`."""
    best, since = 0, 0
    for i in range(1, len(v)):
        if v[i] < v[best]:
            best, since = i, 0
        else:
            since += 1
            if since >= patience:
                break
    return best


# ----------------------------------------------------------------------------- dropout
def dropout_mask(
    shape: tuple[int, ...], *, keep_prob: float, generator: torch.Generator
) -> torch.Tensor:
    """A Bernoulli(keep_prob) mask of ones (kept units) and zeros (dropped units).

    Args:
        shape: the mask's shape.
        keep_prob: probability p in (0, 1] that a unit is kept.
        generator: CPU generator.

    Returns:
        A float64 tensor of the given shape with entries in {0, 1}.
    """
    p = check_real(
        keep_prob, "keep_prob", min_value=0.0, strict_min=True, max_value=1.0
    )
    check_generator(generator)
    return (torch.rand(shape, generator=generator, dtype=torch.float64) < p).double()


def all_masks(k: int, *, keep_prob: float) -> tuple[torch.Tensor, torch.Tensor]:
    """All 2^k dropout masks on k units and their probabilities p^{|b|} (1 - p)^{k -
    |b|}.

    Args:
        k: number of units, 1 <= k <= 20.
        keep_prob: keep probability p in (0, 1].

    Returns:
        ``(masks, probs)`` of shapes (2^k, k) and (2^k,); the probabilities sum to 1.
    """
    k = check_int(k, "k", min_value=1, max_value=20)
    p = check_real(
        keep_prob, "keep_prob", min_value=0.0, strict_min=True, max_value=1.0
    )
    codes = torch.arange(2**k)
    masks = ((codes[:, None] >> torch.arange(k)) & 1).double()  # (2^k, k)
    kept = masks.sum(1)
    return masks, p**kept * (1 - p) ** (k - kept)


def dropout_mlp(
    x: torch.Tensor,
    W1: torch.Tensor,
    W2: torch.Tensor,
    w3: torch.Tensor,
    masks: torch.Tensor,
) -> torch.Tensor:
    """The net f(x; b) = w3^T tanh(W2 (b * relu(W1 x))) with dropout masks b on its
    first hidden layer.

    Args:
        x: inputs, shape (n, d).
        W1: first layer, shape (k, d).
        W2: second layer, shape (m, k).
        w3: read-out, shape (m,).
        masks: one mask (or scaling) per row, shape (M, k); use p * ones for the
            weight-scaling rule.

    Returns:
        Outputs for every mask and input, shape (M, n).
    """
    x = check_tensor(x, "x", ndim=2, floating=True, shape_doc="(n, d)")
    k = check_tensor(
        W1, "W1", ndim=2, shape=(None, x.shape[1]), shape_doc="(k, d)"
    ).shape[0]
    m = check_tensor(W2, "W2", ndim=2, shape=(None, k), shape_doc="(m, k)").shape[0]
    check_tensor(w3, "w3", shape=(m,), shape_doc="(m,)")
    masks = check_tensor(masks, "masks", ndim=2, shape=(None, k), shape_doc="(M, k)")
    return _dropout_mlp(x, W1, W2, w3, masks)


def _dropout_mlp(
    x: torch.Tensor,
    W1: torch.Tensor,
    W2: torch.Tensor,
    w3: torch.Tensor,
    masks: torch.Tensor,
) -> torch.Tensor:
    """The check-free core of :func:`dropout_mlp` (arguments already checked)."""
    h1 = torch.relu(x @ W1.T)  # (n, k)
    h2 = torch.tanh((masks[:, None, :] * h1[None]) @ W2.T)  # (M, n, m)
    return h2 @ w3  # (M, n)


# ----------------------------------------------------------------------------- augmenta
def circular_shift(X: torch.Tensor, shifts: torch.Tensor) -> torch.Tensor:
    """Shift each 1-D signal circularly: out[i, j] = X[i, (j - shifts[i]) mod d].

    Args:
        X: signals, shape (n, d).
        shifts: integer shifts, shape (n,).

    Returns:
        Shifted signals, shape (n, d).
    """
    X = check_tensor(X, "X", ndim=2, shape_doc="(n, d)")
    shifts = check_tensor(shifts, "shifts", shape=(X.shape[0],), shape_doc="(n,)")
    n, d = X.shape
    idx = (
        torch.arange(d, device=X.device)[None, :] - shifts.to(X.device)[:, None]
    ) % d  # (n, d)
    return torch.gather(X, 1, idx.long())


def shift_invariance_gap(
    model: Callable[[torch.Tensor], torch.Tensor], X: torch.Tensor
) -> float:
    """Mean |f(shift_s x) - f(x)| over inputs x (rows of X) and all d circular shifts s.

    Args:
        model: maps signals (n, d) to scores (n,).
        X: signals, shape (n, d).

    Returns:
        The average absolute change of the score; 0 for a shift-invariant model.
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    n, d = X.shape
    base = model(X)
    gaps = [
        (model(circular_shift(X, torch.full((n,), s))) - base).abs().mean()
        for s in range(d)
    ]
    return torch.stack(gaps).mean().item()


def random_circular_shifts(
    X: torch.Tensor, *, generator: torch.Generator
) -> torch.Tensor:
    """Shift every signal by its own uniformly random amount in ``{0, ..., d-1}``.

    The augmentation of Section 3.5, in the form ``logistic_gd(..., augment=...)``
    expects.

    Args:
        X: signals, shape (n, d).
        generator: CPU generator for the shifts.

    Returns:
        Shifted signals, shape (n, d).
    """
    X = check_tensor(X, "X", ndim=2, shape_doc="(n, d)")
    check_generator(generator)
    return _random_circular_shifts(X, generator=generator)


def _random_circular_shifts(
    X: torch.Tensor, *, generator: torch.Generator
) -> torch.Tensor:
    """The check-free core of :func:`random_circular_shifts`."""
    n, d = X.shape
    return circular_shift(X, torch.randint(0, d, (n,), generator=generator))
