import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.rng import torch_generator
from flt_lib.symmetry import groups, sets



def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch_generator(seed), dtype=torch.float64)


def test_aggregators():
    a, b = _rand(3), _rand(3, seed=1)
    S1, S2 = torch.stack([a, a, b, b])[None], torch.stack([a, b])[None]
    assert torch.equal(sets.aggregate(S1, "max"), sets.aggregate(S2, "max"))
    torch.testing.assert_close(sets.aggregate(S1, "mean"), sets.aggregate(S2, "mean"))
    torch.testing.assert_close(sets.aggregate(S1, "sum"), 2 * sets.aggregate(S2, "sum"))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 9))
def test_models_are_invariant_or_equivariant_under_random_permutations(seed, n):
    g = torch_generator(seed)
    X = torch.randn(3, n, 2, generator=g, dtype=torch.float64)
    p = groups.random_permutation(n, generator=g)
    deep = sets.DeepSets(2, 4, 1, width=8, generator=g, dtype=torch.float64)
    layer = sets.EquivariantLinear(2, 3, generator=g, dtype=torch.float64)
    point = sets.PointNet(2, 6, 1, width=8, generator=g, dtype=torch.float64)
    assert groups.invariance_error(deep, X, p, dim=1) < 1e-12
    assert groups.equivariance_error(layer, X, p, dim=1) < 1e-12
    assert torch.equal(point.global_feature(X[:, p]), point.global_feature(X))


def test_equivariant_layer_is_lambda_I_plus_gamma_11T():
    layer = sets.EquivariantLinear(1, 1, generator=torch_generator(0), dtype=torch.float64)
    lam, gam = layer.Lambda.item(), layer.Gamma.item()
    x = _rand(1, 5, 1)
    M = lam * torch.eye(5, dtype=torch.float64) + gam * torch.ones(5, 5, dtype=torch.float64)
    torch.testing.assert_close(layer(x)[0, :, 0], M @ x[0, :, 0])


def test_critical_set_theorem():
    net = sets.PointNet(2, 8, 1, generator=torch_generator(0), dtype=torch.float64)
    X = _rand(1, 50, 2, seed=1)
    with torch.no_grad():
        crit = sets.critical_points(net.point_features(X)[0])
        assert len(crit) <= 8
        assert torch.equal(net.global_feature(X[:, crit]), net.global_feature(X))
        extra = torch.unique(torch.cat([crit, torch.arange(10)]))
        assert torch.equal(net.global_feature(X[:, extra]), net.global_feature(X))


def test_equivariant_dimensions_three_ways():
    assert [sets.bell_number(k) for k in range(6)] == [1, 1, 2, 5, 15, 52]
    for n in range(2, 6):
        assert sets.equivariant_basis(n, 1, 1).shape[0] == sets.reynolds_dimension(n, 1, 1) == 2
        assert sets.equivariant_basis(n, 1, 0).shape[0] == sets.reynolds_dimension(n, 1, 0) == 1
    for n in (2, 3, 4):
        dim = sets.equivariant_basis(n, 2, 2).shape[0]
        assert dim == sets.reynolds_dimension(n, 2, 2) == sets.partition_count(4, n)
    assert sets.reynolds_dimension(4, 2, 2) == 15 and sets.partition_count(4, 3) == 14
    B = sets.equivariant_basis(4, 1, 1).reshape(2, -1)
    eye = torch.eye(4, dtype=torch.float64).flatten()
    torch.testing.assert_close(B.T @ (B @ eye), eye)


def test_power_sums_recover_the_set_and_knn():
    x = torch.tensor([0.5, -0.25, 0.9, 0.1], dtype=torch.float64)
    p = sets.power_sums(x[None], 4)[0]
    torch.testing.assert_close(p[1], (x**2).sum())
    torch.testing.assert_close(sets.set_from_power_sums(p), torch.sort(x).values)
    Z = _rand(30, 2)
    y = Z[:, 0] * 2
    torch.testing.assert_close(sets.knn_regress(Z, y, Z[:5], 1), y[:5])


def test_deep_sets_learns_a_sum():
    X = _rand(64, 4, 1)
    y = X.sum(dim=(1, 2))[:, None]
    model = sets.DeepSets(1, 2, 1, width=8, generator=torch_generator(1), dtype=torch.float64)
    from flt_lib.symmetry import train
    res = train.fit(model, X, y, task="regression", lr=0.01, steps=150, X_test=X, y_test=y)
    assert res.test_metric < 0.05 * y.var().item()


def test_bad_inputs():
    with pytest.raises(ValueError, match="X must be a 3-D tensor"):
        sets.aggregate(_rand(3, 2), "sum")
    with pytest.raises(ValueError, match="kind must be one of"):
        sets.aggregate(_rand(1, 3, 2), "median")
    with pytest.raises(ValueError, match="latent must be >= 1"):
        sets.DeepSets(2, 0, 1, generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        sets.EquivariantLinear(2, 2, generator=1)
    with pytest.raises(ValueError, match="K must be >= 1"):
        sets.PointNet(2, 0, 1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="features must be a 2-D tensor"):
        sets.critical_points(_rand(3))
    with pytest.raises(ValueError, match="k must be <= 30"):
        sets.bell_number(31)
    with pytest.raises(ValueError, match="max_blocks must be >= 0"):
        sets.partition_count(3, -1)
    with pytest.raises(ValueError, match="n must be <= 8"):
        sets.reynolds_dimension(9, 1, 1)
    with pytest.raises(ValueError, match="must be <= 1296"):
        sets.equivariant_basis(7, 2, 2)
    with pytest.raises(ValueError, match="L must be >= 1"):
        sets.power_sums(_rand(2, 3), 0)
    with pytest.raises(ValueError, match="p must be a 1-D tensor"):
        sets.set_from_power_sums(_rand(2, 2))
    with pytest.raises(ValueError, match="k must be <= 3"):
        sets.knn_regress(_rand(3, 2), _rand(3), _rand(1, 2), 4)
    with pytest.raises(ValueError, match="Z_test must have shape"):
        sets.knn_regress(_rand(3, 2), _rand(3), _rand(1, 3), 1)
