"""Tests for flt_lib.optim.adaptive: AdaGrad, RMSProp and Adam against torch.optim."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import torch._dynamo  # noqa: F401  torch.optim imports it lazily (about 1.5 s): pay it at collection

from flt_lib.optim import adaptive as ada
from flt_lib.optim.gd import rosenbrock_grad
from flt_lib.rng import torch_generator

D = torch.float64


def quad_grad(x):
    return torch.tensor([1.0, 50.0], dtype=D) * x


configs = st.one_of(
    st.builds(ada.AdagradConfig, lr=st.floats(1e-3, 0.5), eps=st.sampled_from([1e-10, 1e-6, 1e-3]),
              initial_accumulator_value=st.sampled_from([0.0, 0.1])),
    st.builds(ada.RMSpropConfig, lr=st.floats(1e-4, 0.05), alpha=st.floats(0.5, 0.999), eps=st.sampled_from([1e-8, 1e-4])),
    st.builds(ada.AdamConfig, lr=st.floats(1e-4, 0.1), betas=st.tuples(st.floats(0.0, 0.95), st.floats(0.9, 0.9999)),
              eps=st.sampled_from([1e-8, 1e-4])),
)


@settings(max_examples=25, deadline=None)
@given(configs, st.sampled_from([rosenbrock_grad, quad_grad]))
def test_trajectories_match_torch_optim(config, grad_fn):
    x0 = torch.tensor([-1.2, 1.0], dtype=D)
    ours, theirs = ada.run(grad_fn, x0, config, steps=60), ada.run_torch(grad_fn, x0, config, steps=60)
    assert (ours - theirs).abs().max().item() < 1e-6


def test_defaults_match_torch_on_random_problem():
    g = torch_generator(0)
    A = torch.randn(5, 5, generator=g, dtype=D)
    H = A @ A.T + 0.1 * torch.eye(5, dtype=D)
    x0 = torch.randn(5, generator=g, dtype=D)
    for config in (ada.AdagradConfig(), ada.RMSpropConfig(), ada.AdamConfig()):
        diff = (ada.run(lambda x: H @ x, x0, config, steps=200) - ada.run_torch(lambda x: H @ x, x0, config, steps=200)).abs().max()
        assert diff.item() < 1e-10


def test_adam_first_step_is_lr_times_sign():
    # with bias correction and eps -> 0, Adam's first step is -lr * sign(g) in every coordinate
    x0 = torch.tensor([1.0, -2.0, 3.0], dtype=D)
    g = torch.tensor([1e-3, -5.0, 70.0], dtype=D)
    cfg = ada.AdamConfig(lr=0.1, eps=0.0)
    x1, state = ada.adam_step(x0, g, ada.adam_init(x0, cfg), cfg)
    torch.testing.assert_close(x1, x0 - 0.1 * torch.sign(g))
    assert state.step == 1


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-10, 10).filter(lambda v: abs(v) > 1e-3), min_size=1, max_size=30))
def test_adagrad_constant_gradient_closed_form(gs):
    # with a constant gradient g, after t steps AdaGrad has moved lr * sum_{k<=t} 1/sqrt(k) against sign(g)
    g = torch.tensor([gs[0]], dtype=D)
    cfg = ada.AdagradConfig(lr=0.1, eps=0.0)
    traj = ada.run(lambda x: g, torch.zeros(1, dtype=D), cfg, steps=len(gs))
    expected = -0.1 * math.copysign(1.0, gs[0]) * sum(1 / math.sqrt(k) for k in range(1, len(gs) + 1))
    assert traj[-1].item() == pytest.approx(expected, rel=1e-10)


def test_state_is_not_mutated():
    x = torch.ones(3, dtype=D)
    cfg = ada.RMSpropConfig()
    s0 = ada.rmsprop_init(x, cfg)
    ada.rmsprop_step(x, torch.ones(3, dtype=D), s0, cfg)
    assert torch.all(s0.s == 0) and s0.step == 0


def test_bad_inputs():
    x = torch.zeros(2, dtype=D)
    with pytest.raises(TypeError, match="config must be an AdagradConfig"):
        ada.run(quad_grad, x, {"lr": 0.1}, steps=3)
    # configurations are checked on construction: no invalid one can exist
    with pytest.raises(ValueError, match="config.lr must be > 0"):
        ada.AdamConfig(lr=0.0)
    with pytest.raises(ValueError, match=r"config.betas\[1\] must be < 1"):
        ada.AdamConfig(betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="config.alpha must be <= 1"):
        ada.RMSpropConfig(alpha=1.5)
    with pytest.raises(ValueError, match="config.eps must be >= 0"):
        ada.AdagradConfig(eps=-1.0)
    with pytest.raises(ValueError, match="config.initial_accumulator_value must be >= 0"):
        ada.AdagradConfig(initial_accumulator_value=-0.1)
    with pytest.raises(ValueError, match="g must have shape"):
        ada.adam_step(x, torch.zeros(3, dtype=D), ada.adam_init(x, ada.AdamConfig()), ada.AdamConfig())
    with pytest.raises(ValueError, match="x0 must be a 1-D tensor"):
        ada.run(quad_grad, torch.zeros(2, 2, dtype=D), ada.AdagradConfig(), steps=3)
    with pytest.raises(ValueError, match="steps must be >= 0"):
        ada.run(quad_grad, x, ada.AdagradConfig(), steps=-2)
    with pytest.raises(TypeError, match="x must have a floating-point dtype"):
        ada.adagrad_init(torch.zeros(2, dtype=torch.long), ada.AdagradConfig())
