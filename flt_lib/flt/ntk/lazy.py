"""Lazy versus rich training: the alpha-scaled model of Chizat, Oyallon & Bach
(2019)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from flt_lib._validate import check_int, check_real, check_tensor
from flt_lib.flt.ntk.shallow import check_two_layer_params, two_layer

__all__ = ["AlphaHistory", "feature_alignment", "train_alpha"]


def feature_alignment(W: torch.Tensor, w_star: torch.Tensor) -> float:
    """Fraction of the first layer's energy along the teacher direction
    (eq-flt-feature-alignment).

    ``A(W) = ||W w*||^2 / ||W||_F^2``: about ``1/d`` for rows drawn isotropically, and 1
    when every row is parallel to w*.

    Args:
        W: first-layer weights, shape (m, d).
        w_star: teacher direction, shape (d,).

    Returns:
        A number in [0, 1].
    """
    check_tensor(W, "W", ndim=2, floating=True, shape_doc="(m, d)")
    check_tensor(w_star, "w_star", shape=(W.shape[1],), floating=True, shape_doc="(d,)")
    return _feature_alignment(W, w_star)


def _feature_alignment(W: torch.Tensor, w_star: torch.Tensor) -> float:
    """The check-free core of :func:`feature_alignment` (arguments already checked)."""
    return ((W @ w_star).pow(2).sum() / (W.pow(2).sum() * w_star.pow(2).sum())).item()


@dataclass(frozen=True)
class AlphaHistory:
    """What :func:`train_alpha` records (first step, last step, every ``record_every``
    steps)."""

    steps: list[int]  # the recorded step numbers
    train_loss: list[float]  # mean of (f - y)^2 / 2 on the training set
    rel_move: list[float]  # ||theta_t - theta_0|| / ||theta_0||
    # mean (f - y)^2 on the test set ([] if no test set was given)
    test_mse: list[float]
    alignment: list[float]  # feature_alignment(W_t, w*) ([] if no w* was given)
    W: torch.Tensor  # (m, d) final first layer
    a: torch.Tensor  # (m,) final second layer
    test_pred: torch.Tensor | None  # (n_test,) final test predictions, or None


def train_alpha(
    X: torch.Tensor,
    y: torch.Tensor,
    W0: torch.Tensor,
    a0: torch.Tensor,
    *,
    alpha: float,
    lr: float,
    steps: int,
    record_every: int = 0,
    X_test: torch.Tensor | None = None,
    y_test: torch.Tensor | None = None,
    w_star: torch.Tensor | None = None,
) -> AlphaHistory:
    """Full-batch gradient descent on the alpha-scaled model (eq-flt-alpha-model).

    The model is ``f(x) = alpha (h(x; W, a) - h(x; W0, a0))`` (zero at initialisation)
    and the loss ``L = (1 / (2 n alpha^2)) sum_i (f(x_i) - y_i)^2`` (Chizat, Oyallon &
    Bach, 2019). Large alpha gives lazy training, small alpha rich training; ``alpha =
    1`` is the plain NTK-parameterised net with its initial function subtracted.

    Args:
        X: training inputs, shape (n, d).
        y: training targets, shape (n,).
        W0: initial first layer, shape (m, d).
        a0: initial second layer, shape (m,).
        alpha: output scale, ``> 0``.
        lr: learning rate, ``> 0``.
        steps: number of GD steps, ``>= 1``.
        record_every: record the history every this many steps (0: only first and last).
        X_test: optional test inputs, shape (n_test, d).
        y_test: optional test targets, shape (n_test,).
        w_star: optional teacher direction, shape (d,), for :func:`feature_alignment`.

    Returns:
        An :class:`AlphaHistory`.
    """
    check_two_layer_params(X, W0, a0)
    check_tensor(y, "y", shape=(X.shape[0],), floating=True, shape_doc="(n,)")
    alpha = check_real(alpha, "alpha", min_value=0.0, strict_min=True)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    record_every = check_int(record_every, "record_every", min_value=0)
    if (X_test is None) != (y_test is None):
        raise ValueError(
            "X_test and y_test must be given together, got only one of them"
        )
    if X_test is not None:
        check_two_layer_params(X_test, W0, a0, "X_test")
        check_tensor(
            y_test,
            "y_test",
            shape=(X_test.shape[0],),
            floating=True,
            shape_doc="(n_test,)",
        )
    return _train_alpha(
        X,
        y,
        W0,
        a0,
        alpha=alpha,
        lr=lr,
        steps=steps,
        record_every=record_every,
        X_test=X_test,
        y_test=y_test,
        w_star=w_star,
    )


def _train_alpha(
    X: torch.Tensor,
    y: torch.Tensor,
    W0: torch.Tensor,
    a0: torch.Tensor,
    *,
    alpha: float,
    lr: float,
    steps: int,
    record_every: int = 0,
    X_test: torch.Tensor | None = None,
    y_test: torch.Tensor | None = None,
    w_star: torch.Tensor | None = None,
) -> AlphaHistory:
    """The check-free core of :func:`train_alpha` (arguments already checked)."""
    W, a = W0.detach().clone().requires_grad_(True), a0.detach().clone().requires_grad_(
        True
    )
    with torch.no_grad():
        h0 = two_layer(X, W0, a0)  # (n,)
        h0_test = two_layer(X_test, W0, a0) if X_test is not None else None
    norm0 = torch.sqrt(W0.pow(2).sum() + a0.pow(2).sum()).item()
    rec: dict[str, list] = {k: [] for k in ("t", "loss", "move", "mse", "align")}
    for t in range(steps + 1):
        f = alpha * (two_layer(X, W, a) - h0)  # (n,)
        loss = 0.5 * (f - y).pow(2).mean()
        if t == 0 or t == steps or (record_every and t % record_every == 0):
            with torch.no_grad():
                rec["t"].append(t)
                rec["loss"].append(loss.item())
                move = torch.sqrt((W - W0).pow(2).sum() + (a - a0).pow(2).sum()).item()
                rec["move"].append(move / norm0)
                if X_test is not None:
                    pred = alpha * (two_layer(X_test, W, a) - h0_test)
                    rec["mse"].append((pred - y_test).pow(2).mean().item())
                if w_star is not None:
                    rec["align"].append(feature_alignment(W, w_star))
        if t == steps:
            break
        gW, ga = torch.autograd.grad(loss / alpha**2, (W, a))
        with torch.no_grad():
            W -= lr * gW
            a -= lr * ga
    W, a = W.detach(), a.detach()
    test_pred = None
    if X_test is not None:
        with torch.no_grad():
            test_pred = alpha * (two_layer(X_test, W, a) - h0_test)
    return AlphaHistory(
        steps=rec["t"],
        train_loss=rec["loss"],
        rel_move=rec["move"],
        test_mse=rec["mse"],
        alignment=rec["align"],
        W=W,
        a=a,
        test_pred=test_pred,
    )
