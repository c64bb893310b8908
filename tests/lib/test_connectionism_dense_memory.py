"""Tests for flt_lib.connectionism.dense_memory: oracles, energy descent, capacity, bad inputs."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.connectionism import dense_memory as dm
from flt_lib.connectionism import hopfield as hp
from flt_lib.rng import torch_generator


def _pm1(shape, gen, dtype=torch.float64):
    return (2 * torch.randint(0, 2, shape, generator=gen) - 1).to(dtype)


# ---------------------------------------------------------------- dense associative memories
def test_dense_energy_matches_loop():
    gen = torch_generator(0)
    P, x = _pm1((4, 6), gen), _pm1((6,), gen)
    for kw, F in [(dict(degree=3), lambda z: z**3), (dict(interaction="exp"), math.exp)]:
        want = -sum(F(sum(float(P[m, i] * x[i]) for i in range(6))) for m in range(4))
        assert dm.dense_energy(P, x, **kw).item() == pytest.approx(want)


def test_dense_energy_degree_two_is_hopfield():
    gen = torch_generator(11)
    P, x = _pm1((5, 9), gen), _pm1((2, 9), gen)
    s, n = P.shape
    E2 = dm.dense_energy(P, x, degree=2)
    assert torch.allclose(E2, 2 * n * hp.energy(hp.hebbian_weights(P), x) - s * n)


def test_dense_run_degree_two_equals_classical_dynamics():
    gen = torch_generator(15)
    P, x0 = _pm1((6, 32), gen), _pm1((1, 32), gen)  # n = 32: Hebbian weights k/32 are exact
    x = dm.dense_run(P, x0, generator=torch_generator(16), degree=2)
    run = hp.run_async(hp.hebbian_weights(P), x0[0], generator=torch_generator(16))
    assert torch.equal(x[0], run.state)


def test_dense_run_is_a_local_minimum():
    gen = torch_generator(17)
    P, x0 = _pm1((20, 12), gen), _pm1((4, 12), gen)
    x = dm.dense_run(P, x0, generator=torch_generator(18), degree=4, max_sweeps=50)
    E = dm.dense_energy(P, x, degree=4)
    for i in range(12):  # brute force: no single flip lowers the energy
        y = x.clone()
        y[:, i] = -y[:, i]
        assert (dm.dense_energy(P, y, degree=4) >= E).all()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), interaction=st.sampled_from(["power", "exp"]), degree=st.integers(2, 5))
def test_dense_dynamics_never_raise_energy(seed, interaction, degree):
    gen = torch_generator(seed)
    P, x = _pm1((7, 10), gen), _pm1((3, 10), gen)
    for _ in range(3):  # one sweep at a time: the energy must not go up
        x_next = dm.dense_run(P, x, generator=torch_generator(seed + 1), interaction=interaction, degree=degree, max_sweeps=1)
        e_new = dm.dense_energy(P, x_next, interaction=interaction, degree=degree)
        e_old = dm.dense_energy(P, x, interaction=interaction, degree=degree)
        assert (e_new <= e_old + 1e-9 * e_old.abs()).all()
        x = x_next


def test_dense_memory_beats_classical_capacity():
    gen = torch_generator(12)
    P = hp.random_patterns(150, 60, generator=gen).double()  # s = 2.5 n
    x0 = torch.where(torch.rand(10, 60, generator=gen, dtype=torch.float64) < 0.1, -P[:10], P[:10])
    assert torch.equal(dm.dense_run(P, x0, generator=torch_generator(13), interaction="exp"), P[:10])
    classical = dm.dense_run(P, x0, generator=torch_generator(13), degree=2)
    assert (classical != P[:10]).any(-1).float().mean() > 0.5


# ---------------------------------------------------------------- modern Hopfield network
def test_modern_update_is_attention_and_lowers_energy():
    gen = torch_generator(14)
    P = torch.randn(20, 16, generator=gen, dtype=torch.float64)
    x = torch.randn(3, 16, generator=gen, dtype=torch.float64)
    out = dm.modern_update(P, x, beta=0.7)
    ref = torch.nn.functional.scaled_dot_product_attention(x[:, None], P[None], P[None], scale=0.7)[:, 0]
    assert torch.allclose(out, ref, atol=1e-12)
    loop = torch.stack([sum(math.exp(0.7 * float(P[m] @ q)) * P[m] for m in range(20))
                        / sum(math.exp(0.7 * float(P[m] @ q)) for m in range(20)) for q in x])
    assert torch.allclose(out, loop, atol=1e-12)
    assert torch.allclose(dm.modern_update(P, x[0], beta=0.7), out[0])


def test_modern_energy_matches_formula_and_gradient_gives_update():
    gen = torch_generator(19)
    P = torch.randn(7, 5, generator=gen, dtype=torch.float64)
    x = torch.randn(5, generator=gen, dtype=torch.float64, requires_grad=True)
    beta = 1.3
    E = dm.modern_energy(P, x, beta=beta)
    xd = x.detach()
    lse = math.log(sum(math.exp(beta * float(P[m] @ xd)) for m in range(7))) / beta
    want = -lse + 0.5 * float(xd @ xd) + math.log(7) / beta + 0.5 * float(P.norm(dim=1).max()) ** 2
    assert E.item() == pytest.approx(want)
    (g,) = torch.autograd.grad(E, x)  # grad E = x - Xi^T softmax(beta Xi x) (CCCP step)
    assert torch.allclose(xd - g, dm.modern_update(P, xd, beta=beta))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), beta=st.floats(0.01, 5.0), s=st.integers(2, 30))
def test_modern_update_never_raises_energy(seed, beta, s):
    gen = torch_generator(seed)
    P = torch.randn(s, 8, generator=gen, dtype=torch.float64)
    x = 3 * torch.randn(4, 8, generator=gen, dtype=torch.float64)
    e_old = dm.modern_energy(P, x, beta=beta)
    e_new = dm.modern_energy(P, dm.modern_update(P, x, beta=beta), beta=beta)
    assert (e_new <= e_old + 1e-9 * (1 + e_old.abs())).all()
    assert (e_new >= -1e-9).all()  # the energy is bounded below by 0 (Ramsauer et al., lemma)


def test_separation_matches_loop():
    P = torch.randn(6, 4, generator=torch_generator(20), dtype=torch.float64)
    want = [float(P[m] @ P[m]) - max(float(P[m] @ P[v]) for v in range(6) if v != m) for m in range(6)]
    assert torch.allclose(dm.separation(P), torch.tensor(want, dtype=torch.float64))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), beta=st.floats(0.05, 5.0), noise=st.floats(0.0, 0.5))
def test_one_step_error_bound_holds(seed, beta, noise):
    gen = torch_generator(seed)
    P = torch.randn(12, 10, generator=gen, dtype=torch.float64)
    idx = torch.arange(5)
    x = P[idx] + noise * torch.randn(5, 10, generator=gen, dtype=torch.float64)
    err = (dm.modern_update(P, x, beta=beta) - P[idx]).norm(dim=-1)
    assert (err <= dm.one_step_error_bound(P, x, idx, beta=beta) * (1 + 1e-9) + 1e-12).all()


def test_one_step_error_bound_is_informative_when_separated():
    P = 4 * torch.eye(6, dtype=torch.float64)  # Delta = 16, M = 4
    idx = torch.tensor([0, 3])
    bound = dm.one_step_error_bound(P, P[idx], idx, beta=2.0)  # r = 0: 2 * 5 * 4 * exp(-32)
    assert torch.allclose(bound, torch.full((2,), 40 * math.exp(-32), dtype=torch.float64))


# ---------------------------------------------------------------- bad inputs
def test_bad_inputs():
    P = torch.ones(2, 3)
    with pytest.raises(ValueError, match="interaction must be one of"):
        dm.dense_energy(P, torch.ones(3), interaction="cubic")
    with pytest.raises(ValueError, match="x must have shape"):
        dm.dense_energy(P, torch.ones(4))
    with pytest.raises(ValueError, match="degree must be >= 1"):
        dm.dense_run(P, torch.ones(1, 3), generator=torch_generator(0), degree=0)
    with pytest.raises(ValueError, match="x0 must have shape"):
        dm.dense_run(P, torch.ones(1, 4), generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        dm.dense_run(P, torch.ones(1, 3), generator=0)
    with pytest.raises(ValueError, match="beta must be > 0"):
        dm.modern_update(P, torch.ones(3), beta=0.0)
    with pytest.raises(ValueError, match="patterns must be a 2-D tensor"):
        dm.modern_update(torch.ones(3), torch.ones(3), beta=1.0)
    with pytest.raises(ValueError, match="beta must be > 0"):
        dm.modern_energy(P, torch.ones(3), beta=-1.0)
    with pytest.raises(ValueError, match="s >= 2"):
        dm.separation(torch.ones(1, 3))
    with pytest.raises(TypeError, match="index must be an integer tensor"):
        dm.one_step_error_bound(P, torch.ones(1, 3), torch.zeros(1), beta=1.0)
    with pytest.raises(ValueError, match=r"index must lie in \[0, 1\]"):
        dm.one_step_error_bound(P, torch.ones(1, 3), torch.tensor([2]), beta=1.0)
    with pytest.raises(ValueError, match="index must have shape"):
        dm.one_step_error_bound(P, torch.ones(2, 3), torch.tensor([0]), beta=1.0)


def test_vote_split_adds_up_to_the_dynamics_vote():
    # The two parts add up to the vote the update uses: the sign of the sum is the new bit.
    gen = torch_generator(30)
    P = hp.random_patterns(12, 20, generator=gen).double()
    x = torch.where(torch.rand(3, 20, generator=gen) < 0.2, -P[:3], P[:3])
    for kw in (dict(degree=3), dict(degree=2), dict(interaction="exp")):
        target, others = dm.vote_split(P, x, torch.arange(3), **kw)
        for b in range(3):
            for i in range(20):  # one asynchronous update of neuron i, by the library
                xi = x[b : b + 1].clone()
                e_plus = dm.dense_energy(P, torch.where(torch.arange(20) == i, 1.0, xi), **kw)
                e_minus = dm.dense_energy(P, torch.where(torch.arange(20) == i, -1.0, xi), **kw)
                vote = target[b, i] + others[b, i]
                assert (vote >= 0) == bool(e_plus <= e_minus) or abs(vote) < 1e-9
    # at a stored pattern with few others, the target's term dominates and has its sign
    target, others = dm.vote_split(P[:2], P[:2], torch.arange(2), degree=3)
    assert (target * P[:2] > others.abs()).all()
    with pytest.raises(ValueError, match="index must hold integers"):
        dm.vote_split(P, x, torch.tensor([0, 1, 12]))
