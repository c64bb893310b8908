"""Weight initialisation schemes and the propagation of activation variance through depth.

Schemes for a weight matrix W of shape (fan_out, fan_in):

- ``naive``:      W_ij ~ N(0, 1);
- ``lecun``:      W_ij ~ N(0, 1 / fan_in)                (LeCun et al., 1998);
- ``xavier``:     W_ij ~ N(0, 2 / (fan_in + fan_out))    (Glorot & Bengio, 2010);
- ``he``:         W_ij ~ N(0, 2 / fan_in)                (He et al., 2015);
- ``orthogonal``: W = gain * Q with Q uniformly random with orthonormal rows or columns
                  (Saxe, McClelland & Ganguli, 2014).
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_choice, check_generator, check_int, check_real, check_tensor

SCHEMES: tuple[str, ...] = ("naive", "lecun", "xavier", "he", "orthogonal")
ACTIVATIONS: tuple[str, ...] = ("linear", "tanh", "relu")


def init_std(scheme: str, fan_in: int, fan_out: int) -> float:
    """Standard deviation of the i.i.d. Gaussian entries for an initialisation scheme.

    Args:
        scheme: one of ``naive``, ``lecun``, ``xavier``, ``he``.
        fan_in: number of inputs of the layer.
        fan_out: number of outputs of the layer.

    Returns:
        sigma = 1, sqrt(1/fan_in), sqrt(2/(fan_in+fan_out)) or sqrt(2/fan_in).
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


def orthogonal_matrix(
    fan_out: int, fan_in: int, generator: torch.Generator, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """A Haar-random matrix with orthonormal rows or columns (QR of a Gaussian, signs fixed).

    Args:
        fan_out: number of rows.
        fan_in: number of columns.
        generator: CPU generator.
        dtype: floating dtype of the result.

    Returns:
        Q of shape (fan_out, fan_in) with Q Q^T = I (fan_out <= fan_in) or Q^T Q = I.
    """
    fan_out = check_int(fan_out, "fan_out", min_value=1)
    fan_in = check_int(fan_in, "fan_in", min_value=1)
    check_generator(generator)
    big, small = max(fan_out, fan_in), min(fan_out, fan_in)
    A = torch.randn(big, small, generator=generator, dtype=dtype)  # (big, small)
    Q, R = torch.linalg.qr(A)  # Q: (big, small)
    Q = Q * torch.sign(torch.diagonal(R))  # make the distribution Haar (uniform)
    return Q if fan_out >= fan_in else Q.T


def init_weight(
    scheme: str,
    fan_out: int,
    fan_in: int,
    generator: torch.Generator,
    gain: float = 1.0,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Draw a weight matrix from an initialisation scheme.

    Args:
        scheme: one of ``naive``, ``lecun``, ``xavier``, ``he``, ``orthogonal``.
        fan_out: number of outputs (rows).
        fan_in: number of inputs (columns).
        generator: CPU generator.
        gain: multiplier for the orthogonal scheme (sqrt(2) suits ReLU); must be 1 otherwise.
        dtype: floating dtype.

    Returns:
        W of shape (fan_out, fan_in), on the CPU.
    """
    check_choice(scheme, "scheme", SCHEMES)
    gain = check_real(gain, "gain", min_value=0.0, strict_min=True)
    if scheme == "orthogonal":
        return gain * orthogonal_matrix(fan_out, fan_in, generator, dtype)
    if gain != 1.0:
        raise ValueError(f"gain must be 1.0 for scheme {scheme!r} (it is built into the scheme), got {gain}")
    check_generator(generator)
    std = init_std(scheme, fan_in, fan_out)
    return std * torch.randn(fan_out, fan_in, generator=generator, dtype=dtype)


def _act(z: torch.Tensor, activation: str) -> torch.Tensor:
    if activation == "tanh":
        return torch.tanh(z)
    if activation == "relu":
        return torch.relu(z)
    return z


def forward_variances(
    x: torch.Tensor,
    depth: int,
    scheme: str,
    activation: str,
    generator: torch.Generator,
    n_nets: int = 1,
    gain: float = 1.0,
) -> torch.Tensor:
    """Variance of the pre-activations z^(l) = W^(l) h^(l-1) layer by layer in deep MLPs.

    Each of ``n_nets`` independent networks has ``depth`` square layers of width d (no biases),
    h^(0) = x and h^(l) = phi(z^(l)). The variance of layer l is the mean of (z_ij)^2 over the
    networks, examples i and units j (pre-activations have mean zero by the symmetry of the
    weights). Averaging over networks estimates the expectation over initialisations, which is
    what the variance-preservation arguments control. Gaussian weights are drawn in float32
    (faster) and cast to the dtype of x.

    Args:
        x: inputs, shape (n, d), on any device.
        depth: number of layers L >= 1.
        scheme: initialisation scheme (see :data:`SCHEMES`).
        activation: ``linear``, ``tanh`` or ``relu``.
        generator: CPU generator for the weights.
        n_nets: number R of independent networks to average over.
        gain: gain for the orthogonal scheme.

    Returns:
        Variances of z^(1), ..., z^(L), shape (L,), float64 on the CPU.
    """
    x = check_tensor(x, "x", ndim=2, floating=True, shape_doc="(n, d)")
    depth = check_int(depth, "depth", min_value=1)
    R = check_int(n_nets, "n_nets", min_value=1)
    check_choice(scheme, "scheme", SCHEMES)
    check_choice(activation, "activation", ACTIVATIONS)
    check_generator(generator)
    d = x.shape[1]
    h, out = x.expand(R, *x.shape), []  # (R, n, d)
    for _ in range(depth):
        if scheme == "orthogonal":
            W = torch.stack([init_weight(scheme, d, d, generator, gain) for _ in range(R)])
        else:
            W = init_std(scheme, d, d) * torch.randn(R, d, d, generator=generator)  # (R, d, d)
        z = h @ W.to(device=x.device, dtype=x.dtype).transpose(1, 2)  # (R, n, d)
        out.append((z**2).mean())
        h = _act(z, activation)
    return torch.stack(out).double().cpu()


def product_singular_values(
    depth: int, width: int, scheme: str, generator: torch.Generator
) -> torch.Tensor:
    """Singular values of the end-to-end matrix W^(L) ... W^(1) of a deep linear network.

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
        P = init_weight(scheme, width, width, generator) @ P  # (d, d)
    return torch.linalg.svdvals(P)
