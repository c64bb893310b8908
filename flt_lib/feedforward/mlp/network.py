"""Multilayer perceptrons stored as lists of layers, and training them by full-batch
Adam.

Section 2.2 of the book. A network is stored *functionally* as a list of layers ``[(W_1,
b_1), ..., (W_L, b_L)]`` with ``W_l`` of shape ``(m_l, m_{l-1})`` and ``b_l`` of shape
``(m_l,)``; inputs are rows, so a layer maps ``h -> phi(h W^T + b)``. The last layer is
affine (no activation). This makes symmetries of the parameters easy to write down and
to test (``symmetries``), and it is the format that backpropagation by hand uses
(:mod:`flt_lib.autodiff`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)

__all__ = [
    "ACTIVATIONS",
    "MLPFit",
    "ODD_ACTIVATIONS",
    "Params",
    "RegressorFit",
    "activation_fn",
    "check_params",
    "fit_mlp",
    "hidden_activations",
    "init_mlp",
    "mlp_forward",
    "train_regressor",
]

Params = list[tuple[torch.Tensor, torch.Tensor]]

ACTIVATIONS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "tanh": torch.tanh,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "identity": lambda z: z,
}
# Odd activations (phi(-z) = -phi(z)) have the extra sign-flip symmetry.
ODD_ACTIVATIONS = ("tanh", "identity")


def activation_fn(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    """Return the activation function called ``name`` (tanh, relu, sigmoid or
    identity)."""
    check_choice(name, "activation", list(ACTIVATIONS))
    return ACTIVATIONS[name]


def check_params(params: object) -> Params:
    """Check that ``params`` is a non-empty list of layers ``(W_l, b_l)`` that fit
    together.

    Args:
        params: the candidate list; ``W_l`` of shape (m_l, m_{l-1}), ``b_l`` of shape
            (m_l,).

    Returns:
        ``params`` as a list.
    """
    if not isinstance(params, (list, tuple)) or len(params) == 0:
        raise TypeError(
            "params must be a non-empty list of (W, b) pairs, got "
            f"{type(params).__name__}"
        )
    prev = None
    for i, layer in enumerate(params):
        if not isinstance(layer, (list, tuple)) or len(layer) != 2:
            raise TypeError(f"params[{i}] must be a pair (W, b)")
        W = check_tensor(
            layer[0],
            f"params[{i}][0] (W)",
            ndim=2,
            floating=True,
            shape_doc="(m_out, m_in)",
        )
        check_tensor(
            layer[1],
            f"params[{i}][1] (b)",
            shape=(W.shape[0],),
            floating=True,
            shape_doc="(m_out,)",
        )
        if prev is not None and W.shape[1] != prev:
            raise ValueError(
                f"params[{i}] (W) must have {prev} columns to follow the previous "
                "layer, "
                f"got {W.shape[1]}"
            )
        prev = W.shape[0]
    return list(params)


def init_mlp(
    sizes: Sequence[int],
    *,
    generator: torch.Generator,
    gain: float = 1.0,
    dtype: torch.dtype = torch.float32,
) -> Params:
    """Gaussian initialisation ``W_ij ~ N(0, gain^2 / fan_in)``, ``b = 0``.

    Args:
        sizes: layer widths ``[d, m_1, ..., m_{L-1}, d_out]``, at least two entries,
            each >= 1.
        generator: a CPU ``torch.Generator``.
        gain: standard-deviation multiplier (> 0); 1 is LeCun's scaling.
        dtype: floating dtype of the parameters.

    Returns:
        A list of ``L`` pairs ``(W_l, b_l)`` on the CPU, shapes ``(m_l, m_{l-1})`` and
        ``(m_l,)``.
    """
    generator = check_generator(generator)
    gain = check_real(gain, "gain", min_value=0.0, strict_min=True)
    if not isinstance(sizes, (list, tuple)) or len(sizes) < 2:
        raise ValueError(
            f"sizes must be a list of at least 2 widths [d, ..., d_out], got {sizes!r}"
        )
    sizes = [check_int(s, "sizes[i]", min_value=1) for s in sizes]
    params = []
    for m_in, m_out in zip(sizes[:-1], sizes[1:]):
        W = torch.randn(m_out, m_in, generator=generator, dtype=dtype) * (
            gain / math.sqrt(m_in)
        )
        params.append((W, torch.zeros(m_out, dtype=dtype)))
    return params


def hidden_activations(
    params: Params, x: torch.Tensor, *, activation: str = "tanh"
) -> list[torch.Tensor]:
    """All layer outputs ``[h^(1), ..., h^(L)]`` of the MLP (eq. ``eq-ff-mlp``).

    ``h^(l) = phi(h^(l-1) W_l^T + b_l)`` for ``l < L`` and ``h^(L) = h^(L-1) W_L^T +
    b_L``.

    Args:
        params: list of ``(W_l, b_l)``, see :func:`init_mlp`.
        x: inputs ``h^(0)``, shape (n, d).
        activation: name of ``phi``.

    Returns:
        A list of ``L`` tensors of shapes (n, m_l); the last one is the output.
    """
    params = check_params(params)
    phi = activation_fn(activation)
    x = check_tensor(x, "x", ndim=2, floating=True, shape_doc="(n, d)")
    if x.shape[1] != params[0][0].shape[1]:
        raise ValueError(
            f"x must have {params[0][0].shape[1]} columns (d), got {x.shape[1]}"
        )
    return _hidden_activations(params, x, activation=activation)


def _hidden_activations(
    params: Params, x: torch.Tensor, *, activation: str = "tanh"
) -> list[torch.Tensor]:
    """The check-free core of :func:`hidden_activations` (arguments already checked)."""
    phi = activation_fn(activation)
    hs, h = [], x
    for i, (W, b) in enumerate(params):
        z = h @ W.T + b  # (n, m_l)
        h = z if i == len(params) - 1 else phi(z)
        hs.append(h)
    return hs


def mlp_forward(
    params: Params, x: torch.Tensor, *, activation: str = "tanh"
) -> torch.Tensor:
    """The network's output ``f_theta(x)``: the last entry of
    :func:`hidden_activations`.

    Args:
        params: list of ``(W_l, b_l)``.
        x: inputs, shape (n, d).
        activation: name of ``phi``.

    Returns:
        Outputs, shape (n, d_out).
    """
    return hidden_activations(params, x, activation=activation)[-1]


def _adam_mse(
    parameters: Iterable[torch.Tensor],
    predict: Callable[[], torch.Tensor],
    y: torch.Tensor,
    *,
    lr: float,
    steps: int,
) -> torch.Tensor:
    """Full-batch Adam on ``0.5 * mean((predict() - y)^2)``; return the loss before each
    step."""
    opt = torch.optim.Adam(list(parameters), lr=lr)
    losses = torch.empty(steps)
    for t in range(steps):
        loss = 0.5 * ((predict() - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses[t] = loss.item()
    return losses


@dataclass(frozen=True)
class MLPFit:
    """What :func:`fit_mlp` returns."""

    params: Params  # trained parameters, detached, on the device of the inputs
    losses: torch.Tensor  # (steps,) training loss before every Adam step, on the CPU


def fit_mlp(
    params: Params,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    activation: str = "tanh",
    lr: float,
    steps: int,
) -> MLPFit:
    """Minimise the halved mean squared error of :func:`mlp_forward` with full-batch
    Adam.

    Args:
        params: initial parameters (not modified).
        X: inputs, shape (n, d).
        y: targets, shape (n, d_out).
        activation: name of ``phi``.
        lr: Adam step size (> 0).
        steps: number of steps (>= 0).

    Returns:
        An :class:`MLPFit`.
    """
    params = check_params(params)
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    y = check_tensor(
        y,
        "y",
        shape=(X.shape[0], params[-1][0].shape[0]),
        floating=True,
        shape_doc="(n, d_out)",
    )
    activation_fn(activation)
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=0)
    flat = [p.detach().clone().requires_grad_(True) for layer in params for p in layer]
    layers = list(zip(flat[0::2], flat[1::2]))
    losses = _adam_mse(
        flat,
        lambda: mlp_forward(layers, X, activation=activation),
        y,
        lr=lr,
        steps=steps,
    )
    return MLPFit(params=[(W.detach(), b.detach()) for W, b in layers], losses=losses)


@dataclass(frozen=True)
class RegressorFit:
    """What :func:`train_regressor` returns (the model itself is trained in place)."""

    losses: torch.Tensor  # (steps,) training loss before every Adam step, on the CPU


def train_regressor(
    model: nn.Module, X: torch.Tensor, y: torch.Tensor, *, lr: float, steps: int
) -> RegressorFit:
    """Train ``model`` in place by full-batch Adam on the halved mean squared error.

    Args:
        model: maps (n, d) to (n, d_out).
        X: inputs, shape (n, d).
        y: targets, shape (n, d_out).
        lr: Adam step size (> 0).
        steps: number of steps (>= 1).

    Returns:
        A :class:`RegressorFit`.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(n, d)")
    y = check_tensor(y, "y", ndim=2, floating=True, shape_doc="(n, d_out)")
    lr = check_real(lr, "lr", min_value=0.0, strict_min=True)
    steps = check_int(steps, "steps", min_value=1)
    return RegressorFit(
        losses=_adam_mse(model.parameters(), lambda: model(X), y, lr=lr, steps=steps)
    )
