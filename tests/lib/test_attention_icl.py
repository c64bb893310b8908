import pytest
import torch

from flt_lib.attention import icl
from flt_lib.rng import torch_generator


def _prompts(B=64, N=12, d=4, noise=0.3, seed=0):
    return icl.sample_prompts(B, N, d, noise=noise, generator=torch_generator(seed))


def test_prompts_hide_the_query_target_and_follow_w():
    p = _prompts(noise=0.0)
    assert p.tokens.shape == (64, 13, 5) and p.target.shape == (64,)
    assert torch.all(p.tokens[:, -1, -1] == 0)
    y = (p.tokens[:, :-1, :-1] @ p.w[:, :, None])[..., 0]
    torch.testing.assert_close(y, p.tokens[:, :-1, -1])
    torch.testing.assert_close(p.target, (p.tokens[:, -1, :-1] * p.w).sum(-1))


@pytest.mark.parametrize("layers", [1, 2, 5])
def test_construction_is_k_steps_of_gradient_descent(layers):
    p = _prompts()
    W_kq, W_pv = icl.gd_construction(4, 0.6)
    lsa = icl.lsa_predict(p.tokens, W_kq, W_pv, layers=layers)
    gd = icl.gd_predict(p.tokens, eta=0.6, steps=layers)
    assert (lsa - gd).abs().max() < 1e-12


def test_lsa_layer_equals_a_loop_over_tokens():
    g = torch_generator(1)
    Z = torch.randn(3, 6, 4, generator=g, dtype=torch.float64)
    W_kq, W_pv = (torch.randn(4, 4, generator=g, dtype=torch.float64) for _ in range(2))
    out = icl.lsa_layer(Z, W_kq, W_pv)
    N = 5
    for b in range(3):
        for j in range(6):
            upd = sum(W_pv @ Z[b, i] * (Z[b, i] @ W_kq @ Z[b, j]) for i in range(N)) / N
            torch.testing.assert_close(out[b, j], Z[b, j] + upd)


def test_one_step_risk_matches_monte_carlo_and_ridge_limits():
    p = icl.sample_prompts(40000, 10, 3, noise=0.5, generator=torch_generator(2))
    for eta in (0.3, 10 / 14.25):
        err = (icl.gd_predict(p.tokens, eta=eta, steps=1) - p.target) ** 2
        theory = icl.one_step_risk(eta, d=3, n_context=10, noise=0.5)
        assert abs(err.mean() - theory) < 4 * err.std() / 200
    # ridge with lam -> 0 is least squares, and many GD steps converge to it
    ls = icl.ridge_predict(p.tokens[:50], lam=0.0)
    gd = icl.gd_predict(p.tokens[:50], eta=0.3, steps=3000)
    assert (ls - gd).abs().max() < 1e-8


def test_construction_distance_is_scale_invariant_and_zero_at_the_construction():
    W_kq, W_pv = icl.gd_construction(3, 0.5)
    assert icl.construction_distance(W_kq, W_pv, 0.5) == 0.0
    assert icl.construction_distance(2 * W_kq, W_pv / 2, 0.5) < 1e-15
    assert abs(icl.construction_distance(W_kq, W_pv, 0.25) - 1.0) < 1e-12


def test_train_lsa_moves_towards_the_construction():
    h = icl.train_lsa(2, 8, steps=300, batch=128, lr=2e-2, record_every=100,
                      generator=torch_generator(3))
    assert h.steps == [100, 200, 300] and len(h.loss) == 3
    assert h.distance[-1] < 0.1


def test_bad_input_names_the_argument():
    p = _prompts()
    with pytest.raises(ValueError, match="n_context must be >= 1"):
        icl.sample_prompts(4, 0, 3, generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        icl.sample_prompts(4, 3, 3, generator=0)
    with pytest.raises(ValueError, match="noise must be >= 0"):
        icl.sample_prompts(4, 3, 3, noise=-1.0, generator=torch_generator(0))
    with pytest.raises(ValueError, match="tokens must be a 3-D tensor"):
        icl.gd_predict(p.tokens[0], eta=0.1, steps=1)
    with pytest.raises(ValueError, match="eta must be > 0"):
        icl.gd_construction(3, 0.0)
    with pytest.raises(ValueError, match="W_kq must have shape"):
        icl.lsa_predict(p.tokens, torch.zeros(3, 3), torch.zeros(5, 5))
    with pytest.raises(ValueError, match="layers must be >= 1"):
        icl.lsa_predict(p.tokens, *icl.gd_construction(4, 0.1), layers=0)
    with pytest.raises(ValueError, match="lam must be >= 0"):
        icl.ridge_predict(p.tokens, lam=-1.0)
    with pytest.raises(ValueError, match="W_kq must be square"):
        icl.construction_distance(torch.zeros(3, 4), torch.zeros(3, 4), 0.1)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        icl.train_lsa(2, 3, steps=0, batch=2, lr=0.1, generator=torch_generator(0))
