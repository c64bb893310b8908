"""What a trained CNN learned: coefficient summaries, clean test error, phase diagram.

``coefficient_summary`` reduces the recorded coefficients to the best filter per class
and per example, ``clean_test_error`` measures the test error against clean labels,
``phase_diagram`` trains a whole grid of sample sizes and signal strengths, and
``crossing_point`` reads off where the error falls to a level. Part of
:mod:`flt_lib.flt.benign_cnn`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.flt.benign_cnn.cnn import (
    BenignCNNConfig,
    CNNHistory,
    cnn_output,
    train_cnn,
)
from flt_lib.flt.benign_cnn.data import sample_two_patch
from flt_lib.rng import spawn

__all__ = [
    "CoefficientSummary",
    "PhaseDiagram",
    "clean_test_error",
    "coefficient_summary",
    "crossing_point",
    "phase_diagram",
]


@dataclass(frozen=True)
class CoefficientSummary:
    """Signal and own-noise coefficients summarised over filters (see
    :func:`coefficient_summary`)."""

    gamma_bar: torch.Tensor  # (R, B) mean_j max_r gamma_{j,r}
    rho_own: torch.Tensor  # (R, B, n) max_r rho_{y_i, r, i}


def coefficient_summary(hist: CNNHistory, y: torch.Tensor) -> CoefficientSummary:
    """Summaries of the signal and noise coefficients: the best filter per class and per
    example.

    gamma_bar = mean_j max_r gamma_{j,r} (signal learned by the best filter of each
    class) and rho_own_i = max_r rho_{y_i, r, i} (memorisation of example i by the
    filters of its label).

    Args:
        hist: output of :func:`train_cnn` with ``track_rho=True``.
        y: observed training labels in {-1, +1}, shape (B, n).

    Returns:
        A :class:`CoefficientSummary` on the device of ``hist``.
    """
    if not isinstance(hist, CNNHistory) or hist.rho is None:
        raise ValueError(
            "hist must be a CNNHistory with rho recorded (train with track_rho=True)"
        )
    _, B, _, _, n = hist.rho.shape
    check_tensor(y, "y", shape=(B, n), shape_doc="(B, n)")
    if not bool(((y == 1) | (y == -1)).all()):
        raise ValueError("y must contain only the labels -1 and +1")
    return _coefficient_summary(hist, y)


def _coefficient_summary(hist, y):
    R, B, _, m, n = hist.rho.shape
    gamma_bar = hist.gamma.amax(dim=3).mean(dim=2)  # (R, B)
    rho_max = hist.rho.amax(dim=3)  # (R, B, 2, n): best filter of each class j
    # (B, n): index 0 for y=+1, 1 for y=-1
    own = ((1 - y) / 2).long().to(rho_max.device)
    # (R, B, n)
    rho_own = rho_max.gather(2, own.expand(R, B, n).unsqueeze(2)).squeeze(2)
    return CoefficientSummary(gamma_bar=gamma_bar, rho_own=rho_own)


def clean_test_error(
    W: torch.Tensor,
    mu: torch.Tensor,
    *,
    sigma_p: float,
    n_test: int,
    generator: torch.Generator,
) -> torch.Tensor:
    """Test error on fresh examples with *clean* labels, P(y_clean f(W, x) <= 0), per
    problem.

    Args:
        W: trained filters, shape (B, 2, m, d). mu: signal vectors, shape (B, d).
        sigma_p: noise standard deviation. n_test: number of test examples per problem.
        generator: CPU generator for the test set.

    Returns:
        error rates, shape (B,).
    """
    check_tensor(W, "W", ndim=4, shape_doc="(B, 2, m, d)")
    n_test = check_int(n_test, "n_test", min_value=1)
    test = sample_two_patch(
        n_test, mu, sigma_p=sigma_p, flip_prob=0.0, generator=generator
    )
    f = cnn_output(W, mu, test.xi, test.y_clean)
    return (test.y_clean * f <= 0).to(mu.dtype).mean(dim=1)


def crossing_point(x: torch.Tensor, err: torch.Tensor, *, level: float = 0.1) -> float:
    """Smallest x where err first falls to ``level``, interpolated linearly in log x.

    Args:
        x: increasing positive grid, shape (k,). err: values on the grid, shape (k,).
        level: the threshold.

    Returns:
        the interpolated crossing point, or nan if err never crosses level from above.
    """
    check_tensor(x, "x", ndim=1, shape_doc="(k,)")
    check_tensor(err, "err", shape=(x.shape[0],), shape_doc="(k,)")
    if (x <= 0).any() or (x[1:] <= x[:-1]).any():
        raise ValueError("x must be strictly increasing and positive")
    level = check_real(level, "level")
    return _crossing_point(x, err, level=level)


def _crossing_point(x: torch.Tensor, err: torch.Tensor, *, level: float = 0.1) -> float:
    """The check-free core of :func:`crossing_point` (arguments already checked)."""
    below = (err <= level).nonzero()
    if len(below) == 0 or below[0, 0].item() == 0:
        return float("nan")
    k = below[0, 0].item()
    lx0, lx1 = torch.log(x[k - 1]).item(), torch.log(x[k]).item()
    e0, e1 = err[k - 1].item(), err[k].item()
    frac = (e0 - level) / (e0 - e1) if e0 != e1 else 1.0
    return float(torch.exp(torch.tensor(lx0 + frac * (lx1 - lx0))).item())


@dataclass(frozen=True)
class PhaseDiagram:
    """The result of :func:`phase_diagram` on a grid of k signal strengths and len(ns)
    sizes."""

    ns: list[int]  # the sample sizes n, one per column
    mu_norms: torch.Tensor  # (k,) the signal strengths ||mu||, one per row
    test_err: torch.Tensor  # (k, len(ns)) clean test error, mean over the seeds
    test_err_all: torch.Tensor  # (seeds, k, len(ns)) clean test error of every run
    # (seeds, k, len(ns)) final training error of every run
    train_err: torch.Tensor
    y_clean: list[torch.Tensor]  # per n: (seeds, k, n) clean training labels
    y: list[torch.Tensor]  # per n: (seeds, k, n) observed training labels


def phase_diagram(
    ns: list[int],
    mu_norms: torch.Tensor,
    *,
    seeds: int,
    cfg: BenignCNNConfig,
    n_test: int,
    generator: torch.Generator,
    device: torch.device | str = "cpu",
) -> PhaseDiagram:
    """Clean test error over a grid of sample sizes n and signal strengths ||mu||,
    batched.

    For each n, all ``len(mu_norms) * seeds`` problems (mu = ||mu|| e_1, fresh data and
    initialisation per seed) are trained in one call of :func:`train_cnn`. Each n gets
    its own child of ``generator`` (:func:`flt_lib.rng.spawn`), which draws data,
    initialisation and test set in that order.

    Args:
        ns: sample sizes, each >= 1. mu_norms: signal strengths, shape (k,), positive.
        seeds: independent repetitions per grid point. cfg: configuration.
        n_test: clean test examples per problem. generator: CPU generator (advanced by
            len(ns)).
        device: where to train.

    Returns:
        A :class:`PhaseDiagram` (tensors on the CPU).
    """
    check_tensor(mu_norms, "mu_norms", ndim=1, shape_doc="(k,)")
    if (mu_norms <= 0).any():
        raise ValueError("mu_norms must be positive")
    seeds = check_int(seeds, "seeds", min_value=1)
    if not isinstance(cfg, BenignCNNConfig):
        raise TypeError(f"cfg must be a BenignCNNConfig, got {type(cfg).__name__}")
    ns = [check_int(n, "n in ns", min_value=1) for n in ns]
    check_generator(generator)
    tests, trains, y_clean, y_obs = [], [], [], []
    k = len(mu_norms)
    for n, gen in zip(ns, spawn(generator, len(ns))):
        mu = torch.zeros(seeds * k, cfg.d)
        # (seeds * k, d): seed-major order
        mu[:, 0] = mu_norms.float().cpu().repeat(seeds)
        mu = mu.to(device)
        data = sample_two_patch(
            n, mu, sigma_p=cfg.sigma_p, flip_prob=cfg.flip_prob, generator=gen
        )
        hist = train_cnn(mu, data, cfg, generator=gen, track_rho=False)
        err = clean_test_error(
            hist.W, mu, sigma_p=cfg.sigma_p, n_test=n_test, generator=gen
        )
        tests.append(err.cpu().view(seeds, k))
        trains.append(hist.train_err[-1].cpu().view(seeds, k))
        y_clean.append(data.y_clean.cpu().view(seeds, k, n))
        y_obs.append(data.y.cpu().view(seeds, k, n))
    test_all = torch.stack(tests, dim=2)  # (seeds, k, len(ns))
    return PhaseDiagram(
        ns=list(ns),
        mu_norms=mu_norms.cpu(),
        test_err=test_all.mean(dim=0),
        test_err_all=test_all,
        train_err=torch.stack(trains, dim=2),
        y_clean=y_clean,
        y=y_obs,
    )
