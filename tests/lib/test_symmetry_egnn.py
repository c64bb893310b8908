import pytest
import torch

from flt_lib.rng import torch_generator
from flt_lib.symmetry import egnn, groups, orthogonal


@pytest.mark.parametrize("D", [2, 3, 5])
def test_egnn_is_en_and_permutation_equivariant(D):
    g = torch_generator(D)
    xv, _ = egnn.spring_system(3, 6, generator=g, D=D, t_end=0.1)
    net = egnn.EGNN(2, 8, generator=torch_generator(1))
    x, v = xv.chunk(2, dim=-1)
    for _ in range(5):
        Q = orthogonal.random_orthogonal(D, generator=g)
        Q[:, 0] *= -1 if torch.det(Q) > 0 else 1  # always a reflection
        t = torch.randn(D, generator=g, dtype=torch.float64)
        p = groups.random_permutation(6, generator=g)
        moved = torch.cat([x @ Q.T + t, v @ Q.T], dim=-1)[:, p]
        assert (net(moved) - (net(xv) @ Q.T + t)[:, p]).abs().max() < 1e-12


def test_coordinate_baseline_is_permutation_but_not_rotation_equivariant():
    g = torch_generator(0)
    xv, _ = egnn.spring_system(2, 5, generator=g, t_end=0.1)
    net = egnn.CoordMPNN(2, 8, generator=torch_generator(1))
    p = groups.random_permutation(5, generator=g)
    assert (net(xv[:, p]) - net(xv)[:, p]).abs().max() < 1e-12
    Q = orthogonal.random_orthogonal(3, generator=g)
    x, v = xv.chunk(2, dim=-1)
    assert (net(torch.cat([x @ Q.T, v @ Q.T], -1)) - net(xv) @ Q.T).abs().max() > 1e-3


def test_spring_system_conserves_energy_and_momentum():
    xv, x_end = egnn.spring_system(
        4, 5, generator=torch_generator(2), t_end=0.5, dt=0.001
    )
    x0 = xv[..., :3]
    # total momentum is conserved, so the centre of mass moves at constant velocity
    com0, com1 = x0.mean(1), x_end.mean(1)
    torch.testing.assert_close(com1, com0 + 0.5 * xv[..., 3:].mean(1))


def test_egnn_layer_matches_double_loop():
    layer = egnn.EGNNLayer(3, 5, generator=torch_generator(0))
    g = torch_generator(1)
    h, x, v = (
        torch.randn(2, 4, k, generator=g, dtype=torch.float64) for k in (3, 2, 2)
    )
    h1, x1, v1 = layer(h, x, v)
    for i in range(4):
        push = (
            sum(
                (x[:, i] - x[:, j])
                * layer.phi_x(
                    layer.phi_e(
                        torch.cat(
                            [
                                h[:, i],
                                h[:, j],
                                ((x[:, i] - x[:, j]) ** 2).sum(-1, keepdim=True),
                            ],
                            -1,
                        )
                    )
                )
                for j in range(4)
                if j != i
            )
            / 3
        )
        torch.testing.assert_close(v1[:, i], layer.phi_v(h[:, i]) * v[:, i] + push)
        torch.testing.assert_close(x1[:, i], x[:, i] + v1[:, i])


def test_bad_inputs():
    layer = egnn.EGNNLayer(3, 5, generator=torch_generator(0))
    with pytest.raises(ValueError, match="h must be a 3-D tensor"):
        layer(
            torch.zeros(4, 3, dtype=torch.float64),
            torch.zeros(1, 4, 2),
            torch.zeros(1, 4, 2),
        )
    with pytest.raises(ValueError, match="v must have shape"):
        layer(
            torch.zeros(1, 4, 3, dtype=torch.float64),
            torch.zeros(1, 4, 2, dtype=torch.float64),
            torch.zeros(1, 4, 3, dtype=torch.float64),
        )
    with pytest.raises(ValueError, match="at least 2 points"):
        z = torch.zeros(1, 1, 3, dtype=torch.float64)
        layer(z, z[..., :2], z[..., :2])
    with pytest.raises(ValueError, match="n_particles"):
        egnn.spring_system(2, 1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="layers"):
        egnn.EGNN(0, 4, generator=torch_generator(0))
