"""Tests for flt_lib.feedforward.mlp (sections 2.2 and 2.3)."""

import pytest
import torch
import torch._dynamo  # noqa: F401  torch.optim imports it lazily (about 1.5 s): pay it at collection
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.feedforward import mlp
from flt_lib.rng import torch_generator


def _net(sizes=(3, 5, 4, 2), seed=0):
    g = torch_generator(seed)
    params = mlp.init_mlp(list(sizes), generator=g, dtype=torch.float64)
    params = [(W, torch.randn(W.shape[0], generator=g, dtype=torch.float64)) for W, _ in params]
    x = torch.randn(7, sizes[0], generator=g, dtype=torch.float64)
    return params, x


def test_forward_matches_nn_sequential():
    params, x = _net()
    seq = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    with torch.no_grad():
        for lin, (W, b) in zip([seq[0], seq[2], seq[4]], params):
            lin.weight.copy_(W)
            lin.bias.copy_(b)
    assert torch.allclose(mlp.mlp_forward(params, x), seq(x), atol=1e-12)
    assert len(mlp.hidden_activations(params, x)) == 3


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), act=st.sampled_from(["tanh", "relu", "sigmoid"]))
def test_permutation_symmetry_property(seed, act):
    params, x = _net(seed=seed)
    g = torch_generator(seed + 1)
    perm_params = mlp.random_symmetry(params, generator=g)
    assert torch.allclose(mlp.mlp_forward(params, x, activation=act), mlp.mlp_forward(perm_params, x, activation=act), atol=1e-12)
    # the hidden representation is permuted, not unchanged
    p = torch.randperm(5, generator=g)
    h = mlp.hidden_activations(params, x, activation=act)[0]
    h_p = mlp.hidden_activations(mlp.permute_hidden(params, 0, p), x, activation=act)[0]
    assert torch.allclose(h_p, h[:, p], atol=1e-12)


def test_sign_flip_symmetry_only_for_odd_activation():
    params, x = _net()
    signs = torch.tensor([1, -1, -1, 1, -1])
    flipped = mlp.flip_signs(params, 0, signs)
    assert torch.allclose(mlp.mlp_forward(params, x, activation="tanh"), mlp.mlp_forward(flipped, x, activation="tanh"), atol=1e-12)
    assert not torch.allclose(mlp.mlp_forward(params, x, activation="relu"), mlp.mlp_forward(flipped, x, activation="relu"), atol=1e-3)
    full = mlp.random_symmetry(params, generator=torch_generator(3), with_signs=True)
    assert torch.allclose(mlp.mlp_forward(params, x, activation="tanh"), mlp.mlp_forward(full, x, activation="tanh"), atol=1e-12)


def test_count_symmetries_brute_force():
    # brute force: apply all perms x signs of a 3-unit layer and count distinct parameter vectors
    import itertools

    params, _ = _net(sizes=(2, 3, 1))
    seen = set()
    for perm in itertools.permutations(range(3)):
        for signs in itertools.product([-1, 1], repeat=3):
            q = mlp.flip_signs(mlp.permute_hidden(params, 0, torch.tensor(perm)), 0, torch.tensor(signs))
            seen.add(tuple(torch.cat([t.flatten() for layer in q for t in layer]).round(decimals=10).tolist()))
    assert len(seen) == mlp.count_symmetries([3], odd=True) == 48
    assert mlp.count_symmetries([3, 4], odd=False) == 6 * 24


def test_interpolate_endpoints_and_fit_mlp():
    g = torch_generator(4)
    X = torch.rand(50, 2, generator=g) * 2 - 1
    y = torch.sin(3 * X[:, :1])
    p0 = mlp.init_mlp([2, 8, 1], generator=g)
    fit = mlp.fit_mlp(p0, X, y, lr=3e-2, steps=30)
    p, losses = fit.params, fit.losses
    assert losses[-1] < 0.5 * losses[0]
    q = mlp.random_symmetry(p, generator=g)
    for (Wa, ba), (Wb, bb) in zip(mlp.interpolate(p, q, 0.0), p):
        assert torch.equal(Wa, Wb) and torch.equal(ba, bb)
    assert torch.allclose(mlp.mlp_forward(mlp.interpolate(p, q, 1.0), X), mlp.mlp_forward(p, X), atol=1e-5)


def test_compose_linear_equals_deep_linear_net_and_rank():
    g = torch_generator(5)
    Ws = [torch.randn(m_out, m_in, generator=g, dtype=torch.float64) for m_in, m_out in [(6, 8), (8, 2), (2, 8), (8, 6)]]
    x = torch.randn(10, 6, generator=g, dtype=torch.float64)
    params = [(W, torch.zeros(W.shape[0], dtype=torch.float64)) for W in Ws]
    M = mlp.compose_linear(Ws)
    assert torch.allclose(mlp.mlp_forward(params, x, activation="identity"), x @ M.T, atol=1e-10)
    assert torch.linalg.matrix_rank(M).item() == 2


def test_residual_layer_identity_and_projection():
    g = torch_generator(6)
    x = torch.randn(4, 5, generator=g)
    for act in ["relu", "tanh", "sigmoid"]:
        out = mlp.residual_layer(x, torch.zeros(5, 5), torch.zeros(5), activation=act)
        assert torch.equal(out, x)
    V = torch.randn(3, 5, generator=g)
    out = mlp.residual_layer(x, torch.zeros(3, 5), torch.zeros(3), V=V)
    assert torch.allclose(out, x @ V.T)


def test_deep_mlp_residual_zero_blocks_and_same_params():
    g = torch_generator(7)
    plain = mlp.DeepMLP(3, 6, 4, 1, residual=False, generator=torch_generator(1))
    res = mlp.DeepMLP(3, 6, 4, 1, residual=True, generator=torch_generator(1))
    for a, b in zip(plain.parameters(), res.parameters()):
        assert torch.equal(a, b)
    with torch.no_grad():
        for blk in res.blocks:
            blk.weight.zero_()
            blk.bias.zero_()
    x = torch.randn(5, 3, generator=g)
    shallow = res.out(torch.tanh(res.inp(x)))
    assert torch.allclose(res(x), shallow, atol=1e-6)
    fit = mlp.train_regressor(res, x, torch.ones(5, 1), lr=1e-2, steps=5)
    assert fit.losses.shape == (5,) and fit.losses[-1] < fit.losses[0]


def test_dense_forward_concatenates():
    g = torch_generator(8)
    x = torch.randn(4, 3, generator=g)
    params = [(torch.randn(2, 3 + 2 * i, generator=g), torch.zeros(2)) for i in range(3)]
    out = mlp.dense_forward(params, x)
    assert out.shape == (4, 3 + 3 * 2)
    assert torch.equal(out[:, :3], x)
    h1 = torch.relu(x @ params[0][0].T)
    assert torch.allclose(out[:, 3:5], h1)


def test_bad_inputs():
    params, x = _net()
    with pytest.raises(ValueError, match="activation must be one of"):
        mlp.activation_fn("gelu")
    with pytest.raises(ValueError, match="sizes must be a list of at least 2"):
        mlp.init_mlp([3], generator=torch_generator(0))
    with pytest.raises(ValueError, match="x must have 3 columns"):
        mlp.mlp_forward(params, x[:, :2])
    with pytest.raises(ValueError, match="x must have 3 columns"):
        mlp.hidden_activations(params, x[:, :2])
    with pytest.raises(ValueError, match="perm must be a permutation"):
        mlp.permute_hidden(params, 0, torch.tensor([0, 0, 1, 2, 3]))
    with pytest.raises(ValueError, match="layer must be <= 1"):
        mlp.permute_hidden(params, 2, torch.arange(2))
    with pytest.raises(ValueError, match="signs must contain only -1 and \\+1"):
        mlp.flip_signs(params, 0, torch.tensor([1, 0, 1, 1, 1]))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        mlp.random_symmetry(params, generator=0)
    with pytest.raises(ValueError, match="widths\\[i\\] must be >= 1"):
        mlp.count_symmetries([0], odd=True)
    with pytest.raises(ValueError, match="same layer shapes"):
        mlp.interpolate(params, _net(sizes=(3, 4, 4, 2))[0], 0.5)
    with pytest.raises(ValueError, match="y must have shape"):
        mlp.fit_mlp(params, x, torch.zeros(7, 1, dtype=torch.float64), lr=0.1, steps=1)
    with pytest.raises(ValueError, match="weights\\[1\\] must have 3 columns"):
        mlp.compose_linear([torch.zeros(3, 2), torch.zeros(2, 2)])
    with pytest.raises(ValueError, match="V \\(a projection\\) is required"):
        mlp.residual_layer(torch.zeros(2, 3), torch.zeros(4, 3), torch.zeros(4))
    with pytest.raises(ValueError, match="depth must be >= 0"):
        mlp.DeepMLP(2, 3, -1, 1, residual=True, generator=torch_generator(0))
    with pytest.raises(ValueError, match="steps must be >= 1"):
        mlp.train_regressor(torch.nn.Linear(2, 1), torch.zeros(3, 2), torch.zeros(3, 1), lr=0.1, steps=0)
    with pytest.raises(ValueError, match="all earlier features"):
        mlp.dense_forward([(torch.zeros(2, 4), torch.zeros(2))], torch.zeros(3, 3))
    with pytest.raises(TypeError, match="params must be a non-empty list"):
        mlp.check_params([])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), alpha=st.floats(0.0, 1.0))
def test_swap_segment_is_symmetric_and_midpoint_merges_units(seed, alpha):
    params, x = _net(seed=seed)
    swap = torch.tensor([1, 0, 2, 3, 4])
    swapped = mlp.permute_hidden(params, 0, swap)
    loss = lambda p: (mlp.mlp_forward(p, x) ** 2).mean()
    a = loss(mlp.interpolate(params, swapped, alpha))
    b = loss(mlp.interpolate(params, swapped, 1.0 - alpha))
    assert torch.allclose(a, b, atol=1e-12)
    mid = mlp.interpolate(params, swapped, 0.5)
    (W1, b1), (W2, b2) = mid[0], mid[1]
    assert torch.equal(W1[0], W1[1]) and b1[0] == b1[1]
    merged = [(W1[1:], b1[1:]), (torch.cat([W2[:, :1] + W2[:, 1:2], W2[:, 2:]], 1), b2), mid[2]]
    assert torch.allclose(mlp.mlp_forward(mid, x), mlp.mlp_forward(merged, x), atol=1e-12)


def test_plain_deep_tanh_gradients_vanish_but_residual_do_not():
    g = torch_generator(9)
    x, y = torch.randn(32, 4, generator=g), torch.randn(32, 1, generator=g)
    ratios = {}
    for residual in (False, True):
        net = mlp.DeepMLP(4, 16, 20, 1, residual=residual, generator=torch_generator(2))
        (0.5 * ((net(x) - y) ** 2).mean()).backward()
        norms = [blk.weight.grad.norm().item() for blk in net.blocks]
        ratios[residual] = norms[0] / norms[-1]
    assert ratios[False] < 1e-3, ratios
    assert ratios[True] > 0.1, ratios
