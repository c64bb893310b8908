"""One small training loop for the chapter's sample-efficiency experiments
(Sections 6.3-6.5).

Full-batch Adam on a cross-entropy (classification) or halved mean-squared (regression)
loss. The Adam update is the book's own (:func:`flt_lib.optim.adaptive.adam_step`,
Section 3.3), applied to every parameter tensor; it matches ``torch.optim.Adam`` to
round-off and avoids the one-off cost (seconds) of the first ``torch.optim`` step, which
imports ``torch._dynamo``. A model maps its whole input to one prediction per example;
for node classification the "examples" are the nodes of one graph and
``train_index``/``test_index`` pick the labelled and the held-out nodes of the same
forward pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from flt_lib._validate import check_choice, check_int, check_real, check_tensor
from flt_lib.optim.adaptive import AdamConfig, adam_init, adam_step

__all__ = ["FitResult", "fit"]


@dataclass(frozen=True)
class FitResult:
    """What :func:`fit` returns."""

    losses: torch.Tensor   # (steps,) training loss before every step, on the CPU
    train_metric: float    # accuracy (classification) or mean squared error on the
                           # training set
    test_metric: float     # the same metric on the test set (or test nodes)
    metric: str            # "accuracy" or "mse"


def _metric(pred: torch.Tensor, y: torch.Tensor, task: str) -> float:
    if task == "classification":
        return (pred.argmax(dim=-1) == y).float().mean().item()
    return ((pred - y) ** 2).mean().item()


def fit(
    model: nn.Module,
    X: torch.Tensor | tuple[torch.Tensor, ...],
    y: torch.Tensor,
    *,
    task: str,
    lr: float,
    steps: int,
    X_test: torch.Tensor | None = None,
    y_test: torch.Tensor | None = None,
    train_index: torch.Tensor | None = None,
    test_index: torch.Tensor | None = None,
    weight_decay: float = 0.0,
) -> FitResult:
    """Train ``model`` in place by full-batch Adam; report train and test metrics at the
    end.

    Either give a separate test set (``X_test``, ``y_test``), or give index tensors
    ``train_index`` and ``test_index`` into the rows of ``model(X)`` (one graph, many
    nodes).

    Args:
        model: maps ``X`` to predictions, (n, k) logits or (n,) / (n, k) regression
            outputs.
        X: the training input (any shape the model accepts), or a tuple of inputs, as in
            ``(X, A_hat)`` for a graph network, passed as ``model(*X)``.
        y: targets: int64 class labels (n,) for classification, floats for regression.
        task: ``"classification"`` (cross-entropy) or ``"regression"`` (halved squared
            error).
        lr: Adam step size, > 0.
        steps: number of Adam steps, >= 1.
        X_test, y_test: a held-out set (used when no index tensors are given).
        train_index, test_index: int64 index tensors into the predictions (both or
            neither).
        weight_decay: Adam's L2 penalty, >= 0.

    Returns:
        A :class:`FitResult`.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    check_choice(task, "task", ["classification", "regression"])
    inputs = X if isinstance(X, tuple) else (X,)
    for k, t in enumerate(inputs):
        check_tensor(t, f"X[{k}]" if isinstance(X, tuple) else "X")
    check_tensor(y, "y")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    weight_decay = check_real(weight_decay, "weight_decay", min_value=0.0)
    by_index = train_index is not None or test_index is not None
    if by_index and (train_index is None or test_index is None):
        raise ValueError("train_index and test_index must be given together")
    if not by_index and (X_test is None or y_test is None):
        raise ValueError("give either X_test and y_test, or train_index and test_index")
    if task == "classification" and y.dtype != torch.int64:
        raise TypeError(
            f"y must hold int64 class labels for classification, got {y.dtype}"
        )

    def loss_fn(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if task == "classification":
            return F.cross_entropy(pred, target)
        return 0.5 * ((pred - target) ** 2).mean()

    tr = train_index if by_index else slice(None)
    y_tr = y[tr]
    params = [p for p in model.parameters() if p.requires_grad]
    config = AdamConfig(lr=lr)
    states = [adam_init(p.detach(), config) for p in params]
    losses = torch.empty(steps)
    for t in range(steps):
        loss = loss_fn(model(*inputs)[tr], y_tr)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for i, (p, g) in enumerate(zip(params, grads)):
                # L2 penalty, as torch.optim.Adam
                g = g + weight_decay * p if weight_decay else g
                new, states[i] = adam_step(p.detach(), g, states[i], config)
                p.copy_(new)
        losses[t] = loss.item()
    with torch.no_grad():
        pred = model(*inputs)
        train_metric = _metric(pred[tr], y_tr, task)
        if by_index:
            test_metric = _metric(pred[test_index], y[test_index], task)
        else:
            test_inputs = X_test if isinstance(X_test, tuple) else (X_test,)
            test_metric = _metric(model(*test_inputs), y_test, task)
    return FitResult(losses=losses, train_metric=train_metric, test_metric=test_metric,
                     metric="accuracy" if task == "classification" else "mse")
