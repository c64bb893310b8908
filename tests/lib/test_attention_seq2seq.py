import pytest
import torch

from flt_lib.attention import seq2seq as s2s
from flt_lib.attention.train import train
from flt_lib.rng import torch_generator


def _model(norm="pre", seed=0, n_layers=2):
    cfg = s2s.Seq2SeqConfig(vocab=6, d_model=16, n_heads=2, n_layers=n_layers, d_ff=32, max_len=6, norm=norm)
    return s2s.EncoderDecoder(cfg, generator=torch_generator(seed))


def test_reversal_data():
    src, tin, tout = s2s.reversal_data(3, 5, vocab=6, bos=6, generator=torch_generator(0))
    assert torch.equal(tout, src.flip(1)) and torch.all(tin[:, 0] == 6) and torch.equal(tin[:, 1:], tout[:, :-1])


def test_kv_cache_decoding_equals_full_decoding():
    for norm in ("pre", "post"):
        m = _model(norm).double()
        src = torch.randint(0, 6, (4, 6), generator=torch_generator(1))
        with torch.no_grad():
            a = s2s.greedy_decode(m, src, 6, use_cache=True)
            b = s2s.greedy_decode(m, src, 6, use_cache=False)
        assert torch.equal(a.tokens, b.tokens)
        torch.testing.assert_close(a.logits, b.logits, atol=1e-10, rtol=0)


def test_decoder_is_causal_and_teacher_forcing_learns():
    m = _model()
    src, tin, tout = s2s.reversal_data(2, 6, vocab=6, bos=6, generator=torch_generator(2))
    t2 = tin.clone()
    t2[:, 4:] = (t2[:, 4:] + 1) % 6
    torch.testing.assert_close(m(src, tin).logits[:, :4], m(src, t2).logits[:, :4])
    g = torch_generator(3)
    m = _model(n_layers=1)
    h = train(m, lambda: s2s.reversal_data(16, 3, vocab=6, bos=6, generator=g), s2s.teacher_forcing_loss,
              steps=40, lr=1e-2, record_every=20)
    assert h.loss[-1] < 0.6 * h.loss[0]


def test_bad_inputs():
    with pytest.raises(ValueError, match="norm must be one of"):
        s2s.Seq2SeqConfig(vocab=6, d_model=16, n_heads=2, n_layers=1, d_ff=8, max_len=4, norm="none")
    m = _model()
    with pytest.raises(ValueError, match=r"src ids must lie in \[0, 5\]"):
        m.encode(torch.tensor([[0, 6]]))
    with pytest.raises(ValueError, match="at most max_len = 6"):
        m.encode(torch.zeros(1, 7, dtype=torch.long))
    with pytest.raises(ValueError, match="steps must be <= 6"):
        s2s.greedy_decode(m, torch.zeros(1, 3, dtype=torch.long), 7, use_cache=True)
    with pytest.raises(TypeError, match="model must be an EncoderDecoder"):
        s2s.greedy_decode(None, torch.zeros(1, 3, dtype=torch.long), 2, use_cache=True)
    with pytest.raises(ValueError, match="vocab must be >= 2"):
        s2s.reversal_data(2, 3, vocab=1, bos=1, generator=torch_generator(0))
