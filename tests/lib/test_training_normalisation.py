"""Tests for flt_lib.training.normalisation."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.training import normalisation as nrm
from flt_lib.rng import torch_generator


def test_batch_and_layer_norm_match_torch():
    z = torch.randn(8, 5, generator=torch_generator(0), dtype=torch.float64)
    gamma = torch.randn(5, generator=torch_generator(1), dtype=torch.float64)
    beta = torch.randn(5, generator=torch_generator(2), dtype=torch.float64)
    ref_bn = torch.nn.functional.batch_norm(z, None, None, gamma, beta, training=True, eps=1e-5)
    assert torch.allclose(nrm.batch_norm(z, gamma, beta), ref_bn, atol=1e-12)
    ref_ln = torch.nn.functional.layer_norm(z, (5,), gamma, beta, eps=1e-5)
    assert torch.allclose(nrm.layer_norm(z, gamma, beta), ref_ln, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), log_scale=st.floats(-3, 3))
def test_batch_norm_scale_and_shift_invariance(seed, log_scale):
    g = torch_generator(seed)
    z = torch.randn(10, 4, generator=g, dtype=torch.float64)
    D = torch.exp(log_scale + torch.randn(4, generator=g, dtype=torch.float64))
    c = torch.randn(4, generator=g, dtype=torch.float64)
    assert torch.allclose(nrm.batch_norm(z * D + c, eps=0.0), nrm.batch_norm(z, eps=0.0), atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_layer_norm_ignores_batch_mates(seed):
    g = torch_generator(seed)
    z = torch.randn(6, 7, generator=g, dtype=torch.float64)
    z2 = z.clone()
    z2[1:] = torch.randn(5, 7, generator=g, dtype=torch.float64)
    assert torch.equal(nrm.layer_norm(z)[0], nrm.layer_norm(z2)[0])


def test_weight_norm_gradient_orthogonal_and_formula():
    g_ = torch_generator(3)
    v = torch.randn(5, generator=g_, dtype=torch.float64, requires_grad=True)
    g = torch.tensor(1.7, dtype=torch.float64, requires_grad=True)
    a = torch.randn(5, generator=g_, dtype=torch.float64)
    w = nrm.weight_norm(v, g)
    assert abs(w.norm().item() - 1.7) < 1e-12
    loss = torch.sin(w @ a) + (w**3).sum()
    gv, gg = torch.autograd.grad(loss, (v, g))
    assert abs((gv @ v.detach()).item()) < 1e-12
    vd = v.detach()
    J = torch.autograd.functional.jacobian(lambda vv: nrm.weight_norm(vv, g.detach()), vd)
    P = torch.eye(5, dtype=torch.float64) - torch.outer(vd, vd) / (vd @ vd)
    assert torch.allclose(J, 1.7 / vd.norm() * P, atol=1e-12)  # eq-norm-wn-grad
    W = nrm.weight_norm(torch.randn(3, 4, generator=g_, dtype=torch.float64), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))
    assert torch.allclose(W.norm(dim=1), torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64))


def test_deep_net_scales():
    x = torch.randn(32, 64, generator=torch_generator(4), dtype=torch.float64)
    none = nrm.deep_net_scales(x, depth=10, weight_std=2.0, norm="none", generator=torch_generator(5))
    bn = nrm.deep_net_scales(x, depth=10, weight_std=2.0, norm="batch", generator=torch_generator(5))
    assert none[-1] > 10 * none[0]
    assert ((bn - 0.5**0.5).abs() < 0.1).all()


def test_whitened_batch_norm_is_weight_norm():
    # Salimans & Kingma (2016), Sec. 2.2: on a whitened batch, BN(X w) = X (gamma w / ||w||) + beta.
    g = torch_generator(6)
    X = nrm.whiten(torch.randn(64, 5, generator=g, dtype=torch.float64) @ torch.randn(5, 5, generator=g, dtype=torch.float64))
    assert torch.allclose(X.mean(0), torch.zeros(5, dtype=torch.float64), atol=1e-12)
    assert torch.allclose(X.T @ X / 64, torch.eye(5, dtype=torch.float64), atol=1e-10)
    V = torch.randn(3, 5, generator=g, dtype=torch.float64)
    gamma, beta = torch.tensor([0.5, 2.0, -1.0], dtype=torch.float64), torch.randn(3, generator=g, dtype=torch.float64)
    bn = nrm.batch_norm(X @ V.T, gamma, beta, eps=0.0)
    wn = X @ nrm.weight_norm(V, gamma).T + beta
    assert torch.allclose(bn, wn, atol=1e-12)
    # and not for a batch that is only standardised per coordinate (correlated inputs)
    Z = torch.randn(64, 5, generator=g, dtype=torch.float64) @ torch.randn(5, 5, generator=g, dtype=torch.float64)
    Z = (Z - Z.mean(0)) / Z.std(0, unbiased=False)
    assert not torch.allclose(nrm.batch_norm(Z @ V.T, gamma, beta, eps=0.0), Z @ nrm.weight_norm(V, gamma).T + beta, atol=1e-3)


def test_bad_inputs():
    with pytest.raises(ValueError, match="at least 2 examples"):
        nrm.batch_norm(torch.ones(1, 3))
    with pytest.raises(ValueError, match="at least 2 units"):
        nrm.layer_norm(torch.ones(3, 1))
    with pytest.raises(ValueError, match="gamma must have shape"):
        nrm.batch_norm(torch.randn(4, 3), gamma=torch.ones(2))
    with pytest.raises(ValueError, match="eps must be >= 0"):
        nrm.layer_norm(torch.randn(4, 3), eps=-1.0)
    with pytest.raises(ValueError, match="g must have shape"):
        nrm.weight_norm(torch.randn(3, 4), torch.ones(2))
    with pytest.raises(ValueError, match="norm must be one of"):
        nrm.deep_net_scales(torch.randn(4, 3), depth=2, weight_std=1.0, norm="group", generator=torch_generator(0))
    with pytest.raises(ValueError, match="X must have more rows than columns"):
        nrm.whiten(torch.randn(3, 3))
    with pytest.raises(ValueError, match="full-rank batch covariance"):
        nrm.whiten(torch.ones(6, 2, dtype=torch.float64))
