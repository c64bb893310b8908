"""Tests for flt_lib.bayes.diagnostics against an independent NumPy/SciPy transcription of
Vehtari et al. (2021) and on cases with a known answer."""

import numpy as np
import pytest
import torch
from scipy.special import ndtri
from scipy.stats import rankdata

from flt_lib.bayes import diagnostics
from flt_lib.rng import torch_generator


def _np_split(x):
    n = x.shape[0] // 2
    return np.concatenate([x[:n], x[x.shape[0] - n:]], axis=1)


def _np_rhat(z):  # Gelman et al. (2013), eq. (11.4), on already split chains (N, M)
    N = z.shape[0]
    B = N * np.var(z.mean(0), ddof=1)
    W = np.mean(np.var(z, axis=0, ddof=1))
    return np.sqrt(((N - 1) / N * W + B / N) / W)


def _np_z(z):
    r = rankdata(z, method="average").reshape(z.shape)
    return ndtri((r - 3 / 8) / (z.size - 2 * 3 / 8 + 1))


def _np_rank_rhat(x):
    z = _np_split(x)
    return max(_np_rhat(_np_z(z)), _np_rhat(_np_z(np.abs(z - np.median(z)))))


def _draws(T, C, seed, ties=False):
    g = torch_generator(seed)
    x = torch.randn(T, C, generator=g, dtype=torch.float64)
    x = x * (0.5 + 2 * torch.rand(C, generator=g, dtype=torch.float64))
    x = x + torch.randn(C, generator=g, dtype=torch.float64)
    if ties:
        x = torch.round(x * 2) / 2
    return x


@pytest.mark.parametrize("T,C,seed,ties", [(4, 2, 0, False), (9, 3, 1, False),
                                            (50, 4, 2, True), (101, 5, 3, True)])
def test_against_numpy_transcription(T, C, seed, ties):
    x = _draws(T, C, seed, ties)
    xn = x.numpy()
    assert abs(diagnostics.split_rhat(x).item() - _np_rhat(_np_split(xn))) < 1e-12
    assert abs(diagnostics.rank_normalised_rhat(x).item() - _np_rank_rhat(xn)) < 1e-12
    z = diagnostics.rank_normalise(x).numpy()
    assert np.abs(z - _np_z(xn)).max() < 1e-12


def test_vectorised_over_quantities():
    x = torch.stack([_draws(30, 4, s) for s in range(3)], dim=2)   # (T, C, 3)
    r = diagnostics.rank_normalised_rhat(x)
    assert r.shape == (3,)
    for k in range(3):
        assert abs(r[k] - diagnostics.rank_normalised_rhat(x[:, :, k])) < 1e-12


def test_known_cases():
    g = torch_generator(4)
    iid = torch.randn(2000, 4, generator=g, dtype=torch.float64)
    assert abs(diagnostics.rank_normalised_rhat(iid).item() - 1) < 0.01
    shifted = iid + torch.tensor([0.0, 0.0, 0.0, 3.0], dtype=torch.float64)
    assert diagnostics.split_rhat(shifted) > 1.3
    # a drifting chain: split R-hat catches it although all chains are alike
    drift = iid + torch.linspace(0, 4, 2000, dtype=torch.float64)[:, None]
    assert diagnostics.split_rhat(drift) > 1.3
    # same location, different scale: only the folded (tail) R-hat sees it
    scaled = iid * torch.tensor([1.0, 1.0, 1.0, 5.0], dtype=torch.float64)
    assert diagnostics.rank_normalised_rhat(scaled) > 1.05
    # two chains of N(-a, 1) and N(a, 1): R-hat^2 -> 1 + 2 a^2 (unsplit; exact up to noise)
    two = torch.randn(20000, 2, generator=g, dtype=torch.float64) + torch.tensor([-1.0, 1.0])
    z = two.numpy()
    assert abs(_np_rhat(z) ** 2 - 3) < 0.05


def test_bulk_rhat_is_invariant_to_monotone_maps():
    x = _draws(40, 3, 5)
    bulk = lambda v: diagnostics.split_rhat(diagnostics.rank_normalise(v))
    assert abs(bulk(x) - bulk(torch.exp(x))) < 1e-12


def test_split_chains_drops_odd_middle():
    x = torch.arange(10, dtype=torch.float64).reshape(5, 2)
    s = diagnostics.split_chains(x)
    assert s.shape == (2, 4)
    assert s[:, 2].tolist() == [6.0, 8.0]


@pytest.mark.parametrize("fn", [diagnostics.split_rhat, diagnostics.rank_normalised_rhat,
                                diagnostics.rank_normalise, diagnostics.split_chains])
def test_bad_input(fn):
    with pytest.raises(TypeError, match="x must be a torch.Tensor"):
        fn(np.zeros((10, 2)))
    with pytest.raises(ValueError, match=r"x must have shape \(T, C\)"):
        fn(torch.zeros(10, dtype=torch.float64))
    with pytest.raises(ValueError, match="at least 4 draws"):
        fn(torch.zeros(3, 2, dtype=torch.float64))
    with pytest.raises(TypeError, match="floating-point"):
        fn(torch.zeros(10, 2, dtype=torch.int64))
