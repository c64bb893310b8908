"""Langevin dynamics and its discretisations (Appendix A.4).

Overdamped Langevin dynamics ``d theta = (1/2) grad log pi(theta) dt + dW_t`` has ``pi``
as its stationary law. Discretising it with step ``eps`` gives the unadjusted Langevin
algorithm (ULA); adding a Metropolis-Hastings correction gives MALA (Roberts & Tweedie,
1996); replacing the gradient by a minibatch estimate and letting ``eps`` decay gives
stochastic gradient Langevin dynamics (SGLD, Welling & Teh, 2011). Underdamped Langevin
dynamics adds a momentum with friction ``gamma``; without noise its discretisation is
the heavy-ball method.

All samplers are vectorised over ``C`` chains (states (C, d)) and return a
:class:`flt_lib.bayes.mcmc.Chain`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.bayes.hmc import GradLogProb
from flt_lib.bayes.mcmc import Chain, LogProb, metropolis_accept

__all__ = [
    "ula",
    "ula_gaussian_variance",
    "mala",
    "underdamped_langevin",
    "underdamped_gaussian_variance",
    "sgld",
    "polynomial_decay",
]

# (C, d), (C, B) -> (C, d)
MinibatchGrad = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _noise(
    C: int, d: int, like: torch.Tensor, generator: torch.Generator
) -> torch.Tensor:
    return torch.randn(C, d, generator=generator, dtype=like.dtype).to(like.device)


def _setup(theta0: object, n_steps: object, generator: object, thin: object):
    theta = check_tensor(
        theta0, "theta0", ndim=2, floating=True, shape_doc="(C, d)"
    ).clone()
    n_steps = check_int(n_steps, "n_steps", min_value=1)
    check_generator(generator)
    thin = check_int(thin, "thin", min_value=1, max_value=n_steps)
    return theta, n_steps, thin


def ula(
    grad_log_prob: GradLogProb,
    theta0: torch.Tensor,
    *,
    step: float,
    n_steps: int,
    generator: torch.Generator,
    thin: int = 1,
) -> Chain:
    """Unadjusted Langevin algorithm (eq-bayes-ula).

    ``theta' = theta + (eps/2) grad log pi(theta) + sqrt(eps) xi`` with
    ``xi ~ N(0, I)``.

    Args:
        grad_log_prob: gradient of the log target, ``(C, d) -> (C, d)``.
        theta0: starting states, shape (C, d).
        step: step size ``eps > 0``.
        n_steps: number of steps per chain.
        generator: CPU generator.
        thin: record every ``thin``-th state.

    Returns:
        A :class:`Chain` (nothing is rejected; one gradient per step).
    """
    theta, n_steps, thin = _setup(theta0, n_steps, generator, thin)
    eps = check_real(step, "step", min_value=0.0, strict_min=True)
    return _ula(grad_log_prob, theta, eps, n_steps, generator, thin)


def _ula(grad_log_prob, theta, eps, n_steps, generator, thin):
    C, d = theta.shape
    out = []
    for t in range(1, n_steps + 1):
        drift = 0.5 * eps * grad_log_prob(theta)                                # (C, d)
        theta = theta + drift + math.sqrt(eps) * _noise(C, d, theta, generator)
        if t % thin == 0:
            out.append(theta)
    return Chain(torch.stack(out), torch.ones(C, dtype=theta.dtype), 1, n_steps)


def ula_gaussian_variance(step: float, var: float = 1.0) -> float:
    """Stationary variance ``var / (1 - eps / (4 var))`` of ULA on ``N(0, var)``.

    This is eq-bayes-ula-variance.

    Args:
        step: ``0 < eps < 4 var`` (beyond that the chain diverges).
        var: the target variance ``> 0``.

    Returns:
        The stationary variance of the chain.
    """
    var = check_real(var, "var", min_value=0.0, strict_min=True)
    eps = check_real(step, "step", min_value=0.0, strict_min=True)
    if eps >= 4 * var:
        raise ValueError(
            f"step must be < 4 var = {4 * var}, got {eps} (the chain diverges)"
        )
    return var / (1 - eps / (4 * var))


def mala(
    log_prob: LogProb,
    grad_log_prob: GradLogProb,
    theta0: torch.Tensor,
    *,
    step: float,
    n_steps: int,
    generator: torch.Generator,
    thin: int = 1,
) -> Chain:
    """Metropolis-adjusted Langevin: the ULA step as an MH proposal (Roberts & Tweedie,
    1996).

    The proposal density is
    ``q(theta' | theta) = N(theta + (eps/2) grad log pi(theta), eps I)``; it is not
    symmetric, so the Hastings ratio keeps both ``q`` terms (eq-bayes-mh-acceptance).

    Args:
        log_prob: log target density up to a constant, ``(C, d) -> (C,)``.
        grad_log_prob: its gradient, ``(C, d) -> (C, d)``.
        theta0: starting states, shape (C, d).
        step: step size ``eps > 0``.
        n_steps: number of transitions per chain.
        generator: CPU generator.
        thin: record every ``thin``-th state.

    Returns:
        A :class:`Chain` (one gradient and one density per step, counted as 2).
    """
    theta, n_steps, thin = _setup(theta0, n_steps, generator, thin)
    eps = check_real(step, "step", min_value=0.0, strict_min=True)
    return _mala(log_prob, grad_log_prob, theta, eps, n_steps, generator, thin)


def _mala(log_prob, grad_log_prob, theta, eps, n_steps, generator, thin):
    C, d = theta.shape

    def log_q(to: torch.Tensor, frm: torch.Tensor, g_frm: torch.Tensor) -> torch.Tensor:
        return -((to - frm - 0.5 * eps * g_frm) ** 2).sum(1) / (2 * eps)       # (C,)

    lp, g = log_prob(theta), grad_log_prob(theta)
    accepted = torch.zeros(C, dtype=theta.dtype, device=theta.device)
    out = []
    for t in range(1, n_steps + 1):
        prop = theta + 0.5 * eps * g + math.sqrt(eps) * _noise(C, d, theta, generator)
        lp_p, g_p = log_prob(prop), grad_log_prob(prop)
        log_ratio = lp_p - lp + log_q(theta, prop, g_p) - log_q(prop, theta, g)
        acc = metropolis_accept(log_ratio, generator=generator)
        theta = torch.where(acc[:, None], prop, theta)
        lp, g = torch.where(acc, lp_p, lp), torch.where(acc[:, None], g_p, g)
        accepted += acc
        if t % thin == 0:
            out.append(theta)
    return Chain(torch.stack(out), accepted / n_steps, 2, n_steps)


def underdamped_langevin(
    grad_log_prob: GradLogProb,
    theta0: torch.Tensor,
    *,
    step: float,
    friction: float,
    n_steps: int,
    generator: torch.Generator,
    temperature: float = 1.0,
    p0: torch.Tensor | None = None,
    thin: int = 1,
) -> Chain:
    """Euler discretisation of underdamped Langevin dynamics
    (eq-bayes-underdamped-step).

    ``p' = (1 - gamma eps) p + eps grad log pi(theta) + sqrt(2 gamma eps T) xi``, then
    ``theta' = theta + eps p'``. The same ``gamma`` damps the momentum and sets the
    noise (fluctuation-dissipation). With ``temperature = 0`` and ``p0 = 0`` the
    positions follow the heavy-ball method with learning rate ``eps^2`` and momentum
    ``1 - gamma eps``.

    Args:
        grad_log_prob: gradient of the log target, ``(C, d) -> (C, d)``.
        theta0: starting positions, shape (C, d).
        step: step size ``eps > 0``.
        friction: ``gamma >= 0`` with ``gamma eps <= 1``.
        n_steps: number of steps per chain.
        generator: CPU generator.
        temperature: ``T >= 0``; the stationary law of the dynamics is ``pi^(1/T)``.
        p0: starting momenta (C, d); default zero.
        thin: record every ``thin``-th position.

    Returns:
        A :class:`Chain` of positions (one gradient per step).
    """
    theta, n_steps, thin = _setup(theta0, n_steps, generator, thin)
    eps = check_real(step, "step", min_value=0.0, strict_min=True)
    gamma = check_real(friction, "friction", min_value=0.0)
    if gamma * eps > 1:
        raise ValueError(
            f"friction * step must be <= 1, got {gamma} * {eps} = {gamma * eps}"
        )
    temp = check_real(temperature, "temperature", min_value=0.0)
    C, d = theta.shape
    if p0 is None:
        p = torch.zeros_like(theta)
    else:
        p = check_tensor(p0, "p0", shape=(C, d), floating=True,
                         shape_doc="(C, d) like theta0").clone()
    noise_sd = math.sqrt(2 * gamma * eps * temp)
    out = []
    for t in range(1, n_steps + 1):
        p = (1 - gamma * eps) * p + eps * grad_log_prob(theta)
        if noise_sd > 0:
            p = p + noise_sd * _noise(C, d, theta, generator)
        theta = theta + eps * p
        if t % thin == 0:
            out.append(theta)
    return Chain(torch.stack(out), torch.ones(C, dtype=theta.dtype), 1, n_steps)


def underdamped_gaussian_variance(step: float, friction: float) -> float:
    """Stationary position variance of :func:`underdamped_langevin` on ``N(0, 1)``
    (T = 1).

    It is ``(4 - 2 gamma eps) / (4 - 2 gamma eps - eps^2)``
    (eq-bayes-underdamped-variance): the error is of order ``eps^2``, against
    ``eps / 4`` for ULA.

    Args:
        step: ``eps > 0``.
        friction: ``gamma > 0`` with ``0 < gamma eps <= 1``. At ``gamma = 0`` there is
            no noise and no damping, so no stationary law.

    Returns:
        The stationary variance of the position.
    """
    eps = check_real(step, "step", min_value=0.0, strict_min=True)
    gamma = check_real(friction, "friction", min_value=0.0, strict_min=True)
    if gamma * eps > 1:
        raise ValueError(f"friction * step must be in (0, 1], got {gamma * eps}")
    denom = 4 - 2 * gamma * eps - eps**2
    if denom <= 0:
        raise ValueError(f"the chain diverges for step {eps} and friction {gamma}")
    return (4 - 2 * gamma * eps) / denom


def sgld(
    grad_log_prob: MinibatchGrad,
    theta0: torch.Tensor,
    *,
    n_data: int,
    batch_size: int,
    step_sizes: torch.Tensor,
    generator: torch.Generator,
    thin: int = 1,
) -> Chain:
    """Stochastic gradient Langevin dynamics (Welling & Teh, 2011) (eq-bayes-sgld).

    ``theta' = theta + (eps_t / 2) g_t + sqrt(eps_t) xi`` with ``g_t`` the minibatch
    estimate (eq-bayes-sgld-grad) on ``batch_size`` indices drawn uniformly with
    replacement, afresh for every chain at every step.

    Args:
        grad_log_prob: ``(theta (C, d), batch (C, B)) -> (C, d)``, an unbiased gradient
            estimate.
        theta0: starting states, shape (C, d).
        n_data: number of data points ``n``.
        batch_size: ``B`` in [1, n].
        step_sizes: ``eps_t > 0``, shape (T,), one per step.
        generator: CPU generator.
        thin: record every ``thin``-th state.

    Returns:
        A :class:`Chain` (cost counted as one minibatch gradient per step).
    """
    step_sizes = check_tensor(
        step_sizes, "step_sizes", ndim=1, floating=True, shape_doc="(T,)"
    )
    if (step_sizes <= 0).any():
        raise ValueError(f"step_sizes must be > 0, got min {step_sizes.min().item()}")
    theta, n_steps, thin = _setup(theta0, step_sizes.shape[0], generator, thin)
    n = check_int(n_data, "n_data", min_value=1)
    B = check_int(batch_size, "batch_size", min_value=1, max_value=n)
    return _sgld(grad_log_prob, theta, n, B, step_sizes, generator, thin)


def _sgld(grad_log_prob, theta, n, B, step_sizes, generator, thin):
    C, d = theta.shape
    out = []
    for t in range(1, step_sizes.shape[0] + 1):
        eps = step_sizes[t - 1].item()
        batch = torch.randint(0, n, (C, B), generator=generator).to(theta.device)
        g = grad_log_prob(theta, batch)                                         # (C, d)
        theta = theta + 0.5 * eps * g + math.sqrt(eps) * _noise(C, d, theta, generator)
        if t % thin == 0:
            out.append(theta)
    return Chain(torch.stack(out), torch.ones(C, dtype=theta.dtype), 1, t)


def polynomial_decay(
    start: float, end: float, n_steps: int, power: float = 0.55
) -> torch.Tensor:
    """Step sizes ``eps_t = a (b + t)^(-power)``, falling from ``start`` to ``end`` in
    ``n_steps``.

    Welling & Teh (2011) use ``power = 0.55``; any ``power`` in (0.5, 1] meets the
    conditions ``sum eps_t = inf`` and ``sum eps_t^2 < inf`` of Robbins & Monro (1951).

    Args:
        start: ``eps_0 > 0``.
        end: ``eps_{T-1}`` with ``0 < end < start``.
        n_steps: ``T >= 2``.
        power: the decay exponent ``> 0``.

    Returns:
        Step sizes, shape (T,), float64.
    """
    start = check_real(start, "start", min_value=0.0, strict_min=True)
    end = check_real(end, "end", min_value=0.0, strict_min=True)
    if end >= start:
        raise ValueError(f"end must be < start = {start}, got {end}")
    n_steps = check_int(n_steps, "n_steps", min_value=2)
    power = check_real(power, "power", min_value=0.0, strict_min=True)
    b = (n_steps - 1) / ((start / end) ** (1 / power) - 1)
    a = start * b**power
    t = torch.arange(n_steps, dtype=torch.float64)
    return a * (b + t) ** (-power)
