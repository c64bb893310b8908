"""The data of the token-selection model: class signals, the fixed head nu, sampling.

Sequences of T tokens in R^d drawn as in the official code (``TokenData``, ``sample``):
token 1 carries the class signal, tokens 2 and 3 a weak signal, the rest are noise, and
a fraction of the labels is flipped (eq-ts-snr). Part of
:mod:`flt_lib.flt.token_selection`, whose docstring describes the whole setting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from flt_lib._validate import check_generator, check_int, check_real

__all__ = [
    "Sample",
    "TokenData",
    "class_signals",
    "linear_head",
    "sample",
    "sample_official",
]


@dataclass(frozen=True)
class TokenData:
    """Parameters of the Gaussian-mixture sequence data with positional label noise."""

    d: int = 2000  # embedding dimension of every token
    T: int = 8  # number of tokens per sequence
    # norm of each class signal, mu_+ = mu e_1 and mu_- = mu e_2
    mu: float = 20.0
    # signal weight of the weakly relevant tokens x_2 and x_3 (rho << 1)
    rho: float = 0.1
    sigma: float = 1.0  # standard deviation of every noise coordinate
    # x_3 = rho mu_{-Y*} + eps (official code); False: x_3 is noise
    opposite_token: bool = True
    # equal class sizes, flips split evenly (official code); False: i.i.d.
    balanced: bool = True

    def __post_init__(self) -> None:
        check_int(self.d, "d", min_value=2)
        check_int(self.T, "T", min_value=3 if self.opposite_token else 2)
        check_real(self.mu, "mu", min_value=0.0, strict_min=True)
        check_real(self.rho, "rho", min_value=0.0)
        check_real(self.sigma, "sigma", min_value=0.0, strict_min=True)
        for name in ("opposite_token", "balanced"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be a bool, got {getattr(self, name)!r}")

    @property
    def snr(self) -> float:
        """Signal-to-noise ratio mu / (sigma sqrt(d)) (eq-ts-snr)."""
        return self.mu / (self.sigma * math.sqrt(self.d))


@dataclass(frozen=True)
class Sample:
    """A labelled set of sequences drawn by :func:`sample`."""

    X: torch.Tensor  # (n, T, d) token embeddings
    # (n,) observed labels in {-1, +1} (flipped where `flipped`)
    y: torch.Tensor
    y_clean: torch.Tensor  # (n,) clean labels Y*
    flipped: torch.Tensor  # (n,) bool, True where the label was flipped
    cfg: TokenData  # the parameters the sequences were drawn with

    def to(self, device: torch.device | str) -> Sample:
        """The same sequences on ``device`` (``cfg`` is unchanged)."""
        moved = (t.to(device) for t in (self.X, self.y, self.y_clean, self.flipped))
        return Sample(*moved, cfg=self.cfg)

    @property
    def noise(self) -> torch.Tensor:
        """The noise part eps of every token, X minus its signal, shape (n, T, d)."""
        mu_plus, mu_minus = (
            m.to(self.X) for m in class_signals(self.cfg, self.X.dtype)
        )
        own = torch.where(self.y_clean[:, None] == 1, mu_plus, mu_minus)  # (n, d)
        other = torch.where(self.y_clean[:, None] == 1, mu_minus, mu_plus)  # (n, d)
        eps = self.X.clone()
        eps[:, 0] -= own
        eps[:, 1] -= self.cfg.rho * own
        if self.cfg.opposite_token:
            eps[:, 2] -= self.cfg.rho * other
        return eps


def _check_cfg(cfg: object) -> TokenData:
    if not isinstance(cfg, TokenData):
        raise TypeError(f"cfg must be a TokenData, got {type(cfg).__name__}")
    return cfg


def class_signals(
    cfg: TokenData, dtype: torch.dtype = torch.float32
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return the orthogonal class signals ``(mu_plus, mu_minus) = (mu e_1, mu e_2)``,
    each (d,)."""
    _check_cfg(cfg)
    mu_plus = torch.zeros(cfg.d, dtype=dtype)
    mu_minus = torch.zeros(cfg.d, dtype=dtype)
    mu_plus[0], mu_minus[1] = cfg.mu, cfg.mu
    return mu_plus, mu_minus


def linear_head(cfg: TokenData, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The fixed head nu = (mu_+ - mu_-) / (||mu_+ - mu_-|| mu), shape (d,).

    With this scaling a relevant token contributes +-1/sqrt(2) to f(X), whatever mu is
    (the official code's ``init_linear_head`` with ``nu_norm = 1 / mu``).
    """
    mu_plus, mu_minus = class_signals(cfg, dtype)
    diff = mu_plus - mu_minus
    return diff / (diff.norm() * cfg.mu)


def sample(
    cfg: TokenData, n: int, *, label_noise: float, generator: torch.Generator
) -> Sample:
    """Draw ``n`` sequences of the data model (eq-ts-snr), with ``label_noise`` of
    labels flipped.

    With ``cfg.balanced`` (the official code): the first ``n // 2`` sequences have Y* =
    +1, the rest Y* = -1, and ``ceil(label_noise * n) // 2`` labels are flipped in each
    class. Otherwise Y* is uniform on {-1, +1} and ``ceil(label_noise * n)`` labels
    chosen at random are flipped.

    Args:
        cfg: the data parameters.
        n: number of sequences, n >= 2 if balanced, else n >= 1.
        label_noise: fraction eta of flipped labels, in [0, 1/2).
        generator: a CPU torch.Generator.

    Returns:
        A :class:`Sample` with X of shape (n, T, d), on the CPU.
    """
    _check_cfg(cfg)
    n = check_int(n, "n", min_value=2 if cfg.balanced else 1)
    label_noise = check_real(label_noise, "label_noise", min_value=0.0)
    if label_noise >= 0.5:
        raise ValueError(f"label_noise must be < 0.5, got {label_noise}")
    check_generator(generator)
    return _sample(cfg, n, label_noise=label_noise, generator=generator)


def _sample(
    cfg: TokenData, n: int, *, label_noise: float, generator: torch.Generator
) -> Sample:
    """The check-free core of :func:`sample` (arguments already checked)."""
    mu_plus, mu_minus = class_signals(cfg)
    n_flip = math.ceil(label_noise * n)
    flipped = torch.zeros(n, dtype=torch.bool)
    if cfg.balanced:
        y_clean = torch.cat([torch.ones(n // 2), -torch.ones(n - n // 2)])  # (n,)
        # class +1
        flipped[: n_flip // 2] = True
        # class -1
        flipped[n // 2 : n // 2 + n_flip // 2] = True
    else:
        y_clean = (torch.randint(0, 2, (n,), generator=generator) * 2 - 1).float()
    # (n, T, d): noise
    X = torch.randn(n, cfg.T, cfg.d, generator=generator).mul_(cfg.sigma)
    if not cfg.balanced:
        flipped[torch.randperm(n, generator=generator)[:n_flip]] = True
    own = torch.where(y_clean[:, None] == 1, mu_plus, mu_minus)  # (n, d)
    other = torch.where(y_clean[:, None] == 1, mu_minus, mu_plus)  # (n, d)
    X[:, 0] += own  # relevant token
    X[:, 1] += cfg.rho * own  # weakly relevant token
    if cfg.opposite_token:
        X[:, 2] += cfg.rho * other  # weakly relevant to the opposite class
    y = torch.where(flipped, -y_clean, y_clean)
    return Sample(X=X, y=y, y_clean=y_clean, flipped=flipped, cfg=cfg)


def sample_official(
    cfg: TokenData, n: int, *, label_noise: float, generator: np.random.Generator
) -> Sample:
    """Draw ``n`` sequences exactly as the official code's ``CustomDataset`` does.

    The noise is ``generator.standard_normal((n, T, d))`` (NumPy), then the signals are
    added and the labels flipped as in :func:`sample` with ``balanced=True``. The
    official code builds its training and its test set from generators with the same
    seed, so the first training sequences' noise reappears in the test set.

    Args:
        cfg: the data parameters; must have ``balanced`` and ``opposite_token`` True.
        n: number of sequences, n >= 2.
        label_noise: fraction eta of flipped labels, in [0, 1/2).
        generator: a NumPy Generator, e.g. ``np.random.default_rng(42)`` (the official
            seed).

    Returns:
        A :class:`Sample` with X of shape (n, T, d), float32, on the CPU.
    """
    _check_cfg(cfg)
    if not (cfg.balanced and cfg.opposite_token):
        raise ValueError(
            "cfg must have balanced=True and opposite_token=True (the official "
            f"data), got balanced={cfg.balanced}, opposite_token={cfg.opposite_token}"
        )
    if not isinstance(generator, np.random.Generator):
        raise TypeError(
            "generator must be a numpy.random.Generator, got "
            f"{type(generator).__name__}"
        )
    n = check_int(n, "n", min_value=2)
    label_noise = check_real(label_noise, "label_noise", min_value=0.0)
    if label_noise >= 0.5:
        raise ValueError(f"label_noise must be < 0.5, got {label_noise}")
    noise = generator.standard_normal((n, cfg.T, cfg.d)) * cfg.sigma  # (n, T, d)
    X = torch.tensor(noise, dtype=torch.float32)
    mu_plus, mu_minus = class_signals(cfg)
    y_clean = torch.cat([torch.ones(n // 2), -torch.ones(n - n // 2)])  # (n,)
    own = torch.where(y_clean[:, None] == 1, mu_plus, mu_minus)  # (n, d)
    other = torch.where(y_clean[:, None] == 1, mu_minus, mu_plus)  # (n, d)
    X[:, 0] += own
    X[:, 1] += cfg.rho * own
    X[:, 2] += cfg.rho * other
    n_flip = math.ceil(label_noise * n)
    flipped = torch.zeros(n, dtype=torch.bool)
    flipped[: n_flip // 2] = True
    flipped[n // 2 : n // 2 + n_flip // 2] = True
    y = torch.where(flipped, -y_clean, y_clean)
    return Sample(X=X, y=y, y_clean=y_clean, flipped=flipped, cfg=cfg)
