"""Tests for flt_lib.connectionism.hopfield: oracles, energy properties, bad inputs."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.connectionism import hopfield as hp
from flt_lib.rng import torch_generator


def _random_sym(n, gen):
    A = torch.randn(n, n, generator=gen, dtype=torch.float64)
    W = (A + A.T) / 2
    return W.fill_diagonal_(0.0)


def _pm1(shape, gen, dtype=torch.float64):
    return (2 * torch.randint(0, 2, shape, generator=gen) - 1).to(dtype)


# ---------------------------------------------------------------- energy and dynamics
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 12), i=st.integers(0, 11))
def test_async_update_never_raises_energy(seed, n, i):
    gen = torch_generator(seed)
    W = _random_sym(n, gen)
    theta = torch.randn(n, generator=gen, dtype=torch.float64)
    x = _pm1((n,), gen)
    x_new = hp.async_update(W, x, i % n, theta)
    assert hp.energy(W, x_new, theta) <= hp.energy(W, x, theta) + 1e-12
    assert (x_new != x).sum() <= 1


def test_energy_and_field_match_loops():
    gen = torch_generator(0)
    n = 6
    W, theta, x = _random_sym(n, gen), torch.randn(n, generator=gen, dtype=torch.float64), _pm1((n,), gen)
    e = -0.5 * sum(W[i, j] * x[i] * x[j] for i in range(n) for j in range(n)) + sum(theta[i] * x[i] for i in range(n))
    assert torch.isclose(hp.energy(W, x, theta), e)
    h = torch.stack([sum(W[i, j] * x[j] for j in range(n)) - theta[i] for i in range(n)])
    assert torch.allclose(hp.local_field(W, x, theta), h)


def test_hebbian_weights_match_definition():
    P = _pm1((3, 5), torch_generator(1))
    W = hp.hebbian_weights(P)
    for i in range(5):
        for j in range(5):
            want = 0.0 if i == j else sum(P[m, i] * P[m, j] for m in range(3)) / 5
            assert math.isclose(float(W[i, j]), float(want))


def test_run_async_energy_monotone_and_fixed_point():
    gen = torch_generator(2)
    P = _pm1((3, 40), gen)
    W = hp.hebbian_weights(P)
    x0 = P[0] * torch.where(torch.rand(40, generator=gen) < 0.15, -1.0, 1.0).double()
    run = hp.run_async(W, x0, generator=torch_generator(3))
    assert run.converged and (run.energies[1:] <= run.energies[:-1] + 1e-12).all()
    assert torch.equal(hp.sign(hp.local_field(W, run.state)), run.state)
    assert torch.equal(run.state, P[0])  # low load: the pattern is retrieved


def test_sign_tie_goes_to_plus_one():
    assert hp.sign(torch.tensor([-2.0, 0.0, 3.0])).tolist() == [-1.0, 1.0, 1.0]


def test_batched_sweeps_equal_loop():
    gen = torch_generator(4)
    P = _pm1((1, 8, 30), gen, torch.float32)
    x0 = _pm1((1, 30), gen, torch.float32)
    xb, conv = hp.async_sweeps_batched(P, x0, generator=torch_generator(9))
    run = hp.run_async(hp.hebbian_weights(P[0]), x0[0], generator=torch_generator(9))
    assert torch.equal(xb[0], run.state) and bool(conv[0]) == run.converged


def test_retrieval_sweep_shapes_and_load_effect():
    P = hp.random_patterns(40, 200, generator=torch_generator(5), batch=4)
    m, conv = hp.retrieval_sweep(P, [0.02, 0.2], generator=torch_generator(6))
    assert m.shape == (2, 4) and conv.shape == (2, 4)
    assert (m[0] == 1).all() and m[1].mean() < m[0].mean()


# ---------------------------------------------------------------- bad inputs
def test_bad_inputs():
    W = torch.zeros(3, 3)
    with pytest.raises(ValueError, match="W must be square"):
        hp.energy(torch.zeros(3, 4), torch.ones(4))
    with pytest.raises(ValueError, match="x must have shape"):
        hp.energy(W, torch.ones(4))
    with pytest.raises(ValueError, match="threshold must have shape"):
        hp.local_field(W, torch.ones(3), torch.zeros(2))
    with pytest.raises(ValueError, match="i must be <= 2"):
        hp.async_update(W, torch.ones(3), 3)
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        hp.run_async(W, torch.ones(3), generator=0)
    with pytest.raises(ValueError, match="patterns must be a 2-D tensor"):
        hp.hebbian_weights(torch.ones(3))
    with pytest.raises(TypeError, match="z must be a torch.Tensor"):
        hp.sign([1.0])
    with pytest.raises(ValueError, match="names"):
        hp.letter_patterns("HZ")
    with pytest.raises(ValueError, match="s must be >= 1"):
        hp.random_patterns(0, 3, generator=torch_generator(0))
    with pytest.raises(ValueError, match="x0 must have shape"):
        hp.async_sweeps_batched(torch.ones(2, 3, 4), torch.ones(2, 5), generator=torch_generator(0))
    with pytest.raises(ValueError, match="loads: load 0.9"):
        hp.retrieval_sweep(torch.ones(1, 3, 4), [0.9], generator=torch_generator(0))
    with pytest.raises(TypeError, match="x must have a floating-point dtype"):
        hp.overlap(torch.ones(3, dtype=torch.int64), torch.ones(3))
