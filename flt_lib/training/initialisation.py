"""Weight initialisation and the propagation of variance through depth, forwards and
backwards.

Schemes for a weight matrix ``W`` of shape (fan_out, fan_in), with i.i.d. entries of
variance ``sigma^2`` (eq. ``eq-init-schemes``):

- ``naive``:      ``sigma^2 = 1``;
- ``lecun``:      ``sigma^2 = 1 / fan_in``                  (LeCun et al., 1998);
- ``xavier``:     ``sigma^2 = 2 / (fan_in + fan_out)``      (Glorot & Bengio, 2010);
- ``he``:         ``sigma^2 = 2 / fan_in``                  (He et al., 2015);
- ``orthogonal``: ``W = gain * Q`` with ``Q`` Haar-random with orthonormal rows or
  columns (Saxe, McClelland & Ganguli, 2014).

Each variance scheme comes as a Gaussian ``N(0, sigma^2)`` or a uniform ``U[-sqrt(3)
sigma, sqrt(3) sigma]`` law, which has the same variance (eq. ``eq-init-uniform``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)
from flt_lib.rng import random_orthogonal

__all__ = [
    "ACTIVATIONS",
    "DISTRIBUTIONS",
    "SCHEMES",
    "VarianceProfile",
    "init_std",
    "init_weight",
    "product_singular_values",
    "propagate_variances",
    "uniform_bound",
]

SCHEMES: tuple[str, ...] = ("naive", "lecun", "xavier", "he", "orthogonal")
ACTIVATIONS: tuple[str, ...] = ("linear", "tanh", "relu")
DISTRIBUTIONS: tuple[str, ...] = ("normal", "uniform")


def init_std(scheme: str, fan_in: int, fan_out: int) -> float:
    """Standard deviation ``sigma`` of the i.i.d. entries for a variance scheme
    (eq-init-schemes).

    Args:
        scheme: one of ``naive``, ``lecun``, ``xavier``, ``he``.
        fan_in: number of inputs of the layer.
        fan_out: number of outputs of the layer.

    Returns: ``sigma = 1``, ``sqrt(1/fan_in)``, ``sqrt(2/(fan_in+fan_out))`` or
        ``sqrt(2/fan_in)``.
    """
    check_choice(scheme, "scheme", SCHEMES[:4])
    fan_in = check_int(fan_in, "fan_in", min_value=1)
    fan_out = check_int(fan_out, "fan_out", min_value=1)
    return {
        "naive": 1.0,
        "lecun": math.sqrt(1.0 / fan_in),
        "xavier": math.sqrt(2.0 / (fan_in + fan_out)),
        "he": math.sqrt(2.0 / fan_in),
    }[scheme]


def uniform_bound(scheme: str, fan_in: int, fan_out: int) -> float:
    """Half-width ``a = sqrt(3) sigma`` of the uniform law ``U[-a, a]`` with variance
    ``sigma^2``.

    ``U[-a, a]`` has variance ``a^2 / 3`` (eq. ``eq-init-uniform``); e.g. Xavier's
    uniform law has ``a = sqrt(6 / (fan_in + fan_out))`` and He's ``a = sqrt(6 /
    fan_in)``.

    Args:
        scheme: one of ``naive``, ``lecun``, ``xavier``, ``he``.
        fan_in: number of inputs of the layer.
        fan_out: number of outputs of the layer.

    Returns:
        The half-width ``a``.
    """
    return math.sqrt(3.0) * init_std(scheme, fan_in, fan_out)


def init_weight(
    scheme: str,
    fan_out: int,
    fan_in: int,
    *,
    generator: torch.Generator,
    gain: float = 1.0,
    distribution: str = "normal",
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Draw a weight matrix from an initialisation scheme.

    Args:
        scheme: one of ``naive``, ``lecun``, ``xavier``, ``he``, ``orthogonal``.
        fan_out: number of outputs (rows).
        fan_in: number of inputs (columns).
        generator: CPU generator.
        gain: multiplier for the orthogonal scheme (sqrt(2) suits ReLU); must be 1
            otherwise.
        distribution: ``normal`` (``N(0, sigma^2)``) or ``uniform`` (``U[-a, a]``,
            ``a = sqrt(3) sigma``); ignored for the orthogonal scheme.
        dtype: floating dtype.

    Returns:
        ``W`` of shape (fan_out, fan_in), on the CPU.
    """
    check_choice(scheme, "scheme", SCHEMES)
    check_choice(distribution, "distribution", DISTRIBUTIONS)
    gain = check_real(gain, "gain", min_value=0.0, strict_min=True)
    check_generator(generator)
    if scheme != "orthogonal" and gain != 1.0:
        raise ValueError(
            f"gain must be 1.0 for scheme {scheme!r} (it is built into the scheme), "
            f"got {gain}"
        )
    return _init_weight(
        scheme,
        fan_out,
        fan_in,
        generator=generator,
        gain=gain,
        distribution=distribution,
        dtype=dtype,
    )


def _init_weight(
    scheme: str,
    fan_out: int,
    fan_in: int,
    *,
    generator: torch.Generator,
    gain: float,
    distribution: str,
    dtype: torch.dtype,
) -> torch.Tensor:
    """The check-free core of :func:`init_weight` (arguments already checked)."""
    if scheme == "orthogonal":
        return gain * random_orthogonal(
            fan_out, fan_in, generator=generator, dtype=dtype
        )
    return _iid_weights(scheme, (fan_out, fan_in), generator, distribution, dtype)


def _iid_weights(
    scheme: str,
    shape: tuple[int, ...],
    generator: torch.Generator,
    distribution: str,
    dtype: torch.dtype,
) -> torch.Tensor:
    """I.i.d. weights of a variance scheme, shape (..., fan_out, fan_in)."""
    fan_out, fan_in = shape[-2:]
    if distribution == "uniform":
        a = uniform_bound(scheme, fan_in, fan_out)
        return a * (2 * torch.rand(shape, generator=generator, dtype=dtype) - 1)
    std = init_std(scheme, fan_in, fan_out)
    return std * torch.randn(shape, generator=generator, dtype=dtype)


def _act(z: torch.Tensor, activation: str) -> torch.Tensor:
    if activation == "tanh":
        return torch.tanh(z)
    if activation == "relu":
        return torch.relu(z)
    return z


def _act_grad(z: torch.Tensor, activation: str) -> torch.Tensor:
    if activation == "tanh":
        return 1 - torch.tanh(z) ** 2
    if activation == "relu":
        return (z > 0).to(z.dtype)
    return torch.ones_like(z)


@dataclass(frozen=True)
class VarianceProfile:
    """What :func:`propagate_variances` returns: one entry per layer l = 1, ..., L."""

    # (L,) q_l = E[(z_j^(l))^2], pre-activation variance (float64, CPU)
    forward: torch.Tensor
    backward: torch.Tensor  # (L,) r_l = E[(delta_j^(l))^2], variance of dloss/dz^(l)


def propagate_variances(
    x: torch.Tensor,
    widths: Sequence[int],
    *,
    scheme: str,
    activation: str,
    generator: torch.Generator,
    n_nets: int = 1,
    gain: float = 1.0,
    distribution: str = "normal",
) -> VarianceProfile:
    """Forward and backward variances, layer by layer, of random deep MLPs without
    biases.

    Each of ``n_nets`` independent networks maps ``h^(0) = x`` through ``z^(l) = W^(l)
    h^(l-1)``, ``h^(l) = phi(z^(l))``, with ``W^(l)`` of shape ``(widths[l-1], fan_in)``
    drawn by :func:`init_weight`. The backward pass starts from an output error
    ``delta^(L) ~ N(0, I)`` and applies ``delta^(l-1) = phi'(z^(l-1)) * (W^(l)^T
    delta^(l))`` (eq. ``eq-bp-delta``). The variance of layer l is the mean square over
    the networks, examples and units (everything has mean zero by the symmetry of the
    weights), so averaging over networks estimates the expectation over initialisations
    that the variance arguments control (eq. ``eq-init-forward``, eq.
    ``eq-init-backward``).

    Args:
        x: inputs, shape (n, d), on any device.
        widths: output widths ``[m_1, ..., m_L]`` of the L layers (rectangular layers
            allowed).
        scheme: initialisation scheme (see :data:`SCHEMES`).
        activation: ``linear``, ``tanh`` or ``relu``.
        generator: CPU generator for the weights and the output errors.
        n_nets: number R of independent networks to average over.
        gain: gain for the orthogonal scheme.
        distribution: ``normal`` or ``uniform`` (see :func:`init_weight`).

    Returns:
        A :class:`VarianceProfile`.
    """
    x = check_tensor(x, "x", ndim=2, floating=True, shape_doc="(n, d)")
    if not isinstance(widths, (list, tuple)) or not widths:
        raise TypeError(f"widths must be a non-empty list of ints, got {widths!r}")
    widths = [check_int(m, "widths[i]", min_value=1) for m in widths]
    R = check_int(n_nets, "n_nets", min_value=1)
    check_choice(activation, "activation", ACTIVATIONS)
    fans = [x.shape[1], *widths]  # fan_in of layer l is fans[l - 1]
    check_choice(scheme, "scheme", SCHEMES)
    check_choice(distribution, "distribution", DISTRIBUTIONS)
    check_generator(generator)
    gain = check_real(gain, "gain", min_value=0.0, strict_min=True)
    Ws = []  # W^(l) for l = 1, ..., L, each (R, m_l, m_{l-1})
    for l in range(len(widths)):
        if scheme == "orthogonal":
            W = torch.stack(
                [
                    init_weight(
                        scheme,
                        fans[l + 1],
                        fans[l],
                        generator=generator,
                        gain=gain,
                        dtype=x.dtype,
                    )
                    for _ in range(R)
                ]
            )
        else:  # all R networks at once
            if gain != 1.0:
                raise ValueError(f"gain must be 1.0 for scheme {scheme!r}, got {gain}")
            shape = (R, fans[l + 1], fans[l])
            W = _iid_weights(scheme, shape, generator, distribution, x.dtype)
        Ws.append(W.to(x.device))
    h, zs, forward = x.expand(R, *x.shape), [], []  # h: (R, n, d)
    for W in Ws:
        z = h @ W.transpose(1, 2)  # (R, n, m_l)
        zs.append(z)
        forward.append((z**2).mean())
        h = _act(z, activation)
    delta = torch.randn(zs[-1].shape, generator=generator, dtype=x.dtype).to(x.device)
    backward = [(delta**2).mean()]  # r_L
    for l in range(len(Ws) - 1, 0, -1):
        delta = (delta @ Ws[l]) * _act_grad(zs[l - 1], activation)  # (R, n, m_{l-1})
        backward.append((delta**2).mean())
    return VarianceProfile(
        forward=torch.stack(forward).double().cpu(),
        backward=torch.stack(backward[::-1]).double().cpu(),
    )


def product_singular_values(
    depth: int, width: int, *, scheme: str, generator: torch.Generator
) -> torch.Tensor:
    """Singular values of the end-to-end matrix ``W^(L) ... W^(1)`` of a deep linear
    network.

    Args:
        depth: number of layers L.
        width: width d of every (square) layer.
        scheme: initialisation scheme.
        generator: CPU generator.

    Returns:
        The d singular values in descending order, shape (d,), float64.
    """
    depth = check_int(depth, "depth", min_value=1)
    width = check_int(width, "width", min_value=1)
    P = torch.eye(width, dtype=torch.float64)
    for _ in range(depth):
        P = init_weight(scheme, width, width, generator=generator) @ P  # (d, d)
    return torch.linalg.svdvals(P)
