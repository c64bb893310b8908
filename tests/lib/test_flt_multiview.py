"""Tests for flt_lib.flt.multiview: multi-view data, the smoothed-ReLU network, GD and KD."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.flt import multiview as mvw
from flt_lib.rng import spawn, torch_generator


def _srelu_prime(z, q, t):
    """Oracle: the derivative of the smoothed ReLU, written out case by case."""
    return torch.where(z <= 0, 0.0, torch.where(z <= t, (z / t) ** (q - 1), 1.0))


def test_data_shows_the_views_it_should():
    cfg = mvw.MultiViewData(k=3, d=40, jitter=0.0, sigma=0.0, gamma=0.0)
    s = mvw.sample_multiview(cfg, 200, generator=torch_generator(0))
    V = cfg.views()
    Pv = cfg.view_patches
    w0 = (s.X[:, :Pv] * V[s.y, 0][:, None]).sum(-1)          # (n, Pv): weight of view 0
    w1 = (s.X[:, Pv:2 * Pv] * V[s.y, 1][:, None]).sum(-1)    # (n, Pv): weight of view 1
    multi = ~s.single
    assert torch.allclose(w0[multi], torch.ones_like(w0[multi]))
    assert torch.allclose(w1[multi], torch.ones_like(w1[multi]))
    shows0 = s.single & (s.view == 0)
    assert torch.allclose(w0[shows0], torch.ones_like(w0[shows0]))
    assert torch.allclose(w1[shows0], torch.full_like(w1[shows0], cfg.rho))
    assert torch.all(s.X[:, 2 * Pv:] == 0)                  # no noise, no feature noise here
    assert 0.1 < s.single.float().mean() < 0.3


def test_feature_noise_belongs_to_another_class_and_noise_has_the_right_scale():
    cfg = mvw.MultiViewData(k=4, d=60, gamma=0.5, jitter=0.0, sigma=0.0)
    s = mvw.sample_multiview(cfg, 300, generator=torch_generator(1))
    coef = s.X[..., : 2 * cfg.k].reshape(300, cfg.patches, cfg.k, 2)          # (n, P, k, 2)
    own = coef[torch.arange(300), :, s.y]                                      # (n, P, 2)
    other = coef.clone()
    other[torch.arange(300), :, s.y] = 0
    assert torch.allclose(other.sum(dim=(2, 3)), torch.full((300, cfg.patches), 0.5))
    assert own.abs().max() <= 1.0 + 1e-6
    noisy = mvw.sample_multiview(mvw.MultiViewData(d=2000, sigma=0.3), 50,
                                 generator=torch_generator(2))
    noise = noisy.X[:, 4:, 8:]                                                 # noise patches
    assert abs(noise.std().item() - 0.3) < 0.01


def test_smoothed_relu_is_continuous_and_matches_its_pieces():
    z = torch.linspace(-1, 2, 301, dtype=torch.float64, requires_grad=True)
    f = mvw.smoothed_relu(z, q=4, threshold=0.5)
    (g,) = torch.autograd.grad(f.sum(), z)
    torch.testing.assert_close(g, _srelu_prime(z.detach(), 4, 0.5))
    t = torch.tensor([0.5], dtype=torch.float64)
    torch.testing.assert_close(mvw.smoothed_relu(t, q=4, threshold=0.5), t / 4)
    assert mvw.smoothed_relu(torch.tensor([-3.0]), q=3, threshold=0.2).item() == 0.0
    with pytest.raises(ValueError, match="q must be >= 2"):
        mvw.smoothed_relu(z, q=1, threshold=0.5)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 1000))
def test_logits_match_a_loop(seed):
    g = torch_generator(seed)
    W = torch.randn(2, 3, 2, 6, generator=g, dtype=torch.float64)
    X = torch.randn(4, 3, 6, generator=g, dtype=torch.float64)
    F = mvw.multiview_logits(W, X, q=3, threshold=0.3)
    for e in range(2):
        for i in range(4):
            for c in range(3):
                ref = sum(mvw.smoothed_relu(W[e, c, r] @ X[i, p], q=3, threshold=0.3)
                          for r in range(2) for p in range(3))
                assert F[e, i, c].item() == pytest.approx(ref.item())


def test_one_gd_step_matches_the_closed_form_gradient():
    cfg = mvw.MultiViewData(k=3, d=20)
    s = mvw.sample_multiview(cfg, 30, generator=torch_generator(3))
    W0 = mvw.init_models(cfg, models=2, width=2, sigma0=0.3, generator=torch_generator(4))
    W0, X = W0.double(), s.X.double()
    h = mvw.train_models(W0, mvw.MultiViewSample(X, s.y, s.single, s.view), q=3,
                         threshold=0.2, lr=0.7, steps=1)
    z = torch.einsum("ekmd,npd->enkmp", W0, X)                                 # (E,n,k,m,P)
    F = mvw.smoothed_relu(z, q=3, threshold=0.2).sum(dim=(3, 4))               # (E, n, k)
    dF = (torch.softmax(F, -1) - torch.nn.functional.one_hot(s.y, 3)) / 30     # (E, n, k)
    grad = torch.einsum("enk,enkmp,npd->ekmd", dF, _srelu_prime(z, 3, 0.2), X)
    torch.testing.assert_close(h.W, W0 - 0.7 * grad)


def test_models_train_independently_and_distillation_uses_the_teacher():
    cfg = mvw.MultiViewData(k=3, d=30)
    s = mvw.sample_multiview(cfg, 40, generator=torch_generator(5))
    W0 = mvw.init_models(cfg, models=2, width=2, sigma0=0.1, generator=torch_generator(6))
    kw = dict(q=3, threshold=0.2, lr=0.3, steps=5)
    both = mvw.train_models(W0, s, **kw).W
    torch.testing.assert_close(both[1:], mvw.train_models(W0[1:], s, **kw).W)
    # a student taught by its own logits is at a stationary point of the KD loss
    F0 = mvw.multiview_logits(W0[:1], s.X, q=3, threshold=0.2)[0]
    moved = (mvw.train_models(W0[:1], s, teacher_logits=F0, temperature=2.0, q=3,
                              threshold=0.2, lr=0.3, steps=1).W - W0[:1]).abs().max()
    assert moved.item() < 1e-6
    per_model = torch.stack([F0, -F0])                                         # (E, n, k)
    split = mvw.train_models(W0, s, teacher_logits=per_model, temperature=2.0, **kw).W
    alone = mvw.train_models(W0[1:], s, teacher_logits=-F0, temperature=2.0, **kw).W
    torch.testing.assert_close(split[1:], alone)


def test_view_strengths_match_a_loop():
    g = torch_generator(7)
    W = torch.randn(2, 3, 4, 10, generator=g)
    S = mvw.view_strengths(W)
    V = mvw.MultiViewData(k=3, d=10).views()
    for e in range(2):
        for c in range(3):
            for l in range(2):
                assert S[e, c, l].item() == pytest.approx(max(W[e, c, r] @ V[c, l]
                                                              for r in range(4)).item())


def test_single_models_miss_views_that_an_ensemble_covers():
    """The claims of Section 7.7 at reduced size (d = 200, n = 150, 3 models, 150 steps): a
    single model learns only some views, an ensemble of three covers more views and is more
    accurate than its members."""
    cfg = mvw.MultiViewData(d=200, sigma=0.2)
    g_tr, g_te, g_init = spawn(torch_generator(0), 3)
    tr = mvw.sample_multiview(cfg, 150, generator=g_tr)
    te = mvw.sample_multiview(cfg, 300, generator=g_te)
    W0 = mvw.init_models(cfg, models=3, width=4, sigma0=0.05, generator=g_init)
    h = mvw.train_models(W0, tr, q=4, threshold=0.2, lr=0.1, steps=150)
    learned = mvw.view_strengths(h.W) > 0.5
    logits = mvw.multiview_logits(h.W, te.X, q=4, threshold=0.2)
    acc_single = (logits.argmax(-1) == te.y).float().mean(1)
    acc_ens = (logits.mean(0).argmax(-1) == te.y).float().mean()
    assert learned.float().mean() < 0.9, learned.float().mean()
    assert learned.any(0).float().mean() > learned.float().mean() + 0.1
    assert acc_ens > acc_single.mean() + 0.02, (acc_ens, acc_single)


def test_bad_inputs():
    with pytest.raises(ValueError, match="d must be >= 8"):
        mvw.MultiViewData(k=4, d=6)
    with pytest.raises(ValueError, match="single_view must be <= 1.0"):
        mvw.MultiViewData(single_view=1.5)
    with pytest.raises(TypeError, match="cfg must be a MultiViewData"):
        mvw.sample_multiview({}, 3, generator=torch_generator(0))
    cfg = mvw.MultiViewData(k=2, d=8)
    s = mvw.sample_multiview(cfg, 5, generator=torch_generator(0))
    W0 = mvw.init_models(cfg, models=1, width=2, sigma0=0.1, generator=torch_generator(1))
    with pytest.raises(ValueError, match=r"teacher_logits must have shape \(n, k\)"):
        mvw.train_models(W0, s, q=3, threshold=0.2, lr=0.1, steps=1,
                         teacher_logits=torch.zeros(5, 3))
    with pytest.raises(TypeError, match="data must be a MultiViewSample"):
        mvw.train_models(W0, s.X, q=3, threshold=0.2, lr=0.1, steps=1)
    with pytest.raises(ValueError, match=r"X must have shape \(n, P, d\)"):
        mvw.multiview_logits(W0, torch.zeros(2, 3, 7), q=3, threshold=0.2)
    with pytest.raises(ValueError, match="W must be a 4-D tensor"):
        mvw.view_strengths(torch.zeros(3, 4))
