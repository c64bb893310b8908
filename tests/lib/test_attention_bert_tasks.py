import itertools

import pytest
import torch

from flt_lib.attention import bert
from flt_lib.attention import bert_tasks as bt
from flt_lib.attention.encoder import Encoder, EncoderConfig
from flt_lib.rng import torch_generator

V = 6
P = bert.markov_chain(V, successors=2, generator=torch_generator(0))


def _body(seed=1):
    cfg = EncoderConfig(vocab=V + 2, d_model=16, n_heads=2, n_layers=1, d_ff=16, max_len=11,
                        d_out=V, positions="learned")
    return Encoder(cfg, generator=torch_generator(seed))


def test_nsp_pairs_layout_and_labels():
    b = bt.nsp_pairs(P, 200, 3, 4, vocab=V, generator=torch_generator(2))
    assert b.tokens.shape == b.segments.shape == (200, 10)
    assert (b.tokens[:, 0] == V + 1).all() and (b.tokens[:, [4, 9]] == V + 2).all()
    assert b.segments[0].tolist() == [0] * 5 + [1] * 5
    nxt = b.is_next == 1
    assert 60 < int(nxt.sum()) < 140
    assert (P[b.tokens[nxt, 3], b.tokens[nxt, 5]] > 0).all()       # continuations are allowed
    assert (P[b.tokens[~nxt, 3], b.tokens[~nxt, 5]] == 0).any()     # random segments often are not


def test_nsp_posterior_equals_full_likelihood_ratio():
    b = bt.nsp_pairs(P, 50, 3, 4, vocab=V, generator=torch_generator(3))
    pi = bert.stationary(P)
    post = bt.nsp_posterior(P, b.tokens[:, 3], b.tokens[:, 5])
    for row, p in zip(b.tokens.tolist(), post.tolist()):
        a, seg_b = row[3], row[5:9]
        chain = 1.0
        for u, v in zip(seg_b, seg_b[1:]):
            chain *= float(P[u, v])
        lik_next, lik_other = float(P[a, seg_b[0]]) * chain, float(pi[seg_b[0]]) * chain
        if lik_next + lik_other > 0:
            assert p == pytest.approx(lik_next / (lik_next + lik_other), abs=1e-12)


def test_corrupt_span_tags_and_ends():
    b = bt.corrupt_span(P, 100, 10, vocab=V, min_len=2, max_len=4, generator=torch_generator(4))
    assert b.tokens.shape == b.tags.shape == (100, 11) and (b.tokens[:, 0] == V + 1).all()
    for tags, s, e, row in zip(b.tags.tolist(), b.start.tolist(), b.end.tolist(), b.tokens.tolist()):
        assert 1 <= s and 2 <= e - s + 1 <= 4 and e <= 10
        assert tags == [0] * s + [1] * (e - s + 1) + [0] * (10 - e)
        for t in range(1, 10):                    # untouched neighbours follow the chain
            if not tags[t] and not tags[t + 1]:
                assert P[row[t], row[t + 1]] > 0


def test_best_span_equals_brute_force():
    g = torch_generator(5)
    s, e = torch.randn(20, 7, generator=g), torch.randn(20, 7, generator=g)
    i, j = bt.best_span(s, e)
    for r in range(20):
        best = max(((a, b) for a, b in itertools.product(range(7), repeat=2) if a <= b),
                   key=lambda ab: s[r, ab[0]] + e[r, ab[1]])
        assert (int(i[r]), int(j[r])) == best


def test_bert_heads_keeps_the_body_and_uses_segments():
    body = _body()
    before = {k: v.clone() for k, v in body.state_dict().items()}
    m = bt.BertHeads(body, n_tags=3, generator=torch_generator(6))
    assert all(torch.equal(before[k], v) for k, v in body.state_dict().items())
    assert torch.equal(m.body.embed.weight[: V + 2], body.embed.weight)
    assert m.body.embed.num_embeddings == V + 3
    x = bt.nsp_pairs(P, 4, 3, 4, vocab=V, generator=torch_generator(7))
    out = m(x.tokens, x.segments)
    assert out.nsp.shape == (4, 2) and out.tags.shape == (4, 10, 3) and out.start.shape == (4, 10)
    zero = m(x.tokens)
    torch.testing.assert_close(zero.start, m(x.tokens, torch.zeros_like(x.segments)).start)
    assert not torch.allclose(zero.start, out.start)
    spans = bt.corrupt_span(P, 4, 9, vocab=V, generator=torch_generator(8))
    loss = bt.heads_loss(m, (x, spans))
    loss.backward()
    assert torch.isfinite(loss) and m.segment.grad is not None


def test_bad_inputs():
    g = torch_generator(0)
    with pytest.raises(ValueError, match="P must have shape"):
        bt.nsp_pairs(P, 2, 3, 3, vocab=V + 1, generator=g)
    with pytest.raises(ValueError, match="len_a"):
        bt.nsp_pairs(P, 2, 0, 3, vocab=V, generator=g)
    with pytest.raises(ValueError, match="max_len"):
        bt.corrupt_span(P, 2, 5, vocab=V, min_len=3, max_len=6, generator=g)
    with pytest.raises(ValueError, match="b_first"):
        bt.nsp_posterior(P, torch.zeros(3, dtype=torch.long), torch.zeros(2, dtype=torch.long))
    with pytest.raises(ValueError, match="end"):
        bt.best_span(torch.zeros(2, 3), torch.zeros(2, 4))
    with pytest.raises(TypeError, match="body must be an Encoder"):
        bt.BertHeads(torch.nn.Linear(2, 2), n_tags=2, generator=g)
    m = bt.BertHeads(_body(), n_tags=2, generator=g)
    with pytest.raises(ValueError, match="tokens must lie"):
        m(torch.full((1, 4), V + 3))
    with pytest.raises(ValueError, match="segments"):
        m(torch.zeros(1, 4, dtype=torch.long), torch.zeros(1, 5, dtype=torch.long))
