"""Signal learning versus noise memorisation in a two-layer ReLU CNN (Cao et al. 2022;
Kou et al. 2023).

Data (Kou et al. 2023, Definition of the two-patch model): a clean label ``y_clean``
uniform on {-1, +1}; an input with two patches ``x = [y_clean * mu, xi]``, where ``mu``
in R^d is a fixed signal vector and ``xi ~ N(0, sigma_p^2 (I - mu mu^T / ||mu||^2))`` is
Gaussian noise in the orthogonal complement of ``mu``; the observed training label ``y``
equals ``y_clean`` flipped with probability ``flip_prob``.

Model: f(W, x) = F_{+1}(W_{+1}, x) - F_{-1}(W_{-1}, x) with
F_j(W_j, x) = (1/m) sum_{r=1}^m sum_{p=1}^2 ReLU(<w_{j,r}, x^(p)>); the second layer
(+1/m, -1/m) is fixed, only the filters ``w_{j,r}`` are trained, by full-batch gradient
descent on the logistic loss from ``w_{j,r} ~ N(0, sigma0^2 I_d)``.

Every function works on a *batch of B independent problems* at once (leading dimension
B), so that a whole grid of signal strengths is trained in one set of tensor operations.
Filters are stored as ``W`` of shape (B, 2, m, d); index 0 of the second axis is j = +1
and index 1 is j = -1.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.rng import spawn

__all__ = [
    "SIGN",
    "BenignCNNConfig",
    "CNNHistory",
    "CoefficientSummary",
    "PhaseDiagram",
    "TwoPatchData",
    "clean_test_error",
    "cnn_gd_step",
    "cnn_output",
    "coefficient_summary",
    "crossing_point",
    "phase_diagram",
    "sample_two_patch",
    "train_cnn",
]

SIGN = (1.0, -1.0)  # the fixed second-layer sign j of filter group 0 and 1


@dataclass(frozen=True)
class BenignCNNConfig:
    """Parameters of the two-patch CNN experiment (the signal vector mu is passed
    separately)."""

    d: int = 300  # dimension of each patch
    m: int = 20  # number of filters per class j in {+1, -1}
    # standard deviation of the noise patch (in the complement of mu)
    sigma_p: float = 1.0
    # standard deviation of the Gaussian initialisation of the filters
    sigma0: float = 0.01
    flip_prob: float = 0.1  # probability p that a training label is flipped
    # step size eta (each filter moves by about eta/m per unit gradient)
    lr: float = 2.0
    steps: int = 150  # number of full-batch gradient steps T
    record_every: int = 10  # record gamma, rho and the losses every this many steps

    def __post_init__(self) -> None:
        check_int(self.d, "d", min_value=1)
        check_int(self.m, "m", min_value=1)
        check_real(self.sigma_p, "sigma_p", min_value=0.0)
        check_real(self.sigma0, "sigma0", min_value=0.0, strict_min=True)
        check_real(self.flip_prob, "flip_prob", min_value=0.0, max_value=0.5)
        if self.flip_prob == 0.5:
            raise ValueError(
                "flip_prob must be < 0.5, got 0.5 (labels would carry no information)"
            )
        check_real(self.lr, "lr", min_value=0.0, strict_min=True)
        check_int(self.steps, "steps", min_value=1)
        check_int(self.record_every, "record_every", min_value=1)


@dataclass(frozen=True)
class TwoPatchData:
    """Training examples x_i = [y_clean_i mu, xi_i] of B problems, drawn by
    :func:`sample_two_patch`."""

    xi: torch.Tensor  # (B, n, d) noise patches, orthogonal to mu
    y_clean: torch.Tensor  # (B, n) clean labels in {-1, +1}
    y: torch.Tensor  # (B, n) observed labels (flipped with probability flip_prob)

    def __post_init__(self) -> None:
        check_tensor(self.xi, "xi", ndim=3, floating=True, shape_doc="(B, n, d)")
        check_tensor(
            self.y_clean, "y_clean", shape=self.xi.shape[:2], shape_doc="(B, n)"
        )
        check_tensor(self.y, "y", shape=self.xi.shape[:2], shape_doc="(B, n)")


def sample_two_patch(
    n: int,
    mu: torch.Tensor,
    *,
    sigma_p: float,
    flip_prob: float,
    generator: torch.Generator,
) -> TwoPatchData:
    """Draw n two-patch examples x = [y_clean mu, xi] for each of B signal vectors (Kou
    et al. 2023).

    Args:
        n: examples per problem.
        mu: signal vectors, shape (B, d), nonzero.
        sigma_p: noise standard deviation (>= 0).
        flip_prob: label-flip probability p in [0, 1/2).
        generator: CPU torch generator.

    Returns:
        A :class:`TwoPatchData` on ``mu``'s device.
    """
    n = check_int(n, "n", min_value=1)
    check_tensor(mu, "mu", ndim=2, floating=True, shape_doc="(B, d)")
    if (mu.norm(dim=1) == 0).any():
        raise ValueError(
            "mu must have nonzero rows: the noise lives in the complement of mu"
        )
    sigma_p = check_real(sigma_p, "sigma_p", min_value=0.0)
    flip_prob = check_real(flip_prob, "flip_prob", min_value=0.0, max_value=0.5)
    if flip_prob == 0.5:
        raise ValueError(
            "flip_prob must be < 0.5, got 0.5 (labels would carry no information)"
        )
    check_generator(generator)
    B, d = mu.shape
    dev, dt = mu.device, mu.dtype
    # (B, n)
    y_clean = (torch.randint(0, 2, (B, n), generator=generator) * 2 - 1).to(dev, dt)
    flips = (torch.rand(B, n, generator=generator) < flip_prob).to(dev)
    y = torch.where(flips, -y_clean, y_clean)  # (B, n)
    g = torch.randn(B, n, d, generator=generator).to(dev, dt)  # (B, n, d)
    u = mu / mu.norm(dim=1, keepdim=True)  # (B, d) unit signal direction
    # (B, n, d): projected off mu
    xi = sigma_p * (g - (g @ u.unsqueeze(2)) * u.unsqueeze(1))
    return TwoPatchData(xi=xi, y_clean=y_clean, y=y)


def cnn_output(
    W: torch.Tensor, mu: torch.Tensor, xi: torch.Tensor, y_clean: torch.Tensor
) -> torch.Tensor:
    """f(W, x) = F_{+1} - F_{-1} on inputs x_i = [y_clean_i mu, xi_i] (eq-bo-cnn).

    Args:
        W: filters, shape (B, 2, m, d). mu: signal vectors, shape (B, d).
        xi: noise patches, shape (B, n, d). y_clean: clean labels, shape (B, n).

    Returns:
        f of shape (B, n).
    """
    check_tensor(W, "W", ndim=4, floating=True, shape_doc="(B, 2, m, d)")
    B, _, m, d = W.shape
    check_tensor(W, "W", shape=(B, 2, m, d), shape_doc="(B, 2, m, d)")
    check_tensor(mu, "mu", shape=(B, d), shape_doc="(B, d)")
    check_tensor(xi, "xi", shape=(B, None, d), shape_doc="(B, n, d)")
    check_tensor(y_clean, "y_clean", shape=(B, xi.shape[1]), shape_doc="(B, n)")
    return _forward(W, mu, xi, y_clean)[0]


def _forward(W, mu, xi, y_clean):
    """Unchecked forward pass; also the pre-activations s (signal), v (noise) and the
    signs j."""
    j = torch.tensor(SIGN, device=W.device, dtype=W.dtype).view(1, 2, 1, 1)
    # (B,2,m,n)
    s = torch.einsum("bjrd,bd->bjr", W, mu).unsqueeze(-1) * y_clean[:, None, None]
    v = torch.einsum("bjrd,bnd->bjrn", W, xi)  # (B, 2, m, n)
    f = (j * (torch.relu(s) + torch.relu(v))).sum(dim=(1, 2)) / W.shape[2]  # (B, n)
    return f, s, v, j


def cnn_gd_step(
    W: torch.Tensor, mu: torch.Tensor, data: TwoPatchData, *, lr: float
) -> torch.Tensor:
    """One full-batch GD step on the logistic loss, for B problems at once (eq-bo-gd).

    The gradient of L = (1/n) sum_i log(1 + exp(-y_i f_i)) with respect to w_{j,r} is
    (j/m) (1/n) sum_i l'_i y_i [1(<w, y_clean_i mu> > 0) y_clean_i mu + 1(<w, xi_i> > 0)
    xi_i], with l'_i = -sigmoid(-y_i f_i) (checked against autograd in the tests).

    Args:
        W: filters, (B, 2, m, d). mu: (B, d). data: the training set. lr: step size.

    Returns:
        The new filters, (B, 2, m, d).
    """
    B, _, m, _ = W.shape
    f, s, v, j = _forward(W, mu, data.xi, data.y_clean)
    n = data.y.shape[1]
    # (B, 1, 1, n): dL/df_i
    g = (-torch.sigmoid(-data.y * f) * data.y / n)[:, None, None, :]
    coef_mu = (g * (s > 0) * data.y_clean[:, None, None, :]).sum(-1)  # (B, 2, m)
    coef_xi = (g * (v > 0)).to(W.dtype)  # (B, 2, m, n)
    grad = (
        j
        / m
        * (
            coef_mu.unsqueeze(-1) * mu.view(B, 1, 1, -1)
            + torch.einsum("bjrn,bnd->bjrd", coef_xi, data.xi)
        )
    )
    return W - lr * grad


@dataclass(frozen=True)
class CNNHistory:
    """What :func:`train_cnn` records, every ``cfg.record_every`` steps (and at the
    last)."""

    steps: torch.Tensor  # (R,) the recorded step numbers
    # (R, B, 2, m) signal coefficients j <w_{j,r} - w_{j,r}^(0), mu>
    gamma: torch.Tensor
    # (R, B, 2, m, n) noise coefficients <w - w^(0), xi_i>, if tracked
    rho: torch.Tensor | None
    loss: torch.Tensor  # (R, B) training loss
    train_err: torch.Tensor  # (R, B) training error against the observed labels
    W: torch.Tensor  # (B, 2, m, d) final filters
    W0: torch.Tensor  # (B, 2, m, d) initial filters


def train_cnn(
    mu: torch.Tensor,
    data: TwoPatchData,
    cfg: BenignCNNConfig,
    *,
    generator: torch.Generator,
    track_rho: bool = True,
) -> CNNHistory:
    """Full-batch GD on the logistic loss, B problems in parallel, tracking the
    coefficients.

    Tracked (Kou et al. 2023's signal-noise decomposition, eq-bo-decomposition, measured
    from the initialisation): gamma_{j,r} = j <w_{j,r} - w_{j,r}^(0), mu> and
    rho_{j,r,i} = <w_{j,r} - w_{j,r}^(0), xi_i>. Each step is :func:`cnn_gd_step`.

    Args:
        mu: signal vectors, shape (B, d). data: output of :func:`sample_two_patch`.
        cfg: configuration (its ``d`` must equal mu's second dimension).
        generator: CPU generator for the initialisation w ~ N(0, sigma0^2 I).
        track_rho: if False, skip recording rho (saves memory on large grids).

    Returns:
        A :class:`CNNHistory` (tensors on ``mu``'s device).
    """
    check_tensor(mu, "mu", ndim=2, floating=True, shape_doc="(B, d)")
    if not isinstance(cfg, BenignCNNConfig):
        raise TypeError(f"cfg must be a BenignCNNConfig, got {type(cfg).__name__}")
    if not isinstance(data, TwoPatchData):
        raise TypeError(
            f"data must be a TwoPatchData (see sample_two_patch),"
            f" got {type(data).__name__}"
        )
    if mu.shape[1] != cfg.d:
        raise ValueError(
            f"mu must have shape (B, {cfg.d}) to match cfg.d, got {tuple(mu.shape)}"
        )
    check_tensor(
        data.xi, "data.xi", shape=(mu.shape[0], None, cfg.d), shape_doc="(B, n, d)"
    )
    check_generator(generator)
    B = mu.shape[0]
    W = (cfg.sigma0 * torch.randn(B, 2, cfg.m, cfg.d, generator=generator)).to(
        mu.device, mu.dtype
    )
    W0 = W.clone()
    j = torch.tensor(SIGN, device=mu.device, dtype=mu.dtype).view(1, 2, 1)
    rec: dict[str, list] = {k: [] for k in ("steps", "gamma", "rho", "loss", "err")}
    for t in range(cfg.steps + 1):
        if t % cfg.record_every == 0 or t == cfg.steps:
            dW = W - W0
            margin = data.y * cnn_output(W, mu, data.xi, data.y_clean)  # (B, n)
            rec["steps"].append(t)
            rec["gamma"].append(j * torch.einsum("bjrd,bd->bjr", dW, mu))
            if track_rho:
                rec["rho"].append(torch.einsum("bjrd,bnd->bjrn", dW, data.xi))
            rec["loss"].append(torch.nn.functional.softplus(-margin).mean(dim=1))
            rec["err"].append((margin <= 0).to(mu.dtype).mean(dim=1))
        if t == cfg.steps:
            break
        W = cnn_gd_step(W, mu, data, lr=cfg.lr)
    return CNNHistory(
        steps=torch.tensor(rec["steps"]),
        gamma=torch.stack(rec["gamma"]),
        rho=torch.stack(rec["rho"]) if track_rho else None,
        loss=torch.stack(rec["loss"]),
        train_err=torch.stack(rec["err"]),
        W=W,
        W0=W0,
    )


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
    R, B, _, m, n = hist.rho.shape
    check_tensor(y, "y", shape=(B, n), shape_doc="(B, n)")
    if not bool(((y == 1) | (y == -1)).all()):
        raise ValueError("y must contain only the labels -1 and +1")
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
