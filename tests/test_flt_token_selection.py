import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.flt import token_selection as ts
from flt_lib.rng import torch_generator


def _data(mu=20.0, n=20, seed=0, eta=0.2, **kw):
    cfg = ts.TokenData(mu=mu, **kw)
    return cfg, ts.sample(cfg, n, label_noise=eta, generator=torch_generator(seed))


def test_config_validation():
    assert ts.TokenData(mu=20.0, d=2000).snr == pytest.approx(20 / math.sqrt(2000))
    with pytest.raises(ValueError, match="mu must be > 0.0, got 0.0"):
        ts.TokenData(mu=0.0)
    with pytest.raises(ValueError, match="T must be >= 3, got 2"):
        ts.TokenData(T=2, opposite_token=True)
    with pytest.raises(TypeError, match="d must be an int"):
        ts.TokenData(d=10.5)


def test_sample_structure():
    cfg, s = _data(n=40, eta=0.2, d=300)
    assert s.X.shape == (40, cfg.T, 300) and s.y.shape == (40,)
    assert int(s.flipped.sum()) == math.ceil(0.2 * 40)
    assert torch.equal(s.y[s.flipped], -s.y_clean[s.flipped])
    assert torch.equal(s.y[~s.flipped], s.y_clean[~s.flipped])
    mu_plus, mu_minus = ts.class_signals(cfg)
    own = torch.where(s.y_clean[:, None] == 1, mu_plus, mu_minus)
    # The tokens are exactly signal + noise, token by token.
    torch.testing.assert_close(s.X[:, 0], own + s.noise[:, 0])
    torch.testing.assert_close(s.X[:, 1], cfg.rho * own + s.noise[:, 1])
    torch.testing.assert_close(s.X[:, 2:], s.noise[:, 2:])


def test_opposite_token_variant():
    cfg, s = _data(n=10, d=50, opposite_token=True)
    mu_plus, mu_minus = ts.class_signals(cfg)
    other = torch.where(s.y_clean[:, None] == 1, mu_minus, mu_plus)
    torch.testing.assert_close(s.X[:, 2], cfg.rho * other + s.noise[:, 2])


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
    att, f = ts.attention(s.X, W, p), ts.predict(s.X, W, p, nu)
    for i in range(5):
        logits = torch.stack([s.X[i, t] @ (W @ p) for t in range(cfg.T)])
        ref = torch.softmax(logits, dim=0)
        torch.testing.assert_close(att[i], ref)
        torch.testing.assert_close(f[i], sum(ref[t] * (s.X[i, t] @ nu) for t in range(cfg.T)))
    torch.testing.assert_close(att.sum(dim=1), torch.ones(5))


def test_attention_bad_shapes():
    X = torch.zeros(2, 3, 4)
    with pytest.raises(ValueError, match=r"X must be a 3-D tensor \(n, T, d\), got shape \(3, 4\)"):
        ts.attention(torch.zeros(3, 4), torch.eye(4), torch.zeros(4))
    with pytest.raises(ValueError, match=r"W must have shape \(d, d\) = \(4, 4\), got \(3, 3\)"):
        ts.attention(X, torch.eye(3), torch.zeros(4))
    with pytest.raises(ValueError, match=r"p must have shape \(d,\) = \(4,\), got \(5,\)"):
        ts.attention(X, torch.eye(4), torch.zeros(5))
    with pytest.raises(ValueError, match=r"nu must have shape \(d,\)"):
        ts.predict(X, torch.eye(4), torch.zeros(4), torch.zeros(3))
    with pytest.raises(ValueError, match=r"margins must be a 1-D tensor"):
        ts.logistic_loss(torch.zeros(2, 2))


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), d=st.integers(3, 12), T=st.integers(2, 5), n=st.integers(1, 6))
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
        ts.gradients(torch.zeros(2, 3, 4), torch.zeros(3), torch.eye(4), torch.zeros(4), torch.zeros(4))


def test_handcrafted_query_three_regimes():
    """Proposition prop-ts-regimes on the notebook's configuration (no training needed)."""
    cfg, train = _data(mu=20.0)
    test = ts.sample(cfg, 200, label_noise=0.0, generator=torch_generator(1000))
    acc = {}
    for lam in (1e-3, 0.4, 100.0):
        p, _ = ts.handcrafted_query(train, cfg, lam)
        acc[lam] = (ts.hard_selection_accuracy(train, p, cfg, clean=False),
                    ts.hard_selection_accuracy(test, p, cfg, clean=True))
    assert acc[1e-3][0] == pytest.approx(0.8) and acc[1e-3][1] >= 0.98      # no overfitting
    assert acc[0.4][0] == 1.0 and acc[0.4][1] >= 0.98                       # benign
    assert acc[100.0][0] == 1.0 and acc[100.0][1] <= 0.9                    # harmful


def test_handcrafted_query_structure_and_validation():
    cfg, train = _data(mu=20.0, d=200)
    p0, selected = ts.handcrafted_query(train, cfg, 0.0)
    mu_plus, mu_minus = ts.class_signals(cfg)
    torch.testing.assert_close(p0, mu_plus + mu_minus)
    assert (selected[~train.flipped] == 0).all() and (selected[train.flipped] >= 1).all()
    nu = ts.linear_head(cfg)
    i = torch.nonzero(train.flipped).flatten()
    chosen = train.X[i, selected[i]]
    assert (torch.sign(chosen @ nu) == train.y[i]).all()  # each chosen token votes for the flipped label
    with pytest.raises(ValueError, match="scale must be >= 0.0, got -1.0"):
        ts.handcrafted_query(train, cfg, -1.0)
    with pytest.raises(TypeError, match="train_set must be a Sample"):
        ts.handcrafted_query(train.X, cfg, 1.0)
    with pytest.raises(ValueError, match=r"p must have shape \(d,\)"):
        ts.hard_selection_accuracy(train, torch.zeros(3), cfg, clean=True)


def test_training_fits_noise_at_low_snr():
    """Harmful regime (mu = 5): GD fits every noisy label, and clean test accuracy is below 1.

    Only p is trained here, to keep the test fast; the notebook trains W and p.
    """
    cfg, train = _data(mu=5.0)
    test = ts.sample(cfg, 200, label_noise=0.0, generator=torch_generator(1000))
    h = ts.train(train, test, cfg, lr=5e-3, steps=300, record_every=100, train_W=False)
    assert h.train_acc[0] == pytest.approx(0.8, abs=0.15)
    assert h.train_acc[-1] == 1.0 and h.test_acc[-1] < 0.97
    assert h.train_loss[-1] < h.train_loss[0]
    assert h.attn.shape == (4, 20, cfg.T) and h.steps == [0, 100, 200, 300]


def test_train_p_only_keeps_identity_and_validates():
    cfg, train = _data(mu=20.0, d=50, n=6)
    h = ts.train(train, train, cfg, steps=5, record_every=5, train_W=False)
    assert torch.equal(h.W, torch.eye(50)) and h.p.norm() > 0
    with pytest.raises(ValueError, match="lr must be > 0.0, got 0.0"):
        ts.train(train, train, cfg, lr=0.0)
    with pytest.raises(ValueError, match="steps must be >= 1, got 0"):
        ts.train(train, train, cfg, steps=0)
    with pytest.raises(TypeError, match="test_set must be a Sample"):
        ts.train(train, None, cfg)
