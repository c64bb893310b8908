"""One training step for hand-written models: gradient clipping by the joint norm and an
Adam step on all parameters at once (used by the training loops of Chapter 4).

Clipping follows Pascanu, Mikolov & Bengio (2013); Adam is :mod:`flt_lib.optim.adaptive`
(Kingma & Ba 2015), the same formulas as ``torch.optim.Adam``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from flt_lib._validate import check_real, check_tensor
from flt_lib.optim.adaptive import AdamConfig, AdamState, adam_init, adam_step

__all__ = ["adam_train_step", "clip_by_norm"]


def _clip_by_norm(
    grads: Sequence[torch.Tensor], threshold: float
) -> tuple[list[torch.Tensor], float]:
    norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads)).item()  # ||g||
    scale = min(1.0, threshold / norm) if norm > 0 else 1.0  # min(1, threshold/||g||)
    return [g * scale for g in grads], norm


def clip_by_norm(
    grads: Sequence[torch.Tensor], threshold: float
) -> tuple[list[torch.Tensor], float]:
    """Rescale gradients so that their joint norm is at most ``threshold``.

    g <- g * min(1, threshold / ||g||), with ||g|| the Euclidean norm of all entries
    together (Pascanu, Mikolov & Bengio 2013; the book's gradient clipping rule in
    Section 4.2). The direction is kept; only the length is capped.

    Args:
        grads: tensors (any shapes).
        threshold: the largest allowed norm, > 0.

    Returns:
        ``(clipped, norm)``: new tensors, and the norm before clipping.
    """
    threshold = check_real(threshold, "threshold", min_value=0.0, strict_min=True)
    if isinstance(grads, torch.Tensor) or not grads:
        raise TypeError("grads must be a non-empty sequence of tensors")
    for i, g in enumerate(grads):
        check_tensor(g, f"grads[{i}]", floating=True)
    return _clip_by_norm(grads, threshold)


def adam_train_step(
    params: list[torch.Tensor], loss: torch.Tensor, state: AdamState | None,
    config: AdamConfig, *, clip: float | None = None,
) -> AdamState:
    """Backpropagate ``loss``, clip the joint gradient norm, and take one Adam step in
    place.

    Adam is Chapter 3's :func:`~flt_lib.optim.adaptive.adam_step` (the same formulas as
    ``torch.optim.Adam``), applied once to all parameters flattened into one vector;
    clipping is :func:`clip_by_norm`.

    Args:
        params: the tensors to train (``requires_grad``).
        loss: a scalar to minimise.
        state: the Adam state from the previous call, or None on the first step.
        config: Adam's hyperparameters.
        clip: the clipping threshold, or None.

    Returns:
        The new Adam state (moments of the flattened parameters).
    """
    grads = torch.autograd.grad(loss, params)
    if clip is not None:
        grads, _ = clip_by_norm(grads, clip)
    with torch.no_grad():
        flat = torch.cat([p.reshape(-1) for p in params])           # (P,)
        if state is None:
            state = adam_init(flat, config)
        flat, state = adam_step(
            flat, torch.cat([g.reshape(-1) for g in grads]), state, config
        )
        offset = 0
        # write back in place
        for p in params:
            p.copy_(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
    return state
