"""Normalisation layers: batch normalisation, layer normalisation and weight
normalisation.

- batch norm (Ioffe & Szegedy, 2015): standardise every unit over the examples of a
  batch;
- layer norm (Ba, Kiros & Hinton, 2016): standardise every example over its units;
- weight norm (Salimans & Kingma, 2016): w = g * v / ||v||.

For a linear unit on a whitened batch (mean zero, covariance I) batch norm and weight
norm compute the same function: batch norm is then a reparameterisation of the weights
(:func:`whiten`; Salimans & Kingma 2016, Section 2.2).
"""

from __future__ import annotations

import torch

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)

__all__ = ["batch_norm", "deep_net_scales", "layer_norm", "weight_norm", "whiten"]


def _affine(
    zhat: torch.Tensor, gamma: torch.Tensor | None, beta: torch.Tensor | None
) -> torch.Tensor:
    m = zhat.shape[1]
    if gamma is not None:
        zhat = zhat * check_tensor(gamma, "gamma", shape=(m,), shape_doc="(m,)")
    if beta is not None:
        zhat = zhat + check_tensor(beta, "beta", shape=(m,), shape_doc="(m,)")
    return zhat


def batch_norm(
    z: torch.Tensor,
    gamma: torch.Tensor | None = None,
    beta: torch.Tensor | None = None,
    *,
    eps: float = 1e-5,
) -> torch.Tensor:
    """Batch normalisation (training mode): ``gamma (z - mean) / sqrt(var + eps) +
    beta``.

    Mean and (biased) variance are taken over the batch, separately for every unit
    (Ioffe & Szegedy, 2015, Algorithm 1; eq. ``eq-norm-bn``).

    Args:
        z: pre-activations of a batch, shape (B, m), B >= 2.
        gamma: scale per unit, shape (m,), or None for 1.
        beta: shift per unit, shape (m,), or None for 0.
        eps: eps >= 0 added to the variance.

    Returns:
        The normalised batch, shape (B, m).
    """
    z = check_tensor(z, "z", ndim=2, floating=True, shape_doc="(B, m)")
    if z.shape[0] < 2:
        raise ValueError(
            "z must have at least 2 examples for batch statistics, got batch size "
            f"{z.shape[0]}"
        )
    eps = check_real(eps, "eps", min_value=0.0)
    return _batch_norm(z, gamma, beta, eps=eps)


def _batch_norm(
    z: torch.Tensor,
    gamma: torch.Tensor | None = None,
    beta: torch.Tensor | None = None,
    *,
    eps: float = 1e-5,
) -> torch.Tensor:
    """The check-free core of :func:`batch_norm` (arguments already checked)."""
    mean = z.mean(0, keepdim=True)  # (1, m)
    var = z.var(0, unbiased=False, keepdim=True)  # (1, m)
    return _affine((z - mean) / torch.sqrt(var + eps), gamma, beta)


def layer_norm(
    z: torch.Tensor,
    gamma: torch.Tensor | None = None,
    beta: torch.Tensor | None = None,
    *,
    eps: float = 1e-5,
) -> torch.Tensor:
    """Layer normalisation: standardise each example over its m units, then scale and
    shift.

    Args:
        z: pre-activations, shape (B, m), m >= 2.
        gamma: scale per unit, shape (m,), or None for 1.
        beta: shift per unit, shape (m,), or None for 0.
        eps: eps >= 0 added to the variance.

    Returns: The normalised activations, shape (B, m); row i depends on z[i] only (Ba et
        al., 2016).
    """
    z = check_tensor(z, "z", ndim=2, floating=True, shape_doc="(B, m)")
    if z.shape[1] < 2:
        raise ValueError(f"z must have at least 2 units per example, got {z.shape[1]}")
    eps = check_real(eps, "eps", min_value=0.0)
    return _layer_norm(z, gamma, beta, eps=eps)


def _layer_norm(
    z: torch.Tensor,
    gamma: torch.Tensor | None = None,
    beta: torch.Tensor | None = None,
    *,
    eps: float = 1e-5,
) -> torch.Tensor:
    """The check-free core of :func:`layer_norm` (arguments already checked)."""
    mean = z.mean(1, keepdim=True)  # (B, 1)
    var = z.var(1, unbiased=False, keepdim=True)  # (B, 1)
    return _affine((z - mean) / torch.sqrt(var + eps), gamma, beta)


def weight_norm(v: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """Weight normalisation ``w = g v / ||v||``, row by row (Salimans & Kingma, 2016,
    eq. 2).

    Book definition ``def-norm-weight``.

    Args:
        v: direction parameters, shape (m, d) (one row per unit) or (d,).
        g: lengths, shape (m,) or a scalar tensor.

    Returns:
        w with the shape of v; row i has norm |g_i|.
    """
    v = check_tensor(v, "v", floating=True)
    g = check_tensor(g, "g", floating=True)
    if v.ndim == 1:
        check_tensor(g, "g", ndim=0, shape_doc="() for a vector v")
    else:
        check_tensor(v, "v", ndim=2, shape_doc="(m, d)")
        check_tensor(g, "g", shape=(v.shape[0],), shape_doc="(m,)")
    return _weight_norm(v, g)


def _weight_norm(v: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`weight_norm` (arguments already checked)."""
    if v.ndim == 1:
        return g * v / v.norm()
    return g[:, None] * v / v.norm(dim=1, keepdim=True)  # one norm per row


def whiten(X: torch.Tensor) -> torch.Tensor:
    """Whiten a batch: centre each column and multiply by ``Sigma^{-1/2}`` (ZCA
    whitening).

    ``Sigma = X_c^T X_c / B`` is the biased batch covariance, the one batch norm uses,
    so the result has batch mean 0 and batch covariance exactly ``I``.

    Args:
        X: a batch of inputs, shape (B, d) with ``B > d`` and full-rank covariance.

    Returns:
        The whitened batch, shape (B, d).
    """
    X = check_tensor(X, "X", ndim=2, floating=True, shape_doc="(B, d)")
    B, d = X.shape
    if B <= d:
        raise ValueError(
            f"X must have more rows than columns to be whitened, got shape {(B, d)}"
        )
    Xc = X - X.mean(0, keepdim=True)
    evals = torch.linalg.eigh(Xc.T @ Xc / B)[0]
    if evals.min() <= 1e-12 * evals.max():
        raise ValueError("X must have a full-rank batch covariance to be whitened")
    return _whiten(X)


def _whiten(X: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`whiten` (arguments already checked)."""
    Xc = X - X.mean(0, keepdim=True)  # (B, d)
    Sigma = Xc.T @ Xc / X.shape[0]  # (d, d) batch covariance
    evals, evecs = torch.linalg.eigh(Sigma)  # Sigma = U diag(evals) U^T
    return Xc @ (evecs * evals.rsqrt()) @ evecs.T  # Xc Sigma^{-1/2}


def deep_net_scales(
    x: torch.Tensor,
    *,
    depth: int,
    weight_std: float,
    norm: str,
    generator: torch.Generator,
) -> torch.Tensor:
    """Root-mean-square activation of each layer of a deep ReLU net, optionally
    normalised.

    Layer l computes h = ReLU(N(h W^T)) with W_ij ~ N(0, weight_std^2 / m) and N the
    identity, batch norm or layer norm (no scale/shift, eps = 1e-5).

    Args:
        x: inputs, shape (B, m).
        depth: number of layers.
        weight_std: weights have standard deviation weight_std / sqrt(m).
        norm: ``none``, ``batch`` or ``layer``.
        generator: CPU generator for the weights.

    Returns:
        RMS of h^(1), ..., h^(L), shape (L,), float64 on the CPU.
    """
    x = check_tensor(x, "x", ndim=2, floating=True, shape_doc="(B, m)")
    depth = check_int(depth, "depth", min_value=1)
    s = check_real(weight_std, "weight_std", min_value=0.0, strict_min=True)
    check_choice(norm, "norm", ("none", "batch", "layer"))
    check_generator(generator)
    m = x.shape[1]
    h, out = x, []
    for _ in range(depth):
        # (m, m)
        W = (s / m**0.5) * torch.randn(m, m, generator=generator, dtype=x.dtype).to(
            x.device
        )
        z = h @ W.T  # (B, m)
        if norm == "batch":
            z = batch_norm(z)
        elif norm == "layer":
            z = layer_norm(z)
        h = torch.relu(z)
        out.append(h.pow(2).mean().sqrt())
    return torch.stack(out).double().cpu()
