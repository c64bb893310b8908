"""Tests for flt_lib.flt.ntk: Jacobian and NTK against autograd, the arc-cosine limit, alpha scaling."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.flt import ntk
from flt_lib.stats import loglog_slope
from flt_lib.rng import torch_generator


def _setup(n=6, d=4, m=9, seed=0):
    g = torch_generator(seed)
    X, y, w = ntk.single_index_data(n, d, g)
    W, a = ntk.init_two_layer(d, m, g)
    return X.double(), y.double(), w.double(), W.double(), a.double()


def test_single_index_data_shapes_and_sphere():
    X, y, w = ntk.single_index_data(50, 7, torch_generator(1))
    assert X.shape == (50, 7) and y.shape == (50,) and w.shape == (7,)
    assert torch.allclose(X.norm(dim=1), torch.ones(50), atol=1e-5)
    z = math.sqrt(7) * X @ w
    assert torch.allclose(y, torch.relu(z) - 1 / math.sqrt(2 * math.pi), atol=1e-5)


def test_features_match_autograd():
    X, _, _, W, a = _setup()
    assert torch.allclose(ntk.ntk_features(X, W, a), ntk.jacobian_autograd(X, W, a), atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 12))
def test_empirical_ntk_is_jacobian_gram(seed, m):
    X, _, _, W, a = _setup(m=m, seed=seed)
    J = ntk.ntk_features(X, W, a)
    K = ntk.empirical_ntk(X, X, W, a)
    assert torch.allclose(K, J @ J.T, atol=1e-10)
    assert torch.allclose(K, K.T, atol=1e-12)


def test_two_layer_matches_loop():
    X, _, _, W, a = _setup()
    loop = torch.stack([sum(a[r] * torch.relu(W[r] @ x) for r in range(W.shape[0])) for x in X])
    assert torch.allclose(ntk.two_layer(X, W, a), loop / math.sqrt(W.shape[0]), atol=1e-12)


def test_kappa_endpoints_and_monte_carlo():
    u = torch.tensor([-1.0, 0.0, 1.0], dtype=torch.float64)
    assert torch.allclose(ntk.kappa(u), torch.tensor([0.0, 1 / math.pi, 2.0], dtype=torch.float64))
    # Infinite-width limit, and the 1/2 constant: a very wide empirical NTK is close to it.
    X, _, _, _, _ = _setup(n=5, d=3)
    W, a = ntk.init_two_layer(3, 200_000, torch_generator(3))
    K = ntk.empirical_ntk(X, X, W.double(), a.double())
    Ki = ntk.arccos_ntk(X, X)
    assert ((K - Ki).norm() / Ki.norm()).item() < 0.02


def test_ntk_convergence_rate():
    X, _, _, _, _ = _setup(n=6, d=4)
    Ki = ntk.arccos_ntk(X, X)
    ms, errs = [32, 128, 512, 2048], []
    for m in ms:
        e = 0.0
        for s in range(4):
            W, a = ntk.init_two_layer(4, m, torch_generator(100 + s))
            e += ((ntk.empirical_ntk(X, X, W.double(), a.double()) - Ki).norm() / Ki.norm()).item()
        errs.append(e / 4)
    slope, _ = loglog_slope(ms, errs)
    assert -0.7 < slope < -0.3


def test_kernel_regression_interpolates_and_ridge():
    X, y, _, _, _ = _setup(n=8, d=4)
    K = ntk.arccos_ntk(X, X)
    assert torch.allclose(ntk.kernel_regression(K, y, K), y, atol=1e-8)
    shrunk = ntk.kernel_regression(K, y, K, ridge=1e6)
    assert shrunk.abs().max().item() < 1e-4


def test_feature_alignment_bounds():
    w = torch.tensor([1.0, 0.0, 0.0])
    assert ntk.feature_alignment(torch.tensor([[2.0, 0, 0], [-1.0, 0, 0]]), w) == pytest.approx(1.0)
    assert ntk.feature_alignment(torch.tensor([[0.0, 1, 0]]), w) == pytest.approx(0.0)


def test_train_alpha_lazy_scaling_and_loss_decrease():
    g = torch_generator(2)
    X, y, w = ntk.single_index_data(30, 5, g)
    W, a = ntk.init_two_layer(5, 100, g)
    X, y, w, W, a = X.double(), y.double(), w.double(), W.double(), a.double()
    moves = {}
    for alpha in (4.0, 16.0):
        h = ntk.train_alpha(X, y, W, a, alpha, lr=1.0, steps=100, X_test=X, y_test=y, w_star=w)
        assert h["train_loss"][-1] < 0.2 * h["train_loss"][0]
        moves[alpha] = alpha * h["rel_move"][-1]
    assert moves[4.0] == pytest.approx(moves[16.0], rel=0.1)  # movement ~ 1/alpha in the lazy regime


def test_bad_inputs():
    X, y, w, W, a = _setup()
    with pytest.raises(ValueError, match="d = 4 columns"):
        ntk.two_layer(X[:, :3], W, a)
    with pytest.raises(ValueError, match="a must have shape"):
        ntk.ntk_features(X, W, a[:3])
    with pytest.raises(ValueError, match="alpha must be > 0"):
        ntk.train_alpha(X, y, W, a, 0.0, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="X_test and y_test"):
        ntk.train_alpha(X, y, W, a, 1.0, lr=0.1, steps=1, X_test=X)
    with pytest.raises(ValueError, match="no zero rows"):
        ntk.arccos_ntk(torch.zeros(2, 4), X)
    with pytest.raises(ValueError, match="ridge must be >= 0"):
        ntk.kernel_regression(torch.eye(6), y, torch.eye(6), ridge=-1.0)
    with pytest.raises(ValueError, match="unit norm"):
        ntk.single_index_data(3, 4, torch_generator(0), w_star=torch.ones(4))
    with pytest.raises(TypeError, match="generator"):
        ntk.init_two_layer(3, 4, 0)
    with pytest.raises(ValueError, match="w_star must have shape"):
        ntk.feature_alignment(W, torch.ones(3))
    with pytest.raises(TypeError, match="u must be a torch.Tensor"):
        ntk.kappa(0.5)
    with pytest.raises(ValueError, match="X must be a 2-D"):
        ntk.jacobian_autograd(X[0], W, a)
    with pytest.raises(ValueError, match="X2 must have d"):
        ntk.empirical_ntk(X, X[:, :2], W, a)


def test_kernel_gd_tends_to_kernel_regression_and_matches_lazy_net():
    X, y, _, _, _ = _setup(n=8, d=4)
    K = ntk.arccos_ntk(X, X)
    lr = 0.9 * 8 / torch.linalg.eigvalsh(K).max().item()
    assert torch.allclose(ntk.kernel_gd(K, y, K, lr=lr, steps=20000), ntk.kernel_regression(K, y, K), atol=1e-6)
    # a very lazy net (large alpha) follows kernel GD with its own initial kernel
    W, a = ntk.init_two_layer(4, 50, torch_generator(9))
    W, a = W.double(), a.double()
    K0 = ntk.empirical_ntk(X, X, W, a)
    h = ntk.train_alpha(X, y, W, a, 1000.0, lr=0.5, steps=50, X_test=X, y_test=y)
    assert torch.allclose(h["test_pred"], ntk.kernel_gd(K0, y, K0, lr=0.5, steps=50), atol=1e-4)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        ntk.kernel_gd(K, y, K, lr=0.1, steps=0)


@settings(max_examples=25, deadline=None)
@given(bits=st.integers(1, 10), radius=st.floats(0.1, 10.0), seed=st.integers(0, 1000))
def test_quantise_grid_properties(bits, radius, seed):
    t = 3 * torch.randn(50, generator=torch_generator(seed)).double()
    q = ntk.quantise(t, bits, radius)
    step = 2 * radius / (2**bits - 1)
    assert len(torch.unique(q)) <= 2**bits
    assert torch.allclose(ntk.quantise(q, bits, radius), q, atol=1e-9)  # idempotent
    inside = t.abs() <= radius
    assert ((q - t)[inside].abs() <= step / 2 + 1e-9).all()
    assert (q.abs() <= radius + 1e-9).all()


def test_occam_bound_formula_and_monte_carlo():
    assert ntk.occam_bound(10, 2, 100, 0.1) == pytest.approx(math.sqrt((20 * math.log(2) + math.log(10)) / 200))
    assert ntk.occam_bound(10, 2, 400, 0.1) < ntk.occam_bound(10, 2, 100, 0.1)
    # Monte Carlo: 16 threshold classifiers on x ~ U[0,1], label 1[x > 0.5]; 0-1 loss; |H| = 2^4.
    gen = torch_generator(0)
    thresholds = torch.linspace(0, 1, 16, dtype=torch.float64)
    risk = (thresholds - 0.5).abs()  # exact risk of 1[x > c]
    n, delta, trials, bad = 40, 0.1, 300, 0
    gap = ntk.occam_bound(1, 4, n, delta)
    for _ in range(trials):
        x = torch.rand(n, generator=gen, dtype=torch.float64)
        emp = ((x[None, :] > thresholds[:, None]) != (x > 0.5)[None, :]).double().mean(1)
        bad += int((risk > emp + gap).any())
    assert bad / trials <= delta


def test_quantise_and_occam_bad_inputs():
    with pytest.raises(ValueError, match="bits must be <= 24"):
        ntk.quantise(torch.zeros(3), 30, 1.0)
    with pytest.raises(ValueError, match="radius must be > 0"):
        ntk.quantise(torch.zeros(3), 8, 0.0)
    with pytest.raises(ValueError, match="delta must be < 1"):
        ntk.occam_bound(10, 8, 100, 1.0)
    with pytest.raises(ValueError, match="n must be >= 1"):
        ntk.occam_bound(10, 8, 0, 0.1)
