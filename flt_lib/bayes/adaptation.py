"""Tuning HMC during warm-up: the step size by dual averaging and a diagonal mass matrix
from the chains' variances (Appendix A.7).

Dual averaging (Nesterov, 2009) as adapted to MCMC by Hoffman & Gelman (2014): after
transition ``t`` with acceptance statistic ``alpha_t``,

    H_t = (1 - 1/(t + t0)) H_{t-1} + (delta - alpha_t) / (t + t0),
    log eps_t = mu - sqrt(t) / gamma * H_t,
    log eps_bar_t = t^-kappa log eps_t + (1 - t^-kappa) log eps_bar_{t-1},

(eq-bayes-dual-averaging) drives the mean acceptance to the target ``delta``;
``eps_bar`` is the step used after warm-up. The mass matrix is re-estimated at the end
of windows of doubling length, as Stan does, and the step adaptation restarts after
each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.bayes import hmc as hmc_mod
from flt_lib.bayes.hmc import GradLogProb
from flt_lib.bayes.mcmc import LogProb

__all__ = [
    "DualAveraging",
    "dual_averaging_init",
    "dual_averaging_update",
    "mass_windows",
    "Warmup",
    "warmup",
]


@dataclass(frozen=True)
class DualAveraging:
    """State of the dual-averaging step-size adaptation."""

    log_step: float  # log eps_t, the step for the next transition
    log_step_bar: float  # log eps_bar_t, the averaged step kept after warm-up
    h_bar: float  # H_t, running average of delta - alpha
    t: int  # transitions adapted so far
    mu: float  # log eps_t is shrunk towards mu = log(10 eps_0)


def dual_averaging_init(step0: float) -> DualAveraging:
    """Start dual averaging from a step ``eps_0 > 0``, with ``mu = log(10 eps_0)``."""
    step0 = check_real(step0, "step0", min_value=0.0, strict_min=True)
    return DualAveraging(math.log(step0), 0.0, 0.0, 0, math.log(10 * step0))


def _dual_averaging_update(
    s: DualAveraging,
    accept: float,
    target: float,
    gamma: float,
    t0: float,
    kappa: float,
) -> DualAveraging:
    t = s.t + 1
    eta = 1.0 / (t + t0)
    h_bar = (1 - eta) * s.h_bar + eta * (target - accept)  # H_t
    log_step = s.mu - math.sqrt(t) / gamma * h_bar  # log eps_t
    w = t ** (-kappa)
    log_step_bar = w * log_step + (1 - w) * s.log_step_bar  # log eps_bar_t
    return replace(s, log_step=log_step, log_step_bar=log_step_bar, h_bar=h_bar, t=t)


def dual_averaging_update(
    state: DualAveraging,
    accept: float,
    *,
    target: float = 0.65,
    gamma: float = 0.05,
    t0: float = 10.0,
    kappa: float = 0.75,
) -> DualAveraging:
    """One dual-averaging step (Hoffman & Gelman, 2014, Algorithm 5).

    Args:
        state: the current :class:`DualAveraging` state.
        accept: acceptance statistic ``alpha_t`` in [0, 1] of the last transition.
        target: target acceptance ``delta`` in (0, 1).
        gamma: ``> 0``, how strongly ``log eps`` is pulled towards ``mu``.
        t0: ``>= 0``, damps the first iterations.
        kappa: in (0.5, 1], the decay of the weight of new iterates in ``eps_bar``.

    Returns:
        The next state.
    """
    if not isinstance(state, DualAveraging):
        raise TypeError(f"state must be a DualAveraging, got {type(state).__name__}")
    accept = check_real(accept, "accept", min_value=0.0, max_value=1.0)
    target = check_real(target, "target", min_value=0.0, max_value=1.0, strict_min=True)
    if target >= 1:
        raise ValueError(f"target must be < 1, got {target}")
    gamma = check_real(gamma, "gamma", min_value=0.0, strict_min=True)
    t0 = check_real(t0, "t0", min_value=0.0)
    kappa = check_real(kappa, "kappa", min_value=0.5, max_value=1.0, strict_min=True)
    return _dual_averaging_update(state, accept, target, gamma, t0, kappa)


def mass_windows(
    n_warmup: int, *, init: float = 0.15, term: float = 0.1, first: int = 25
) -> list[int]:
    """Ends of the mass-matrix windows: doubling lengths between an initial and a final
    stretch in which only the step adapts (Stan's schedule).

    Args:
        n_warmup: warm-up transitions, ``>= 20``.
        init: fraction of ``n_warmup`` before the first window.
        term: fraction at the end, after the last window.
        first: length of the first window; the last one is stretched to the end.

    Returns:
        Increasing transition counts at which the mass matrix is re-estimated.
    """
    n = check_int(n_warmup, "n_warmup", min_value=20)
    init = check_real(init, "init", min_value=0.0, max_value=0.5)
    term = check_real(term, "term", min_value=0.0, max_value=0.5)
    first = check_int(first, "first", min_value=2)
    start, stop = int(init * n), n - int(term * n)
    ends, size = [], first
    while start + size < stop:
        nxt = start + size
        if nxt + 2 * size > stop:  # the next window would not fit: stretch this one
            nxt = stop
        ends.append(nxt)
        start, size = nxt, 2 * size
    return ends or [stop]


@dataclass(frozen=True)
class Warmup:
    """What warm-up returns: where the chains are and the tuned sampler settings."""

    theta: torch.Tensor  # (C, d) states at the end of warm-up
    step: float  # the adapted step size eps_bar
    inv_mass: torch.Tensor  # (d,) diagonal of M^-1
    steps: torch.Tensor  # (n_warmup,) the step used at each warm-up transition
    accept: torch.Tensor  # (n_warmup,) fraction of chains that accepted


def warmup(
    log_prob: LogProb,
    grad_log_prob: GradLogProb,
    theta0: torch.Tensor,
    *,
    n_leapfrog: int,
    n_warmup: int,
    generator: torch.Generator,
    step0: float = 0.01,
    target: float = 0.65,
    adapt_mass: bool = True,
) -> Warmup:
    """Warm up :func:`flt_lib.bayes.hmc.hmc`: adapt its step and a diagonal mass matrix.

    Each transition is one call of ``hmc`` with the current step; its acceptance
    statistic is the fraction of the ``C`` chains that accepted, an unbiased estimate of
    their mean acceptance probability, and feeds :func:`dual_averaging_update`. At the
    end of each window of :func:`mass_windows`, ``M^-1`` becomes the within-chain
    variance of the window's draws averaged over chains (so that chains in different
    modes do not inflate it), shrunk as in Stan: ``(k var + 1e-3 * 5) / (k + 5)`` for
    ``k`` draws per chain; dual averaging then restarts from the current step.

    Args:
        log_prob: log target, ``(C, d) -> (C,)``.
        grad_log_prob: its gradient, ``(C, d) -> (C, d)``.
        theta0: starting states, shape (C, d).
        n_leapfrog: leapfrog steps per transition ``L >= 1``.
        n_warmup: warm-up transitions, ``>= 20``.
        generator: CPU generator.
        step0: initial step size ``> 0``.
        target: target acceptance ``delta`` (Hoffman & Gelman, 2014, suggest 0.65).
        adapt_mass: estimate ``M^-1`` (otherwise unit mass).

    Returns:
        A :class:`Warmup`.
    """
    theta = check_tensor(theta0, "theta0", ndim=2, floating=True, shape_doc="(C, d)")
    n_leapfrog = check_int(n_leapfrog, "n_leapfrog", min_value=1)
    n_warmup = check_int(n_warmup, "n_warmup", min_value=20)
    check_generator(generator)
    target = check_real(target, "target", min_value=0.0, max_value=1.0, strict_min=True)
    return _warmup(
        log_prob,
        grad_log_prob,
        theta,
        n_leapfrog=n_leapfrog,
        n_warmup=n_warmup,
        generator=generator,
        step0=step0,
        target=target,
        adapt_mass=adapt_mass,
    )


def _warmup(
    log_prob: LogProb,
    grad_log_prob: GradLogProb,
    theta: torch.Tensor,
    *,
    n_leapfrog: int,
    n_warmup: int,
    generator: torch.Generator,
    step0: float = 0.01,
    target: float = 0.65,
    adapt_mass: bool = True,
) -> Warmup:
    """The check-free core of :func:`warmup` (arguments already checked)."""
    C, d = theta.shape
    inv_mass = torch.ones(d, dtype=theta.dtype)
    ends = mass_windows(n_warmup) if adapt_mass else []
    start = int(0.15 * n_warmup)
    da = dual_averaging_init(step0)
    window, steps, accs = [], [], []
    for t in range(1, n_warmup + 1):
        eps = math.exp(da.log_step)
        ch = hmc_mod.hmc(
            log_prob,
            grad_log_prob,
            theta,
            step=eps,
            n_leapfrog=n_leapfrog,
            n_steps=1,
            generator=generator,
            inv_mass=inv_mass,
        )
        theta = ch.samples[-1]
        acc = ch.accept_rate.mean().item()
        da = dual_averaging_update(da, acc, target=target)
        steps.append(eps)
        accs.append(acc)
        if ends and t > start:
            window.append(theta)
        if t in ends:
            k = len(window)
            var = torch.stack(window).var(0).mean(0)  # (d,)
            inv_mass = (k * var + 1e-3 * 5) / (k + 5)
            window, start = [], t
            da = dual_averaging_init(math.exp(da.log_step))
    return Warmup(
        theta,
        math.exp(da.log_step_bar),
        inv_mass,
        torch.tensor(steps, dtype=theta.dtype),
        torch.tensor(accs, dtype=theta.dtype),
    )
