"""Tests for flt_lib.flt.ntk: Jacobians and NTKs against autograd, infinite-width limits, alpha scaling."""

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
    X, y, w = ntk.single_index_data(n, d, generator=g)
    W, a = ntk.init_two_layer(d, m, generator=g)
    return X.double(), y.double(), w.double(), W.double(), a.double()


def test_single_index_data_shapes_and_sphere():
    X, y, w = ntk.single_index_data(50, 7, generator=torch_generator(1))
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
    W, a = ntk.init_two_layer(3, 50_000, generator=torch_generator(3))
    K = ntk.empirical_ntk(X, X, W.double(), a.double())
    Ki = ntk.arccos_ntk(X, X)
    assert ((K - Ki).norm() / Ki.norm()).item() < 0.03


def test_ntk_convergence_rate():
    X, _, _, _, _ = _setup(n=6, d=4)
    Ki = ntk.arccos_ntk(X, X)
    ms, errs = [32, 128, 512, 2048], []
    for m in ms:
        e = 0.0
        for s in range(4):
            W, a = ntk.init_two_layer(4, m, generator=torch_generator(100 + s))
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
    X, y, w = ntk.single_index_data(30, 5, generator=g)
    W, a = ntk.init_two_layer(5, 100, generator=g)
    X, y, w, W, a = X.double(), y.double(), w.double(), W.double(), a.double()
    moves = {}
    for alpha in (4.0, 16.0):
        h = ntk.train_alpha(X, y, W, a, alpha=alpha, lr=1.0, steps=100, X_test=X, y_test=y,
                            w_star=w)
        assert isinstance(h, ntk.AlphaHistory) and h.steps == [0, 100]
        assert h.train_loss[-1] < 0.2 * h.train_loss[0]
        assert len(h.alignment) == len(h.test_mse) == 2
        moves[alpha] = alpha * h.rel_move[-1]
    assert moves[4.0] == pytest.approx(moves[16.0], rel=0.1)  # movement ~ 1/alpha in the lazy regime


def test_bad_inputs():
    X, y, w, W, a = _setup()
    with pytest.raises(ValueError, match="d = 4 columns"):
        ntk.two_layer(X[:, :3], W, a)
    with pytest.raises(ValueError, match="a must have shape"):
        ntk.ntk_features(X, W, a[:3])
    with pytest.raises(ValueError, match="alpha must be > 0"):
        ntk.train_alpha(X, y, W, a, alpha=0.0, lr=0.1, steps=1)
    with pytest.raises(ValueError, match="X_test and y_test"):
        ntk.train_alpha(X, y, W, a, alpha=1.0, lr=0.1, steps=1, X_test=X)
    with pytest.raises(ValueError, match="no zero rows"):
        ntk.arccos_ntk(torch.zeros(2, 4), X)
    with pytest.raises(ValueError, match="ridge must be >= 0"):
        ntk.kernel_regression(torch.eye(6), y, torch.eye(6), ridge=-1.0)
    with pytest.raises(ValueError, match="unit norm"):
        ntk.single_index_data(3, 4, generator=torch_generator(0), w_star=torch.ones(4))
    with pytest.raises(TypeError, match="generator"):
        ntk.init_two_layer(3, 4, generator=0)
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
    assert torch.allclose(ntk.kernel_gd(K, y, K, lr=lr, steps=4000),
                          ntk.kernel_regression(K, y, K), atol=1e-4)
    # a very lazy net (large alpha) follows kernel GD with its own initial kernel
    W, a = ntk.init_two_layer(4, 50, generator=torch_generator(9))
    W, a = W.double(), a.double()
    K0 = ntk.empirical_ntk(X, X, W, a)
    h = ntk.train_alpha(X, y, W, a, alpha=1000.0, lr=0.5, steps=50, X_test=X, y_test=y)
    assert torch.allclose(h.test_pred, ntk.kernel_gd(K0, y, K0, lr=0.5, steps=50), atol=1e-4)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        ntk.kernel_gd(K, y, K, lr=0.1, steps=0)


@settings(max_examples=25, deadline=None)
@given(bits=st.integers(1, 10), radius=st.floats(0.1, 10.0), seed=st.integers(0, 1000))
def test_quantise_grid_properties(bits, radius, seed):
    t = 3 * torch.randn(50, generator=torch_generator(seed)).double()
    q = ntk.quantise(t, bits=bits, radius=radius)
    step = 2 * radius / (2**bits - 1)
    assert len(torch.unique(q)) <= 2**bits
    assert torch.allclose(ntk.quantise(q, bits=bits, radius=radius), q, atol=1e-9)  # idempotent
    inside = t.abs() <= radius
    assert ((q - t)[inside].abs() <= step / 2 + 1e-9).all()
    assert (q.abs() <= radius + 1e-9).all()


def test_occam_bound_formula_and_monte_carlo():
    bound = ntk.occam_bound(10, bits=2, n=100, delta=0.1)
    assert bound == pytest.approx(math.sqrt((20 * math.log(2) + math.log(10)) / 200))
    assert ntk.occam_bound(10, bits=2, n=400, delta=0.1) < bound
    # Monte Carlo: 16 threshold classifiers on x ~ U[0,1], label 1[x > 0.5]; 0-1 loss; |H| = 2^4.
    gen = torch_generator(0)
    thresholds = torch.linspace(0, 1, 16, dtype=torch.float64)
    risk = (thresholds - 0.5).abs()  # exact risk of 1[x > c]
    n, delta, trials, bad = 40, 0.1, 300, 0
    gap = ntk.occam_bound(1, bits=4, n=n, delta=delta)
    for _ in range(trials):
        x = torch.rand(n, generator=gen, dtype=torch.float64)
        emp = ((x[None, :] > thresholds[:, None]) != (x > 0.5)[None, :]).double().mean(1)
        bad += int((risk > emp + gap).any())
    assert bad / trials <= delta


def test_quantise_and_occam_bad_inputs():
    with pytest.raises(ValueError, match="bits must be <= 24"):
        ntk.quantise(torch.zeros(3), bits=30, radius=1.0)
    with pytest.raises(ValueError, match="radius must be > 0"):
        ntk.quantise(torch.zeros(3), bits=8, radius=0.0)
    with pytest.raises(ValueError, match="delta must be < 1"):
        ntk.occam_bound(10, bits=8, n=100, delta=1.0)
    with pytest.raises(ValueError, match="n must be >= 1"):
        ntk.occam_bound(10, bits=8, n=0, delta=0.1)


def _deep_jacobian(X, weights):
    """Oracle: the parameter Jacobian of deep_relu_net by autograd, one row per input."""
    ws = [w.detach().clone().requires_grad_(True) for w in weights]
    rows = []
    for i in range(X.shape[0]):
        grads = torch.autograd.grad(ntk.deep_relu_net(X[i : i + 1], ws).sum(), ws)
        rows.append(torch.cat([g.reshape(-1) for g in grads]))
    return torch.stack(rows)


@pytest.mark.parametrize("depth", [2, 3, 4])
def test_deep_empirical_ntk_is_jacobian_gram(depth):
    X, _, _, _, _ = _setup(n=5, d=4)
    ws = [w.double() for w in ntk.init_deep(4, 6, depth=depth, generator=torch_generator(depth))]
    J = _deep_jacobian(X, ws)
    torch.testing.assert_close(ntk.deep_empirical_ntk(X, X, ws), J @ J.T)
    if depth == 2:  # the two-layer network of Section 7.2, in both codes
        torch.testing.assert_close(ntk.deep_relu_net(X, ws), ntk.two_layer(X, ws[0], ws[1]))


def test_relu_ntk_recursion_depth_two_is_arccos_and_depth_three_is_the_limit():
    X, _, _, _, _ = _setup(n=6, d=4)
    torch.testing.assert_close(ntk.relu_ntk(X, X, depth=2), ntk.arccos_ntk(X, X))
    torch.testing.assert_close(ntk.relu_ntk(X, X, depth=1), X @ X.T)
    # a wide depth-3 network is close to the recursion (the m^(-1/2) rate is in the notebook)
    ws = [w.double() for w in ntk.init_deep(4, 2000, depth=3, generator=torch_generator(5))]
    K, Ki = ntk.deep_empirical_ntk(X, X, ws), ntk.relu_ntk(X, X, depth=3)
    assert ((K - Ki).norm() / Ki.norm()).item() < 0.08


def test_broken_variant_fails_the_deep_convergence_check():
    """The notebook's check compares a wide depth-3 net with relu_ntk(depth=3); with a wrong
    limit (one layer too few) the relative error stays large, so the check would fail."""
    X, _, _, _, _ = _setup(n=6, d=4)
    ws = [w.double() for w in ntk.init_deep(4, 2000, depth=3, generator=torch_generator(5))]
    K, wrong = ntk.deep_empirical_ntk(X, X, ws), ntk.relu_ntk(X, X, depth=2)
    assert ((K - wrong).norm() / wrong.norm()).item() > 0.2


def test_deep_bad_inputs():
    X, _, _, _, _ = _setup(n=3, d=4)
    with pytest.raises(ValueError, match="depth must be >= 2"):
        ntk.init_deep(4, 5, depth=1, generator=torch_generator(0))
    ws = ntk.init_deep(4, 5, depth=3, generator=torch_generator(0))
    with pytest.raises(ValueError, match=r"X must have shape \(n, d\)"):
        ntk.deep_relu_net(X[:, :3].float(), ws)
    with pytest.raises(ValueError, match=r"weights\[1\] must have shape \(m, m\)"):
        ntk.deep_relu_net(X.float(), [ws[0], torch.ones(5, 4), ws[2]])
    with pytest.raises(TypeError, match="weights must be a list"):
        ntk.deep_empirical_ntk(X, X, ws[0])
    with pytest.raises(ValueError, match="depth must be >= 1"):
        ntk.relu_ntk(X, X, depth=0)


def _witness(alpha, steps):
    """Section 7.1's check: the class fits shuffled labels (train risk small, test risk large),
    so a class-only bound must exceed that gap; returns (gap_true, train_rand, gap_rand)."""
    gen = torch_generator(0)
    X, y, w = ntk.single_index_data(150, 20, generator=gen)
    Xt, yt, _ = ntk.single_index_data(500, 20, generator=gen, w_star=w)
    W0, a0 = ntk.init_two_layer(20, 100, generator=torch_generator(1))
    X, y, Xt, yt, W0, a0 = (t.double() for t in (X, y, Xt, yt, W0, a0))
    clip = lambda p, t: (p - t).pow(2).clamp(max=1.0).mean().item()  # noqa: E731
    risks = []
    for yy, yyt in [(y, yt), (y[torch.randperm(150, generator=torch_generator(2))],
                              yt[torch.randperm(500, generator=torch_generator(3))])]:
        h = ntk.train_alpha(X, yy, W0, a0, alpha=alpha, lr=2.0, steps=steps)
        f = lambda Z: alpha * (ntk.two_layer(Z, h.W, h.a) - ntk.two_layer(Z, W0, a0))  # noqa
        risks.append((clip(f(X), yy), clip(f(Xt), yyt)))
    (tr, te), (tr_r, te_r) = risks
    return te - tr, tr_r, te_r - tr_r


def _uniform_bound_check(gap_true, train_rand, gap_rand):
    return train_rand < 0.05 and gap_rand > 20 * gap_true


def test_shuffled_labels_defeat_uniform_bounds():
    """Section 7.1 (500 of its 1000 steps): the rich network fits shuffled labels."""
    assert _uniform_bound_check(*_witness(alpha=0.03, steps=500))


def test_broken_variant_fails_the_uniform_convergence_check():
    """A class that cannot fit shuffled labels (lazy, alpha = 30, 100 steps) fails the check."""
    gap_true, train_rand, gap_rand = _witness(alpha=30.0, steps=100)
    assert not _uniform_bound_check(gap_true, train_rand, gap_rand), (train_rand, gap_rand)
