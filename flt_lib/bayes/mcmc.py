"""Markov chains, the Metropolis-Hastings rule, and how to measure what a chain is
worth.

- Discrete chains (Appendix A.2): the Metropolis-Hastings kernel built from a target
  ``q`` and a proposal matrix ``Q`` (Metropolis et al., 1953; Hastings, 1970), and the
  stationary vector of a transition matrix.
- Random-walk Metropolis on R^d, vectorised over ``C`` independent chains, with the
  limiting acceptance rate of Roberts, Gelman & Gilks (1997).
- Output analysis: autocorrelation, effective sample size with Geyer's (1992) initial
  monotone sequence estimator over several chains (the multi-chain form of Gelman
  et al., 2013), and the Monte-Carlo standard error of a posterior mean.

Every sampler in :mod:`flt_lib.bayes` returns a :class:`Chain`. A target is given by its
log-density up to a constant, ``log_prob``: a function mapping states ``(C, d)`` to
``(C,)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = [
    "LogProb",
    "Chain",
    "metropolis_accept",
    "mh_transition_matrix",
    "stationary_distribution",
    "random_walk_metropolis",
    "rwm_limit_acceptance",
    "autocorrelation",
    "effective_sample_size",
    "mc_standard_error",
]

# A target: states (C, d) -> log density (C,), up to an additive constant.
LogProb = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Chain:
    """What a sampler returns: the recorded states of ``C`` chains and their cost."""

    samples: torch.Tensor      # (T, C, d) states after every `thin`-th transition
    # (C,) fraction of proposals each chain accepted (1: no MH step)
    accept_rate: torch.Tensor
    # target evaluations (density or gradient) one transition costs
    evals_per_step: int
    n_steps: int               # transitions made by each chain

    def __post_init__(self) -> None:
        check_tensor(
            self.samples, "samples", ndim=3, floating=True, shape_doc="(T, C, d)"
        )
        check_tensor(self.accept_rate, "accept_rate", shape=(self.samples.shape[1],),
                     floating=True, shape_doc="(C,)")
        check_int(self.evals_per_step, "evals_per_step", min_value=1)
        check_int(self.n_steps, "n_steps", min_value=0)

    @property
    def n_evals(self) -> int:
        """Target evaluations spent by each chain, ``evals_per_step * n_steps``."""
        return self.evals_per_step * self.n_steps


def _check_theta0(theta0: object) -> torch.Tensor:
    return check_tensor(theta0, "theta0", ndim=2, floating=True, shape_doc="(C, d)")


def _check_thin(thin: object, n_steps: int) -> int:
    thin = check_int(thin, "thin", min_value=1)
    if thin > n_steps:
        raise ValueError(f"thin must be <= n_steps = {n_steps}, got {thin}")
    return thin


# -------------------------------------------------------------------------- the MH rule
def metropolis_accept(
    log_ratio: torch.Tensor, *, generator: torch.Generator
) -> torch.Tensor:
    """Accept each proposal with probability ``min(1, exp(log_ratio))``.

    Args:
        log_ratio: log acceptance ratios, shape (C,); ``-inf`` is never accepted.
        generator: CPU generator for the uniforms.

    Returns:
        Boolean tensor (C,), True where the proposal is accepted
        (eq-bayes-mh-acceptance).
    """
    check_tensor(log_ratio, "log_ratio", ndim=1, floating=True, shape_doc="(C,)")
    check_generator(generator)
    u = torch.rand(log_ratio.shape[0], generator=generator, dtype=log_ratio.dtype)
    return u.to(log_ratio.device).log() < log_ratio


def mh_transition_matrix(q: torch.Tensor, proposal: torch.Tensor) -> torch.Tensor:
    """Metropolis-Hastings transition matrix on ``K`` states (eq-bayes-mh-acceptance).

    ``P[i, j] = Q[i, j] min(1, q[j] Q[j, i] / (q[i] Q[i, j]))`` for ``j != i``; the
    rejected mass stays on the diagonal, ``P[i, i] = 1 - sum_{j != i} P[i, j]``.

    Args:
        q: target probabilities, shape (K,), positive, summing to 1.
        proposal: proposal matrix Q, shape (K, K), rows summing to 1, with
            ``Q[i, j] > 0`` exactly when ``Q[j, i] > 0``.

    Returns:
        The row-stochastic matrix P, shape (K, K).
    """
    q = check_tensor(q, "q", ndim=1, floating=True, shape_doc="(K,)")
    K = q.shape[0]
    Q = check_tensor(proposal, "proposal", shape=(K, K), floating=True,
                     shape_doc=f"(K, K) = ({K}, {K})")
    if (q <= 0).any() or abs(q.sum().item() - 1.0) > 1e-9:
        raise ValueError(
            f"q must be positive and sum to 1, got min {q.min().item():.3g}, "
            f"sum {q.sum().item():.6g}"
        )
    if (Q < 0).any() or (Q.sum(1) - 1).abs().max().item() > 1e-9:
        raise ValueError(
            "proposal must have non-negative entries and rows summing to 1"
        )
    if ((Q > 0) != (Q.T > 0)).any():
        raise ValueError("proposal must satisfy Q[i, j] > 0 exactly when Q[j, i] > 0")
    return _mh_transition_matrix(q, Q)


def _mh_transition_matrix(q: torch.Tensor, Q: torch.Tensor) -> torch.Tensor:
    """The check-free core of :func:`mh_transition_matrix`."""
    flow = q[:, None] * Q                                   # (K, K) q_i Q_ij
    ratio = torch.where(Q > 0, flow.T / flow.clamp_min(torch.finfo(q.dtype).tiny), 0.0)
    P = Q * ratio.clamp(max=1.0)                            # off-diagonal moves
    P.fill_diagonal_(0.0)
    # rejections stay put (no -0 round-off)
    P += torch.diag((1.0 - P.sum(1)).clamp_min(0.0))
    return P


def stationary_distribution(P: torch.Tensor) -> torch.Tensor:
    """Stationary vector ``pi`` of a transition matrix (``pi P = pi``): leading left
    eigenvector.

    Args:
        P: row-stochastic matrix, shape (K, K).

    Returns:
        ``pi``, shape (K,), non-negative and summing to 1.
    """
    P = check_tensor(P, "P", ndim=2, floating=True, shape_doc="(K, K)")
    if P.shape[0] != P.shape[1]:
        raise ValueError(f"P must be square (K, K), got shape {tuple(P.shape)}")
    return _stationary_distribution(P)


def _stationary_distribution(P):
    vals, vecs = torch.linalg.eig(P.T)                     # right eigenvectors of P^T
    v = vecs[:, (vals - 1).abs().argmin()].real
    return v / v.sum()


# --------------------------------------------------------------- random-walk Metropolis
def random_walk_metropolis(
    log_prob: LogProb,
    theta0: torch.Tensor,
    *,
    step: float,
    n_steps: int,
    generator: torch.Generator,
    thin: int = 1,
) -> Chain:
    """Random-walk Metropolis: propose ``theta + step * xi``, ``xi ~ N(0, I)``, accept
    by MH.

    The proposal is symmetric, so the Hastings ratio is the density ratio
    (eq-bayes-mh-acceptance). All ``C`` chains move in parallel.

    Args:
        log_prob: log target density up to a constant, ``(C, d) -> (C,)``.
        theta0: starting states, shape (C, d).
        step: proposal standard deviation, ``> 0``.
        n_steps: number of transitions per chain, ``>= 1``.
        generator: CPU generator.
        thin: record every ``thin``-th state.

    Returns:
        A :class:`Chain` with samples (n_steps // thin, C, d) and one density evaluation
        per step.
    """
    theta0 = _check_theta0(theta0)
    step = check_real(step, "step", min_value=0.0, strict_min=True)
    n_steps = check_int(n_steps, "n_steps", min_value=1)
    check_generator(generator)
    thin = _check_thin(thin, n_steps)
    return _random_walk_metropolis(log_prob, theta0, step, n_steps, generator, thin)


def _random_walk_metropolis(log_prob, theta0, step, n_steps, generator, thin):
    theta = theta0.clone()
    C, d = theta.shape
    lp = log_prob(theta)                                                        # (C,)
    accepted = torch.zeros(C, dtype=theta.dtype, device=theta.device)
    out = []
    for t in range(1, n_steps + 1):
        xi = torch.randn(C, d, generator=generator, dtype=theta.dtype).to(theta.device)
        prop = theta + step * xi                                                # (C, d)
        lp_prop = log_prob(prop)
        acc = metropolis_accept(lp_prop - lp, generator=generator)              # (C,)
        theta = torch.where(acc[:, None], prop, theta)
        lp = torch.where(acc, lp_prop, lp)
        accepted += acc
        if t % thin == 0:
            out.append(theta)
    return Chain(torch.stack(out), accepted / n_steps, 1, n_steps)


def rwm_limit_acceptance(ell: torch.Tensor | float) -> torch.Tensor:
    """Limiting acceptance ``2 Phi(-ell / 2)`` of random-walk Metropolis with step
    ``ell/sqrt(d)``.

    For a product of ``d`` standard normals, as ``d -> inf`` (Roberts, Gelman & Gilks,
    1997). Maximising the speed ``ell^2 * 2 Phi(-ell/2)`` gives ``ell = 2.38`` and
    acceptance 0.234.

    Args:
        ell: scaled step sizes, any shape, ``>= 0``.

    Returns:
        Acceptance rates, same shape (float64).
    """
    ell = torch.as_tensor(ell, dtype=torch.float64)
    if (ell < 0).any():
        raise ValueError(f"ell must be >= 0, got min {ell.min().item()}")
    return _rwm_limit_acceptance(ell)


def _rwm_limit_acceptance(ell):
    return 2 * torch.special.ndtr(-ell / 2)


# ---------------------------------------------------------------------- output analysis
def _as_tcd(x: object, name: str = "x") -> torch.Tensor:
    x = check_tensor(x, name, floating=True)
    if x.ndim == 1:
        x = x[:, None, None]
    elif x.ndim == 2:
        x = x[:, :, None]
    elif x.ndim != 3:
        raise ValueError(
            f"{name} must have shape (T,), (T, C) or (T, C, d), got {tuple(x.shape)}"
        )
    if x.shape[0] < 4:
        raise ValueError(
            f"{name} must have at least 4 draws per chain, got T = {x.shape[0]}"
        )
    return x


def _squeeze(v: torch.Tensor, ndim: int) -> torch.Tensor:
    return v if ndim == 3 else v[..., 0]


def _chain_autocov(x: torch.Tensor) -> torch.Tensor:
    """Per-chain autocovariances at lags 0..T-1 by FFT (1/T normalisation):
    (T, C, d)."""
    T = x.shape[0]
    xc = x - x.mean(0, keepdim=True)
    n_fft = 2 ** math.ceil(math.log2(2 * T))
    f = torch.fft.rfft(xc, n=n_fft, dim=0)
    return torch.fft.irfft(f * f.conj(), n=n_fft, dim=0)[:T] / T


def _multichain_rho(x: torch.Tensor) -> torch.Tensor:
    """Autocorrelations (T, d) that count the spread between chain means
    (Gelman et al. 2013)."""
    T, C, _ = x.shape
    acov = _chain_autocov(x).mean(1)                       # (T, d) averaged over chains
    W = acov[0] * T / (T - 1)                              # mean within-chain variance
    B_over_T = x.mean(0).var(0) if C > 1 else torch.zeros_like(W)
    var_plus = W * (T - 1) / T + B_over_T                  # (d,)
    rho = 1 - (W - acov) / var_plus
    rho[0] = 1.0
    return rho


def autocorrelation(x: torch.Tensor, max_lag: int | None = None) -> torch.Tensor:
    """Autocorrelation ``rho_k`` of a chain at lags ``k = 0..max_lag`` (eq-bayes-ess).

    Args:
        x: draws, shape (T,), (T, C) for C chains, or (T, C, d).
        max_lag: largest lag, ``0 <= max_lag < T`` (default ``T - 1``).

    Returns:
        ``rho``, shape (max_lag + 1,) or (max_lag + 1, d) for 3-D input; ``rho_0 = 1``.
    """
    ndim = x.ndim if isinstance(x, torch.Tensor) else 0
    x = _as_tcd(x)
    T = x.shape[0]
    if max_lag is None:
        max_lag = T - 1
    max_lag = check_int(max_lag, "max_lag", min_value=0, max_value=T - 1)
    return _squeeze(_multichain_rho(x)[: max_lag + 1], ndim)


def effective_sample_size(x: torch.Tensor) -> torch.Tensor:
    """Effective sample size ``C T / tau`` with ``tau = 1 + 2 sum_k rho_k``
    (eq-bayes-ess).

    The sum is truncated by Geyer's initial monotone sequence: pair the autocorrelations
    ``Gamma_m = rho_{2m} + rho_{2m+1}``, stop at the first negative pair and force the
    pairs to decrease (Geyer, 1992).

    Antithetic chains (negative ``rho_1``) can give ``tau < 1`` and an ESS above
    ``C T``. The estimate of ``tau`` is clamped from below at ``1 / log10(C T)``, so the
    ESS is capped at ``C T log10(C T)``: with ``C T = 10^4`` draws, at most 4 times
    their number. An ESS at the cap means that the estimated ``tau`` fell below the
    clamp; the cap, not the sampler, then sets the number.

    Args:
        x: draws, shape (T,), (T, C) or (T, C, d), at least 4 per chain.

    Returns:
        The ESS, a 0-D tensor, or shape (d,) for 3-D input; at most ``C T log10(C T)``
        (``C T log10(10)`` when ``C T < 10``).
    """
    ndim = x.ndim if isinstance(x, torch.Tensor) else 0
    x = _as_tcd(x)
    T, C, _ = x.shape
    rho = _multichain_rho(x)                                  # (T, d)
    n_pairs = T // 2
    gamma = rho[: 2 * n_pairs].reshape(n_pairs, 2, -1).sum(1)  # (T//2, d)
    # 1 up to the first negative pair
    positive = torch.cumprod((gamma > 0).to(gamma.dtype), dim=0)
    monotone = torch.cummin(gamma.clamp_min(0.0), dim=0).values
    tau = (-1 + 2 * (monotone * positive).sum(0)).clamp_min(
        1.0 / math.log10(max(C * T, 10))
    )
    ess = C * T / tau                                         # (d,)
    return ess if ndim == 3 else ess[0]


def mc_standard_error(x: torch.Tensor) -> torch.Tensor:
    """Monte-Carlo standard error of the mean of all draws, ``sd / sqrt(ESS)``.

    Args:
        x: draws, shape (T,), (T, C) or (T, C, d).

    Returns:
        The standard error, a 0-D tensor or shape (d,).
    """
    ndim = x.ndim if isinstance(x, torch.Tensor) else 0
    x3 = _as_tcd(x)
    sd = x3.reshape(-1, x3.shape[2]).std(0)                    # (d,)
    se = sd / effective_sample_size(x3).sqrt()
    return se if ndim == 3 else se[0]
