"""The two-patch data of Kou et al. (2023): x = [y_clean mu, xi], with flipped labels.

``sample_two_patch`` draws n examples for each of B signal vectors at once and returns a
``TwoPatchData``. Part of :mod:`flt_lib.flt.benign_cnn`, whose docstring describes the
whole setting.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = ["TwoPatchData", "sample_two_patch"]


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
