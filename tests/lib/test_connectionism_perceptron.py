"""Tests for flt_lib.connectionism.perceptron (Section 1.2)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.connectionism import perceptron as pc
from flt_lib.rng import torch_generator


def _loop_perceptron(X, y, max_updates):
    """Oracle: the textbook loop over the data in passes."""
    w = torch.zeros(X.shape[1], dtype=X.dtype)
    k = 0
    while True:
        mistake = False
        for i in range(X.shape[0]):
            if y[i] * (X[i] @ w) <= 0:
                if k == max_updates:
                    return w, k
                w = w + y[i] * X[i]
                k += 1
                mistake = True
        if not mistake:
            return w, k


@pytest.mark.parametrize("kind", ["ball", "shell"])
def test_vectorised_equals_loop(kind):
    X, y, _ = pc.separable_data(40, 5, gamma=0.1, generator=torch_generator(1), kind=kind)
    res = pc.perceptron(X, y)
    w_loop, k_loop = _loop_perceptron(X, y, 10_000)
    assert res.n_updates == k_loop and torch.allclose(res.w, w_loop)
    assert res.converged and res.n_mistakes == 0


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    d=st.integers(2, 8),
    gamma=st.floats(0.05, 0.45),
    kind=st.sampled_from(["ball", "shell"]),
)
def test_novikoff_bound_holds(seed, d, gamma, kind):
    X, y, w_star = pc.separable_data(30, d, gamma=gamma, generator=torch_generator(seed), kind=kind)
    bound = pc.novikoff_bound(X, y, w_star)
    res = pc.perceptron(X, y, max_updates=10 * math.ceil(bound))
    assert res.converged and res.n_updates <= bound
    assert pc.margin(X, y, res.w) > 0


def test_separable_data_has_promised_margin_and_radius():
    for kind in ("ball", "shell"):
        X, y, w_star = pc.separable_data(200, 3, gamma=0.2, generator=torch_generator(0), kind=kind)
        assert pc.margin(X, y, w_star) >= 0.2 - 1e-5
        assert pc.radius(X) <= 1 + 1e-6
        assert abs(w_star.norm().item() - 1) < 1e-6


def test_signed_margin_is_hesse_distance():
    X = torch.tensor([[3.0, 4.0], [0.0, -2.0]])
    y = torch.tensor([1.0, 1.0])
    w = torch.tensor([0.0, 2.0])  # hyperplane x_2 = 0
    assert pc.signed_margins(X, y, w).tolist() == [4.0, -2.0]
    assert pc.margin(X, y, w) == -2.0
    assert pc.predict(X, w).tolist() == [1.0, -1.0]
    assert pc.predict(torch.tensor([[1.0, 0.0]]), w).tolist() == [1.0]  # sign(0) = +1


def test_add_bias_makes_affine_homogeneous():
    X = torch.tensor([[1.0, 2.0], [-1.0, 0.5]])
    w, b = torch.tensor([0.5, -1.0]), 0.3
    Z = pc.add_bias(X)
    assert torch.allclose(Z @ torch.tensor([0.5, -1.0, 0.3]), X @ w + b)


def test_xor_hits_the_cap():
    X = pc.add_bias(torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]))
    y = torch.tensor([-1.0, 1.0, 1.0, -1.0])
    res = pc.perceptron(X, y, max_updates=500)
    assert res.n_updates == 500 and not res.converged and res.n_mistakes > 0
    assert min(res.mistakes_per_update) > 0


def test_version_space_shrinks_and_contains_w_star():
    X, y, w_star = pc.separable_data(20, 2, gamma=0.05, generator=torch_generator(3))
    angles = torch.linspace(0, 2 * math.pi, 3601)[:-1]
    masks = [pc.feasible_directions(X[:k], y[:k], angles) for k in range(1, 21)]
    for a, b in zip(masks, masks[1:]):
        assert bool((b <= a).all())  # nested
    assert masks[0].float().mean().item() == pytest.approx(0.5, abs=1e-3)  # one point: half-circle
    a_star = math.atan2(w_star[1].item(), w_star[0].item()) % (2 * math.pi)
    i = int(round(a_star / (2 * math.pi) * 3600)) % 3600
    assert bool(masks[-1][i])


def test_bad_inputs():
    X, y = torch.randn(4, 2), torch.tensor([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="y must have entries in"):
        pc.perceptron(X, torch.tensor([1.0, 0.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="max_updates must be >= 0"):
        pc.perceptron(X, y, max_updates=-1)
    with pytest.raises(ValueError, match="w0 must have shape"):
        pc.perceptron(X, y, w0=torch.zeros(3))
    with pytest.raises(ValueError, match="w must be non-zero"):
        pc.signed_margins(X, y, torch.zeros(2))
    with pytest.raises(ValueError, match="w must have shape"):
        pc.margin(X, y, torch.ones(3))
    with pytest.raises(ValueError, match="positive margin"):
        pc.novikoff_bound(torch.tensor([[1.0, 0.0]]), torch.tensor([-1.0]), torch.tensor([1.0, 0.0]))
    with pytest.raises(ValueError, match="gamma must be"):
        pc.separable_data(10, 2, gamma=0.7, generator=torch_generator(0))
    with pytest.raises(ValueError, match="kind must be one of"):
        pc.separable_data(10, 2, gamma=0.1, generator=torch_generator(0), kind="cube")
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        pc.separable_data(10, 2, gamma=0.1, generator=0)
    with pytest.raises(ValueError, match="X must have shape \\(n, 2\\)"):
        pc.feasible_directions(torch.randn(4, 3), y, torch.zeros(5))
    with pytest.raises(ValueError, match="X must be a 2-D tensor"):
        pc.add_bias(torch.ones(3))
    with pytest.raises(ValueError, match="X must be a 2-D tensor"):
        pc.radius(torch.ones(3))
    with pytest.raises(ValueError, match="w must have shape"):
        pc.predict(X, torch.ones(5))


@pytest.mark.parametrize("kind, gamma, cap", [("ball", 0.1, 10_000), ("shell", 0.05, 10_000),
                                              ("shell", 0.05, 37), ("ball", 0.2, 0)])
def test_textbook_loop_shown_on_the_page_makes_the_same_updates(kind, gamma, cap):
    """The double loop shown in Section 1.2 and the vectorised perceptron() agree exactly."""
    from flt_lib.connectionism.perceptron import _perceptron_loop

    X, y, _ = pc.separable_data(60, 5, gamma=gamma, generator=torch_generator(3), kind=kind)
    fast = pc.perceptron(X, y, max_updates=cap)
    w, k = _perceptron_loop(X, y, X.new_zeros(5), cap)
    assert k == fast.n_updates
    assert torch.equal(w, fast.w)


def test_textbook_loop_on_xor_stops_at_the_cap_like_the_fast_path():
    from flt_lib.connectionism.perceptron import _perceptron_loop

    X = pc.add_bias(torch.tensor([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]))
    y = torch.tensor([-1.0, 1.0, 1.0, -1.0])
    fast = pc.perceptron(X, y, max_updates=25)
    w, k = _perceptron_loop(X, y, X.new_zeros(3), 25)
    assert k == fast.n_updates == 25 and not fast.converged
    assert torch.equal(w, fast.w)
