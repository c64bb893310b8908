"""Tests for flt_lib.flt.token_selection: the official code's data, the model, the token-space GD."""

import dataclasses
import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.flt import token_selection as ts
from flt_lib.rng import spawn, torch_generator



def _data(mu=20.0, n=20, seed=0, eta=0.2, **kw):
    cfg = ts.TokenData(mu=mu, **kw)
    return cfg, ts.sample(cfg, n, label_noise=eta, generator=torch_generator(seed))


def _dense_gd(train, test, W0, *, lr, steps, train_W=True):
    """Oracle: plain autograd gradient descent on (W, p) in float64, the official code's loop."""
    nu = ts.linear_head(train.cfg, torch.float64)
    W, p = W0.double().clone().requires_grad_(True), torch.zeros(W0.shape[0], dtype=torch.float64,
                                                                  requires_grad=True)
    X, y = train.X.double(), train.y.double()
    for _ in range(steps):
        loss = ts.logistic_loss(y * ts.predict(X, W, p, nu))
        gW, gp = torch.autograd.grad(loss, (W, p))
        with torch.no_grad():
            if train_W:
                W -= lr * gW
            p -= lr * gp
    with torch.no_grad():
        f_te = ts.predict(test.X.double(), W, p, nu)
        acc = (torch.sign(f_te) == test.y_clean).double().mean().item()
        return W.detach(), p.detach(), acc, ts.logistic_loss(test.y_clean * f_te).item()


def test_config_validation():
    assert ts.TokenData(mu=20.0, d=2000).snr == pytest.approx(20 / math.sqrt(2000))
    with pytest.raises(ValueError, match="mu must be > 0.0, got 0.0"):
        ts.TokenData(mu=0.0)
    with pytest.raises(ValueError, match="T must be >= 3, got 2"):
        ts.TokenData(T=2)
    ts.TokenData(T=2, opposite_token=False)
    with pytest.raises(TypeError, match="d must be an int"):
        ts.TokenData(d=10.5)
    with pytest.raises(TypeError, match="balanced must be a bool, got 1"):
        ts.TokenData(balanced=1)


def test_sample_follows_the_official_code():
    """Balanced classes, flips split evenly, x_3 carries the opposite class's signal."""
    cfg, s = _data(n=20, eta=0.2, d=300)
    assert s.X.shape == (20, cfg.T, 300) and s.y.shape == (20,)
    assert torch.equal(s.y_clean, torch.tensor([1.0] * 10 + [-1.0] * 10))
    assert s.flipped.tolist() == [True] * 2 + [False] * 8 + [True] * 2 + [False] * 8
    assert torch.equal(s.y, torch.where(s.flipped, -s.y_clean, s.y_clean))
    mu_plus, mu_minus = ts.class_signals(cfg)
    own = torch.where(s.y_clean[:, None] == 1, mu_plus, mu_minus)
    other = torch.where(s.y_clean[:, None] == 1, mu_minus, mu_plus)
    eps = s.noise
    torch.testing.assert_close(s.X[:, 0], own + eps[:, 0])
    torch.testing.assert_close(s.X[:, 1], cfg.rho * own + eps[:, 1])
    torch.testing.assert_close(s.X[:, 2], cfg.rho * other + eps[:, 2])
    torch.testing.assert_close(s.X[:, 3:], eps[:, 3:])
    assert abs(eps.std().item() - 1.0) < 0.01


def test_old_options_random_labels_and_no_opposite_token():
    cfg, s = _data(n=40, eta=0.2, d=50, balanced=False, opposite_token=False)
    assert int(s.flipped.sum()) == math.ceil(0.2 * 40)
    torch.testing.assert_close(s.X[:, 2], s.noise[:, 2])
    assert s.y_clean.abs().eq(1).all() and 0 < (s.y_clean > 0).sum() < 40


def test_sample_is_reproducible_and_validated():
    _, a = _data(seed=3, d=100)
    _, b = _data(seed=3, d=100)
    assert torch.equal(a.X, b.X) and torch.equal(a.y, b.y)
    cfg = ts.TokenData(d=10)
    with pytest.raises(ValueError, match="label_noise must be < 0.5, got 0.5"):
        ts.sample(cfg, 4, label_noise=0.5, generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        ts.sample(cfg, 4, label_noise=0.1, generator=0)
    with pytest.raises(TypeError, match="cfg must be a TokenData, got dict"):
        ts.sample({}, 4, label_noise=0.1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="n must be >= 2, got 1"):
        ts.sample(cfg, 1, label_noise=0.1, generator=torch_generator(0))


def test_kaiming_init_is_pytorch_default():
    W = ts.init_key_query(40, generator=torch_generator(5))
    ref = torch.empty(40, 40)
    torch.nn.init.kaiming_uniform_(ref, a=math.sqrt(5), generator=torch_generator(5))
    assert torch.equal(W, ref)
    assert torch.equal(ts.init_key_query(3, init="identity"), torch.eye(3))
    with pytest.raises(ValueError, match="generator is required"):
        ts.init_key_query(3)
    with pytest.raises(ValueError, match="init must be one of"):
        ts.init_key_query(3, init="zeros", generator=torch_generator(0))


def test_linear_head_scaling():
    cfg = ts.TokenData(mu=7.0, d=20)
    nu = ts.linear_head(cfg)
    mu_plus, mu_minus = ts.class_signals(cfg)
    assert nu.norm().item() == pytest.approx(1 / 7.0)
    assert (mu_plus @ nu).item() == pytest.approx(1 / math.sqrt(2))
    assert (mu_minus @ nu).item() == pytest.approx(-1 / math.sqrt(2))
    with pytest.raises(TypeError, match="cfg must be a TokenData"):
        ts.linear_head(None)


def test_attention_and_predict_match_a_loop():
    cfg, s = _data(n=5, d=30)
    g = torch_generator(1)
    W, p = torch.randn(30, 30, generator=g) / 5, torch.randn(30, generator=g)
    nu = ts.linear_head(cfg)
    att, f = ts.cls_attention(s.X, W, p), ts.predict(s.X, W, p, nu)
    for i in range(5):
        ref = torch.softmax(torch.stack([s.X[i, t] @ (W @ p) for t in range(cfg.T)]), dim=0)
        torch.testing.assert_close(att[i], ref)
        torch.testing.assert_close(f[i], sum(ref[t] * (s.X[i, t] @ nu) for t in range(cfg.T)))


def test_query_key_value_reduction_matches_torch_attention():
    """softmax(p^T W_Q (X W_K)^T) X W_V W_O, torch's own attention, is predict with
    W = W_K W_Q^T and nu = W_V W_O (the reduction of Section 7.6)."""
    g = torch_generator(2)
    n, T, d, dk, dv = 4, 5, 6, 3, 2
    X = torch.randn(n, T, d, generator=g, dtype=torch.float64)
    WQ, WK = torch.randn(d, dk, generator=g).double(), torch.randn(d, dk, generator=g).double()
    WV, WO = torch.randn(d, dv, generator=g).double(), torch.randn(dv, 1, generator=g).double()
    p = torch.randn(d, generator=g, dtype=torch.float64)
    q = (p @ WQ).expand(n, 1, dk)                                         # the [CLS] query
    out = torch.nn.functional.scaled_dot_product_attention(q, X @ WK, X @ WV, scale=1.0)
    torch.testing.assert_close((out @ WO).reshape(n), ts.predict(X, WK @ WQ.T, p, (WV @ WO)[:, 0]))


def test_attention_bad_shapes():
    X = torch.zeros(2, 3, 4)
    with pytest.raises(ValueError, match=r"X must be a 3-D tensor \(n, T, d\), got shape \(3, 4\)"):
        ts.cls_attention(torch.zeros(3, 4), torch.eye(4), torch.zeros(4))
    with pytest.raises(ValueError, match=r"W must have shape \(d, d\) = \(4, 4\), got \(3, 3\)"):
        ts.cls_attention(X, torch.eye(3), torch.zeros(4))
    with pytest.raises(ValueError, match=r"p must have shape \(d,\) = \(4,\), got \(5,\)"):
        ts.cls_attention(X, torch.eye(4), torch.zeros(5))
    with pytest.raises(ValueError, match=r"nu must have shape \(d,\)"):
        ts.predict(X, torch.eye(4), torch.zeros(4), torch.zeros(3))
    with pytest.raises(ValueError, match=r"margins must be a 1-D tensor"):
        ts.logistic_loss(torch.zeros(2, 2))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(3, 8), T=st.integers(2, 4), n=st.integers(1, 4))
def test_closed_form_gradient_equals_autograd(seed, d, T, n):
    g = torch_generator(seed)
    X = torch.randn(n, T, d, generator=g, dtype=torch.float64)
    y = torch.randint(0, 2, (n,), generator=g).double() * 2 - 1
    W = torch.randn(d, d, generator=g, dtype=torch.float64)
    p = torch.randn(d, generator=g, dtype=torch.float64)
    nu = torch.randn(d, generator=g, dtype=torch.float64)
    loss, dW, dp = ts.gradients(X, y, W, p, nu)
    W_, p_ = W.clone().requires_grad_(), p.clone().requires_grad_()
    ref = ts.logistic_loss(y * ts.predict(X, W_, p_, nu))
    ref.backward()
    torch.testing.assert_close(loss, ref.detach())
    torch.testing.assert_close(dW, W_.grad)
    torch.testing.assert_close(dp, p_.grad)


def test_gradient_bad_labels():
    with pytest.raises(ValueError, match=r"y must have shape \(n,\), got \(3,\)"):
        ts.gradients(torch.zeros(2, 3, 4), torch.zeros(3), torch.eye(4), torch.zeros(4),
                     torch.zeros(4))


@pytest.mark.parametrize("init,train_W", [("kaiming", True), ("identity", True),
                                          ("kaiming", False)])
def test_token_space_training_equals_dense_autograd_gd(init, train_W):
    """The claim of eq-ts-token-space: train() runs exactly the GD iterates of (W, p)."""
    cfg = ts.TokenData(d=24, T=4, mu=3.0)
    gd, gt, gw = spawn(torch_generator(7), 3)
    train = ts.sample(cfg, 6, label_noise=0.2, generator=gd)
    test = ts.sample(cfg, 30, label_noise=0.0, generator=gt)
    train64 = ts.Sample(train.X.double(), train.y.double(), train.y_clean.double(), train.flipped,
                        cfg)
    test64 = ts.Sample(test.X.double(), test.y.double(), test.y_clean.double(), test.flipped, cfg)
    W0 = ts.init_key_query(24, init=init, generator=gw, dtype=torch.float64)
    h = ts.train(train64, test64, lr=0.5, steps=12, record_every=12, train_W=train_W, init=init,
                 generator=spawn(torch_generator(7), 3)[2])
    W, p, test_acc, test_loss = _dense_gd(train64, test64, W0, lr=0.5, steps=12,
                                          train_W=train_W)
    torch.testing.assert_close(h.p, p)
    torch.testing.assert_close(h.q, W @ p)
    assert h.test_acc[-1] == pytest.approx(test_acc)
    assert h.test_loss[-1] == pytest.approx(test_loss, rel=1e-10)
    q = W @ p
    assert h.query_norm[-1] == pytest.approx(q.norm().item(), rel=1e-10)
    assert h.query_signal[-1] == pytest.approx((q[0] / q.norm()).item(), rel=1e-10)


def test_broken_variant_fails_the_equality_check():
    """The notebook's check (token-space training == autograd GD) fails for a wrong model:
    training p only, while the oracle trains W and p."""
    cfg = ts.TokenData(d=24, T=4, mu=3.0)
    gd, gt, gw = spawn(torch_generator(7), 3)
    train, test = (ts.sample(cfg, 6, label_noise=0.2, generator=gd),
                   ts.sample(cfg, 30, label_noise=0.0, generator=gt))
    W0 = ts.init_key_query(24, generator=spawn(torch_generator(7), 3)[2])
    broken = ts.train(train, test, lr=0.5, steps=12, train_W=False, generator=gw)
    W, p, *_ = _dense_gd(train, test, W0, lr=0.5, steps=12)
    err = ((broken.q.double() - W @ p).norm() / (W @ p).norm()).item()
    assert not err < 1e-4, f"the broken variant passed the check: relative error {err:.1e}"


def test_paper_setting_reduced_size():
    """The 7.6 claims at reduced size (d = 400, mu scaled to keep n SNR^2 = 0.2 and 320, 400
    steps, one seed): low SNR overfits and never learns the signal (test attention on x_1 near
    1/T); high SNR learns it and fits no flipped label."""
    out = {}
    for mu in (2.0, 80.0):
        h = ts.run_experiment(ts.TokenData(d=400, mu=mu), n_test=200, steps=400,
                              record_every=400, generator=torch_generator(0))
        out[mu] = (h.flipped_fit[-1], h.test_acc[-1], h.test_relevant_attn[-1], h)
    assert out[2.0][0] == 1.0 and out[2.0][1] < 0.9 and out[2.0][2] < 0.3, out
    assert out[80.0][0] == 0.0 and out[80.0][1] == 1.0 and out[80.0][2] > 0.9, out
    # relative to step 0 the fit cost nothing (test accuracy did not fall from its
    # uniform-attention value), so regime() does not call it harmful
    assert out[2.0][3].test_acc[-1] >= out[2.0][3].test_acc[0]
    assert ts.regime(out[2.0][3]) == "benign overfitting"
    assert ts.regime(out[80.0][3]) == "no overfitting"


def test_broken_variant_fails_the_signal_check():
    """The notebook's harmful-overfitting check ('the signal is never learned: test attention on
    x_1 stays below 0.3') fails for a model that did learn it: the query mu_+ + mu_-."""
    cfg, train = _data(mu=5.0, d=2000)
    p = sum(ts.class_signals(cfg))
    attn_on_relevant = ts.cls_attention(train.X, torch.eye(cfg.d), p)[:, 0].mean().item()
    assert not attn_on_relevant < 0.3, attn_on_relevant


def _small_history(**changes):
    cfg, train = _data(mu=20.0, d=50, n=6)
    h = ts.train(train, train, steps=2, record_every=1, init="identity")
    return dataclasses.replace(h, **changes)


def test_regime_is_relative_to_step_zero():
    assert ts.regime(_small_history(flipped_fit=[0.0, 0.0, 0.0])) == "no overfitting"
    assert ts.regime(_small_history(flipped_fit=[0.0, 0.5, 0.5])) == "partial fitting"
    fitted = [0.0, 1.0, 1.0]
    # a drop of 0.006 from step 0 (3 of 500 sequences) is not harmful; 0.05 is
    h = _small_history(flipped_fit=fitted, test_acc=[0.982, 0.98, 0.976])
    assert ts.regime(h) == "benign overfitting"
    h = _small_history(flipped_fit=fitted, test_acc=[0.9, 0.88, 0.85])
    assert ts.regime(h) == "harmful overfitting"
    assert ts.regime(h, tol=0.1) == "benign overfitting"
    # an absolute threshold would call this harmful: low accuracy that did not fall
    assert ts.regime(_small_history(flipped_fit=fitted, test_acc=[0.7, 0.7, 0.71])) == (
        "benign overfitting")
    with pytest.raises(TypeError, match="history must be a History, got float"):
        ts.regime(1.0)
    with pytest.raises(ValueError, match="tol must be >= 0.0, got -0.1"):
        ts.regime(h, tol=-0.1)


def test_record_steps_and_test_loss_floor():
    cfg, train = _data(mu=20.0, d=50, n=6)
    h = ts.train(train, train, steps=20, record_steps=[3, 10, 3], init="identity")
    assert h.steps == [0, 3, 10, 20]
    assert len(h.test_loss) == len(h.query_norm) == len(h.query_signal) == 4
    assert h.query_norm[0] == 0.0                           # p = 0 at step 0
    assert h.test_loss[0] == pytest.approx(math.log(2), abs=0.05)   # f ~ 0 at uniform attention
    nu = ts.linear_head(cfg)
    floor = ts.logistic_loss(train.y_clean * (train.X[:, 0] @ nu)).item()
    assert h.test_loss_floor == pytest.approx(floor)
    with pytest.raises(ValueError, match="record_steps\\[i\\] must be <= 20, got 30"):
        ts.train(train, train, steps=20, record_steps=[30], init="identity")
    with pytest.raises(TypeError, match="record_steps must be a sequence of ints, got int"):
        ts.train(train, train, steps=20, record_steps=5, init="identity")


def test_lr_times_steps_rescaling():
    """lr x 10 and steps / 10 give nearly the same run in the time lr t (used in 7.6)."""
    cfg = ts.TokenData(d=200, mu=4.0)
    a = ts.run_experiment(cfg, n_test=100, lr=5e-3, steps=400, record_every=400,
                          generator=torch_generator(0))
    b = ts.run_experiment(cfg, n_test=100, lr=5e-2, steps=40, record_every=40,
                          generator=torch_generator(0))
    assert abs(a.test_relevant_attn[-1] - b.test_relevant_attn[-1]) < 2e-3
    assert abs(a.test_loss[-1] - b.test_loss[-1]) < 2e-3
    c = ts.run_experiment(cfg, n_test=100, lr=5e-3, steps=40, record_every=40,
                          generator=torch_generator(0))                   # not the same time
    assert abs(a.test_relevant_attn[-1] - c.test_relevant_attn[-1]) > 5e-3


def test_handcrafted_query_three_regimes():
    """Proposition prop-ts-regimes on the notebook's configuration (no training needed)."""
    cfg, train = _data(mu=20.0)
    test = ts.sample(cfg, 200, label_noise=0.0, generator=torch_generator(1000))
    acc = {}
    for lam in (1e-3, 0.4, 100.0):
        p, _ = ts.handcrafted_query(train, scale=lam)
        acc[lam] = (ts.hard_selection_accuracy(train, p, clean=False),
                    ts.hard_selection_accuracy(test, p, clean=True))
    assert acc[1e-3][0] == pytest.approx(0.8) and acc[1e-3][1] >= 0.98      # no overfitting
    assert acc[0.4][0] == 1.0 and acc[0.4][1] >= 0.98                       # benign
    assert acc[100.0][0] == 1.0 and acc[100.0][1] <= 0.9                    # harmful


def test_handcrafted_query_structure_and_validation():
    cfg, train = _data(mu=20.0, d=200)
    p0, selected = ts.handcrafted_query(train, scale=0.0)
    mu_plus, mu_minus = ts.class_signals(cfg)
    torch.testing.assert_close(p0, mu_plus + mu_minus)
    assert (selected[~train.flipped] == 0).all() and (selected[train.flipped] >= 1).all()
    nu = ts.linear_head(cfg)
    i = torch.nonzero(train.flipped).flatten()
    chosen = train.X[i, selected[i]]
    assert (torch.sign(chosen @ nu) == train.y[i]).all()  # each chosen token votes as labelled
    with pytest.raises(ValueError, match="scale must be >= 0.0, got -1.0"):
        ts.handcrafted_query(train, scale=-1.0)
    with pytest.raises(TypeError, match="train_set must be a Sample"):
        ts.handcrafted_query(train.X, scale=1.0)
    with pytest.raises(ValueError, match=r"p must have shape \(d,\)"):
        ts.hard_selection_accuracy(train, torch.zeros(3), clean=True)


def test_train_validates():
    cfg, train = _data(mu=20.0, d=50, n=6)
    h = ts.train(train, train, steps=5, record_every=5, init="identity")
    assert h.steps == [0, 5] and h.attn.shape == (2, 6, cfg.T)
    with pytest.raises(ValueError, match="lr must be > 0.0, got 0.0"):
        ts.train(train, train, lr=0.0, init="identity")
    with pytest.raises(ValueError, match="steps must be >= 1, got 0"):
        ts.train(train, train, steps=0, init="identity")
    with pytest.raises(TypeError, match="test_set must be a Sample"):
        ts.train(train, None)
    with pytest.raises(ValueError, match="generator is required"):
        ts.train(train, train)
    other = ts.sample(ts.TokenData(d=50, mu=5.0), 4, label_noise=0.0, generator=torch_generator(1))
    with pytest.raises(ValueError, match="test_set.cfg must equal train_set.cfg"):
        ts.train(train, other, init="identity")
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        ts.run_experiment(cfg, generator=0)


def test_sample_official_reproduces_the_overlap_of_train_and_test():
    """The official code seeds its training and test sets alike: the test set's first
    sequences share their noise with the training set, and half of those are copies."""
    cfg = ts.TokenData(d=30, mu=5.0)
    train = ts.sample_official(cfg, 20, label_noise=0.2, generator=np.random.default_rng(42))
    test = ts.sample_official(cfg, 100, label_noise=0.0, generator=np.random.default_rng(42))
    torch.testing.assert_close(train.noise, test.noise[:20])
    assert torch.equal(train.X[:10], test.X[:10]) and not torch.equal(train.X[10], test.X[10])
    assert train.flipped.nonzero().flatten().tolist() == [0, 1, 10, 11]
    ref = np.random.default_rng(42).standard_normal((20, cfg.T, cfg.d))   # the official draw
    torch.testing.assert_close(train.noise, torch.tensor(ref, dtype=torch.float32))
    other = ts.sample_official(cfg, 100, label_noise=0.0, generator=np.random.default_rng(0))
    assert not torch.allclose(other.noise[:20], train.noise)
    with pytest.raises(TypeError, match="generator must be a numpy.random.Generator"):
        ts.sample_official(cfg, 4, label_noise=0.0, generator=torch_generator(0))
    with pytest.raises(ValueError, match="cfg must have balanced=True"):
        ts.sample_official(ts.TokenData(d=30, balanced=False), 4, label_noise=0.0,
                           generator=np.random.default_rng(0))
    with pytest.raises(ValueError, match="label_noise must be < 0.5, got 0.5"):
        ts.sample_official(cfg, 4, label_noise=0.5, generator=np.random.default_rng(0))
