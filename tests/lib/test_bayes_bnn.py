"""Tests for flt_lib.bayes.bnn: the gradient against autograd, the symmetries, bad input."""

import pytest
import torch

from flt_lib.bayes import bnn
from flt_lib.rng import torch_generator

H = 6


def _post():
    g = torch_generator(0)
    x = torch.linspace(-1, 1, 9, dtype=torch.float64)
    y = torch.sin(3 * x) + 0.1 * torch.randn(9, generator=g, dtype=torch.float64)
    return bnn.BNNRegression(x, y, H, bnn.prior_variances(H, weight_var=4.0), 0.01)


def _theta(C=4, seed=1):
    return torch.randn(C, bnn.n_params(H), generator=torch_generator(seed), dtype=torch.float64)


def test_forward_matches_loop():
    th, x = _theta(), torch.linspace(-2, 2, 5, dtype=torch.float64)
    w, b, v, c = bnn.unpack(th, H)
    ref = torch.stack([torch.stack([sum(v[k, j] * torch.tanh(w[k, j] * xi + b[k, j])
                                        for j in range(H)) + c[k] for xi in x])
                       for k in range(th.shape[0])])
    assert (bnn.forward(th, x, H) - ref).abs().max() < 1e-12


def test_gradient_matches_autograd():
    post, th = _post(), _theta().requires_grad_(True)
    auto, = torch.autograd.grad(post.log_prob(th).sum(), th)
    assert (auto - post.grad_log_prob(th.detach())).abs().max() < 1e-10


def test_relabelling_keeps_function_and_posterior():
    post, th = _post(), _theta()
    g = torch_generator(2)
    perm = torch.randperm(H, generator=g)
    signs = torch.tensor([1.0, -1, -1, 1, -1, 1], dtype=torch.float64)
    th2 = bnn.flip_hidden(bnn.permute_hidden(th, perm, H), signs, H)
    x = torch.linspace(-3, 3, 11, dtype=torch.float64)
    assert (th2 - th).abs().max() > 0.1
    assert (bnn.forward(th2, x, H) - bnn.forward(th, x, H)).abs().max() < 1e-12
    assert (post.log_prob(th2) - post.log_prob(th)).abs().max() < 1e-9
    # canonical form: equal for the two relabellings
    assert (bnn.canonical_form(th2, H) - bnn.canonical_form(th, H)).abs().max() < 1e-12
    assert (bnn.canonical_form(th, H)[:, :H] >= 0).all()


def test_prior_variances_neal_scaling():
    pv = bnn.prior_variances(4, weight_var=2.0, bias_var=3.0, out_var=8.0)
    assert pv.tolist() == [2.0] * 4 + [3.0] * 4 + [2.0] * 4 + [3.0]


def test_mask_zeroes_units():
    th, x = _theta(1), torch.linspace(-1, 1, 4, dtype=torch.float64)
    mask = torch.zeros(1, H, dtype=torch.float64)
    assert (bnn.forward(th, x, H, mask) - th[0, -1]).abs().max() < 1e-15


def test_bad_input():
    post = _post()
    with pytest.raises(ValueError, match=r"theta must have shape \(C, d\) with d = 3 n_hidden \+ 1 = 19"):
        post.log_prob(torch.zeros(2, 18, dtype=torch.float64))
    with pytest.raises(TypeError, match="theta must be a torch.Tensor"):
        bnn.forward([0.0] * 19, torch.zeros(3, dtype=torch.float64), H)
    with pytest.raises(ValueError, match="n_hidden must be >= 1"):
        bnn.n_params(0)
    with pytest.raises(ValueError, match="prior_var must be > 0"):
        bnn.BNNRegression(post.x, post.y, H, torch.zeros(19, dtype=torch.float64), 0.01)
    with pytest.raises(ValueError, match=r"y must have shape \(n,\) like x"):
        bnn.BNNRegression(post.x, post.y[:3], H, post.prior_var, 0.01)
    with pytest.raises(ValueError, match="noise_var must be > 0"):
        bnn.BNNRegression(post.x, post.y, H, post.prior_var, 0.0)
    with pytest.raises(ValueError, match="perm must be a permutation"):
        bnn.permute_hidden(_theta(), torch.zeros(H, dtype=torch.int64), H)
    with pytest.raises(ValueError, match="signs must contain only"):
        bnn.flip_hidden(_theta(), torch.full((H,), 2.0, dtype=torch.float64), H)
    with pytest.raises(ValueError, match=r"mask must have shape \(C, H\)"):
        bnn.forward(_theta(2), post.x, H, torch.ones(3, H, dtype=torch.float64))
