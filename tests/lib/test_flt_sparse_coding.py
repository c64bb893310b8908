"""Tests for flt_lib.flt.sparse_coding: data model, symmetric ReLU network, GD and the alignment statistics."""

import math
from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.flt import sparse_coding as sc
from flt_lib.rng import torch_generator



def _problem(n=500, seed=0, cfg=sc.SparseCodingConfig()):
    g = torch_generator(seed)
    M = sc.random_dictionary(cfg.d, generator=g)
    w_star = torch.randint(0, 2, (cfg.d,), generator=g).float() * 2 - 1
    X, y, Z = sc.sample_sparse_coding(n, M, w_star, k=cfg.k, sigma_xi=cfg.sigma_xi, generator=g)
    return g, M, w_star, X, y, Z


@settings(max_examples=15, deadline=None)
@given(d=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_dictionary_is_orthonormal(d, seed):
    M = sc.random_dictionary(d, generator=torch_generator(seed))
    assert torch.allclose(M.T @ M, torch.eye(d), atol=1e-5)


@settings(max_examples=15, deadline=None)
@given(k=st.integers(1, 8), seed=st.integers(0, 10_000))
def test_codes_are_k_sparse_signs_and_labels_follow_w_star(k, seed):
    g = torch_generator(seed)
    M = sc.random_dictionary(8, generator=g)
    w_star = torch.randn(8, generator=g)
    X, y, Z = sc.sample_sparse_coding(20, M, w_star, k=k, sigma_xi=0.0, generator=g)
    assert ((Z != 0).sum(dim=1) == k).all()
    assert set(Z[Z != 0].unique().tolist()) <= {-1.0, 1.0}
    assert torch.allclose(X, Z @ M.T, atol=1e-6)  # no noise: x = M z exactly
    assert torch.equal(y, torch.where(Z @ w_star >= 0, 1.0, -1.0))


def test_network_matches_loop_and_is_linear_without_bias():
    g = torch_generator(1)
    X, W, b = torch.randn(7, 5, generator=g), torch.randn(4, 5, generator=g), torch.rand(4, generator=g)
    loop = torch.tensor([
        sum(max(0.0, (W[i] @ x).item() - b[i].item()) - max(0.0, -(W[i] @ x).item() - b[i].item()) for i in range(4))
        for x in X
    ])
    assert torch.allclose(sc.symmetric_relu_net(X, W, b), loop, atol=1e-5)
    assert torch.allclose(sc.symmetric_relu_net(X, W, torch.zeros(4)), X @ W.sum(0), atol=1e-5)


def test_purity_extremes():
    d = 16
    pure = torch.zeros(2, d)
    pure[0, 3], pure[1, 7] = 2.0, -0.5
    assert torch.allclose(sc.purity(pure), torch.ones(2))
    assert sc.purity(torch.ones(1, d)).item() == pytest.approx(1 / math.sqrt(d))


def test_gd_step_matches_autograd():
    cfg = sc.SparseCodingConfig(d=8, m=5, steps=1, sigma0=0.3, lr=0.7)
    _, M, _, X, y, _ = _problem(n=40, cfg=cfg)
    hist = sc.train_symmetric_net(X, y, M, cfg, generator=torch_generator(3))
    W0 = hist.W0.clone().requires_grad_(True)
    b = (cfg.beta * W0.norm(dim=1)).detach()  # the bias is held fixed inside a step
    loss = torch.nn.functional.softplus(-y * sc.symmetric_relu_net(X, W0, b)).mean()
    (grad,) = torch.autograd.grad(loss, W0)
    assert torch.allclose(hist.W, hist.W0 - cfg.lr * grad, atol=1e-6)
    assert torch.allclose(hist.A[0], hist.W0 @ M, atol=1e-6)


def test_winner_rank_matches_brute_force():
    g = torch_generator(5)
    A0, AT = torch.randn(9, 4, generator=g), torch.randn(9, 4, generator=g)
    ranks = sc.winner_init_rank(A0, AT)
    for j in range(4):
        winner = AT[:, j].abs().argmax().item()
        assert ranks[j].item() == sum(A0[i, j].abs() > A0[winner, j].abs() for i in range(9))


def test_training_learns_sparse_features_from_lucky_neurons():
    """The claims of section 7.4 at small scale: accuracy, purity above the linear baseline,
    lottery (d = 24 instead of 32, 600 examples, 250 steps)."""
    cfg = sc.SparseCodingConfig(d=24, steps=250, record_every=250)
    g, M, w_star, X, y, _ = _problem(n=600, seed=2, cfg=cfg)
    Xt, yt, _ = sc.sample_sparse_coding(600, M, w_star, k=cfg.k, sigma_xi=cfg.sigma_xi,
                                        generator=g)
    hist = sc.train_symmetric_net(X, y, M, cfg, generator=g)
    W = hist.W
    margin = yt * sc.symmetric_relu_net(Xt, W, cfg.beta * W.norm(dim=1))
    test_acc = (margin > 0).float().mean().item()
    assert hist.train_acc[-1].item() > 0.98 and test_acc > 0.9, (hist.train_acc[-1], test_acc)
    lin = sc.train_symmetric_net(X, y, M, replace(cfg, beta=0.0), generator=g)
    assert sc.purity(hist.A[-1]).median() > 2 * sc.purity(lin.A[-1]).median()
    ranks = sc.winner_init_rank(hist.A[0], hist.A[-1])
    assert (ranks < 5).float().mean().item() > 3 * 5 / cfg.m  # far above chance 5/m


def test_bad_inputs():
    g = torch_generator(0)
    M = sc.random_dictionary(4, generator=g)
    with pytest.raises(ValueError, match="k must be <= 4"):
        sc.sample_sparse_coding(3, M, torch.ones(4), k=5, sigma_xi=0.1, generator=g)
    with pytest.raises(ValueError, match="w_star must have shape"):
        sc.sample_sparse_coding(3, M, torch.ones(3), k=1, sigma_xi=0.1, generator=g)
    with pytest.raises(ValueError, match="sigma_xi must be >= 0.0"):
        sc.sample_sparse_coding(3, M, torch.ones(4), k=1, sigma_xi=-0.1, generator=g)
    with pytest.raises(TypeError, match="generator"):
        sc.random_dictionary(4, generator=0)
    with pytest.raises(ValueError, match="W must have shape"):
        sc.symmetric_relu_net(torch.ones(2, 4), torch.ones(3, 5), torch.zeros(3))
    with pytest.raises(ValueError, match="A must be a 2-D"):
        sc.purity(torch.ones(3))
    with pytest.raises(ValueError, match="AT must have shape"):
        sc.winner_init_rank(torch.ones(3, 2), torch.ones(2, 3))
    with pytest.raises(ValueError, match="lr must be > 0.0"):
        sc.SparseCodingConfig(d=4, lr=0.0)
    with pytest.raises(ValueError, match="k must be odd"):
        sc.SparseCodingConfig(k=2)
    with pytest.raises(ValueError, match="k must be <= 4"):
        sc.SparseCodingConfig(d=4, k=5)
    with pytest.raises(TypeError, match="cfg must be a SparseCodingConfig"):
        sc.train_symmetric_net(torch.ones(2, 4), torch.ones(2), M, {"d": 4}, generator=g)
    with pytest.raises(ValueError, match="M must have shape"):
        sc.alignment(torch.ones(3, 4), torch.ones(3, 3))
