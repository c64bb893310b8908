import math

import pytest
import torch

from flt_lib.attention import bert
from flt_lib.attention.encoder import Encoder, EncoderConfig
from flt_lib.rng import torch_generator


def test_masking_rule_frequencies():
    tokens = torch.randint(0, 10, (400, 50), generator=torch_generator(0))
    m = bert.mask_tokens(tokens, bert.MaskingRule(), vocab=10, generator=torch_generator(1))
    n, sel = tokens.numel(), m.selected.sum().item()
    assert abs(sel / n - 0.15) < 4 * math.sqrt(0.15 * 0.85 / n)
    assert abs(m.masked.sum().item() / sel - 0.8) < 4 * math.sqrt(0.16 / sel)
    assert abs(m.randomised.sum().item() / sel - 0.1) < 4 * math.sqrt(0.09 / sel)
    assert torch.all(m.inputs[m.masked] == 10)
    kept = m.selected & ~m.masked & ~m.randomised
    assert torch.equal(m.inputs[kept | ~m.selected], tokens[kept | ~m.selected])
    assert torch.equal(m.labels[m.selected], tokens[m.selected]) and torch.all(m.labels[~m.selected] == bert.IGNORE)
    p = bert.mask_tokens(bert.prepend_cls(tokens, 11), bert.MaskingRule(p_select=1.0), vocab=10,
                         generator=torch_generator(2), protect=1)
    assert not p.selected[:, 0].any() and p.selected[:, 1:].all()


def test_markov_chain_and_reversal():
    P = bert.markov_chain(6, successors=2, generator=torch_generator(3))
    torch.testing.assert_close(P.sum(1), torch.ones(6, dtype=torch.float64))
    assert ((P > 0).sum(1) == 2).all() and all(P[i, (i + 1) % 6] > 0 for i in range(6))
    reach = torch.linalg.matrix_power((P > 0).double() + torch.eye(6, dtype=torch.float64), 6)
    assert torch.all(reach > 0)  # irreducible
    pi = bert.stationary(P)
    torch.testing.assert_close(pi @ P, pi)
    R = bert.reverse_chain(P)
    torch.testing.assert_close(R.sum(1), torch.ones(6, dtype=torch.float64))
    torch.testing.assert_close(pi[:, None] * R, (pi[:, None] * P).T)  # reversed pair frequencies
    x = bert.sample_chain(P, 3000, 2, generator=torch_generator(4))
    emp = torch.zeros(6, 6, dtype=torch.float64)
    emp.index_put_((x[:, 0], x[:, 1]), torch.ones(3000, dtype=torch.float64), accumulate=True)
    assert (emp / 3000 - pi[:, None] * P).abs().max() < 0.03


def test_neighbour_posterior_by_enumeration():
    P = 0.5 * bert.markov_chain(4, successors=2, generator=torch_generator(9)) + 0.5 / 4
    pi = bert.stationary(P)
    x = torch.tensor([[2, 0, 3]])
    post = bert.neighbour_posterior(P, x)
    for t in range(3):  # brute force: the joint law of the 3-token sequence, position t free
        joint = torch.zeros(4, dtype=torch.float64)
        for v in range(4):
            seq = x[0].tolist()
            seq[t] = v
            joint[v] = pi[seq[0]] * P[seq[0], seq[1]] * P[seq[1], seq[2]]
        torch.testing.assert_close(post[0, t], joint / joint.sum())
    with pytest.raises(ValueError, match="at least 2 positions"):
        bert.neighbour_posterior(P, torch.zeros(2, 1, dtype=torch.long))


def test_mlm_loss_and_classifier_copy():
    cfg = EncoderConfig(vocab=12, d_model=16, n_heads=2, n_layers=1, d_ff=16, max_len=9, d_out=10)
    enc = Encoder(cfg, generator=torch_generator(5))
    x = bert.prepend_cls(torch.randint(0, 10, (4, 8), generator=torch_generator(6)), 11)
    m = bert.mask_tokens(x, bert.MaskingRule(p_select=0.5), vocab=10, generator=torch_generator(7), protect=1)
    logits = enc(m.inputs).logits
    ref = torch.nn.functional.cross_entropy(logits[m.selected], m.labels[m.selected])
    torch.testing.assert_close(bert.mlm_loss(enc, m), ref)
    clf = bert.classifier_from_pretrained(enc, 2, generator=torch_generator(8))
    assert clf(x).logits.shape == (4, 9, 2) and clf.cfg.d_out == 2 and enc.head.out_features == 10
    assert torch.equal(clf.blocks[0].ffn.W_1.weight, enc.blocks[0].ffn.W_1.weight)
    assert clf.blocks[0].ffn.W_1.weight is not enc.blocks[0].ffn.W_1.weight


def test_bad_inputs():
    with pytest.raises(ValueError, match="p_mask \\+ p_random must be <= 1"):
        bert.MaskingRule(p_mask=0.8, p_random=0.3)
    with pytest.raises(TypeError, match="rule must be a MaskingRule"):
        bert.mask_tokens(torch.zeros(2, 3, dtype=torch.long), 0.15, vocab=4, generator=torch_generator(0))
    with pytest.raises(ValueError, match="successors must be <= 4"):
        bert.markov_chain(4, successors=5, generator=torch_generator(0))
    with pytest.raises(ValueError, match=r"P must be a 2-D tensor \(V, V\)"):
        bert.stationary(torch.ones(3))
    with pytest.raises(ValueError, match="P must be irreducible"):
        bert.stationary(torch.eye(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="T must be >= 1"):
        bert.sample_chain(torch.eye(2, dtype=torch.float64), 2, 0, generator=torch_generator(0))
    with pytest.raises(TypeError, match="encoder must be an Encoder"):
        bert.classifier_from_pretrained(None, 2, generator=torch_generator(0))
    with pytest.raises(ValueError, match=r"tokens must be a 2-D tensor \(B, T\) token ids"):
        bert.prepend_cls(torch.zeros(3, dtype=torch.long), 5)


def test_corrupted_posterior_matches_brute_force():
    """Forward-backward equals the posterior computed by enumerating every sequence."""
    import itertools

    V, T = 3, 4
    P = bert.markov_chain(V, successors=2, generator=torch_generator(0))
    chains = torch.stack([P, bert.reverse_chain(P)])
    rule = bert.MaskingRule(p_select=0.3, p_mask=0.6, p_random=0.25)
    x_tilde = torch.tensor([[V, 1, 0, V], [2, V, 2, 1]])
    got = bert.corrupted_posterior(chains, x_tilde, rule, vocab=V)
    keep = 1 - rule.p_mask - rule.p_random

    def e_sel(obs, v):
        return rule.p_mask * (obs == V) + rule.p_random / V + keep * (obs == v)

    def e(obs, v):
        return (1 - rule.p_select) * (obs == v) + rule.p_select * e_sel(obs, v)

    for b in range(2):
        for t in range(T):
            w = torch.zeros(V, dtype=torch.float64)
            for C in chains:
                pi = bert.stationary(C)
                for seq in itertools.product(range(V), repeat=T):
                    p = pi[seq[0]] * torch.prod(torch.stack(
                        [C[seq[s], seq[s + 1]] for s in range(T - 1)]))
                    for s in range(T):
                        obs = int(x_tilde[b, s])
                        p = p * (e_sel(obs, seq[s]) if s == t else e(obs, seq[s]))
                    w[seq[t]] += p
            torch.testing.assert_close(got[b, t], w / w.sum())


def test_corrupted_posterior_bad_inputs():
    P = bert.markov_chain(4, successors=2, generator=torch_generator(0))
    rule = bert.MaskingRule()
    with pytest.raises(ValueError, match=r"chains must have shape \(K, 5, 5\)"):
        bert.corrupted_posterior(P[None], torch.zeros(1, 3, dtype=torch.long), rule, vocab=5)
    with pytest.raises(ValueError, match=r"inputs must hold ids in 0..4"):
        bert.corrupted_posterior(P[None], torch.full((1, 3), 7), rule, vocab=4)
    with pytest.raises(TypeError, match="rule must be a MaskingRule"):
        bert.corrupted_posterior(P[None], torch.zeros(1, 3, dtype=torch.long), {}, vocab=4)
