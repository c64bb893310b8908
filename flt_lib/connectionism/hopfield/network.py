"""A Hopfield network: Hebbian weights, energy, local fields and asynchronous dynamics.

Hebb's rule (eq-hopfield-hebb), the energy (eq-hopfield-energy), one asynchronous update
(eq-hopfield-update), and ``run_async``, which records the energy after every update.
Part of :mod:`flt_lib.connectionism.hopfield`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import (
    check_generator,
    check_int,
    check_tensor,
    check_vector_or_batch,
)

__all__ = [
    "AsyncRun",
    "async_update",
    "energy",
    "hebbian_weights",
    "local_field",
    "run_async",
]


def _check_patterns(patterns: object, name: str = "patterns") -> torch.Tensor:
    check_tensor(patterns, name, ndim=2, floating=True, shape_doc="(s, n)")
    return patterns


def hebbian_weights(patterns: torch.Tensor) -> torch.Tensor:
    """Hebb's rule with zero diagonal: ``W = (1/n) sum_mu xi^mu xi^mu^T - (s/n) I``
    (eq-hopfield-hebb).

    Args:
        patterns: stored patterns xi^mu as rows, shape (s, n), entries +-1.

    Returns:
        Symmetric weight matrix with zero diagonal, shape (n, n).
    """
    _check_patterns(patterns)
    return _hebbian_weights(patterns)


def _hebbian_weights(patterns: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`hebbian_weights` (arguments already checked)."""
    n = patterns.shape[1]
    W = patterns.T @ patterns / n  # (n, n)
    return W.fill_diagonal_(0.0)


def _check_W(W: object) -> torch.Tensor:
    check_tensor(W, "W", ndim=2, floating=True, shape_doc="(n, n)")
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be square with shape (n, n), got {tuple(W.shape)}")
    return W


def _threshold(threshold: torch.Tensor | None, W: torch.Tensor) -> torch.Tensor:
    n = W.shape[0]
    if threshold is None:
        return torch.zeros(n, dtype=W.dtype, device=W.device)
    return check_tensor(
        threshold, "threshold", shape=(n,), floating=True, shape_doc="(n,)"
    )


def energy(
    W: torch.Tensor, x: torch.Tensor, threshold: torch.Tensor | None = None
) -> torch.Tensor:
    """Hopfield energy ``E(x) = -1/2 x^T W x + theta^T x`` (eq-hopfield-energy; Hopfield
    1982).

    Args:
        W: symmetric weights with zero diagonal, shape (n, n).
        x: state(s) in {-1, +1}, shape (n,) or (B, n).
        threshold: firing thresholds theta, shape (n,), or None for zero.

    Returns:
        Energy, shape () or (B,).
    """
    _check_W(W)
    check_vector_or_batch(x, "x", W.shape[0])
    theta = _threshold(threshold, W)
    return -0.5 * ((x @ W) * x).sum(-1) + x @ theta


def local_field(
    W: torch.Tensor, x: torch.Tensor, threshold: torch.Tensor | None = None
) -> torch.Tensor:
    """Local fields ``h_i = sum_j W_ij x_j - theta_i`` (eq-hopfield-update).

    Args:
        W: weights, shape (n, n).
        x: state(s), shape (n,) or (B, n).
        threshold: thresholds theta, shape (n,), or None for zero.

    Returns:
        Fields, same shape as ``x``.
    """
    _check_W(W)
    check_vector_or_batch(x, "x", W.shape[0])
    return x @ W.T - _threshold(threshold, W)


def async_update(
    W: torch.Tensor, x: torch.Tensor, i: int, threshold: torch.Tensor | None = None
) -> torch.Tensor:
    """One asynchronous update: neuron ``i`` takes ``sign(h_i)``, all others stay
    (eq-hopfield-update).

    Args:
        W: weights, shape (n, n).
        x: current state, shape (n,).
        i: index of the neuron to update, ``0 <= i < n``.
        threshold: thresholds theta, shape (n,), or None for zero.

    Returns:
        The new state, shape (n,) (a copy; ``x`` is not modified).
    """
    _check_W(W)
    n = W.shape[0]
    check_tensor(x, "x", shape=(n,), floating=True, shape_doc="(n,)")
    i = check_int(i, "i", min_value=0, max_value=n - 1)
    h_i = W[i] @ x - _threshold(threshold, W)[i]
    out = x.clone()
    out[i] = 1.0 if h_i >= 0 else -1.0
    return out


@dataclass(frozen=True)
class AsyncRun:
    """Result of :func:`run_async`."""

    state: torch.Tensor  # final state, shape (n,)
    # energy before the run and after every single-neuron update, (T + 1,)
    energies: torch.Tensor
    # number of sweeps performed (the last one changed nothing if converged)
    n_sweeps: int
    # True if the final sweep flipped no neuron, i.e. state is a fixed point
    converged: bool


def run_async(
    W: torch.Tensor,
    x0: torch.Tensor,
    *,
    generator: torch.Generator,
    threshold: torch.Tensor | None = None,
    max_sweeps: int = 50,
) -> AsyncRun:
    """Asynchronous dynamics in random-order sweeps, recording the energy after every
    update.

    Each sweep visits all neurons once in a fresh random order (``torch.randperm`` with
    ``generator``); the run stops after the first sweep in which no neuron changes.

    Args:
        W: symmetric weights with zero diagonal, shape (n, n).
        x0: initial state in {-1, +1}, shape (n,).
        generator: CPU generator for the visiting orders.
        threshold: thresholds theta, shape (n,), or None for zero.
        max_sweeps: upper bound on the number of sweeps.

    Returns:
        An :class:`AsyncRun`.
    """
    _check_W(W)
    n = W.shape[0]
    check_tensor(x0, "x0", shape=(n,), floating=True, shape_doc="(n,)")
    check_generator(generator)
    max_sweeps = check_int(max_sweeps, "max_sweeps", min_value=1)
    return _run_async(W, x0, _threshold(threshold, W), generator, max_sweeps)


def _run_async(
    W: torch.Tensor,
    x0: torch.Tensor,
    theta: torch.Tensor,
    generator: torch.Generator,
    max_sweeps: int,
) -> AsyncRun:
    x = x0.clone()  # (n,), entries +-1
    energies = [energy(W, x, theta)]
    converged, sweeps = False, 0
    while sweeps < max_sweeps and not converged:
        sweeps += 1
        changed = False
        for i in torch.randperm(len(x), generator=generator).tolist():
            new = 1.0 if W[i] @ x - theta[i] >= 0 else -1.0
            changed |= bool(new != x[i])
            x[i] = new
            energies.append(energy(W, x, theta))
        converged = not changed
    return AsyncRun(
        state=x, energies=torch.stack(energies), n_sweeps=sweeps, converged=converged
    )
