"""Tests for flt_lib.autodiff: the scalar reverse sweep and the MLP delta recursion."""

from __future__ import annotations

import math

import pytest
import torch
import torch._dynamo  # noqa: F401  torch.testing and gradcheck import it lazily (1-3 s): pay it at collection
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib import autodiff as ad
from flt_lib.feedforward import mlp
from flt_lib.rng import torch_generator

D = torch.float64


def _mlp(sizes, seed=0):
    g = torch_generator(seed)
    params = [
        (torch.randn(m_out, m_in, generator=g, dtype=D) / math.sqrt(m_in),
         0.1 * torch.randn(m_out, generator=g, dtype=D))
        for m_in, m_out in zip(sizes[:-1], sizes[1:])
    ]
    return params, g


def _torch_loss(params, X, Y):
    return 0.5 * ((mlp.mlp_forward(params, X, activation="tanh") - Y) ** 2).sum()


reals = st.floats(min_value=0.2, max_value=2.0)


@settings(max_examples=25, deadline=None)
@given(reals, reals, reals)
def test_value_matches_autograd_on_expressions(x, y, z):
    a, b, c = ad.Value(x), ad.Value(-y), ad.Value(z)
    f = (a * b).tanh() + a**3 / c - (b * c).exp().log() + (a - c).relu() * b.sigmoid() + 2.0 / a - 1.5
    f.backward()
    at, bt, ct = (torch.tensor(v, dtype=D, requires_grad=True) for v in (x, -y, z))
    ft = torch.tanh(at * bt) + at**3 / ct - torch.log(torch.exp(bt * ct)) + torch.relu(at - ct) * torch.sigmoid(bt) + 2.0 / at - 1.5
    ft.backward()
    assert f.data == pytest.approx(ft.item(), abs=1e-12)
    for v, t in [(a, at), (b, bt), (c, ct)]:
        assert v.grad == pytest.approx(t.grad.item(), abs=1e-10)


def test_shared_node_accumulates_gradient():
    a = ad.Value(3.0)
    f = a * a + a  # df/da = 2a + 1
    f.backward()
    assert a.grad == 7.0
    f.backward()  # a second call resets, it does not double
    assert a.grad == 7.0


def test_value_mlp_matches_delta_recursion_and_autograd():
    params, g = _mlp([3, 4, 3, 2])
    x, y = torch.randn(3, generator=g, dtype=D), torch.randn(2, generator=g, dtype=D)
    loss, W, b = ad.value_mlp_loss(params, x, y)
    loss.backward()
    hidden = mlp.hidden_activations(params, x[None], activation="tanh")
    grads, _ = ad.backprop(params, x[None], hidden, hidden[-1] - y[None])
    leaves = [(Wl.clone().requires_grad_(), bl.clone().requires_grad_()) for Wl, bl in params]
    lt = _torch_loss(leaves, x[None], y[None])
    lt.backward()
    assert loss.data == pytest.approx(lt.item(), abs=1e-12)
    for layer, ((dW, db), (Wt, bt)) in enumerate(zip(grads, leaves)):
        got = torch.tensor([[w.grad for w in row] for row in W[layer]], dtype=D)
        torch.testing.assert_close(got, dW, atol=1e-12, rtol=0)
        torch.testing.assert_close(dW, Wt.grad, atol=1e-12, rtol=0)
        torch.testing.assert_close(db, bt.grad, atol=1e-12, rtol=0)
        got_b = torch.tensor([v.grad for v in b[layer]], dtype=D)
        torch.testing.assert_close(got_b, db, atol=1e-12, rtol=0)


class _DeltaMLP(torch.autograd.Function):
    """Autograd wrapper whose backward is our delta recursion, so gradcheck can test it."""

    @staticmethod
    def forward(ctx, X, W1, b1, W2, b2):
        h1, h2 = mlp.hidden_activations([(W1, b1), (W2, b2)], X, activation="tanh")
        ctx.save_for_backward(X, W1, b1, W2, b2, h1, h2)
        return h2

    @staticmethod
    def backward(ctx, grad_out):
        X, W1, b1, W2, b2, h1, h2 = ctx.saved_tensors
        grads, dX = ad.backprop([(W1, b1), (W2, b2)], X, [h1, h2], grad_out)
        return dX, grads[0][0], grads[0][1], grads[1][0], grads[1][1]


def test_delta_recursion_passes_gradcheck():
    params, g = _mlp([3, 6, 2], seed=3)
    X = torch.randn(4, 3, generator=g, dtype=D)
    (W1, b1), (W2, b2) = params
    inputs = [t.clone().requires_grad_() for t in (X, W1, b1, W2, b2)]
    assert torch.autograd.gradcheck(_DeltaMLP.apply, inputs, eps=1e-6, atol=1e-7)


def test_value_graph_passes_gradcheck():
    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            vs = [ad.Value(float(v)) for v in t.tolist()]
            out = (vs[0] * vs[1]).tanh() + vs[2].sigmoid() * vs[0] + vs[1] ** 2
            out.backward()
            ctx.save_for_backward(torch.tensor([v.grad for v in vs], dtype=D))
            return torch.tensor(out.data, dtype=D)

        @staticmethod
        def backward(ctx, grad_out):
            return grad_out * ctx.saved_tensors[0]

    t = torch.tensor([0.3, -0.8, 1.1], dtype=D, requires_grad=True)
    assert torch.autograd.gradcheck(F.apply, (t,), eps=1e-6, atol=1e-7)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(1, 5), st.integers(1, 3))
def test_backward_flops_at_most_four_times_forward(m, k, out):
    params, g = _mlp([k, m, m, out], seed=m * 31 + k)
    x, y = torch.randn(k, generator=g, dtype=D), torch.zeros(out, dtype=D)
    loss, _, _ = ad.value_mlp_loss(params, x, y)
    fwd, bwd = ad.forward_flops(loss), loss.backward()
    assert bwd <= 4 * fwd
    assert fwd == ad.backprop_flops([k, m, m, out])[0] + 3 * out  # the loss: 3 flops per output


def test_backprop_flops_closed_form():
    fwd, bwd = ad.backprop_flops([3, 4, 2], n=5)
    # forward: layer 1: 5*4*(2*3-1) + 5*4 bias + 5*4 tanh = 140; layer 2: 5*2*(2*4-1) + 5*2 = 80
    assert fwd == 220
    # backward: layer 2: dW 2*4*9 + db 4*2 + delta@W 5*4*3 + tanh' 3*5*4 = 72+8+60+60 = 200
    #           layer 1: dW 4*3*9 + db 4*4 + dX 5*3*7 = 108+16+105 = 229
    assert bwd == 429
    ratios = [b / f for f, b in (ad.backprop_flops([m] * 4, n=64) for m in (8, 64, 256))]
    assert all(1.9 < r < 2.2 for r in ratios)


def test_bad_inputs():
    with pytest.raises(TypeError, match="data must be a real number"):
        ad.Value("3")
    with pytest.raises(TypeError, match="exponent"):
        ad.Value(2.0) ** ad.Value(3.0)
    with pytest.raises(TypeError, match="root must be a Value"):
        ad.topological_order(3.0)
    params, _ = _mlp([3, 4, 2])
    with pytest.raises(ValueError, match=r"params\[1\] \(W\) must have 4 columns"):
        ad.value_mlp_loss([params[0], params[0]], torch.zeros(3, dtype=D), torch.zeros(4, dtype=D))
    with pytest.raises(ValueError, match="y must have shape"):
        ad.value_mlp_loss(params, torch.zeros(3, dtype=D), torch.zeros(5, dtype=D))
    X = torch.zeros(2, 3, dtype=D)
    hidden = mlp.hidden_activations(params, X, activation="tanh")
    with pytest.raises(ValueError, match="delta_out must have shape"):
        ad.backprop(params, X, hidden, torch.zeros(2, 3, dtype=D))
    with pytest.raises(ValueError, match="hidden must hold 2 activations"):
        ad.backprop(params, X, hidden[:1], torch.zeros(2, 2, dtype=D))
    with pytest.raises(ValueError, match="sizes must list"):
        ad.backprop_flops([3])
    with pytest.raises(ValueError, match="n must be >= 1"):
        ad.backprop_flops([3, 2], n=0)
