"""The two-layer ReLU CNN of Cao et al. (2022), its gradient step and its training.

The configuration (``BenignCNNConfig``), the forward pass f(W, x) = F_{+1} - F_{-1}
(eq-bo-cnn), one closed-form full-batch GD step on the logistic loss (eq-bo-gd), and
``train_cnn``, which records the signal and noise coefficients of every filter
(eq-bo-decomposition) in a ``CNNHistory``. Part of :mod:`flt_lib.flt.benign_cnn`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.flt.benign_cnn.data import TwoPatchData

__all__ = [
    "SIGN",
    "BenignCNNConfig",
    "CNNHistory",
    "cnn_gd_step",
    "cnn_output",
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
    return _cnn_output(W, mu, xi, y_clean)


def _cnn_output(W, mu, xi, y_clean):
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
