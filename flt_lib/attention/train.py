"""One training loop for every model of Chapter 5 (Adam on freshly drawn minibatches).

Each experiment supplies three small functions: ``batch_fn()`` draws a minibatch (from
its own generator, already on the model's device), ``loss_fn(model, batch)`` returns the
scalar loss, and optionally ``eval_fn(model)`` returns a number to record (an accuracy,
a test loss).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from flt_lib._validate import check_int, check_real

__all__ = ["History", "train"]


@dataclass(frozen=True)
class History:
    """What :func:`train` records, every ``record_every`` steps and after the last
    step."""

    steps: list[int]      # the recorded step numbers (number of updates done so far)
    loss: list[float]     # mean training loss over the steps since the previous record
    # eval_fn(model) at each recorded step (nan when no eval_fn is given)
    metric: list[float]
    seconds: float        # wall-clock time of the whole run, evaluations included

    @property
    def final_metric(self) -> float:
        """The last recorded metric."""
        return self.metric[-1]


def train(
    model: nn.Module,
    batch_fn: Callable[[], Any],
    loss_fn: Callable[[nn.Module, Any], torch.Tensor],
    *,
    steps: int,
    lr: float,
    record_every: int = 100,
    eval_fn: Callable[[nn.Module], float] | None = None,
    weight_decay: float = 0.0,
    stop_at: float | None = None,
) -> History:
    """Train ``model`` in place with Adam (AdamW when ``weight_decay > 0``).

    Args:
        model: the model; its parameters are updated.
        batch_fn: draws a fresh minibatch, called once per step.
        loss_fn: ``loss_fn(model, batch)``, a scalar tensor to minimise.
        steps: number of updates, >= 1.
        lr: Adam's step size, > 0.
        record_every: record the loss (and ``eval_fn``) every this many steps, >= 1.
        eval_fn: ``eval_fn(model)``, evaluated without gradients at each record.
        weight_decay: decoupled weight decay (AdamW), >= 0.
        stop_at: if given, stop at the first record where ``eval_fn`` is >= this value
            (so ``steps`` is a maximum); needs ``eval_fn``.

    Returns:
        A :class:`History`.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    for name, fn in (("batch_fn", batch_fn), ("loss_fn", loss_fn)):
        if not callable(fn):
            raise TypeError(f"{name} must be callable, got {type(fn).__name__}")
    steps = check_int(steps, "steps", min_value=1)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    record_every = check_int(record_every, "record_every", min_value=1)
    weight_decay = check_real(weight_decay, "weight_decay", min_value=0.0)
    if stop_at is not None:
        stop_at = check_real(stop_at, "stop_at")
        if eval_fn is None:
            raise ValueError("stop_at needs an eval_fn, got eval_fn=None")
    opt = torch.optim.AdamW(
        model.parameters(), lr=lr, weight_decay=weight_decay, foreach=True
    )
    rec_steps, rec_loss, rec_metric, running = [], [], [], []
    start = time.perf_counter()
    for step in range(1, steps + 1):
        loss = loss_fn(model, batch_fn())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running.append(loss.detach())
        if step % record_every == 0 or step == steps:
            rec_steps.append(step)
            rec_loss.append(torch.stack(running).mean().item())
            running = []
            if eval_fn is None:
                rec_metric.append(math.nan)
            else:
                with torch.no_grad():
                    rec_metric.append(float(eval_fn(model)))
                if stop_at is not None and rec_metric[-1] >= stop_at:
                    break
    seconds = time.perf_counter() - start
    return History(steps=rec_steps, loss=rec_loss, metric=rec_metric, seconds=seconds)
