"""E(n)-equivariant graph networks for point clouds (Satorras, Hoogeboom & Welling 2021;
Section 6.9).

A batch of point clouds is ``x`` (B, n, D) (n points in R^D, one per row), with
invariant node features ``h`` (B, n, d_h) and, for dynamics, velocities ``v`` (B, n, D).

- :class:`EGNNLayer`, eq. ``eq-sym-egnn``: messages from invariants, coordinates moved
  along the differences ``x_i - x_j``
- :class:`EGNN`: a stack of layers that predicts positions from positions and
  velocities; :class:`CoordMPNN`: the same message passing on raw coordinates, the
  non-equivariant baseline
- :func:`spring_system`: a small N-body data set (particles joined by springs)
"""

from __future__ import annotations

import torch
from torch import nn

from flt_lib._validate import check_generator, check_int, check_real, check_tensor

__all__ = ["CoordMPNN", "EGNN", "EGNNLayer", "spring_system"]


def _mlp(
    sizes: list[int], generator: torch.Generator, dtype: torch.dtype
) -> nn.Sequential:
    layers: list[nn.Module] = []
    for k, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        lin = nn.Linear(a, b, dtype=dtype)
        with torch.no_grad():
            for t in (lin.weight, lin.bias):
                t.copy_(
                    (torch.rand(t.shape, generator=generator, dtype=dtype) * 2 - 1)
                    / a**0.5
                )
        layers += [lin, nn.SiLU()] if k < len(sizes) - 2 else [lin]
    return nn.Sequential(*layers)


def _egnn_update(layer: "EGNNLayer", h, x, v):
    """One EGNN layer, eq. ``eq-sym-egnn``. No argument checks: call the layer."""
    n = x.shape[1]
    diff = x[:, :, None] - x[:, None, :]  # x_i - x_j, (B, n, n, D)
    d2 = (diff**2).sum(-1, keepdim=True)  # ||x_i - x_j||^2
    hi, hj = (t.expand(-1, n, n, -1) for t in (h[:, :, None], h[:, None, :]))
    m = layer.phi_e(torch.cat([hi, hj, d2], dim=-1))  # m_ij, (B, n, n, H)
    m = m * (1 - torch.eye(n, dtype=x.dtype, device=x.device))[..., None]  # no j = i
    push = (diff * layer.phi_x(m)).sum(2) / (n - 1)  # C sum_j (x_i - x_j) phi_x
    v_new = layer.phi_v(h) * v + push  # velocity update
    x_new = x + v_new  # x_i' = x_i + v_i'
    h_new = h + layer.phi_h(
        torch.cat([h, m.sum(2)], dim=-1)
    )  # h_i' = h_i + phi_h(h_i, m_i)
    return h_new, x_new, v_new


class EGNNLayer(nn.Module):
    """One E(n)-equivariant layer with velocities (Satorras et al. 2021, eqs. 3-7)."""

    def __init__(
        self,
        d_h: int,
        hidden: int,
        *,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__()
        d_h = check_int(d_h, "d_h", min_value=1)
        hidden = check_int(hidden, "hidden", min_value=1)
        check_generator(generator)
        self.phi_e = _mlp([2 * d_h + 1, hidden, hidden], generator, dtype)
        self.phi_x = _mlp([hidden, hidden, 1], generator, dtype)
        self.phi_h = _mlp([d_h + hidden, hidden, d_h], generator, dtype)
        self.phi_v = _mlp([d_h, hidden, 1], generator, dtype)

    def forward(
        self, h: torch.Tensor, x: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(h (B, n, d_h), x (B, n, D), v (B, n, D)) -> the same three, updated."""
        h = check_tensor(h, "h", ndim=3, floating=True, shape_doc="(B, n, d_h)")
        x = check_tensor(
            x,
            "x",
            shape=(h.shape[0], h.shape[1], None),
            floating=True,
            shape_doc="(B, n, D)",
        )
        v = check_tensor(
            v, "v", shape=tuple(x.shape), floating=True, shape_doc="(B, n, D)"
        )
        if x.shape[1] < 2:
            raise ValueError(f"x must hold at least 2 points, got {x.shape[1]}")
        return _egnn_update(self, h, x, v)


class EGNN(nn.Module):
    """Predict positions from positions and velocities: ``h = ||v||``, then ``layers``
    EGNN layers; returns the final x, (B, n, D)."""

    def __init__(
        self,
        layers: int,
        hidden: int,
        *,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__()
        layers = check_int(layers, "layers", min_value=1)
        self.embed = _mlp([1, hidden], generator, dtype)
        self.layers = nn.ModuleList(
            [
                EGNNLayer(hidden, hidden, generator=generator, dtype=dtype)
                for _ in range(layers)
            ]
        )
        # the last layer's feature update never reaches the output positions: freeze it
        self.layers[-1].phi_h.requires_grad_(False)

    def forward(self, xv: torch.Tensor) -> torch.Tensor:
        """xv (B, n, 2D): positions and velocities side by side -> positions
        (B, n, D)."""
        xv = check_tensor(xv, "xv", ndim=3, floating=True, shape_doc="(B, n, 2D)")
        x, v = xv.chunk(2, dim=-1)
        h = self.embed(v.norm(dim=-1, keepdim=True))  # an invariant input feature
        for layer in self.layers:
            h, x, v = layer(h, x, v)
        return x


class CoordMPNN(nn.Module):
    """The non-equivariant baseline: message passing on the complete graph with raw
    positions and velocities as node features, predicting a displacement, (B, n, D)."""

    def __init__(
        self,
        layers: int,
        hidden: int,
        D: int = 3,
        *,
        generator: torch.Generator,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__()
        layers = check_int(layers, "layers", min_value=1)
        D = check_int(D, "D", min_value=1)
        self.embed = _mlp([2 * D, hidden], generator, dtype)
        self.phi_e = nn.ModuleList(
            [
                _mlp([2 * hidden, hidden, hidden], generator, dtype)
                for _ in range(layers)
            ]
        )
        self.phi_h = nn.ModuleList(
            [
                _mlp([2 * hidden, hidden, hidden], generator, dtype)
                for _ in range(layers)
            ]
        )
        self.out = _mlp([hidden, hidden, D], generator, dtype)

    def forward(self, xv: torch.Tensor) -> torch.Tensor:
        """xv (B, n, 2D) -> positions (B, n, D)."""
        xv = check_tensor(xv, "xv", ndim=3, floating=True, shape_doc="(B, n, 2D)")
        n, h = xv.shape[1], self.embed(xv)
        off = (1 - torch.eye(n, dtype=xv.dtype, device=xv.device))[..., None]
        for phi_e, phi_h in zip(self.phi_e, self.phi_h):
            hi, hj = h[:, :, None].expand(-1, n, n, -1), h[:, None, :].expand(
                -1, n, n, -1
            )
            m = (phi_e(torch.cat([hi, hj], dim=-1)) * off).sum(2)
            h = h + phi_h(torch.cat([h, m], dim=-1))
        return xv[..., : xv.shape[-1] // 2] + self.out(h)


def spring_system(
    n_systems: int,
    n_particles: int,
    *,
    generator: torch.Generator,
    D: int = 3,
    t_end: float = 1.0,
    dt: float = 0.01,
    rest_length: float = 1.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Particles joined pairwise by springs of rest length ``rest_length``, integrated
    by leapfrog from random positions N(0, I) and velocities N(0, I/4).

    Args:
        n_systems: number of systems B, >= 1.
        n_particles: particles per system n, >= 2.
        generator: a CPU torch.Generator.
        D: space dimension.
        t_end, dt: integration time and step, > 0.
        rest_length: rest length of every spring, >= 0.

    Returns:
        ``(xv, x_end)``: float64 (B, n, 2D) initial positions and velocities, and
        (B, n, D) positions at ``t_end``.
    """
    B = check_int(n_systems, "n_systems", min_value=1)
    n = check_int(n_particles, "n_particles", min_value=2)
    D = check_int(D, "D", min_value=1)
    t_end = check_real(t_end, "t_end", min_value=0.0, strict_min=True)
    dt = check_real(dt, "dt", min_value=0.0, strict_min=True)
    L = check_real(rest_length, "rest_length", min_value=0.0)
    check_generator(generator)
    x = torch.randn(B, n, D, generator=generator, dtype=torch.float64)
    v = 0.5 * torch.randn(B, n, D, generator=generator, dtype=torch.float64)
    xv0 = torch.cat([x, v], dim=-1)

    def force(x: torch.Tensor) -> torch.Tensor:
        diff = x[:, :, None] - x[:, None, :]  # (B, n, n, D)
        dist = diff.norm(dim=-1, keepdim=True).clamp_min(1e-12)
        return -((dist - L) * diff / dist).sum(2)  # spring constant 1

    for _ in range(round(t_end / dt)):
        v = v + 0.5 * dt * force(x)
        x = x + dt * v
        v = v + 0.5 * dt * force(x)
    return xv0, x
