import pytest
import torch

from flt_lib.recurrent import seq2seq as S
from flt_lib.rng import torch_generator



def test_additive_attention_against_loop():
    g = torch_generator(0)
    s, H = torch.randn(2, 4, generator=g, dtype=torch.float64), torch.randn(2, 5, 3, generator=g, dtype=torch.float64)
    W_a, U_a, v = (torch.randn(*sh, generator=g, dtype=torch.float64) for sh in ((6, 4), (6, 3), (6,)))
    c, alpha = S.additive_attention(s, H, W_a, U_a, v)
    for b in range(2):
        e = torch.stack([v @ torch.tanh(W_a @ s[b] + U_a @ H[b, j]) for j in range(5)])
        a = torch.softmax(e, 0)
        torch.testing.assert_close(alpha[b], a)
        torch.testing.assert_close(c[b], (a[:, None] * H[b]).sum(0))
    torch.testing.assert_close(alpha.sum(-1), torch.ones(2, dtype=torch.float64))


def test_reversal_batch():
    src, tgt = S.reversal_batch(4, 6, 5, generator=torch_generator(1))
    assert src.shape == tgt.shape == (4, 6) and src.max() < 5
    assert torch.equal(tgt, src.flip(1))


@pytest.mark.parametrize("attention", [False, True])
def test_model_shapes_teacher_forcing_and_training(attention):
    model = S.Seq2Seq(6, emb=4, hidden=5, attention=attention, generator=torch_generator(2))
    src, tgt = S.reversal_batch(3, 7, 6, generator=torch_generator(3))
    logits, alpha = model(src, tgt)
    assert logits.shape == (3, 7, 6)
    if attention:
        assert alpha.shape == (3, 7, 7)
        torch.testing.assert_close(alpha.sum(-1), torch.ones(3, 7))
    else:
        assert alpha is None
    # with teacher forcing, step t's logits do not depend on targets at t or later
    tgt2 = tgt.clone()
    tgt2[:, 4:] = (tgt2[:, 4:] + 1) % 6
    torch.testing.assert_close(model(src, tgt2)[0][:, :5], logits[:, :5])
    h = S.train_seq2seq(model, min_len=2, max_len=4, steps=15, batch_size=8, lr=1e-2, generator=torch_generator(4))
    assert len(h.loss) == 15 and all(2 <= L <= 4 for L in h.lengths)
    acc = S.accuracy_by_length(model, [2, 3], n=10, generator=torch_generator(5))
    assert len(acc) == 2 and all(0 <= a <= 1 for a in acc)


def test_bad_inputs():
    model = S.Seq2Seq(6, attention=True, generator=torch_generator(0))
    with pytest.raises(TypeError, match="src must hold int64 token ids"):
        model(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="vocab must be >= 2"):
        S.reversal_batch(2, 3, 1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="max_len must be >= 5"):
        S.train_seq2seq(model, min_len=5, max_len=3, steps=1, batch_size=2, lr=1e-2, generator=torch_generator(0))
    with pytest.raises(TypeError, match="model must be a Seq2Seq"):
        S.accuracy_by_length(torch.nn.Linear(2, 2), [3], n=2, generator=torch_generator(0))
    with pytest.raises(ValueError, match="H must be a 3-D tensor"):
        S.additive_attention(torch.ones(2, 3), torch.ones(2, 3), torch.ones(3, 3), torch.ones(3, 3), torch.ones(3))
