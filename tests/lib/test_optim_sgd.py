"""Tests for flt_lib.optim.sgd: minibatch gradients and their variance, schedules, SGD."""

import itertools
import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.feedforward.regression import least_squares_gd, linear_gaussian_data, mse_loss
from flt_lib.optim import sgd
from flt_lib.rng import torch_generator

D = torch.float64


def _data(n=50, d=4, seed=0):
    g = torch_generator(seed)
    w_star = torch.randn(d, generator=g, dtype=D)
    return linear_gaussian_data(n, w_star, noise=0.3, generator=g)


def test_per_example_and_minibatch_gradients_match_autograd():
    X, y = _data()
    w = torch.randn(4, dtype=D, generator=torch_generator(1), requires_grad=True)
    (grad,) = torch.autograd.grad(mse_loss(X, y, w), w)
    G = sgd.per_example_gradients(X, y, w.detach())
    assert torch.allclose(G.mean(0), grad, atol=1e-12)
    idx = torch.tensor([3, 7, 7, 0])
    (grad_b,) = torch.autograd.grad(mse_loss(X[idx], y[idx], w), w)
    assert torch.allclose(sgd.minibatch_gradient(X, y, w.detach(), idx), grad_b, atol=1e-12)


@pytest.mark.parametrize("replacement", [True, False])
def test_minibatch_gradient_is_unbiased_exactly(replacement):
    # Enumerate every minibatch (ordered with replacement, subsets without): the average of the
    # library's minibatch gradient over all of them is the full gradient, and so the expected
    # SGD step from any w is the GD step.
    X, y = _data(n=6, d=3, seed=2)
    w = torch.randn(3, dtype=D, generator=torch_generator(3))
    full = sgd.per_example_gradients(X, y, w).mean(0)
    for B in [1, 2, 3]:
        batches = (itertools.product(range(6), repeat=B) if replacement
                   else itertools.combinations(range(6), B))
        grads = torch.stack([sgd.minibatch_gradient(X, y, w, torch.tensor(b)) for b in batches])
        assert torch.allclose(grads.mean(0), full, atol=1e-13)


def test_full_batch_sgd_equals_gd():
    # B = n drawn without replacement is the whole data set at every step: SGD is GD.
    X, y = _data(n=40, d=3)
    lr, T = 0.3, 25
    run_sgd = sgd.sgd_least_squares(X, y, lrs=torch.full((T,), lr, dtype=D), batch_size=40,
                                    generator=torch_generator(4), replacement=False)
    run_gd = least_squares_gd(X, y, lr=lr, steps=T)
    assert torch.allclose(run_sgd.w, run_gd.w, atol=1e-12)
    assert torch.allclose(run_sgd.losses, run_gd.losses, atol=1e-12)


def test_sgd_step_uses_the_drawn_batch():
    # One SGD step with B = 1 equals the per-example gradient step at the drawn index.
    X, y = _data()
    w0 = torch.randn(4, dtype=D, generator=torch_generator(5))
    idx = torch.randint(0, 50, (1, 1), generator=torch_generator(6))[0]  # what SGD will draw
    run = sgd.sgd_least_squares(X, y, lrs=torch.tensor([0.1], dtype=D), batch_size=1,
                                generator=torch_generator(6), w0=w0)
    expected = w0 - 0.1 * sgd.per_example_gradients(X, y, w0)[idx[0]]
    assert torch.allclose(run.w, expected, atol=1e-14)


@pytest.mark.parametrize("replacement", [True, False])
def test_minibatch_variance_brute_force(replacement):
    G = torch.randn(5, 3, generator=torch_generator(2), dtype=D)
    gbar = G.mean(0)
    for B in [1, 2, 3]:
        if replacement:
            batches = list(itertools.product(range(5), repeat=B))
        else:
            batches = list(itertools.combinations(range(5), B))
        brute = sum(((G[list(b)].mean(0) - gbar) ** 2).sum().item() for b in batches) / len(batches)
        exact = sgd.minibatch_variance(G, batch_size=B, replacement=replacement)
        assert math.isclose(exact, brute, rel_tol=1e-10)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 30), seed=st.integers(0, 1000))
def test_without_replacement_full_batch_has_zero_variance(n, seed):
    G = torch.randn(n, 2, generator=torch_generator(seed), dtype=D)
    assert sgd.minibatch_variance(G, batch_size=n, replacement=False) == 0.0
    one_wo = sgd.minibatch_variance(G, batch_size=1, replacement=False)
    assert one_wo == pytest.approx(sgd.minibatch_variance(G, batch_size=1))


@pytest.mark.parametrize("replacement", [True, False])
def test_sampled_variance_matches_exact(replacement):
    G = torch.randn(40, 3, generator=torch_generator(3), dtype=D)
    for B in [1, 4, 20]:
        mc = sgd.sample_minibatch_variance(G, batch_size=B, n_draws=4000,
                                           generator=torch_generator(B), replacement=replacement)
        assert mc == pytest.approx(sgd.minibatch_variance(G, batch_size=B, replacement=replacement), rel=0.1)


def test_decaying_step_sizes():
    lrs = sgd.decaying_step_sizes(c=2.0, t0=4.0, steps=5)
    assert torch.allclose(lrs, torch.tensor([2 / 4, 2 / 5, 2 / 6, 2 / 7, 2 / 8], dtype=D))


def test_constant_step_noise_floor_and_decay():
    X, y = _data(n=200, d=3)
    w_ls = torch.linalg.lstsq(X, y.unsqueeze(1)).solution.squeeze(1)
    L_star = mse_loss(X, y, w_ls).item()
    # constant step plateaus; the plateau halves when the step halves (first order)
    plateaus = []
    for eta in [0.04, 0.02]:
        run = sgd.sgd_least_squares(X, y, lrs=torch.full((2000,), eta, dtype=D), batch_size=1,
                                    generator=torch_generator(5), record_every=10)
        plateaus.append((run.losses[-100:] - L_star).mean().item())
    assert 1.4 < plateaus[0] / plateaus[1] < 3.0
    run = sgd.sgd_least_squares(X, y, lrs=sgd.decaying_step_sizes(c=1.0, t0=25.0, steps=2000),
                                batch_size=1, generator=torch_generator(5), record_every=10)
    assert (run.losses[-1] - L_star).item() < 0.2 * plateaus[0]


def test_epochs_to_reach():
    losses = torch.tensor([4.0, 2.0, 1.0, 0.5])
    assert sgd.epochs_to_reach(losses, target=1.0, epochs_per_record=0.5) == 1.0
    assert sgd.epochs_to_reach(losses, target=0.1, epochs_per_record=0.5) == float("inf")


def test_bad_inputs():
    X, y = _data()
    with pytest.raises(ValueError, match="w must have shape"):
        sgd.per_example_gradients(X, y, torch.zeros(3, dtype=D))
    with pytest.raises(ValueError, match="idx must be a non-empty integer tensor"):
        sgd.minibatch_gradient(X, y, torch.zeros(4, dtype=D), torch.tensor([0.5]))
    with pytest.raises(ValueError, match="batch_size must be <= 50"):
        sgd.minibatch_variance(X, batch_size=51, replacement=False)
    with pytest.raises(ValueError, match="G must have at least 2 rows"):
        sgd.minibatch_variance(X[:1], batch_size=1)
    with pytest.raises(TypeError, match="generator"):
        sgd.sample_minibatch_variance(X, batch_size=2, n_draws=10, generator=0)
    with pytest.raises(ValueError, match="t0 must be > 0"):
        sgd.decaying_step_sizes(c=1.0, t0=0.0, steps=3)
    with pytest.raises(ValueError, match="lrs must be a 1-D"):
        sgd.sgd_least_squares(X, y, lrs=torch.ones(2, 2), batch_size=1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="batch_size must be <= 50"):
        sgd.sgd_least_squares(X, y, lrs=torch.ones(2), batch_size=60, generator=torch_generator(0),
                              replacement=False)
    with pytest.raises(ValueError, match="epochs_per_record"):
        sgd.epochs_to_reach(torch.ones(3), target=0.5, epochs_per_record=0.0)
