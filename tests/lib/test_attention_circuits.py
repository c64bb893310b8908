import math

import pytest
import torch
from torch.nn import functional as F

from flt_lib.attention import circuits as c
from flt_lib.rng import torch_generator


def test_induction_data_structure():
    x, y = c.induction_data(200, 12, vocab=8, generator=torch_generator(0))
    a = x[:, -1]
    counts = (x == a[:, None]).sum(1)
    assert torch.all(counts == 2)
    i = (x[:, :-1] == a[:, None]).float().argmax(1)
    assert torch.all(i <= 12 - 3) and torch.equal(y, x[torch.arange(200), i + 1]) and torch.all(y != a)


def test_torus_offsets():
    off = c.torus_offsets(4, 5)
    assert off.shape == (20, 20, 2)
    assert off[0, 19].tolist() == [-1, -1]  # pixel (3, 4) is up-left of (0, 0) on the torus
    assert off[:, :, 0].max() == 2 and off[:, :, 0].min() == -1 and off[:, :, 1].abs().max() == 2


def test_attention_computes_a_convolution():
    g = torch_generator(1)
    img = torch.randn(2, 6, 6, generator=g, dtype=torch.float64)
    ker = torch.randn(3, 2, 3, 3, generator=g, dtype=torch.float64)
    ref = F.conv2d(F.pad(img[None], (1, 1, 1, 1), mode="circular"), ker)[0]
    errs = [(c.conv_as_attention(img, ker, a) - ref).abs().max().item() for a in (10.0, 14.0, 18.0)]
    assert errs[-1] < 1e-5
    slope = (math.log(errs[2]) - math.log(errs[0])) / 8.0
    assert -1.1 < slope < -0.9  # error ~ e^(-alpha)


def test_bad_inputs():
    with pytest.raises(ValueError, match="T must be >= 3"):
        c.induction_data(2, 2, vocab=4, generator=torch_generator(0))
    with pytest.raises(ValueError, match="kernel must be square with an odd side K"):
        c.conv_as_attention(torch.ones(1, 4, 4), torch.ones(1, 1, 2, 2), 1.0)
    with pytest.raises(ValueError, match="alpha must be > 0.0"):
        c.quadratic_position_scores(c.torus_offsets(2, 2), torch.zeros(1, 2), 0.0)
    with pytest.raises(ValueError, match=r"shifts must have shape \(n_heads, 2\)"):
        c.quadratic_position_scores(c.torus_offsets(2, 2), torch.zeros(1, 3), 1.0)
    with pytest.raises(ValueError, match="W must be >= 1"):
        c.torus_offsets(2, 0)
