"""Dense associative memories and the modern (softmax) Hopfield network, section 1.6.

Conventions: ``s`` stored patterns are the rows of ``patterns`` with shape (s, n),
written Xi in the text; binary states take values in {-1, +1} with the tie at 0 going to
+1; the overlap of a state x with pattern mu is ``z_mu = <xi^mu, x>``.

References: Krotov & Hopfield (2016), "Dense associative memory for pattern
recognition"; Demircigil, Heusel, Loewe, Upgang & Vermet (2017), "On a model of
associative memory with huge storage capacity"; Ramsauer et al. (2021), "Hopfield
networks is all you need".
"""

from __future__ import annotations

import math

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
    "dense_energy",
    "dense_run",
    "vote_split",
    "modern_energy",
    "modern_update",
    "one_step_error_bound",
    "separation",
]


def _check_patterns(patterns: object) -> torch.Tensor:
    return check_tensor(patterns, "patterns", ndim=2, floating=True, shape_doc="(s, n)")


def _check_dense_args(interaction: object, degree: object) -> tuple[str, int]:
    check_choice(interaction, "interaction", ["power", "exp"])
    return str(interaction), check_int(degree, "degree", min_value=1)


def dense_energy(
    patterns: torch.Tensor,
    x: torch.Tensor,
    *,
    interaction: str = "power",
    degree: int = 3,
) -> torch.Tensor:
    """Dense associative memory energy ``E_F(x) = -sum_mu F(<xi^mu, x>)``
    (eq-dam-energy).

    ``F(z) = z**degree`` (Krotov & Hopfield 2016) or ``F(z) = exp(z)`` (Demircigil et
    al. 2017); ``degree=2`` gives ``2n`` times the Hebbian Hopfield energy minus ``s
    n``. Computed in float64 (``exp`` overflows for overlaps above ~700).

    Args:
        patterns: stored patterns, shape (s, n).
        x: state(s) in {-1, +1}, shape (n,) or (B, n).
        interaction: ``"power"`` or ``"exp"``.
        degree: the power a of ``F(z) = z**a`` (ignored for ``"exp"``).

    Returns:
        Energies in float64, shape () or (B,).
    """
    _check_patterns(patterns)
    check_vector_or_batch(x, "x", patterns.shape[1])
    interaction, degree = _check_dense_args(interaction, degree)
    z = x.double() @ patterns.double().T  # (B, s) or (s,) overlaps
    F = z**degree if interaction == "power" else torch.exp(z)
    return -F.sum(-1)


def dense_run(
    patterns: torch.Tensor,
    x0: torch.Tensor,
    *,
    generator: torch.Generator,
    interaction: str = "power",
    degree: int = 3,
    max_sweeps: int = 20,
) -> torch.Tensor:
    """Asynchronous energy-minimising dynamics of a dense associative memory
    (eq-dam-update).

    Neuron i takes the value in {-1, +1} of lower energy, all other neurons fixed: ``x_i
    = sign(sum_mu [F(z_mu^+) - F(z_mu^-)])``, where ``z_mu^+-`` is the overlap ``<xi^mu,
    x>`` with ``x_i`` set to +-1 (for ``exp`` the comparison uses logsumexp, so huge
    overlaps do not overflow). Random-order sweeps, shared by the batch, until a sweep
    changes nothing in any state. Only the (B, s) overlaps are kept, so one update costs
    O(B s).

    Args:
        patterns: stored patterns, shape (s, n).
        x0: initial states in {-1, +1}, shape (B, n).
        generator: CPU generator for the visiting orders.
        interaction: ``"power"`` or ``"exp"``.
        degree: the power a of ``F(z) = z**a`` (ignored for ``"exp"``).
        max_sweeps: upper bound on the number of sweeps.

    Returns:
        Final states, shape (B, n), dtype of ``x0``.
    """
    _check_patterns(patterns)
    n = patterns.shape[1]
    check_tensor(x0, "x0", ndim=2, shape=(None, n), floating=True, shape_doc="(B, n)")
    interaction, degree = _check_dense_args(interaction, degree)
    check_generator(generator)
    max_sweeps = check_int(max_sweeps, "max_sweeps", min_value=1)
    return _dense_run(
        patterns,
        x0,
        generator=generator,
        interaction=interaction,
        degree=degree,
        max_sweeps=max_sweeps,
    )


def _dense_run(
    patterns: torch.Tensor,
    x0: torch.Tensor,
    *,
    generator: torch.Generator,
    interaction: str = "power",
    degree: int = 3,
    max_sweeps: int = 20,
) -> torch.Tensor:
    """The check-free core of :func:`dense_run` (arguments already checked)."""
    n = patterns.shape[1]
    P = patterns.double()  # (s, n)
    x = x0.double().clone()  # (B, n)
    z = x @ P.T  # (B, s) overlaps
    for _ in range(max_sweeps):
        changed = False
        for i in torch.randperm(n, generator=generator).tolist():
            rest = z - x[:, i : i + 1] * P[:, i]  # (B, s) overlaps without neuron i
            z_plus, z_minus = rest + P[:, i], rest - P[:, i]
            if interaction == "exp":
                # (B,) energy gain of x_i = +1 over x_i = -1, in log space
                gain = torch.logsumexp(z_plus, -1) - torch.logsumexp(z_minus, -1)
            else:
                gain = (z_plus**degree - z_minus**degree).sum(-1)  # (B,) = E(-) - E(+)
            new = torch.where(gain >= 0, 1.0, -1.0).to(x.dtype)  # (B,)
            changed |= bool((new != x[:, i]).any())
            z = rest + new[:, None] * P[:, i]
            x[:, i] = new
        if not changed:
            break
    return x.to(x0.dtype)


def vote_split(
    patterns: torch.Tensor,
    x: torch.Tensor,
    index: torch.Tensor,
    *,
    interaction: str = "power",
    degree: int = 3,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Split each neuron's vote (eq-dam-update) into the target pattern's term and the
    rest.

    The vote of neuron i is ``sum_mu [F(z_mu^+) - F(z_mu^-)]``, the energy gain of
    ``x_i = +1`` over ``x_i = -1``. Retrieval of pattern ``index[b]`` from state
    ``x[b]`` needs the target's term to have the sign of the pattern's bit and to
    outweigh the sum of the other patterns' terms (remark ``rem-dam-condition``). For
    ``exp`` the terms are scaled by one common positive factor per state, which changes
    no comparison.

    Args:
        patterns: stored patterns, shape (s, n).
        x: states in {-1, +1}, shape (B, n).
        index: the target pattern of each state, integer tensor of shape (B,).
        interaction: ``"power"`` or ``"exp"``.
        degree: the power a of ``F(z) = z**a`` (ignored for ``"exp"``).

    Returns:
        ``(target, others)``: the target's term and the sum of all other terms, each of
        shape (B, n), float64.
    """
    _check_patterns(patterns)
    s, n = patterns.shape
    check_tensor(x, "x", ndim=2, shape=(None, n), floating=True, shape_doc="(B, n)")
    check_tensor(index, "index", shape=(x.shape[0],), shape_doc="(B,)")
    if index.is_floating_point() or int(index.min()) < 0 or int(index.max()) >= s:
        raise ValueError(
            f"index must hold integers in [0, {s - 1}], got {index.tolist()}"
        )
    interaction, degree = _check_dense_args(interaction, degree)
    return _vote_split(patterns, x, index, interaction=interaction, degree=degree)


def _vote_split(
    patterns: torch.Tensor,
    x: torch.Tensor,
    index: torch.Tensor,
    *,
    interaction: str = "power",
    degree: int = 3,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The check-free core of :func:`vote_split` (arguments already checked)."""
    P, xd = patterns.double(), x.double()  # (s, n), (B, n)
    z = xd @ P.T  # (B, s) overlaps
    # (B, s, n) overlaps without neuron i
    rest = z[:, :, None] - xd[:, None, :] * P[None]
    if interaction == "exp":
        c = (rest + 1).amax(dim=(1, 2), keepdim=True)  # one shift per state
        # (B, s, n)
        terms = torch.exp(rest + P[None] - c) - torch.exp(rest - P[None] - c)
    else:
        terms = (rest + P[None]) ** degree - (rest - P[None]) ** degree  # (B, s, n)
    target = terms[torch.arange(len(index)), index.long()]  # (B, n)
    return target, terms.sum(1) - target


def modern_update(
    patterns: torch.Tensor, x: torch.Tensor, *, beta: float
) -> torch.Tensor:
    """Modern Hopfield update ``x_new = Xi^T softmax(beta Xi x)`` (eq-modern-update;
    Ramsauer et al. 2021).

    With query x and keys = values = the stored patterns this is softmax attention with
    scale beta: ``softmax(beta q K^T) V``.

    Args:
        patterns: stored patterns xi^mu (any real vectors) as rows, shape (s, n).
        x: state(s) (queries), shape (n,) or (B, n).
        beta: inverse temperature, > 0.

    Returns:
        Updated state(s), same shape as ``x``.
    """
    _check_patterns(patterns)
    check_vector_or_batch(x, "x", patterns.shape[1])
    beta = check_real(beta, "beta", min_value=0.0, strict_min=True)
    return _modern_update(patterns, x, beta=beta)


def _modern_update(
    patterns: torch.Tensor, x: torch.Tensor, *, beta: float
) -> torch.Tensor:
    """The check-free core of :func:`modern_update` (arguments already checked)."""
    weights = torch.softmax(beta * (x @ patterns.T), dim=-1)  # (B, s) attention weights
    return weights @ patterns  # (B, n)


def modern_energy(
    patterns: torch.Tensor, x: torch.Tensor, *, beta: float
) -> torch.Tensor:
    """Modern Hopfield energy ``-lse(beta, Xi x) + x.x/2 + ln(s)/beta + M^2/2``
    (eq-modern-energy).

    ``lse(beta, z) = beta^-1 log sum_mu exp(beta z_mu)`` and ``M = max_mu ||xi^mu||``
    (Ramsauer et al. 2021); :func:`modern_update` never increases it.

    Args:
        patterns: stored patterns, shape (s, n).
        x: state(s), shape (n,) or (B, n).
        beta: inverse temperature, > 0.

    Returns:
        Energies, shape () or (B,).
    """
    _check_patterns(patterns)
    check_vector_or_batch(x, "x", patterns.shape[1])
    beta = check_real(beta, "beta", min_value=0.0, strict_min=True)
    s = patterns.shape[0]
    lse = torch.logsumexp(beta * (x @ patterns.T), dim=-1) / beta  # (B,) or ()
    big_m = patterns.norm(dim=-1).max()
    return -lse + 0.5 * (x * x).sum(-1) + math.log(s) / beta + 0.5 * big_m**2


def separation(patterns: torch.Tensor) -> torch.Tensor:
    """Separation ``Delta_mu = <xi^mu, xi^mu> - max_{nu != mu} <xi^mu, xi^nu>`` of every
    pattern.

    Ramsauer et al. (2021); the one-step retrieval bound (eq-modern-bound) is useful
    when ``Delta_mu`` is large.

    Args:
        patterns: stored patterns, shape (s, n) with ``s >= 2``.

    Returns:
        Separations, shape (s,).
    """
    _check_patterns(patterns)
    if patterns.shape[0] < 2:
        raise ValueError(
            "patterns must hold s >= 2 patterns for a separation, got "
            f"s={patterns.shape[0]}"
        )
    G = patterns @ patterns.T  # (s, s) Gram matrix
    self_overlap = G.diagonal().clone()  # (s,)
    others = G.fill_diagonal_(-math.inf).max(dim=-1).values  # (s,)
    return self_overlap - others


def one_step_error_bound(
    patterns: torch.Tensor, x: torch.Tensor, index: torch.Tensor, *, beta: float
) -> torch.Tensor:
    """Bound ``2 (s-1) M exp(-beta (Delta_mu - 2 r M))`` on ``||x_new - xi^mu||`` after
    one update (eq-modern-bound).

    ``r = ||x - xi^mu||`` is the distance of the cue from its pattern and ``M = max_nu
    ||xi^nu||``. Each competitor has softmax weight at most ``exp(-beta (Delta_mu - 2 r
    M))`` by Cauchy-Schwarz, and moves the average by at most ``2M`` (cf. Ramsauer et
    al. 2021, retrieval with one update).

    Args:
        patterns: stored patterns, shape (s, n) with ``s >= 2``.
        x: cues, shape (B, n).
        index: integer tensor of the target pattern of each cue, shape (B,).
        beta: inverse temperature, > 0.

    Returns:
        The bounds, shape (B,) (``inf`` where the exponential overflows).
    """
    _check_patterns(patterns)
    n = patterns.shape[1]
    check_tensor(x, "x", ndim=2, shape=(None, n), floating=True, shape_doc="(B, n)")
    check_tensor(index, "index", shape=(x.shape[0],), shape_doc="(B,)")
    if index.is_floating_point() or index.dtype == torch.bool:
        raise TypeError(f"index must be an integer tensor, got dtype {index.dtype}")
    s = patterns.shape[0]
    if len(index) and (index.min() < 0 or index.max() >= s):
        raise ValueError(
            f"index must lie in [0, {s - 1}], got values in [{int(index.min())}, "
            f"{int(index.max())}]"
        )
    beta = check_real(beta, "beta", min_value=0.0, strict_min=True)
    delta = separation(patterns)[index]  # (B,)
    big_m = patterns.norm(dim=-1).max()
    r = (x - patterns[index]).norm(dim=-1)  # (B,)
    return 2 * (s - 1) * big_m * torch.exp(-beta * (delta - 2 * r * big_m))
