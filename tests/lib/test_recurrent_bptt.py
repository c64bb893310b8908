import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.recurrent import bptt as BP
from flt_lib.recurrent import elman as E
from flt_lib.rng import torch_generator



def _problem(seed=0, B=2, T=9, n=3, m=4, q=2, gain=1.5):
    g = torch_generator(seed)
    w = E.elman_init(n, m, generator=g, gain=gain)
    x = torch.randn(B, T, n, generator=g, dtype=torch.float64)
    W = torch.randn(q, m, generator=g, dtype=torch.float64)
    Y = torch.randn(B, T, q, generator=g, dtype=torch.float64)
    return w, x, W, Y


def _autograd(w, x, W, Y, activation="tanh"):
    U, V, b, W2 = (t.clone().requires_grad_(True) for t in (w.U, w.V, w.b, W))
    BP.readout_loss(E.elman(x, E.ElmanWeights(U=U, V=V, b=b), activation=activation), W2, Y).backward()
    return U.grad, V.grad, b.grad, W2.grad


@pytest.mark.parametrize("activation", ["tanh", "relu", "linear"])
def test_bptt_equals_autograd(activation):
    w, x, W, Y = _problem(gain=0.8)
    r = BP.bptt(x, w, W, Y, activation=activation)
    for ours, ref in zip((r.dU, r.dV, r.db, r.dW), _autograd(w, x, W, Y, activation)):
        torch.testing.assert_close(ours, ref, rtol=0, atol=1e-10)


@settings(max_examples=10, deadline=None)
@given(k=st.integers(1, 6), seed=st.integers(0, 1000))
def test_truncated_bptt_equals_autograd_with_detached_starts(k, seed):
    w, x, W, Y = _problem(seed, T=7)
    r = BP.bptt(x, w, W, Y, truncate=k)
    U, V, b = (t.clone().requires_grad_(True) for t in (w.U, w.V, w.b))
    Z = E.elman(x, w).detach()
    total = 0.0
    for s in range(x.shape[1]):            # each loss term sees only the last k steps
        start = max(s - k + 1, 0)
        z0 = Z[:, start - 1] if start > 0 else None
        Zs = E.elman(x[:, start:s + 1], E.ElmanWeights(U=U, V=V, b=b), z0=z0)
        total = total + 0.5 * ((Zs[:, -1] @ W.T - Y[:, s]) ** 2).sum()
    total.backward()
    for ours, ref in zip((r.dU, r.dV, r.db), (U.grad, V.grad, b.grad)):
        torch.testing.assert_close(ours, ref, rtol=0, atol=1e-10)
    full = BP.bptt(x, w, W, Y, truncate=x.shape[1])
    torch.testing.assert_close(full.dU, BP.bptt(x, w, W, Y).dU, rtol=0, atol=1e-12)


def test_jacobians_and_gradient_bound():
    g = torch_generator(3)
    m = 6
    w = E.ElmanWeights(U=2.0 * torch.randn(m, m, generator=g, dtype=torch.float64) / math.sqrt(m),
                       V=torch.randn(m, 2, generator=g, dtype=torch.float64), b=torch.zeros(m, dtype=torch.float64))
    x = torch.randn(12, 2, generator=g, dtype=torch.float64)
    J = BP.step_jacobians(x, w)
    f = lambda z0: E.elman(x[None], w, z0=z0[None])[0, -1]  # noqa: E731
    ref = torch.autograd.functional.jacobian(f, torch.zeros(m, dtype=torch.float64))
    norms = BP.jacobian_norms(J)
    assert norms[-1].item() == pytest.approx(torch.linalg.matrix_norm(ref, ord=2).item(), rel=1e-12)
    s1 = torch.linalg.matrix_norm(w.U, ord=2).item()        # alpha = 1 for tanh
    assert all(norms[k].item() <= s1**k * (1 + 1e-12) for k in range(len(norms)))


def test_linear_rnn_norm_growth_rate_is_spectral_radius():
    U = torch.randn(8, 8, generator=torch_generator(4), dtype=torch.float64) / math.sqrt(8)
    rho = torch.linalg.eigvals(U).abs().max().item()
    J = U.expand(300, 8, 8)
    norms = BP.jacobian_norms(J).numpy()
    slope = np.polyfit(np.arange(150, 301), np.log(norms[150:301]), 1)[0]
    assert slope == pytest.approx(math.log(rho), abs=1e-3)


def test_clip_by_norm_matches_torch():
    g = torch_generator(5)
    grads = [torch.randn(3, 4, generator=g, dtype=torch.float64), torch.randn(5, generator=g, dtype=torch.float64)]
    clipped, norm = BP.clip_by_norm(grads, 0.5)
    params = [torch.nn.Parameter(torch.zeros_like(t)) for t in grads]
    for p, t in zip(params, grads):
        p.grad = t.clone()
    ref_norm = torch.nn.utils.clip_grad_norm_(params, 0.5)
    assert norm == pytest.approx(ref_norm.item(), rel=1e-12)
    for c, p in zip(clipped, params):
        torch.testing.assert_close(c, p.grad, rtol=1e-5, atol=0)   # torch adds 1e-6 to the norm
    small, _ = BP.clip_by_norm(grads, 1e3)
    assert all(torch.equal(a, b) for a, b in zip(small, grads))


def test_cliff_clipping_converges_plain_gd_diverges():
    start = torch.tensor([0.9, 0.5], dtype=torch.float64)
    plain = BP.train_cliff(start, target=2.0, lr=0.01, steps=60)
    clipped = BP.train_cliff(start, target=2.0, lr=0.01, steps=150, clip=1.0)
    assert not torch.isfinite(plain.loss[-1]) or plain.loss[-1] > 1e6
    assert clipped.loss[-1] < 1e-10
    assert (clipped.step_norm <= 0.01 * 1.0 * (1 + 1e-12)).all()
    z = BP.cliff_model(torch.tensor([[0.5, 1.0], [1.0, 1.0]], dtype=torch.float64), T=3, z0=0.5)
    torch.testing.assert_close(z, torch.tensor([0.5**4 + 1 + 0.5 + 0.25, 0.5 + 3.0], dtype=torch.float64))


def test_bad_inputs():
    w, x, W, Y = _problem()
    with pytest.raises(ValueError, match="truncate must be >= 1"):
        BP.bptt(x, w, W, Y, truncate=0)
    with pytest.raises(ValueError, match="Y must have shape"):
        BP.readout_loss(E.elman(x, w), W, Y[:, :3])
    with pytest.raises(ValueError, match="x must be a 2-D tensor"):
        BP.step_jacobians(x, w)
    with pytest.raises(ValueError, match=r"J must have shape \(T, m, m\)"):
        BP.jacobian_norms(torch.ones(3, 2, 4))
    with pytest.raises(ValueError, match="threshold must be > 0.0"):
        BP.clip_by_norm([torch.ones(2)], 0.0)
    with pytest.raises(TypeError, match="grads must be a non-empty sequence"):
        BP.clip_by_norm(torch.ones(2), 1.0)
    with pytest.raises(ValueError, match=r"params must have shape \(\.\.\., 2\)"):
        BP.cliff_model(torch.ones(3))
    with pytest.raises(ValueError, match="lr must be > 0.0"):
        BP.train_cliff(torch.ones(2), target=1.0, lr=0.0, steps=3)
