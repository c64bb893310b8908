"""Continuous rotations: irreducible representations of SO(2) and steerable filters
(Section 6.8).

- :func:`so2_irrep`: the real irreducible representations of SO(2): 1 for frequency 0,
  the 2 x 2 rotation by ``m theta`` for frequency m >= 1
- :func:`circular_harmonics`: the filters ``R(r) (cos m phi, sin m phi)`` sampled on a
  k x k grid; a rotated copy is a combination of the two (Freeman & Adelson 1991)
- :func:`ring_kernel_basis`: the kernels on a ring of M angles that satisfy the
  steerability constraint ``kappa(R x) = rho_out(R) kappa(x) rho_in(R)^T``, solved
  numerically with :func:`flt_lib.symmetry.group_conv.commutant_basis`
"""

from __future__ import annotations

import math

import torch

from flt_lib._validate import check_int, check_real, check_tensor
from flt_lib.symmetry.group_conv import action_matrix, commutant_basis

__all__ = [
    "circular_harmonics",
    "ring_kernel_basis",
    "rotated_harmonic",
    "so2_irrep",
    "steer",
]


def so2_irrep(m: int, theta: float) -> torch.Tensor:
    """The real irreducible representation of SO(2) of frequency m at angle theta.

    Args:
        m: frequency, >= 0.
        theta: angle in radians.

    Returns:
        float64 (1, 1) (the number 1) for m = 0, else the rotation by ``m theta``,
        (2, 2).
    """
    m = check_int(m, "m", min_value=0)
    theta = check_real(theta, "theta")
    if m == 0:
        return torch.ones(1, 1, dtype=torch.float64)
    c, s = math.cos(m * theta), math.sin(m * theta)
    return torch.tensor([[c, -s], [s, c]], dtype=torch.float64)


def _grid(k: int) -> tuple[torch.Tensor, torch.Tensor]:
    u = torch.arange(k, dtype=torch.float64) - (k - 1) / 2
    yy, xx = torch.meshgrid(-u, u, indexing="ij")  # row 0 at the top: y up
    return xx, yy


def _harmonic(k: int, m: int, sigma: float, theta: float) -> torch.Tensor:
    """``R(r) [cos m(phi - theta), sin m(phi - theta)]`` on the k x k grid; no
    checks."""
    xx, yy = _grid(k)
    r, phi = torch.hypot(xx, yy), torch.atan2(yy, xx)
    radial = r**m * torch.exp(-(r**2) / (2 * sigma**2))  # R(r), smooth at r = 0
    return torch.stack(
        [radial * torch.cos(m * (phi - theta)), radial * torch.sin(m * (phi - theta))]
    )  # (2, k, k)


def circular_harmonics(k: int, m: int, *, sigma: float = 1.0) -> torch.Tensor:
    """The circular harmonic filters of frequency m, ``R(r) cos(m phi)`` and
    ``R(r) sin(m phi)`` with ``R(r) = r^m exp(-r^2 / (2 sigma^2))``, on a k x k grid.

    Args:
        k: filter size, odd, >= 3.
        m: angular frequency, >= 0.
        sigma: width of the radial profile, > 0.

    Returns:
        float64 (2, k, k) for m >= 1, (1, k, k) for m = 0.
    """
    k = check_int(k, "k", min_value=3)
    if k % 2 == 0:
        raise ValueError(f"k must be odd, got {k}")
    m = check_int(m, "m", min_value=0)
    sigma = check_real(sigma, "sigma", min_value=0.0, strict_min=True)
    out = _harmonic(k, m, sigma, 0.0)
    return out[:1] if m == 0 else out


def rotated_harmonic(
    k: int, m: int, theta: float, *, sigma: float = 1.0
) -> torch.Tensor:
    """The cosine harmonic rotated by theta, ``psi(R_{-theta} x) = R(r) cos m(phi -
    theta)``, sampled directly at the grid points (no interpolation), (k, k)."""
    basis = circular_harmonics(k, m, sigma=sigma)  # checks k, m, sigma
    theta = check_real(theta, "theta")
    return _harmonic(k, m, sigma, theta)[0] if m else basis[0]


def steer(responses: torch.Tensor, m: int, theta: float) -> torch.Tensor:
    """The response to the filter rotated by theta, from the responses to the two basis
    filters: ``cos(m theta) r_cos + sin(m theta) r_sin`` (eq. ``eq-sym-steer``).

    Args:
        responses: the responses to ``circular_harmonics(k, m)``, (2, ...).
        m: the frequency, >= 1.
        theta: the angle.

    Returns:
        (...).
    """
    responses = check_tensor(responses, "responses", floating=True)
    if responses.ndim < 1 or responses.shape[0] != 2:
        raise ValueError(
            f"responses must stack the two basis responses on dim 0, got shape "
            f"{tuple(responses.shape)}"
        )
    m = check_int(m, "m", min_value=1)
    theta = check_real(theta, "theta")
    return math.cos(m * theta) * responses[0] + math.sin(m * theta) * responses[1]


def ring_kernel_basis(m_in: int, m_out: int, n_angles: int) -> torch.Tensor:
    """All kernels on a ring of ``n_angles`` equally spaced angles with
    ``kappa(phi + a) = rho_out(a) kappa(phi) rho_in(a)^T`` for the step ``a = 2 pi /
    n_angles``, from a null-space solve.

    Args:
        m_in, m_out: frequencies of the input and output fields, >= 0.
        n_angles: number of sample angles M, 3 <= M <= 64.

    Returns:
        float64 (dim, M, d_out, d_in), with d = 1 for frequency 0 and 2 otherwise.
    """
    m_in = check_int(m_in, "m_in", min_value=0)
    m_out = check_int(m_out, "m_out", min_value=0)
    M = check_int(n_angles, "n_angles", min_value=3, max_value=64)
    a = 2 * math.pi / M
    r_in, r_out = so2_irrep(m_in, a), so2_irrep(m_out, a)
    shape = (M, r_out.shape[0], r_in.shape[0])
    # (T kappa)(phi_j) = rho_out(a) kappa(phi_{j-1}) rho_in(a)^T; solve T kappa = kappa
    step = lambda K: r_out @ torch.roll(K, 1, dims=0) @ r_in.T
    T = action_matrix(step, shape)
    basis = commutant_basis([(T, torch.ones(1, 1, dtype=torch.float64))])
    return basis[:, :, 0].reshape(-1, *shape)
