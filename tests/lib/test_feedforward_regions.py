"""Tests for flt_lib.feedforward.regions (Section 2.5)."""

import itertools
import math
from collections import Counter
from fractions import Fraction

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.feedforward import regions as rg


def formula_regions(lines):
    """Oracle for distinct lines: R = 1 + m + sum_p (t_p - 1) over crossing points p."""
    L = [tuple(Fraction(v) for v in line) for line in lines]
    pairs = Counter()
    for i, (a1, b1, c1) in enumerate(L):
        for a2, b2, c2 in L[i + 1:]:
            det = a1 * b2 - a2 * b1
            if det != 0:
                pairs[((b1 * c2 - b2 * c1) / det, (c1 * a2 - c2 * a1) / det)] += 1
    t = [next(k for k in range(2, 60) if math.comb(k, 2) == c) for c in pairs.values()]
    return 1 + len(L) + sum(k - 1 for k in t)


def distinct(lines):
    normed = set()
    for a, b, c in lines:
        v = [Fraction(a), Fraction(b), Fraction(c)]
        piv = next(x for x in v if x != 0)
        normed.add(tuple(x / piv for x in v))
    return len(normed) == len(lines)


line_st = st.tuples(st.integers(-6, 6), st.integers(-6, 6), st.integers(-6, 6)).filter(lambda l: l[0] or l[1])


def test_activation_pattern_loop_vs_vectorised():
    g = torch.Generator().manual_seed(0)
    X, W, b = torch.randn(20, 3, generator=g), torch.randn(4, 3, generator=g), torch.randn(4, generator=g)
    P = rg.activation_pattern(X, W, b)
    for i, j in itertools.product(range(20), range(4)):
        assert bool(P[i, j]) == bool(W[j] @ X[i] + b[j] > 0)
    with pytest.raises(ValueError, match="b must have shape \\(m,\\)"):
        rg.activation_pattern(X, W, torch.randn(3))


def test_general_position_regions_values():
    assert [rg.general_position_regions(m, 2) for m in range(6)] == [1, 2, 4, 7, 11, 16]
    assert rg.general_position_regions(3, 5) == 8  # fewer hyperplanes than dimensions: all 2^m patterns
    with pytest.raises(ValueError, match="n must be >= 1"):
        rg.general_position_regions(3, 0)


@settings(max_examples=25, deadline=None)
@given(st.lists(line_st, min_size=1, max_size=7))
def test_count_regions_matches_formula_and_bound(lines):
    if not distinct(lines):
        return
    r = rg.count_regions_2d(lines)
    assert r == formula_regions(lines) == rg.zaslavsky_regions_2d(lines)
    assert r <= rg.general_position_regions(len(lines), 2)
    if rg.in_general_position_2d(lines):
        assert r == rg.general_position_regions(len(lines), 2)
    else:
        assert r < rg.general_position_regions(len(lines), 2)


def test_count_regions_special_cases_and_sampling_oracle():
    assert rg.count_regions_2d([]) == 1
    assert rg.count_regions_2d([(1, 0, c) for c in range(5)]) == 6
    assert rg.count_regions_2d([(1, k, 0) for k in range(5)]) == 10
    lines = [(2, 1, -1), (-1, 3, -2), (1, -1, 0), (3, 2, 4)]
    # every pattern found by dense sampling is one of the exact sign vectors
    g = torch.linspace(-6, 6, 151, dtype=torch.float64)
    X = torch.cartesian_prod(g, g)
    W = torch.tensor([[a, b] for a, b, _ in lines], dtype=torch.float64)
    bias = torch.tensor([c for *_, c in lines], dtype=torch.float64)
    sampled = {tuple(int(v) for v in row) for row in rg.activation_pattern(X, W, bias).tolist()}
    assert sampled <= rg.region_sign_vectors_2d(lines)
    with pytest.raises(ValueError, match="lines\\[1\\] has a = b = 0"):
        rg.count_regions_2d([(1, 0, 0), (0, 0, 1)])
    with pytest.raises(ValueError, match="must be \\(a, b, c\\)"):
        rg.region_sign_vectors_2d([(1, 0)])


def test_zaslavsky_regions_bad_input():
    with pytest.raises(ValueError, match=r"lines must be distinct, but lines\[0\] and lines\[1\] coincide"):
        rg.zaslavsky_regions_2d([(1, 2, 3), (2, 4, 6)])


def test_in_general_position():
    assert rg.in_general_position_2d([(1, 0, 0), (0, 1, 0), (1, 1, 1)])
    assert not rg.in_general_position_2d([(1, 0, 0), (0, 1, 0), (1, 1, 0)])
    assert not rg.in_general_position_2d([(1, 2, 0), (2, 4, 1)])
    with pytest.raises(ValueError, match="not a line"):
        rg.in_general_position_2d([(0, 0, 1)])


def test_montufar_lower_bound():
    assert rg.montufar_lower_bound(8, 2, 1) == 37
    assert rg.montufar_lower_bound(8, 2, 3) == 4**4 * 37
    assert rg.montufar_lower_bound(3, 1, 4) == 27 * 4
    for L in range(2, 6):  # deep lower bound beats the shallow upper bound with the same units
        assert rg.montufar_lower_bound(4, 2, L) > rg.general_position_regions(4 * L, 2)
    with pytest.raises(ValueError, match="m must be >= 2"):
        rg.montufar_lower_bound(1, 2, 3)


@pytest.mark.parametrize("L", [1, 2, 3, 6])
def test_sawtooth_has_2_to_the_L_pieces(L):
    knots, values = rg.relu_net_1d(*rg.sawtooth_params(L), 0, 1)
    assert rg.count_linear_pieces(knots, values) == 2**L
    # oracle: the closed-form tent composition on a dyadic grid (exact in floating point)
    xs = [Fraction(k, 2 ** (L + 2)) for k in range(2 ** (L + 2) + 1)]
    def tent_pow(x):
        for _ in range(L):
            x = 2 * x if x <= Fraction(1, 2) else 2 - 2 * x
        return x
    interp = {k: v for k, v in zip(knots, values)}
    assert all(tent_pow(k) == interp[k] for k in knots)
    assert rg.count_linear_pieces(xs, [tent_pow(x) for x in xs]) == 2**L



@pytest.mark.parametrize("L", [1, 2, 3, 6])
def test_montufar_1d_construction_attains_the_bound(L):
    knots, values = rg.relu_net_1d(*rg.montufar_1d_params(L), 0, 1)
    assert rg.count_linear_pieces(knots, values) == rg.montufar_lower_bound(2, 1, L) == 3 * 2 ** (L - 1)
    # oracle: u = T^(L-1)(x) by the closed-form tent, then g(u) = ReLU(u - 1/3) + 2 ReLU(2/3 - u)
    def net(x):
        for _ in range(L - 1):
            x = 2 * x if x <= Fraction(1, 2) else 2 - 2 * x
        return max(x - Fraction(1, 3), Fraction(0)) + 2 * max(Fraction(2, 3) - x, Fraction(0))
    assert all(net(k) == v for k, v in zip(knots, values))
    xs = [Fraction(k, 3 * 2 ** (L + 1)) for k in range(3 * 2 ** (L + 1) + 1)]
    assert rg.count_linear_pieces(xs, [net(x) for x in xs]) == 3 * 2 ** (L - 1)


def test_montufar_1d_params_bad_input():
    with pytest.raises(ValueError, match="depth"):
        rg.montufar_1d_params(0)
    with pytest.raises(TypeError, match="depth"):
        rg.montufar_1d_params(2.5)

def test_relu_net_1d_matches_torch_forward():
    g = torch.Generator().manual_seed(3)
    Ws = [torch.randn(4, 1, generator=g), torch.randn(3, 4, generator=g), torch.randn(1, 3, generator=g)]
    bs = [torch.randn(4, generator=g), torch.randn(3, generator=g), torch.randn(1, generator=g)]
    knots, values = rg.relu_net_1d([W.tolist() for W in Ws], [b.tolist() for b in bs], -2, 2)
    x = torch.tensor([float(k) for k in knots], dtype=torch.float64)[:, None]
    h = x
    for W, b in zip(Ws[:-1], bs[:-1]):
        h = torch.relu(h @ W.double().T + b.double())
    out = (h @ Ws[-1].double().T + bs[-1].double())[:, 0]
    assert torch.allclose(out, torch.tensor([float(v) for v in values], dtype=torch.float64), atol=1e-9)
    with pytest.raises(ValueError, match="hi must be > lo"):
        rg.relu_net_1d([[[1]]], [[0]], 1, 0)
    with pytest.raises(ValueError, match="layer 1: weights must have shape"):
        rg.relu_net_1d([[[1], [1]], [[1, 1, 1]]], [[0, 0], [0]], 0, 1)


def test_count_linear_pieces():
    assert rg.count_linear_pieces([0, 1, 2, 3], [0, 1, 2, 2]) == 2
    assert rg.count_linear_pieces([0, 1], [5, 5]) == 1
    with pytest.raises(ValueError, match="same length >= 2"):
        rg.count_linear_pieces([0], [0])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=2, max_size=12))
def test_relu_interpolant_exact_at_knots(vals):
    m = len(vals)
    knots = torch.linspace(-1, 1, m, dtype=torch.float64)
    values = torch.tensor(vals, dtype=torch.float64)
    thr, coefs, off = rg.relu_interpolant(knots, values)
    assert thr.shape == (m - 1,) and coefs.shape == (m - 1,)
    assert torch.allclose(rg.eval_relu_sum(knots, thr, coefs, off), values, atol=1e-10)
    mid = (knots[1:] + knots[:-1]) / 2
    assert torch.allclose(rg.eval_relu_sum(mid, thr, coefs, off), (values[1:] + values[:-1]) / 2, atol=1e-10)


def test_relu_interpolant_error_bound_and_bad_input():
    f = lambda t: torch.sin(3 * t)
    x = torch.linspace(0, 1, 2001, dtype=torch.float64)
    for m in [5, 20]:
        knots = torch.linspace(0, 1, m, dtype=torch.float64)
        thr, coefs, off = rg.relu_interpolant(knots, f(knots))
        h = 1 / (m - 1)
        assert (rg.eval_relu_sum(x, thr, coefs, off) - f(x)).abs().max() <= 9 * h**2 / 8
    with pytest.raises(ValueError, match="strictly increasing"):
        rg.relu_interpolant(torch.tensor([0.0, 0.0, 1.0]), torch.zeros(3))
    with pytest.raises(ValueError, match="coefs must have shape \\(k,\\)"):
        rg.eval_relu_sum(x, torch.zeros(3), torch.zeros(2), 0.0)
