"""Tests for flt_lib.connectionism.threshold (Section 1.1)."""

import itertools

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.connectionism import threshold as th

XOR, XNOR = 0b0110, 0b1001


def test_boolean_inputs_is_binary_counting():
    x = th.boolean_inputs(3)
    assert x.shape == (8, 3)
    as_int = (x * torch.tensor([4.0, 2.0, 1.0])).sum(1)
    assert torch.equal(as_int, torch.arange(8.0))


@pytest.mark.parametrize(
    "name, table",
    [("and", [0, 0, 0, 1]), ("or", [0, 1, 1, 1]), ("nand", [1, 1, 1, 0]), ("nor", [1, 0, 0, 0])],
)
def test_gates_match_truth_tables(name, table):
    w, theta = th.gate(name)
    out = th.threshold_unit(th.boolean_inputs(2), w, theta)
    assert out.tolist() == table


def test_not_gate():
    w, theta = th.gate("not")
    assert th.threshold_unit(th.boolean_inputs(1), w, theta).tolist() == [1.0, 0.0]


def test_layer_equals_loop_over_units():
    gen = torch.Generator().manual_seed(0)
    x = th.boolean_inputs(3)
    W, t = torch.randn(5, 3, generator=gen), torch.randn(5, generator=gen)
    loop = torch.stack([th.threshold_unit(x, W[j], t[j].item()) for j in range(5)], dim=1)
    assert torch.equal(th.threshold_layer(x, W, t), loop)


def test_xor_network_truth_table():
    out = th.threshold_network(th.boolean_inputs(2), th.xor_network())
    assert out.squeeze(1).tolist() == [0.0, 1.0, 1.0, 0.0]


def test_exhaustive_search_finds_all_but_xor_and_xnor():
    # Oracle: the 14 threshold functions of two variables (all except XOR and XNOR).
    found = th.realisable_truth_tables(2, torch.arange(-2.0, 2.01, 0.5)).tolist()
    assert found == [k for k in range(16) if k not in (XOR, XNOR)]


def test_truth_table_index_matches_python_loop():
    tables = torch.tensor(list(itertools.product((0, 1), repeat=4)))
    codes = th.truth_table_index(tables)
    assert codes.tolist() == list(range(16))


@settings(max_examples=25, deadline=None)
@given(
    w1=st.floats(-10, 10, allow_nan=False),
    w2=st.floats(-10, 10, allow_nan=False),
    theta=st.floats(-10, 10, allow_nan=False),
)
def test_no_real_unit_computes_xor(w1, w2, theta):
    out = th.threshold_unit(th.boolean_inputs(2, dtype=torch.float64), torch.tensor([w1, w2], dtype=torch.float64), theta)
    assert out.tolist() != [0.0, 1.0, 1.0, 0.0]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.5, 1.0]), min_size=4, max_size=4))
def test_unit_output_is_monotone_in_threshold(vals):
    w, theta = torch.tensor(vals[:3]), vals[3]
    x = th.boolean_inputs(3)
    assert bool((th.threshold_unit(x, w, theta) >= th.threshold_unit(x, w, theta + 0.25)).all())


def test_bad_inputs():
    with pytest.raises(ValueError, match="d must be >= 1"):
        th.boolean_inputs(0)
    with pytest.raises(ValueError, match="w must have shape"):
        th.threshold_unit(th.boolean_inputs(2), torch.ones(3), 1.0)
    with pytest.raises(ValueError, match="thresholds must have shape"):
        th.threshold_layer(th.boolean_inputs(2), torch.ones(4, 2), torch.ones(3))
    with pytest.raises(ValueError, match="layers must be a non-empty list"):
        th.threshold_network(th.boolean_inputs(2), [])
    with pytest.raises(ValueError, match="name must be one of"):
        th.gate("xor")
    with pytest.raises(ValueError, match="grid must have between"):
        th.realisable_truth_tables(2, torch.linspace(-1, 1, 500))
    with pytest.raises(ValueError, match="outputs must be a 2-D tensor"):
        th.truth_table_index(torch.ones(4))
    assert th.xor_network()[0][0].shape == (2, 2)
