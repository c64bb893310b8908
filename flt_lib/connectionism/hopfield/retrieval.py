"""Retrieval experiments: overlaps, asynchronous sweeps of many Hebbian networks.

``async_sweeps_batched`` runs a batch of networks, keeping only the overlaps with the
stored patterns; ``retrieval_sweep`` starts each network at a stored pattern, at several
loads s/n. Part of :mod:`flt_lib.connectionism.hopfield`.
"""

from __future__ import annotations

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = ["async_sweeps_batched", "overlap", "retrieval_sweep"]


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
