import pytest
import torch

from flt_lib.attention import seq2seq as s2s
from flt_lib.attention import seq2seq_eos as se
from flt_lib.recurrent import decoding
from flt_lib.rng import torch_generator


def _model(seed=0, max_len=8):
    cfg = s2s.Seq2SeqConfig(vocab=5, d_model=16, n_heads=2, n_layers=2, d_ff=32, max_len=max_len)
    return s2s.EncoderDecoder(cfg, generator=torch_generator(seed)).double()


def test_variable_reversal_data_against_a_loop():
    b = se.variable_reversal_data(50, 6, vocab=7, bos=7, generator=torch_generator(0), min_len=2)
    assert b.src.shape == (50, 6) and b.tgt_in.shape == b.tgt_out.shape == (50, 7)
    for src, tin, tout, L in zip(b.src.tolist(), b.tgt_in.tolist(), b.tgt_out.tolist(), b.lengths.tolist()):
        assert 2 <= L <= 6 and all(1 <= v < 7 for v in src[:L]) and src[L:] == [0] * (6 - L)
        target = src[:L][::-1] + [0]
        assert tout == target + [se.IGNORE] * (6 - L)
        assert tin == [7] + (target + [0] * (6 - L))[:-1]
    assert set(b.lengths.tolist()) == set(range(2, 7))


def test_greedy_until_eos_equals_fixed_length_greedy_cut_at_eos():
    m = _model(1)
    src = torch.randint(0, 5, (30, 5), generator=torch_generator(2))
    with torch.no_grad():
        full = s2s.greedy_decode(m, src, 8, use_cache=False).tokens          # oracle, no stop
    for eos in (0, 1, 2, 3):
        d = se.greedy_until_eos(m, src, eos=eos, max_len=8)
        for row, n, fin, ref in zip(d.tokens.tolist(), d.lengths.tolist(), d.finished.tolist(), full.tolist()):
            first = ref.index(eos) if eos in ref else None
            assert fin == (first is not None)
            assert n == (first if fin else 8)
            assert row[: n + fin] == ref[: n + fin] and all(v == eos for v in row[n:])
        # the loop stops as soon as every row has ended, or at the cap
        assert d.tokens.shape[1] == (int(d.lengths.max()) + 1 if d.finished.all() else 8)


def test_step_function_greedy_matches_batched_greedy():
    m = _model(3)
    src = torch.randint(0, 5, (6, 5), generator=torch_generator(4))
    d = se.greedy_until_eos(m, src, eos=2, max_len=8)
    for i in range(6):
        h = decoding.greedy(se.step_function(m, src[i]), bos=m.cfg.bos, eos=2, max_len=8)
        n = int(d.lengths[i])
        assert h.finished == bool(d.finished[i])
        assert h.tokens == tuple(d.tokens[i, : n + h.finished].tolist())


def test_match_rates_by_hand():
    tgt = torch.tensor([[3, 4, 0, -100], [2, 0, -100, -100], [1, 1, 1, 0]])
    dec = se.EosDecode(tokens=torch.tensor([[3, 4, 0, 0], [2, 3, 0, 0], [1, 2, 1, 0]]),
                       lengths=torch.tensor([2, 2, 3]), finished=torch.tensor([True, True, True]))
    assert se.match_rates(dec, tgt) == (1 / 3, pytest.approx(2 / 3))
    unfinished = se.EosDecode(tokens=torch.tensor([[3, 4, 1, 1]]), lengths=torch.tensor([4]),
                              finished=torch.tensor([False]))
    assert se.match_rates(unfinished, torch.tensor([[3, 4, 1, 1]])) == (0.0, 0.0)


def test_bad_inputs():
    g = torch_generator(0)
    with pytest.raises(ValueError, match="min_len"):
        se.variable_reversal_data(2, 4, vocab=5, bos=5, generator=g, min_len=5)
    with pytest.raises(ValueError, match="vocab"):
        se.variable_reversal_data(2, 4, vocab=1, bos=5, generator=g)
    m = _model()
    src = torch.zeros(2, 4, dtype=torch.long)
    with pytest.raises(TypeError, match="model must be an EncoderDecoder"):
        se.greedy_until_eos(torch.nn.Linear(2, 2), src, max_len=4)
    with pytest.raises(ValueError, match="max_len"):
        se.greedy_until_eos(m, src, max_len=9)
    with pytest.raises(ValueError, match="eos"):
        se.greedy_until_eos(m, src, eos=5, max_len=4)
    with pytest.raises(ValueError, match="src"):
        se.greedy_until_eos(m, src[0], max_len=4)
    with pytest.raises(TypeError, match="decoded must be an EosDecode"):
        se.match_rates(src, src)
    d = se.greedy_until_eos(m, src, max_len=4)
    with pytest.raises(ValueError, match="tgt_out"):
        se.match_rates(d, torch.zeros(3, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="src"):
        se.step_function(m, src)
