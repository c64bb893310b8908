"""Linear, residual and densely connected networks (Section 2.3 of the book)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from flt_lib._validate import check_choice, check_generator, check_int, check_tensor
from flt_lib.feedforward.mlp.network import ACTIVATIONS, Params, activation_fn

__all__ = ["DeepMLP", "compose_linear", "dense_forward", "residual_layer"]


def compose_linear(weights: Sequence[torch.Tensor]) -> torch.Tensor:
    """The single matrix ``W_L ... W_2 W_1`` that a deep linear network computes.

    Args:
        weights: ``[W_1, ..., W_L]`` with ``W_l`` of shape ``(m_l, m_{l-1})``.

    Returns:
        The product, shape ``(m_L, m_0)`` (book eq. ``eq-ff-linear-collapse``).
    """
    if not isinstance(weights, (list, tuple)) or not weights:
        raise TypeError("weights must be a non-empty list of 2-D tensors")
    checked = [
        check_tensor(
            weights[0], "weights[0]", ndim=2, floating=True, shape_doc="(m_1, m_0)"
        )
    ]
    for i, W in enumerate(weights[1:], start=1):
        W = check_tensor(
            W, f"weights[{i}]", ndim=2, floating=True, shape_doc="(m_l, m_{l-1})"
        )
        if W.shape[1] != checked[-1].shape[0]:
            raise ValueError(
                f"weights[{i}] must have {checked[-1].shape[0]} columns, "
                f"got {W.shape[1]}"
            )
        checked.append(W)
    return _compose_linear(checked)


def _compose_linear(weights: Sequence[torch.Tensor]) -> torch.Tensor:
    """The check-free core of :func:`compose_linear`."""
    out = weights[0]  # W_1, (m_1, m_0)
    for W in weights[1:]:
        out = W @ out  # W_l ... W_1, (m_l, m_0)
    return out


def residual_layer(
    x: torch.Tensor,
    W: torch.Tensor,
    b: torch.Tensor,
    *,
    V: torch.Tensor | None = None,
    activation: str = "relu",
) -> torch.Tensor:
    """Residual layer ``F(x) = V x + phi(W x + b) - phi(0)`` (``V = I`` when omitted).

    With ``W = 0, b = 0`` it is exactly the shortcut ``x -> V x`` (book eq.
    ``eq-ff-residual``; He et al. 2016). A projection ``V`` lets the output width differ
    from the input width.

    Args:
        x: inputs, shape (n, m_in).
        W: weights, shape (m_out, m_in).
        b: bias, shape (m_out,).
        V: shortcut projection, shape (m_out, m_in); required when ``m_out != m_in``.
        activation: name of ``phi``.

    Returns:
        Shape (n, m_out).
    """
    activation_fn(activation)  # checks the name
    x = check_tensor(x, "x", ndim=2, floating=True, shape_doc="(n, m_in)")
    W = check_tensor(W, "W", ndim=2, floating=True, shape_doc="(m_out, m_in)")
    b = check_tensor(b, "b", shape=(W.shape[0],), floating=True, shape_doc="(m_out,)")
    if W.shape[1] != x.shape[1]:
        raise ValueError(f"W must have {x.shape[1]} columns (m_in), got {W.shape[1]}")
    if V is None:
        if W.shape[0] != W.shape[1]:
            raise ValueError(
                "V (a projection) is required when widths differ: W has shape "
                f"{tuple(W.shape)}"
            )
    else:
        V = check_tensor(
            V, "V", shape=tuple(W.shape), floating=True, shape_doc="(m_out, m_in)"
        )
    return _residual_layer(x, W, b, V=V, activation=activation)


def _residual_layer(
    x: torch.Tensor,
    W: torch.Tensor,
    b: torch.Tensor,
    *,
    V: torch.Tensor | None,
    activation: str,
) -> torch.Tensor:
    """The check-free core of :func:`residual_layer`."""
    phi = activation_fn(activation)
    skip = x if V is None else x @ V.T  # (n, m_out)
    phi0 = phi(torch.zeros((), dtype=x.dtype, device=x.device))
    return skip + (phi(x @ W.T + b) - phi0)  # (n, m_out)


class DeepMLP(nn.Module):
    """A deep MLP ``d -> m -> ... -> m -> d_out`` with optional identity shortcuts.

    Plain block: ``h <- phi(W h + b)``. Residual block: ``h <- h + phi(W h + b) -
    phi(0)``. Both variants have the same parameters, so one set of weights can be
    loaded into both. Weights and biases are drawn like PyTorch's default ``nn.Linear``
    initialisation, ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``, but from the given
    generator.
    """

    def __init__(
        self,
        d: int,
        width: int,
        depth: int,
        d_out: int,
        *,
        residual: bool,
        activation: str = "tanh",
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        d = check_int(d, "d", min_value=1)
        width = check_int(width, "width", min_value=1)
        self.depth = check_int(depth, "depth", min_value=0)
        d_out = check_int(d_out, "d_out", min_value=1)
        check_generator(generator)
        self.residual = bool(residual)
        self.activation = check_choice(activation, "activation", list(ACTIVATIONS))
        self.inp = nn.Linear(d, width)
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(self.depth))
        self.out = nn.Linear(width, d_out)
        with torch.no_grad():
            for lin in [self.inp, *self.blocks, self.out]:
                bound = 1.0 / math.sqrt(lin.in_features)
                lin.weight.copy_(
                    torch.rand(lin.weight.shape, generator=generator) * 2 * bound
                    - bound
                )
                lin.bias.copy_(
                    torch.rand(lin.bias.shape, generator=generator) * 2 * bound - bound
                )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Map inputs of shape (n, d) to outputs of shape (n, d_out)."""
        phi = ACTIVATIONS[self.activation]
        h = phi(self.inp(x))  # (n, m)
        phi0 = phi(torch.zeros((), dtype=h.dtype, device=h.device))
        for block in self.blocks:
            z = phi(block(h))  # (n, m)
            h = h + (z - phi0) if self.residual else z
        return self.out(h)


def dense_forward(
    params: Params, x: torch.Tensor, *, activation: str = "relu"
) -> torch.Tensor:
    """A DenseNet-style stack: layer ``l`` sees the concatenation ``[x, h_1, ...,
    h_{l-1}]``.

    Each ``W_l`` has shape ``(k, d + (l - 1) k)`` for a growth rate ``k``; the output is
    the concatenation of the input and all layer outputs (Huang et al. 2017, with dense
    layers in place of convolutions).

    Args:
        params: list of ``(W_l, b_l)`` with the shapes above.
        x: inputs, shape (n, d).
        activation: name of ``phi``.

    Returns:
        Shape (n, d + L k).
    """
    activation_fn(activation)  # checks the name
    x = check_tensor(x, "x", ndim=2, floating=True, shape_doc="(n, d)")
    if not isinstance(params, (list, tuple)) or not params:
        raise TypeError("params must be a non-empty list of (W, b) pairs")
    checked, width = [], x.shape[1]
    for i, (W, b) in enumerate(params):
        W = check_tensor(
            W, f"params[{i}][0] (W)", ndim=2, floating=True, shape_doc="(k, d + i k)"
        )
        if W.shape[1] != width:
            raise ValueError(
                f"params[{i}][0] (W) must have {width} columns (all earlier "
                f"features), got {W.shape[1]}"
            )
        checked.append((W, b))
        width += W.shape[0]
    return _dense_forward(checked, x, activation=activation)


def _dense_forward(params: Params, x: torch.Tensor, *, activation: str) -> torch.Tensor:
    """The check-free core of :func:`dense_forward`."""
    phi = activation_fn(activation)
    feats = [x]
    for W, b in params:
        cat = torch.cat(feats, dim=1)  # (n, d + i k)
        feats.append(phi(cat @ W.T + b))  # (n, k)
    return torch.cat(feats, dim=1)  # (n, d + L k)
