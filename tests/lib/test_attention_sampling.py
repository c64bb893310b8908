import pytest
import torch

from flt_lib.attention import sampling
from flt_lib.rng import torch_generator


def test_filters_against_brute_force():
    g = torch_generator(0)
    logits = 2 * torch.randn(50, 9, generator=g, dtype=torch.float64)
    for top_p in (0.3, 0.8, 0.95):
        probs = sampling.filtered_probs(logits, top_p=top_p)
        p = torch.softmax(logits, -1)
        for row, q in zip(p, probs):
            order = row.argsort(descending=True)
            m = int((row[order].cumsum(0) < top_p).sum()) + 1   # smallest nucleus
            keep = set(order[:m].tolist())
            assert {i for i in range(9) if q[i] > 0} == keep
            torch.testing.assert_close(q[list(keep)].sum(), torch.tensor(1.0,
                                       dtype=torch.float64))
    probs = sampling.filtered_probs(logits, top_k=3)
    assert torch.all((probs > 0).sum(-1) == 3)
    cold = sampling.filtered_probs(logits, temperature=1e-3)
    assert torch.equal(cold.argmax(-1), logits.argmax(-1)) and cold.max(-1).values.min() > 0.99
    torch.testing.assert_close(sampling.filtered_probs(logits, temperature=2.0),
                               torch.softmax(logits / 2, -1))


def test_samples_follow_the_filtered_distribution():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0, 3.0]]).expand(20000, 5)
    draws = sampling.sample_next(logits, top_p=0.9, generator=torch_generator(1))
    freq = torch.bincount(draws, minlength=5) / 20000
    target = sampling.filtered_probs(logits[:1], top_p=0.9)[0]
    assert (freq - target).abs().max() < 0.015 and freq[3] == 0


def test_bad_input_names_the_argument():
    x = torch.zeros(2, 4)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        sampling.filtered_probs(x, temperature=0.0)
    with pytest.raises(ValueError, match="top_k must be <= 4"):
        sampling.filtered_probs(x, top_k=5)
    with pytest.raises(ValueError, match="top_p must be <= 1"):
        sampling.filtered_probs(x, top_p=1.5)
    with pytest.raises(TypeError, match="logits must have a floating-point dtype"):
        sampling.filtered_probs(torch.zeros(2, 3, dtype=torch.long))
    with pytest.raises(ValueError, match="logits must be a 2-D tensor"):
        sampling.sample_next(torch.zeros(4), generator=torch_generator(0))
