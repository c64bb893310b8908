"""AdaGrad, RMSProp and Adam written from scratch as pure step functions (Section 3.3).

Each method has a frozen configuration, a frozen state, ``*_init(x)`` and ``*_step(x, g,
state, config) -> (x_new, state_new)``. Nothing is mutated, so a trajectory is a plain
loop (:func:`run`). The formulas, including where ``eps`` goes, are those of
``torch.optim.Adagrad``, ``torch.optim.RMSprop`` and ``torch.optim.Adam`` without weight
decay, so that the trajectories can be compared with PyTorch's to round-off:

- AdaGrad (Duchi, Hazan & Singer 2011): ``s += g^2``; ``x -= lr g / (sqrt(s) + eps)``.
- RMSProp (Tieleman & Hinton 2012): ``s = alpha s + (1 - alpha) g^2``; ``x -= lr g /
  (sqrt(s) + eps)``.
- Adam (Kingma & Ba 2015): ``m = b1 m + (1 - b1) g``, ``v = b2 v + (1 - b2) g^2``,
  ``x -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from flt_lib._validate import check_int, check_real, check_tensor

__all__ = [
    "AccumulatorState",
    "AdagradConfig",
    "AdamConfig",
    "AdamState",
    "RMSpropConfig",
    "adagrad_init",
    "adagrad_step",
    "adam_init",
    "adam_step",
    "rmsprop_init",
    "rmsprop_step",
    "run",
    "run_torch",
]


def _check_lr_eps(config: object) -> None:
    check_real(config.lr, "config.lr", min_value=0.0, strict_min=True)
    check_real(config.eps, "config.eps", min_value=0.0)


@dataclass(frozen=True)
class AdagradConfig:
    """Hyperparameters of AdaGrad (defaults as in torch.optim.Adagrad)."""

    lr: float = 0.01  # base step size eta
    eps: float = 1e-10  # added to sqrt(s) in the denominator
    # starting value of the sum of squared gradients
    initial_accumulator_value: float = 0.0

    def __post_init__(self) -> None:
        _check_lr_eps(self)
        check_real(
            self.initial_accumulator_value,
            "config.initial_accumulator_value",
            min_value=0.0,
        )


@dataclass(frozen=True)
class RMSpropConfig:
    """Hyperparameters of RMSProp (defaults as in torch.optim.RMSprop)."""

    lr: float = 0.01  # base step size eta
    alpha: float = 0.99  # decay rate of the running mean of squared gradients
    eps: float = 1e-8  # added to sqrt(s) in the denominator

    def __post_init__(self) -> None:
        _check_lr_eps(self)
        check_real(self.alpha, "config.alpha", min_value=0.0, max_value=1.0)


@dataclass(frozen=True)
class AdamConfig:
    """Hyperparameters of Adam (defaults as in torch.optim.Adam)."""

    lr: float = 1e-3  # base step size eta
    # decay rates (beta_1, beta_2) of the two moments
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8  # added to the bias-corrected sqrt(v) in the denominator

    def __post_init__(self) -> None:
        _check_lr_eps(self)
        if not isinstance(self.betas, (tuple, list)) or len(self.betas) != 2:
            raise ValueError(
                f"config.betas must be a pair (beta1, beta2), got {self.betas!r}"
            )
        for i, beta in enumerate(self.betas):
            check_real(beta, f"config.betas[{i}]", min_value=0.0)
            if beta >= 1.0:
                raise ValueError(f"config.betas[{i}] must be < 1, got {beta}")


@dataclass(frozen=True)
class AccumulatorState:
    """State of AdaGrad or RMSProp."""

    step: int  # number of updates taken so far
    s: torch.Tensor  # (d,) sum (AdaGrad) or running mean (RMSProp) of squared gradients


@dataclass(frozen=True)
class AdamState:
    """State of Adam."""

    step: int  # number of updates taken so far, t
    m: torch.Tensor  # (d,) running mean of gradients (first moment)
    v: torch.Tensor  # (d,) running mean of squared gradients (second moment)


def _check_xg(x: torch.Tensor, g: torch.Tensor) -> None:
    check_tensor(x, "x", floating=True)
    check_tensor(g, "g", shape=tuple(x.shape), floating=True, shape_doc="like x")


def adagrad_init(x: torch.Tensor, config: AdagradConfig) -> AccumulatorState:
    """Initial AdaGrad state for parameters ``x`` of any shape: ``s =
    initial_accumulator_value``."""
    check_tensor(x, "x", floating=True)
    return AccumulatorState(
        step=0, s=torch.full_like(x, config.initial_accumulator_value)
    )


def adagrad_step(
    x: torch.Tensor, g: torch.Tensor, state: AccumulatorState, config: AdagradConfig
) -> tuple[torch.Tensor, AccumulatorState]:
    """One AdaGrad update (Duchi et al. 2011, diagonal version).

    Args:
        x: parameters, shape (d,) (any shape works).
        g: gradient at ``x``, same shape.
        state: from :func:`adagrad_init` or the previous step.
        config: hyperparameters.

    Returns: ``(x_new, state_new)`` with ``s_new = s + g^2`` and ``x_new = x - lr g /
        (sqrt(s_new) + eps)``.
    """
    _check_xg(x, g)
    s = state.s + g * g
    return x - config.lr * g / (s.sqrt() + config.eps), AccumulatorState(
        state.step + 1, s
    )


def rmsprop_init(x: torch.Tensor, config: RMSpropConfig) -> AccumulatorState:
    """Initial RMSProp state for parameters ``x``: a zero running mean of squared
    gradients."""
    check_tensor(x, "x", floating=True)
    return AccumulatorState(step=0, s=torch.zeros_like(x))


def rmsprop_step(
    x: torch.Tensor, g: torch.Tensor, state: AccumulatorState, config: RMSpropConfig
) -> tuple[torch.Tensor, AccumulatorState]:
    """One RMSProp update (Tieleman & Hinton 2012).

    Args:
        x: parameters, shape (d,).
        g: gradient at ``x``, same shape.
        state: from :func:`rmsprop_init` or the previous step.
        config: hyperparameters.

    Returns:
        ``(x_new, state_new)`` with ``s_new = alpha s + (1 - alpha) g^2`` and
        ``x_new = x - lr g / (sqrt(s_new) + eps)``.
    """
    _check_xg(x, g)
    s = config.alpha * state.s + (1.0 - config.alpha) * g * g
    return x - config.lr * g / (s.sqrt() + config.eps), AccumulatorState(
        state.step + 1, s
    )


def adam_init(x: torch.Tensor, config: AdamConfig) -> AdamState:
    """Initial Adam state for parameters ``x``: zero moments, ``t = 0``."""
    check_tensor(x, "x", floating=True)
    return AdamState(step=0, m=torch.zeros_like(x), v=torch.zeros_like(x))


def adam_step(
    x: torch.Tensor, g: torch.Tensor, state: AdamState, config: AdamConfig
) -> tuple[torch.Tensor, AdamState]:
    """One Adam update with bias correction (Kingma & Ba 2015, Algorithm 1).

    Args:
        x: parameters, shape (d,).
        g: gradient at ``x``, same shape.
        state: from :func:`adam_init` or the previous step.
        config: hyperparameters.

    Returns: ``(x_new, state_new)``; ``eps`` is added to ``sqrt(v_hat)``, as in the
        paper and in torch.
    """
    _check_xg(x, g)
    return _adam_step(x, g, state, config)


def _adam_step(
    x: torch.Tensor, g: torch.Tensor, state: AdamState, config: AdamConfig
) -> tuple[torch.Tensor, AdamState]:
    """The check-free core of :func:`adam_step` (arguments already checked)."""
    beta1, beta2 = config.betas
    t = state.step + 1
    m = beta1 * state.m + (1.0 - beta1) * g  # (d,) first moment
    v = beta2 * state.v + (1.0 - beta2) * g * g  # (d,) second moment
    m_hat = m / (1.0 - beta1**t)
    v_hat = v / (1.0 - beta2**t)
    return x - config.lr * m_hat / (v_hat.sqrt() + config.eps), AdamState(t, m, v)


_METHODS = {
    AdagradConfig: (adagrad_init, adagrad_step),
    RMSpropConfig: (rmsprop_init, rmsprop_step),
    AdamConfig: (adam_init, adam_step),
}


def _method(config: object) -> tuple:
    if type(config) not in _METHODS:
        raise TypeError(
            "config must be an AdagradConfig, RMSpropConfig or AdamConfig, "
            f"got {type(config).__name__}"
        )
    return _METHODS[type(config)]


def run(
    grad_fn: Callable[[torch.Tensor], torch.Tensor],
    x0: torch.Tensor,
    config: AdagradConfig | RMSpropConfig | AdamConfig,
    *,
    steps: int,
) -> torch.Tensor:
    """Iterate an adaptive method from ``x0``; the method is chosen by the type of
    ``config``.

    Args:
        grad_fn: maps parameters (d,) to the gradient (d,).
        x0: starting point, shape (d,).
        config: an :class:`AdagradConfig`, :class:`RMSpropConfig` or
            :class:`AdamConfig`.
        steps: number of updates ``T >= 0``.

    Returns:
        The trajectory ``x_0, ..., x_T``, shape (T + 1, d).
    """
    check_tensor(x0, "x0", ndim=1, floating=True, shape_doc="(d,)")
    init, step = _method(config)
    steps = check_int(steps, "steps", min_value=0)
    # (T+1, d)
    traj = torch.empty(steps + 1, x0.shape[0], dtype=x0.dtype, device=x0.device)
    traj[0] = x0
    x, state = x0, init(x0, config)
    for t in range(steps):
        x, state = step(x, grad_fn(x), state, config)
        traj[t + 1] = x
    return traj


def run_torch(
    grad_fn: Callable[[torch.Tensor], torch.Tensor],
    x0: torch.Tensor,
    config: AdagradConfig | RMSpropConfig | AdamConfig,
    *,
    steps: int,
) -> torch.Tensor:
    """The same trajectory as :func:`run`, computed by ``torch.optim`` (the oracle).

    Args:
        grad_fn: maps parameters (d,) to the gradient (d,).
        x0: starting point, shape (d,).
        config: an :class:`AdagradConfig`, :class:`RMSpropConfig` or
            :class:`AdamConfig`.
        steps: number of updates ``T >= 0``.

    Returns:
        The trajectory, shape (T + 1, d).
    """
    check_tensor(x0, "x0", ndim=1, floating=True, shape_doc="(d,)")
    _method(config)
    steps = check_int(steps, "steps", min_value=0)
    x = x0.clone().requires_grad_(True)
    if isinstance(config, AdagradConfig):
        opt = torch.optim.Adagrad(
            [x],
            lr=config.lr,
            eps=config.eps,
            initial_accumulator_value=config.initial_accumulator_value,
        )
    elif isinstance(config, RMSpropConfig):
        opt = torch.optim.RMSprop([x], lr=config.lr, alpha=config.alpha, eps=config.eps)
    else:
        opt = torch.optim.Adam([x], lr=config.lr, betas=config.betas, eps=config.eps)
    # (T+1, d)
    traj = torch.empty(steps + 1, x0.shape[0], dtype=x0.dtype, device=x0.device)
    traj[0] = x0
    for t in range(steps):
        x.grad = grad_fn(x.detach())
        opt.step()
        traj[t + 1] = x.detach()
    return traj
