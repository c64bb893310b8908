"""Hamiltonian Monte Carlo: the leapfrog integrator and the HMC sampler (Appendix A.3).

The state is a position ``theta`` (the parameters) and a momentum ``p`` of the same
shape. With the potential energy ``U(theta) = -log pi(theta)`` and a diagonal mass
matrix ``M`` (unit mass by default, given by its inverse ``inv_mass = diag(M^-1)``), the
Hamiltonian is

    H(theta, p) = U(theta) + p^T M^-1 p / 2,   (the Hamiltonian, with mass matrix M)

and HMC alternates a fresh Gaussian momentum with a leapfrog trajectory that is accepted
or rejected by the Metropolis rule on ``exp(-H)`` (Duane et al., 1987; Neal, 2011).
Everything is vectorised over ``C`` chains: positions and momenta have shape (C, d).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.bayes.mcmc import Chain, LogProb, metropolis_accept

__all__ = ["GradLogProb", "hamiltonian", "leapfrog", "euler", "hmc"]

# states (C, d) -> grad log density (C, d)
GradLogProb = Callable[[torch.Tensor], torch.Tensor]


def _check_state(theta: object, p: object) -> tuple[torch.Tensor, torch.Tensor]:
    theta = check_tensor(theta, "theta", ndim=2, floating=True, shape_doc="(C, d)")
    p = check_tensor(p, "p", shape=tuple(theta.shape), floating=True,
                     shape_doc="(C, d) like theta")
    return theta, p


def _check_step(step: object, C: int) -> float | torch.Tensor:
    """A step size: a positive float, or a tensor (C,) of per-chain steps, returned as
    (C, 1)."""
    if isinstance(step, torch.Tensor):
        check_tensor(step, "step", shape=(C,), floating=True, shape_doc="(C,)")
        if (step <= 0).any():
            raise ValueError(f"step must be > 0, got min {step.min().item()}")
        return step[:, None]
    return check_real(step, "step", min_value=0.0, strict_min=True)


def _check_inv_mass(inv_mass: object, d: int) -> torch.Tensor | float:
    """The diagonal of ``M^-1``, shape (d,), entries > 0; ``None`` means unit mass."""
    if inv_mass is None:
        return 1.0
    inv_mass = check_tensor(inv_mass, "inv_mass", shape=(d,), floating=True,
                            shape_doc="(d,), the diagonal of M^-1")
    if not (inv_mass > 0).all():
        raise ValueError(f"inv_mass must be > 0, got min {inv_mass.min().item()}")
    return inv_mass


def hamiltonian(
    log_prob: LogProb,
    theta: torch.Tensor,
    p: torch.Tensor,
    inv_mass: torch.Tensor | None = None,
) -> torch.Tensor:
    """Total energy ``H = -log pi(theta) + p^T M^-1 p / 2`` (eq-bayes-hamiltonian).

    Args:
        log_prob: log target density up to a constant, ``(C, d) -> (C,)``.
        theta: positions, shape (C, d).
        p: momenta, shape (C, d).
        inv_mass: diagonal of ``M^-1``, shape (d,), entries > 0; ``None`` for ``M = I``.

    Returns:
        Energies, shape (C,).
    """
    theta, p = _check_state(theta, p)
    m_inv = _check_inv_mass(inv_mass, theta.shape[1])
    return -log_prob(theta) + 0.5 * (m_inv * p**2).sum(1)


def leapfrog(
    grad_log_prob: GradLogProb,
    theta: torch.Tensor,
    p: torch.Tensor,
    *,
    step: float | torch.Tensor,
    n_steps: int,
    inv_mass: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``n_steps`` leapfrog steps of Hamiltonian dynamics (eq-bayes-leapfrog).

    Each step is a half kick ``p += (eps/2) grad log pi(theta)``, a drift
    ``theta += eps M^-1 p`` and a second half kick; consecutive half kicks are merged,
    so ``n_steps`` steps cost ``n_steps + 1`` gradient evaluations.

    Args:
        grad_log_prob: gradient of the log target, ``(C, d) -> (C, d)``.
        theta: positions, shape (C, d).
        p: momenta, shape (C, d).
        step: step size ``eps > 0``, a float or a tensor (C,) with one step per chain.
        n_steps: number of leapfrog steps ``L >= 1``.
        inv_mass: diagonal of ``M^-1``, shape (d,), entries > 0; ``None`` for ``M = I``.

    Returns:
        ``(theta, p)`` at the end of the trajectory, each (C, d).
    """
    theta, p = _check_state(theta, p)
    eps = _check_step(step, theta.shape[0])
    n_steps = check_int(n_steps, "n_steps", min_value=1)
    m_inv = _check_inv_mass(inv_mass, theta.shape[1])
    return _leapfrog(grad_log_prob, theta, p, n_steps, eps, m_inv)


def _leapfrog(grad_log_prob, theta, p, n_steps, eps, m_inv):
    p = p + 0.5 * eps * grad_log_prob(theta)                  # half kick
    for i in range(n_steps):
        theta = theta + eps * m_inv * p                       # drift, velocity M^-1 p
        # full kicks inside, half at the end
        kick = eps if i < n_steps - 1 else 0.5 * eps
        p = p + kick * grad_log_prob(theta)
    return theta, p


def euler(
    grad_log_prob: GradLogProb,
    theta: torch.Tensor,
    p: torch.Tensor,
    *,
    step: float,
    n_steps: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Explicit Euler steps ``theta' = theta + eps p``,
    ``p' = p + eps grad log pi(theta)``.

    Both updates use the *old* state. This is a common slip for Hamiltonian dynamics; it
    is not symplectic: on ``U = |theta|^2 / 2`` every step multiplies
    ``H`` by ``1 + eps^2``.

    Args:
        grad_log_prob: gradient of the log target, ``(C, d) -> (C, d)``.
        theta: positions, shape (C, d).
        p: momenta, shape (C, d).
        step: step size ``eps > 0``.
        n_steps: number of steps ``>= 1``.

    Returns:
        ``(theta, p)`` after ``n_steps`` steps, each (C, d).
    """
    theta, p = _check_state(theta, p)
    eps = check_real(step, "step", min_value=0.0, strict_min=True)
    n_steps = check_int(n_steps, "n_steps", min_value=1)
    return _euler(grad_log_prob, theta, p, n_steps, eps)


def _euler(grad_log_prob, theta, p, n_steps, eps):
    for _ in range(n_steps):
        theta, p = theta + eps * p, p + eps * grad_log_prob(theta)
    return theta, p


def hmc(
    log_prob: LogProb,
    grad_log_prob: GradLogProb,
    theta0: torch.Tensor,
    *,
    step: float,
    n_leapfrog: int,
    n_steps: int,
    generator: torch.Generator,
    step_jitter: float = 0.0,
    thin: int = 1,
    inv_mass: torch.Tensor | None = None,
) -> Chain:
    """Hamiltonian Monte Carlo with a diagonal mass matrix (Duane et al., 1987; Neal,
    2011).

    The acceptance rule is eq-bayes-hmc-accept.

    Each transition draws ``p ~ N(0, M)`` (``N(0, I)`` by default), runs ``n_leapfrog``
    leapfrog steps and accepts the end point with probability
    ``min(1, exp(H(start) - H(end)))``. With ``step_jitter = j`` every chain draws its
    step uniformly from ``[step (1 - j), step (1 + j)]`` at every transition, as Neal
    (2011) does to avoid periodic trajectories.

    Args:
        log_prob: log target density up to a constant, ``(C, d) -> (C,)``.
        grad_log_prob: its gradient, ``(C, d) -> (C, d)``.
        theta0: starting states, shape (C, d).
        step: leapfrog step size ``eps > 0``.
        n_leapfrog: leapfrog steps per transition ``L >= 1``.
        n_steps: number of transitions per chain ``>= 1``.
        generator: CPU generator.
        step_jitter: relative jitter ``j`` of the step size, in [0, 1).
        thin: record every ``thin``-th state.
        inv_mass: diagonal of ``M^-1``, shape (d,), entries > 0 (eq-bayes-hmc-mass);
            ``None`` for unit mass. ``M = diag(1 / Var theta_j)`` makes a Gaussian with
            independent coordinates isotropic.

    Returns:
        A :class:`Chain`; one transition costs ``L + 1`` gradients and one density,
        counted as ``L + 2`` evaluations.
    """
    theta = check_tensor(
        theta0, "theta0", ndim=2, floating=True, shape_doc="(C, d)"
    ).clone()
    step = check_real(step, "step", min_value=0.0, strict_min=True)
    n_leapfrog = check_int(n_leapfrog, "n_leapfrog", min_value=1)
    n_steps = check_int(n_steps, "n_steps", min_value=1)
    check_generator(generator)
    step_jitter = check_real(step_jitter, "step_jitter", min_value=0.0)
    if step_jitter >= 1.0:
        raise ValueError(f"step_jitter must be < 1, got {step_jitter}")
    thin = check_int(thin, "thin", min_value=1, max_value=n_steps)
    C, d = theta.shape
    m_inv = _check_inv_mass(inv_mass, d)
    return _hmc(log_prob, grad_log_prob, theta, step, n_leapfrog, n_steps, generator,
                step_jitter, thin, m_inv)


def _hmc(log_prob, grad_log_prob, theta, step, n_leapfrog, n_steps, generator,
         step_jitter, thin, m_inv):
    C, d = theta.shape
    lp, accepted, out = log_prob(theta), theta.new_zeros(C), []           # (C,), (C,)
    for t in range(1, n_steps + 1):
        p = torch.randn(C, d, generator=generator, dtype=theta.dtype).to(theta.device)
        p = p / m_inv**0.5                                                # p ~ N(0, M)
        u = torch.rand(C, generator=generator, dtype=theta.dtype).to(theta.device)
        eps = step * (1 + step_jitter * (2 * u - 1))                      # (C,)
        theta_new, p_new = _leapfrog(
            grad_log_prob, theta, p, n_leapfrog, eps[:, None], m_inv)
        lp_new = log_prob(theta_new)
        log_ratio = ((lp_new - 0.5 * (m_inv * p_new**2).sum(1))          # H0 - H1
                     - (lp - 0.5 * (m_inv * p**2).sum(1)))
        acc = metropolis_accept(
            torch.nan_to_num(log_ratio, nan=-torch.inf), generator=generator)
        theta = torch.where(acc[:, None], theta_new, theta)
        lp = torch.where(acc, lp_new, lp)
        accepted += acc
        if t % thin == 0:
            out.append(theta)
    return Chain(torch.stack(out), accepted / n_steps, n_leapfrog + 2, n_steps)
