import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.recurrent import convolution_tree as O
from flt_lib.recurrent import tasks as TK
from flt_lib.rng import torch_generator



def test_causal_conv_and_glu_definition():
    g = torch_generator(0)
    x = torch.randn(2, 6, 3, generator=g, dtype=torch.float64)
    W, V = torch.randn(4, 3, 2, generator=g, dtype=torch.float64), torch.randn(4, 3, 2, generator=g, dtype=torch.float64)
    b, c = torch.randn(4, generator=g, dtype=torch.float64), torch.randn(4, generator=g, dtype=torch.float64)
    y = O.causal_conv1d(x, W, b)
    t = 3
    torch.testing.assert_close(y[:, t], x[:, t - 1] @ W[:, :, 0].T + x[:, t] @ W[:, :, 1].T + b)
    torch.testing.assert_close(y[:, 0], x[:, 0] @ W[:, :, 1].T + b)   # zero padding on the left
    h = O.glu_layer(x, W, b, V, c)
    torch.testing.assert_close(h, y * torch.sigmoid(O.causal_conv1d(x, V, c)))


@pytest.mark.parametrize("n_layers,k", [(1, 2), (3, 3), (4, 2)])
def test_receptive_field_grows_with_depth(n_layers, k):
    model = O.GatedConvLM(5, d=4, k=k, n_layers=n_layers, generator=torch_generator(1)).double()
    x = torch.randn(16, 4, generator=torch_generator(2), dtype=torch.float64)
    S = TK.jacobian_support(lambda s: model.features(s[None])[0], x)
    r = n_layers * (k - 1) + 1
    for t in range(16):
        assert S[t].nonzero().flatten().tolist() == list(range(max(0, t - r + 1), t + 1))
    assert model(torch.zeros(2, 16, dtype=torch.int64)).shape == (2, 16, 5)


def test_parse_and_triples():
    words, tree = O.parse_bracketing("((the cat) (sat (on (the mat))))")
    assert words == ["the", "cat", "sat", "on", "the", "mat"]
    assert tree == ((0, 1), (2, (3, (4, 5))))
    assert O.tree_triples(tree) == [(0, 0, 1), (0, 1, 5), (2, 2, 5), (3, 3, 5), (4, 4, 5)]


def _random_tree(draw, lo, hi):
    if lo == hi:
        return lo
    k = draw(st.integers(lo, hi - 1))
    return (_random_tree(draw, lo, k), _random_tree(draw, k + 1, hi))


@settings(max_examples=25, deadline=None)
@given(data=st.data(), n=st.integers(1, 9), seed=st.integers(0, 1000))
def test_evaluation_order_does_not_matter(data, n, seed):
    tree = _random_tree(data.draw, 0, n - 1)
    triples = O.tree_triples(tree)
    assert len(triples) == n - 1
    g = torch_generator(seed)
    x = torch.randn(n, 3, generator=g, dtype=torch.float64)
    W, b = torch.randn(3, 6, generator=g, dtype=torch.float64), torch.randn(3, generator=g, dtype=torch.float64)
    ref = O.recursive_encode(x, triples, W, b)
    for order in O.bottom_up_orders(triples, 3, generator=g):
        out = O.recursive_encode(x, triples, W, b, order=order)
        assert all(torch.equal(out[key], ref[key]) for key in ref)


def test_bad_inputs():
    with pytest.raises(ValueError, match="every bracket must hold exactly two constituents"):
        O.parse_bracketing("(a b c)")
    with pytest.raises(ValueError, match="missing '\\)'"):
        O.parse_bracketing("((a b)")
    with pytest.raises(ValueError, match="the leaves must be contiguous"):
        O.tree_triples((0, 2))
    triples = O.tree_triples(((0, 1), 2))
    x, W, b = torch.ones(3, 2), torch.ones(2, 4), torch.ones(2)
    with pytest.raises(ValueError, match="order computes"):
        O.recursive_encode(x, triples, W, b, order=[(0, 1, 2), (0, 0, 1)])
    with pytest.raises(ValueError, match=r"W must have shape \(d, 2d\)"):
        O.recursive_encode(x, triples, torch.ones(2, 3), b)
    with pytest.raises(ValueError, match="needs the span"):
        O.recursive_encode(x, [(0, 1, 2)], W, b)
    with pytest.raises(ValueError, match=r"weight must have shape \(c_out, c_in, k\) with c_in = 3"):
        O.causal_conv1d(torch.ones(1, 4, 3), torch.ones(2, 2, 2))
    with pytest.raises(ValueError, match="k must be >= 1"):
        O.GatedConvLM(4, k=0, generator=torch_generator(0))


def test_lag_copy_batch_and_training():
    x, y = O.lag_copy_batch(5, 10, 4, 3, generator=torch_generator(7))
    assert x.shape == y.shape == (5, 10)
    assert (y[:, :3] == -100).all() and torch.equal(y[:, 3:], x[:, :7])
    model = O.GatedConvLM(4, d=4, k=2, n_layers=1, generator=torch_generator(8))
    h = O.train_lag_copy(model, lag=1, T=8, steps=5, batch_size=4, lr=1e-2,
                         generator=torch_generator(9), n_test=8)
    assert len(h.loss) == 5 and 0.0 <= h.test_acc <= 1.0
    with pytest.raises(ValueError, match="lag must be < T = 10"):
        O.lag_copy_batch(2, 10, 4, 10, generator=torch_generator(0))
    with pytest.raises(TypeError, match="model must be a GatedConvLM"):
        O.train_lag_copy(torch.nn.Linear(2, 2), lag=1, T=4, steps=1, batch_size=2, lr=1e-2,
                         generator=torch_generator(0))
