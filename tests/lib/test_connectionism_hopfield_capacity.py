"""Tests for flt_lib.connectionism.hopfield.capacity: oracles, Monte Carlo checks, bad inputs."""

import math

import pytest
import torch

from flt_lib.connectionism import hopfield as hp
from flt_lib.connectionism.hopfield import capacity as hc
from flt_lib.rng import torch_generator


def _pm1(shape, gen, dtype=torch.float64):
    return (2 * torch.randint(0, 2, shape, generator=gen) - 1).to(dtype)


# ---------------------------------------------------------------- cross-talk and capacity
def test_crosstalk_matches_definition():
    P = _pm1((4, 7), torch_generator(7))
    C = hc.crosstalk(P)
    s, n = P.shape
    for t in range(s):
        for i in range(n):
            want = sum(P[r, i] * P[r, j] * P[t, j] for r in range(s) if r != t for j in range(n) if j != i) / n
            assert math.isclose(float(C[t, i]), float(want), abs_tol=1e-12)


def test_flip_probability_closed_form_and_monte_carlo():
    assert hc.flip_probability(101, 26) == pytest.approx(0.5 * math.erfc(2 / math.sqrt(2)))
    P = hp.random_patterns(60, 300, generator=torch_generator(8))  # load 0.2
    measured = (hp.sign(P @ hp.hebbian_weights(P)) != P).float().mean().item()
    assert measured == pytest.approx(hc.flip_probability(300, 60), rel=0.3)


def test_stability_table_matches_brute_force():
    P = hp.random_patterns(12, 20, generator=torch_generator(10))
    table = hc.stability_table(P)
    for s in range(1, 13):
        W_int = (20 * hp.hebbian_weights(P[:s].double())).round()  # n W is an integer matrix
        for t in range(12):
            want = t < s and torch.equal(hp.sign(P[t].double() @ W_int), P[t].double())
            assert bool(table[s - 1, t]) == want
    s_all, s_first = hc.max_stable_load(table)
    assert s_all <= s_first and table[:s_all].diagonal().all()


def test_perfect_recall_prediction_solves_equation_and_order():
    for n in (100, 1000):
        s = hc.perfect_recall_prediction(n)
        p = 0.5 * math.erfc(math.sqrt((n - 1) / (s - 1)) / math.sqrt(2))
        assert s * n * p == pytest.approx(math.log(2), rel=1e-6)
        assert hc.perfect_recall_prediction(n, all_patterns=False) > s
    assert hc.mceliece_capacity(1000, all_patterns=False) == pytest.approx(2 * hc.mceliece_capacity(1000))


def test_critical_load_interpolates():
    assert hc.critical_load([0.1, 0.2], [1.0, 0.8], level=0.9) == pytest.approx(0.15)
    assert hc.critical_load([0.1, 0.2, 0.3], [0.95, 0.92, 0.5], level=0.9) == pytest.approx(0.2 + 0.02 / 0.42 * 0.1)


def test_critical_load_near_amit_gutfreund_sompolinsky():
    loads = [0.08, 0.12, 0.16, 0.2]  # n = 300, 8 trials: finite size blurs the jump at 0.138
    P = hp.random_patterns(round(max(loads) * 300), 300, generator=torch_generator(1), batch=8)
    m, _ = hp.retrieval_sweep(P, loads, generator=torch_generator(101), max_sweeps=20)
    assert 0.12 <= hc.critical_load(loads, m.mean(1).tolist(), level=0.9) <= 0.18


# ---------------------------------------------------------------- replica-symmetric theory
def _ags_residuals(alpha, m):
    """Residuals of Amit, Gutfreund and Sompolinsky's three T = 0 equations in (m, C, r)."""
    # Given alpha and m, solve m = erf(m / sqrt(2 alpha r)) for r, then check C and r.
    lo, hi = 1e-9, 1e9
    for _ in range(300):  # erf(m / sqrt(2 alpha r)) decreases in r
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if math.erf(m / math.sqrt(2 * alpha * mid)) > m else (lo, mid)
    r = math.sqrt(lo * hi)
    C = math.sqrt(2 / (math.pi * alpha * r)) * math.exp(-(m**2) / (2 * alpha * r))
    return r - 1 / (1 - C) ** 2


def test_replica_symmetric_capacity_solves_the_ags_equations():
    cap = hc.replica_symmetric_capacity()
    # The retrieval state at alpha_c satisfies the three original equations (m, C, r) ...
    assert abs(_ags_residuals(cap.alpha_c, cap.overlap)) < 1e-6
    assert cap.error_fraction == pytest.approx((1 - cap.overlap) / 2)
    # ... and alpha_c is the maximum over an independent grid of the reduced equation.
    ys = [0.5 + 1e-4 * k for k in range(25_000)]
    grid = max((math.erf(y) / y - 2 / math.sqrt(math.pi) * math.exp(-y * y)) ** 2 / 2 for y in ys)
    assert cap.alpha_c == pytest.approx(grid, abs=1e-9)
    assert round(cap.alpha_c, 3) == 0.138 and round(100 * cap.error_fraction, 2) == 1.63


def test_replica_symmetric_overlap_branch():
    cap = hc.replica_symmetric_capacity()
    ms = [hc.replica_symmetric_overlap(a) for a in (0.0, 0.05, 0.1, 0.13, cap.alpha_c)]
    assert ms[0] == 1.0 and all(a > b for a, b in zip(ms, ms[1:]))
    assert ms[-1] == pytest.approx(cap.overlap, abs=1e-5)
    for a, m in zip((0.05, 0.1, 0.13), ms[1:4]):
        assert abs(_ags_residuals(a, m)) < 1e-6
    with pytest.raises(ValueError, match="alpha must be <= alpha_c"):
        hc.replica_symmetric_overlap(0.15)


# ---------------------------------------------------------------- bad inputs
def test_bad_inputs():
    with pytest.raises(ValueError, match="patterns must be a 2-D tensor"):
        hc.crosstalk(torch.ones(3))
    with pytest.raises(ValueError, match="level must be"):
        hc.critical_load([0.1, 0.2], [1.0, 0.5], level=1.5)
    with pytest.raises(ValueError, match="same length >= 2"):
        hc.critical_load([0.1, 0.2], [1.0])
    with pytest.raises(ValueError, match="already below level"):
        hc.critical_load([0.1, 0.2], [0.5, 0.4])
    with pytest.raises(ValueError, match="s must be >= 2"):
        hc.flip_probability(10, 1)
    with pytest.raises(ValueError, match="never falls below level"):
        hc.critical_load([0.1, 0.2], [1.0, 0.95])
    with pytest.raises(ValueError, match="n_targets must be <= 3"):
        hc.stability_table(torch.ones(3, 4), n_targets=4)
    with pytest.raises(TypeError, match="stable must be a boolean"):
        hc.max_stable_load(torch.ones(3, 3))
    with pytest.raises(ValueError, match="n must be >= 2"):
        hc.mceliece_capacity(1)
    with pytest.raises(ValueError, match="n must be >= 4"):
        hc.perfect_recall_prediction(3)
