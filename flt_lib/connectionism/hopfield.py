"""Classical Hopfield networks: energy, asynchronous dynamics, Hebbian storage and
retrieval.

Conventions (chapter 1 of the notation table): a network has ``n`` binary neurons with
states in {-1, +1}; ``s`` patterns are stored as the rows of ``patterns`` with shape (s,
n); the tie of ``sign`` at 0 goes to +1. Equations refer to section 1.5 of the book. The
capacity analysis (cross-talk, flip probability, perfect recall) lives in
``hopfield_capacity``; dense associative memories and the modern (softmax) update of
section 1.6 live in ``dense_memory``.

References: Hopfield (1982); Hebb (1949); Amit, Gutfreund & Sompolinsky (1985);
McEliece, Posner, Rodemich & Venkatesh (1987).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
    check_vector_or_batch,
)

__all__ = [
    "AsyncRun",
    "async_sweeps_batched",
    "async_update",
    "energy",
    "hebbian_weights",
    "letter_patterns",
    "local_field",
    "overlap",
    "random_patterns",
    "retrieval_sweep",
    "run_async",
    "sign",
]

# 10x10 letters drawn by hand for the retrieval demo ('#' = +1, '.' = -1).
_LETTERS: dict[str, tuple[str, ...]] = {
    "H": (
        "##......##",
        "##......##",
        "##......##",
        "##......##",
        "##########",
        "##########",
        "##......##",
        "##......##",
        "##......##",
        "##......##",
    ),
    "T": (
        "##########",
        "##########",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
        "....##....",
    ),
    "L": (
        "##........",
        "##........",
        "##........",
        "##........",
        "##........",
        "##........",
        "##........",
        "##........",
        "##########",
        "##########",
    ),
    "X": (
        "##......##",
        ".##....##.",
        "..##..##..",
        "...####...",
        "....##....",
        "...####...",
        "..##..##..",
        ".##....##.",
        "##......##",
        "#........#",
    ),
    "O": (
        ".########.",
        "##########",
        "##......##",
        "##......##",
        "##......##",
        "##......##",
        "##......##",
        "##......##",
        "##########",
        ".########.",
    ),
}


def sign(z: torch.Tensor) -> torch.Tensor:
    """Elementwise sign with values in {-1, +1}; the tie at 0 goes to +1 (notation
    table).

    Args:
        z: any real tensor, shape (...).

    Returns: A tensor of the same shape and dtype with entries +1 where ``z >= 0`` and
        -1 elsewhere.
    """
    check_tensor(z, "z")
    return torch.where(z >= 0, torch.ones_like(z), -torch.ones_like(z))


def letter_patterns(names: str = "HTLXO") -> tuple[list[str], torch.Tensor]:
    """Hand-drawn 10x10 binary letters, flattened to +-1 patterns.

    Args:
        names: which letters, a string over the characters in ``"HTLXO"``.

    Returns: ``(names, patterns)`` with ``patterns`` of shape (len(names), 100),
        float32, on the CPU.
    """
    if not isinstance(names, str) or not names:
        raise TypeError(f"names must be a non-empty string of letters, got {names!r}")
    for c in names:
        check_choice(c, "names (each letter)", sorted(_LETTERS))
    rows = [[1.0 if ch == "#" else -1.0 for ch in "".join(_LETTERS[c])] for c in names]
    return list(names), torch.tensor(rows)  # (k, 100)


def random_patterns(
    s: int, n: int, *, generator: torch.Generator, batch: int | None = None
) -> torch.Tensor:
    """Patterns with i.i.d. uniform +-1 entries, drawn on the CPU.

    Args:
        s: number of patterns.
        n: number of neurons.
        generator: a CPU ``torch.Generator``.
        batch: if given, draw ``batch`` independent sets.

    Returns:
        float32 tensor of shape (s, n), or (batch, s, n) if ``batch`` is given.
    """
    s = check_int(s, "s", min_value=1)
    n = check_int(n, "n", min_value=1)
    check_generator(generator)
    shape = (s, n) if batch is None else (check_int(batch, "batch", min_value=1), s, n)
    bits = torch.randint(0, 2, shape, generator=generator)
    return (2 * bits - 1).float()


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
    theta = _threshold(threshold, W)
    x = x0.clone()
    energies = [energy(W, x, theta)]
    converged, sweeps = False, 0
    while sweeps < max_sweeps and not converged:
        sweeps += 1
        changed = False
        for i in torch.randperm(n, generator=generator).tolist():
            new = 1.0 if W[i] @ x - theta[i] >= 0 else -1.0
            changed |= bool(new != x[i])
            x[i] = new
            energies.append(energy(W, x, theta))
        converged = not changed
    return AsyncRun(
        state=x, energies=torch.stack(energies), n_sweeps=sweeps, converged=converged
    )


def overlap(x: torch.Tensor, pattern: torch.Tensor) -> torch.Tensor:
    """Overlap ``m = <x, xi> / n`` in [-1, 1]; m = 1 means perfect retrieval.

    Args:
        x: state(s), shape (..., n).
        pattern: pattern(s), broadcastable to ``x``, shape (..., n).

    Returns:
        Overlaps, shape (...).
    """
    check_tensor(x, "x", floating=True)
    check_tensor(pattern, "pattern", floating=True)
    return (x * pattern).sum(-1) / x.shape[-1]


def async_sweeps_batched(
    patterns: torch.Tensor,
    x0: torch.Tensor,
    *,
    generator: torch.Generator,
    max_sweeps: int = 50,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Asynchronous random-order sweeps for a batch of Hebbian networks, one network per
    row.

    Network b stores the non-zero rows of ``patterns[b]`` (zero rows are padding, so
    networks with different numbers of patterns share one tensor). Only the overlaps
    ``m_mu = <xi^mu, x>`` are kept, so one neuron update costs O(s) instead of O(n):
    ``h_i = (1/n) sum_mu xi^mu_i m_mu - W_ii^Hebb x_i`` (zero diagonal,
    eq-hopfield-hebb). All networks visit the neurons in the same random order per
    sweep; the loop stops after a sweep that changes no neuron in any network.

    Args:
        patterns: shape (B, s, n); rows +-1 or all zero.
        x0: initial states, shape (B, n).
        generator: CPU generator for the visiting orders.
        max_sweeps: upper bound on the number of sweeps.

    Returns: ``(x, converged)``: final states (B, n), and a boolean (B,) that is True
        where the last sweep changed nothing (the state is a fixed point).
    """
    check_tensor(patterns, "patterns", ndim=3, floating=True, shape_doc="(B, s, n)")
    B, _, n = patterns.shape
    check_tensor(x0, "x0", shape=(B, n), floating=True, shape_doc="(B, n)")
    check_generator(generator)
    max_sweeps = check_int(max_sweeps, "max_sweeps", min_value=1)
    P = patterns.permute(
        2, 0, 1
    ).contiguous()  # (n, B, s): P[i] = xi_i for every network
    diag = (patterns**2).sum(1) / n  # (B, n): the Hebbian diagonal that is set to zero
    x = x0.clone()
    m = torch.einsum("bsn,bn->bs", patterns, x)  # (B, s)
    for _ in range(max_sweeps):
        n_flips = torch.zeros(B, device=x.device)
        for i in torch.randperm(n, generator=generator).tolist():
            h = (P[i] * m).sum(-1) / n - diag[:, i] * x[:, i]  # (B,)
            new = torch.where(h >= 0, 1.0, -1.0).to(x.dtype)
            delta = new - x[:, i]  # (B,) in {-2, 0, 2}
            m += delta[:, None] * P[i]
            x[:, i] = new
            n_flips += delta.abs()
        if n_flips.sum().item() == 0:
            break
    return x, n_flips == 0


def retrieval_sweep(
    patterns: torch.Tensor,
    loads: list[float],
    *,
    generator: torch.Generator,
    max_sweeps: int = 50,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Final overlaps when asynchronous dynamics start exactly at a stored pattern, at
    several loads.

    For trial k and load alpha, the network stores the first ``s = round(alpha n)``
    patterns of ``patterns[k]`` and starts from ``patterns[k, 0]``.

    Args:
        patterns: shape (K, s_max, n), K independent trials.
        loads: loads alpha = s/n, each with ``1 <= round(alpha n) <= s_max``.
        generator: CPU generator for the visiting orders.
        max_sweeps: upper bound on the number of sweeps.

    Returns: ``(m, converged)``: overlaps with the starting pattern at the end, shape
        (len(loads), K), and whether each run reached a fixed point within
        ``max_sweeps``, same shape.
    """
    check_tensor(patterns, "patterns", ndim=3, floating=True, shape_doc="(K, s_max, n)")
    K, s_max, n = patterns.shape
    sizes = [round(check_real(a, "loads (each)", min_value=0.0) * n) for a in loads]
    for a, s in zip(loads, sizes):
        if not 1 <= s <= s_max:
            raise ValueError(
                f"loads: load {a} gives s={s} patterns, expected 1 <= s <= "
                f"s_max={s_max}"
            )
    batch = torch.zeros(
        len(sizes), K, s_max, n, dtype=patterns.dtype, device=patterns.device
    )
    for j, s in enumerate(sizes):
        batch[j, :, :s] = patterns[:, :s]
    batch = batch.reshape(len(sizes) * K, s_max, n)  # (L*K, s_max, n)
    x, conv = async_sweeps_batched(
        batch, batch[:, 0].clone(), generator=generator, max_sweeps=max_sweeps
    )
    return overlap(x, batch[:, 0]).reshape(len(sizes), K), conv.reshape(len(sizes), K)
