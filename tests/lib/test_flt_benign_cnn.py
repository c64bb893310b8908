"""Tests for flt_lib.flt.benign_cnn: two-patch data, the CNN, closed-form GD, signal-noise decomposition."""

import math
from dataclasses import replace

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.flt import benign_cnn as bc
from flt_lib.rng import spawn, torch_generator



def _mu(norms, d):
    mu = torch.zeros(len(norms), d)
    mu[:, 0] = torch.tensor(norms, dtype=torch.float32)
    return mu


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), norm=st.floats(0.1, 10.0))
def test_noise_is_orthogonal_to_signal(seed, norm):
    g = torch_generator(seed)
    mu = torch.randn(2, 20, generator=g)
    mu = norm * mu / mu.norm(dim=1, keepdim=True)
    data = bc.sample_two_patch(7, mu, sigma_p=1.5, flip_prob=0.2, generator=g)
    assert (data.xi @ mu.unsqueeze(2)).abs().max().item() < 1e-3 * norm * 20
    assert set(data.y_clean.unique().tolist()) <= {-1.0, 1.0}


def test_flip_rate_and_noise_variance():
    data = bc.sample_two_patch(20_000, _mu([1.0], 10), sigma_p=2.0, flip_prob=0.2,
                               generator=torch_generator(0))
    flip_rate = (data.y != data.y_clean).float().mean().item()
    assert abs(flip_rate - 0.2) < 0.015
    var = data.xi[0].var(dim=0)  # per-coordinate variance: 0 along mu, sigma_p^2 elsewhere
    assert var[0].item() < 1e-6 and torch.allclose(var[1:], torch.full((9,), 4.0), rtol=0.06)


def test_cnn_output_matches_loop():
    g = torch_generator(1)
    W, mu = torch.randn(2, 2, 3, 5, generator=g), torch.randn(2, 5, generator=g)
    data = bc.sample_two_patch(4, mu, sigma_p=1.0, flip_prob=0.0, generator=g)
    f = bc.cnn_output(W, mu, data.xi, data.y_clean)
    for b in range(2):
        for i in range(4):
            patches = [data.y_clean[b, i] * mu[b], data.xi[b, i]]
            F = [sum(max(0.0, (W[b, jj, r] @ x).item()) for r in range(3) for x in patches) / 3 for jj in range(2)]
            assert f[b, i].item() == pytest.approx(F[0] - F[1], abs=1e-5)


def test_gd_step_matches_autograd_and_tracks_decomposition():
    cfg = bc.BenignCNNConfig(d=12, m=3, steps=1, record_every=1, sigma0=0.5, lr=0.3)
    mu = _mu([2.0, 0.5], 12)
    data = bc.sample_two_patch(6, mu, sigma_p=1.0, flip_prob=0.3, generator=torch_generator(2))
    h = bc.train_cnn(mu, data, cfg, generator=torch_generator(3))
    W0 = h.W0.clone().requires_grad_(True)
    f = bc.cnn_output(W0, mu, data.xi, data.y_clean)
    loss = torch.nn.functional.softplus(-data.y * f).mean(dim=1).sum()  # sum over the problems
    (grad,) = torch.autograd.grad(loss, W0)
    assert torch.allclose(h.W, h.W0 - cfg.lr * grad, atol=1e-6)
    dW = h.W - h.W0
    j = torch.tensor([1.0, -1.0]).view(1, 2, 1)
    assert torch.allclose(h.gamma[-1], j * torch.einsum("bjrd,bd->bjr", dW, mu), atol=1e-6)
    assert torch.allclose(h.rho[-1], torch.einsum("bjrd,bnd->bjrn", dW, data.xi), atol=1e-5)
    assert torch.allclose(h.gamma[0], torch.zeros(2, 2, 3))


def test_crossing_point_interpolates_in_log_space():
    x = torch.tensor([1.0, 2.0, 4.0, 8.0])
    err = torch.tensor([0.4, 0.3, 0.05, 0.0])
    # between 2 and 4: fraction (0.3-0.1)/(0.3-0.05) = 0.8 of the way in log x
    assert bc.crossing_point(x, err, level=0.1) == pytest.approx(2 * 2**0.8, rel=1e-5)
    assert math.isnan(bc.crossing_point(x, torch.full((4,), 0.3), level=0.1))


def test_benign_versus_harmful_overfitting():
    """The section 7.5 claim at small scale: zero training error in both regimes, clean test error
    small for strong signal and large for weak signal, and the signal/noise ratio follows ||mu||^2."""
    cfg = bc.BenignCNNConfig(d=150, m=10, steps=100, record_every=50)
    mu = _mu([0.5, 3.5], cfg.d)
    g = torch_generator(4)
    data = bc.sample_two_patch(30, mu, sigma_p=cfg.sigma_p, flip_prob=cfg.flip_prob, generator=g)
    h = bc.train_cnn(mu, data, cfg, generator=g)
    assert h.train_err[-1].max().item() == 0.0
    err = bc.clean_test_error(h.W, mu, sigma_p=cfg.sigma_p, n_test=1000, generator=g)
    assert err[0].item() > 0.25 and err[1].item() < 0.05, err
    gamma = h.gamma[-1].amax(dim=2).mean(dim=1)  # (B,)
    rho = h.rho[-1].amax(dim=2).mean(dim=(1, 2))  # (B,)
    ratio = (gamma[1] / rho[1]) / (gamma[0] / rho[0])
    assert (3.5 / 0.5) ** 2 / 4 < ratio.item() < (3.5 / 0.5) ** 2 * 4


def test_bad_inputs():
    g = torch_generator(0)
    with pytest.raises(ValueError, match="flip_prob must be < 0.5"):
        bc.sample_two_patch(3, _mu([1.0], 4), sigma_p=1.0, flip_prob=0.5, generator=g)
    with pytest.raises(ValueError, match="mu must have nonzero rows"):
        bc.sample_two_patch(3, torch.zeros(1, 4), sigma_p=1.0, flip_prob=0.1, generator=g)
    with pytest.raises(ValueError, match="sigma_p must be >= 0.0"):
        bc.sample_two_patch(3, _mu([1.0], 4), sigma_p=-1.0, flip_prob=0.1, generator=g)
    with pytest.raises(ValueError, match="W must be a 4-D tensor"):
        bc.cnn_output(torch.ones(2, 4), _mu([1.0], 4), torch.ones(1, 3, 4), torch.ones(1, 3))
    with pytest.raises(ValueError, match="y_clean must have shape"):
        bc.cnn_output(torch.ones(1, 2, 3, 4), _mu([1.0], 4), torch.ones(1, 3, 4), torch.ones(1, 2))
    data = bc.sample_two_patch(3, _mu([1.0], 4), sigma_p=1.0, flip_prob=0.1, generator=g)
    with pytest.raises(ValueError, match=r"mu must have shape \(B, 300\)"):
        bc.train_cnn(_mu([1.0], 4), data, bc.BenignCNNConfig(), generator=g)
    with pytest.raises(ValueError, match="lr must be > 0.0"):
        bc.BenignCNNConfig(d=4, lr=0.0)
    with pytest.raises(ValueError, match="flip_prob must be < 0.5"):
        bc.BenignCNNConfig(flip_prob=0.5)
    with pytest.raises(TypeError, match="m must be an int"):
        bc.BenignCNNConfig(m=2.5)
    with pytest.raises(ValueError, match="n_test must be >= 1"):
        bc.clean_test_error(torch.ones(1, 2, 3, 4), _mu([1.0], 4), sigma_p=1.0, n_test=0,
                            generator=g)
    with pytest.raises(ValueError, match="strictly increasing"):
        bc.crossing_point(torch.tensor([2.0, 1.0]), torch.tensor([0.5, 0.0]))


def test_phase_diagram_matches_direct_training():
    cfg = bc.BenignCNNConfig(d=30, m=4, steps=20, record_every=20)
    norms = torch.tensor([0.5, 3.0])
    out = bc.phase_diagram([5, 8], norms, seeds=2, cfg=cfg, n_test=50,
                           generator=torch_generator(7))
    assert isinstance(out, bc.PhaseDiagram) and out.ns == [5, 8]
    assert out.test_err.shape == (2, 2) and out.train_err.shape == (2, 2, 2)
    g = spawn(torch_generator(7), 2)[1]  # phase_diagram's child generator for n = 8
    mu = _mu([0.5, 3.0, 0.5, 3.0], 30)
    data = bc.sample_two_patch(8, mu, sigma_p=cfg.sigma_p, flip_prob=cfg.flip_prob, generator=g)
    h = bc.train_cnn(mu, data, cfg, generator=g, track_rho=False)
    err = bc.clean_test_error(h.W, mu, sigma_p=cfg.sigma_p, n_test=50, generator=g).view(2, 2)
    assert torch.allclose(out.test_err_all[:, :, 1], err)
    assert out.y[1].shape == (2, 2, 8) and torch.equal(out.y[1].reshape(4, 8), data.y)
    assert torch.equal(out.y_clean[1].reshape(4, 8), data.y_clean)
    with pytest.raises(ValueError, match="mu_norms must be positive"):
        bc.phase_diagram([5], torch.tensor([0.0]), seeds=1, cfg=cfg, n_test=10,
                         generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        bc.phase_diagram([5], norms, seeds=1, cfg=cfg, n_test=10, generator=0)


def test_more_data_moves_the_boundary_down():
    """At a signal strength between the crossings, overfitting is harmful for small n and benign
    for large n: the boundary n ||mu||^4 ~ d sigma_p^4 moves to weaker signals as n grows."""
    cfg = bc.BenignCNNConfig(d=150, m=10, steps=100)
    out = bc.phase_diagram([10, 80], torch.tensor([1.6]), seeds=4, cfg=cfg, n_test=300,
                           generator=torch_generator(0))
    err_small, err_large = out.test_err[0].tolist()
    assert out.train_err.max().item() == 0.0
    assert err_small > 0.15 and err_large < 0.1 and err_small > 2 * err_large, (err_small, err_large)


def test_coefficient_summary_matches_loop():
    cfg = bc.BenignCNNConfig(d=15, m=3, steps=4, record_every=2, sigma0=0.3, lr=0.5)
    mu = _mu([1.5, 0.8], 15)
    data = bc.sample_two_patch(5, mu, sigma_p=1.0, flip_prob=0.3, generator=torch_generator(5))
    h = bc.train_cnn(mu, data, cfg, generator=torch_generator(6))
    s = bc.coefficient_summary(h, data.y)
    R = h.steps.numel()
    assert s.gamma_bar.shape == (R, 2) and s.rho_own.shape == (R, 2, 5)
    for t in range(R):
        for b in range(2):
            g = [max(h.gamma[t, b, jj].tolist()) for jj in range(2)]
            assert s.gamma_bar[t, b].item() == pytest.approx(sum(g) / 2, abs=1e-6)
            for i in range(5):
                jj = 0 if data.y[b, i].item() > 0 else 1
                best = max(h.rho[t, b, jj, :, i].tolist())
                assert s.rho_own[t, b, i].item() == pytest.approx(best, abs=1e-6)
    no_rho = bc.train_cnn(mu, data, cfg, generator=torch_generator(6), track_rho=False)
    with pytest.raises(ValueError, match="track_rho=True"):
        bc.coefficient_summary(no_rho, data.y)
    with pytest.raises(ValueError, match="only the labels -1 and \\+1"):
        bc.coefficient_summary(h, torch.zeros(2, 5))


def test_clean_test_error_of_handcrafted_filters():
    """Filters equal to +mu (class +1) and -mu (class -1) classify every clean example correctly; swapping
    the two classes gets every example wrong (the noise patch is orthogonal to mu and adds nothing)."""
    d = 10
    mu = _mu([2.0], d)
    W = torch.zeros(1, 2, 3, d)
    W[0, 0] = mu[0]
    W[0, 1] = -mu[0]
    g = torch_generator(8)
    assert bc.clean_test_error(W, mu, sigma_p=1.0, n_test=200, generator=g).item() == 0.0
    assert bc.clean_test_error(W.flip(1), mu, sigma_p=1.0, n_test=200, generator=g).item() == 1.0


@settings(max_examples=25, deadline=None)
@given(errs=st.lists(st.floats(0.0, 0.5), min_size=2, max_size=8), level=st.floats(0.01, 0.49))
def test_crossing_point_lies_in_the_crossing_interval(errs, level):
    x = torch.tensor([2.0**k for k in range(len(errs))], dtype=torch.float64)
    err = torch.tensor(errs, dtype=torch.float64)  # float64, so that err <= level is decided exactly as below
    c = bc.crossing_point(x, err, level=level)
    below = [k for k, e in enumerate(err.tolist()) if e <= level]
    if not below or below[0] == 0:
        assert math.isnan(c)
    else:
        k = below[0]
        assert x[k - 1].item() * (1 - 1e-6) <= c <= x[k].item() * (1 + 1e-6)


def test_two_patch_data_is_validated():
    g = torch_generator(0)
    cfg = bc.BenignCNNConfig(d=4)
    data = bc.sample_two_patch(3, _mu([1.0], 4), sigma_p=1.0, flip_prob=0.1, generator=g)
    with pytest.raises(ValueError, match=r"y must have shape \(B, n\)"):
        bc.TwoPatchData(xi=data.xi, y_clean=data.y_clean, y=data.y[:, :2])
    with pytest.raises(TypeError, match="data must be a TwoPatchData"):
        bc.train_cnn(_mu([1.0], 4), {"xi": data.xi, "y": data.y}, cfg, generator=g)
    with pytest.raises(TypeError, match="cfg must be a BenignCNNConfig"):
        bc.train_cnn(_mu([1.0], 4), data, {"d": 4}, generator=g)
