import math

import pytest
import torch

from flt_lib.recurrent import decoding as D
from flt_lib.rng import torch_generator


def _table(seed, V=4):
    T = torch.log_softmax(2 * torch.randn(V, V, generator=torch_generator(seed),
                                          dtype=torch.float64), -1)
    return lambda x: T[x[:, -1]]


@pytest.mark.parametrize("seed", range(6))
def test_wide_beam_equals_exhaustive_mode(seed):
    step = _table(seed)
    exact = D.exhaustive(step, vocab=4, bos=0, eos=3, max_len=5)[0]
    best = D.beam_search(step, beam=64, bos=0, eos=3, max_len=5)[0]
    assert best.finished and best.tokens == exact.tokens
    assert best.log_prob == pytest.approx(exact.log_prob, abs=1e-12)


def test_greedy_is_beam_one_and_picks_argmax():
    step = _table(7)
    g = D.greedy(step, bos=0, eos=3, max_len=6)
    prev = 0
    for v in g.tokens:
        assert v == int(step(torch.tensor([[prev]]))[0].argmax())
        prev = v


def test_greedy_loses_to_beam_on_constructed_model():
    # first token: a (0.6) or b (0.4); after a: four tokens at 0.25; after b: eos (1.0)
    a, b, c, eos = 0, 1, 2, 3
    def step(x):
        out = []
        for row in x.tolist():
            lp = torch.full((5,), -math.inf, dtype=torch.float64)
            if len(row) == 1:
                lp[a], lp[b] = math.log(0.6), math.log(0.4)
            elif row[-1] == a:
                lp[[c, eos]] = math.log(0.5)
                lp[c] = math.log(0.5)
            elif row[-1] == b:
                lp[eos] = 0.0
            else:
                lp[eos] = 0.0
            out.append(lp)
        return torch.stack(out)
    g = D.greedy(step, bos=4, eos=eos, max_len=5)
    bs = D.beam_search(step, beam=2, bos=4, eos=eos, max_len=5)[0]
    assert g.log_prob == pytest.approx(math.log(0.3))
    assert bs.tokens == (b, eos) and bs.log_prob == pytest.approx(math.log(0.4))


def test_sample_frequencies_and_temperature():
    lp = torch.log(torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64))
    step = lambda x: lp.expand(x.shape[0], 3)  # eos = 2
    hyps = D.sample(step, 4000, bos=0, eos=2, max_len=50, generator=torch_generator(1))
    mean_len = sum(len(h.tokens) for h in hyps) / len(hyps)
    assert abs(mean_len - 1 / 0.2) < 0.2 and all(h.finished for h in hyps)
    assert all(h.log_prob == pytest.approx(lp[list(h.tokens)].sum().item()) for h in hyps[:20])
    cold = D.tempered(lp, 0.01)
    assert cold.exp()[0].item() == pytest.approx(1.0)
    assert torch.allclose(D.tempered(lp, 1.0), lp)


def test_bad_inputs():
    step = _table(0)
    with pytest.raises(ValueError, match="beam"):
        D.beam_search(step, beam=0, bos=0, eos=3, max_len=4)
    with pytest.raises(TypeError, match="step"):
        D.greedy("model", bos=0, eos=3, max_len=4)
    with pytest.raises(ValueError, match="temperature"):
        D.tempered(torch.zeros(3), 0.0)
    with pytest.raises(ValueError, match="max_len"):
        D.sample(step, 2, bos=0, eos=3, max_len=0, generator=torch_generator(0))
    with pytest.raises(ValueError, match="length_penalty"):
        D.beam_search(step, beam=2, bos=0, eos=3, max_len=4, length_penalty=-1.0)
