import math

import pytest
import torch

from flt_lib.recurrent import language_model as LM
from flt_lib.rng import torch_generator


def test_entropy_rate_matches_monte_carlo_and_brute_force_visits():
    a = LM.agreement_grammar(0.5)
    er = LM.entropy_rate(a)
    sents = LM.sample_sentences(a, 4000, generator=torch_generator(0))
    nll = sum(-LM.sentence_log_prob(a, s) for s in sents) / len(sents)
    length = sum(len(s) for s in sents) / len(sents)
    assert abs(nll - er.per_sentence) < 0.1 and abs(length - er.mean_length) < 0.1
    assert er.per_token == pytest.approx(er.per_sentence / er.mean_length)
    assert er.visits.sum().item() == pytest.approx(er.mean_length)


def test_entropy_rate_closed_form_for_geometric_source():
    # one live state: <eos> with probability p, token 1 otherwise -> length ~ Geometric(p)
    p = 0.3
    E = torch.tensor([[p, 1 - p], [0.0, 0.0]], dtype=torch.float64)
    nxt = torch.tensor([[1, 0], [1, 1]])
    a = LM.Automaton(emission=E, next_state=nxt, start=0, end=1, words=("<eos>", "x"))
    er = LM.entropy_rate(a)
    h = -(p * math.log(p) + (1 - p) * math.log(1 - p))
    assert er.mean_length == pytest.approx(1 / p)
    assert er.per_sentence == pytest.approx(h / p)


def test_sampled_sentences_are_grammatical_and_mode_is_exact():
    a = LM.agreement_grammar()
    for s in LM.sample_sentences(a, 200, generator=torch_generator(1)):
        assert LM.is_grammatical(a, s) and s[-1].item() == LM.EOS
    bad = torch.tensor([1, 3, 11, 0])  # "the dog see" : agreement violated
    assert not LM.is_grammatical(a, bad) and LM.sentence_log_prob(a, bad) == -math.inf
    mode, lp = LM.most_probable_sentence(a)
    assert lp == pytest.approx(math.log(0.7 * 0.35 * 0.24))
    # brute force over the sampled sentences: none more probable than the mode
    sents = LM.sample_sentences(a, 500, generator=torch_generator(2))
    assert max(LM.sentence_log_prob(a, s) for s in sents) <= lp + 1e-12


def test_next_log_probs_is_the_chain_rule():
    a = LM.agreement_grammar()
    s = LM.sample_sentences(a, 1, generator=torch_generator(3))[0]
    x = torch.cat([torch.zeros(1, dtype=torch.int64), s])
    total = sum(LM.next_log_probs(a, x[None, : t + 1])[0, s[t]].item() for t in range(len(s)))
    assert total == pytest.approx(LM.sentence_log_prob(a, s))


def test_ngram_counts_and_nll():
    sents = [torch.tensor([1, 2, 0]), torch.tensor([1, 0])]
    m = LM.ngram_fit(sents, 2, vocab=3, k=1.0)
    # after <eos> (the padding) token 1 came twice: (2 + 1) / (2 + 3)
    assert m.log_probs[0, 1].exp().item() == pytest.approx(3 / 5)
    assert LM.ngram_nll(m, sents) > 0
    uni = LM.ngram_fit(sents, 1, vocab=3, k=1e-9)
    assert uni.log_probs.exp().sum().item() == pytest.approx(1.0)


def test_lm_batch_and_rnn_lm_shapes_and_training_lowers_loss():
    a = LM.agreement_grammar()
    train = LM.sample_sentences(a, 200, generator=torch_generator(4))
    x, y = LM.lm_batch(train[:3])
    assert x.shape == y.shape and (x[:, 0] == 0).all()
    assert torch.equal(y[0, : len(train[0])], train[0])
    model = LM.RNNLanguageModel(13, d=8, m=8, generator=torch_generator(5))
    assert model(x).shape == (*x.shape, 13)
    h = LM.train_lm(model, train, train[:50], steps=30, batch_size=16, lr=1e-2,
                    generator=torch_generator(6), record_every=30)
    assert h.test_nll[-1] < h.test_nll[0]


def test_bad_inputs():
    with pytest.raises(ValueError, match="adverb"):
        LM.agreement_grammar(1.5)
    with pytest.raises(TypeError, match="automaton"):
        LM.entropy_rate("grammar")
    with pytest.raises(ValueError, match="order"):
        LM.ngram_fit([torch.tensor([0])], 0, vocab=3)
    with pytest.raises(TypeError, match="generator"):
        LM.sample_sentences(LM.agreement_grammar(), 2, generator=0)
    with pytest.raises(ValueError, match="cell"):
        LM.RNNLanguageModel(5, d=2, m=2, cell="rnn", generator=torch_generator(0))
    E = torch.tensor([[0.5, 0.4], [0.0, 0.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match="emission"):
        LM.Automaton(emission=E, next_state=torch.tensor([[1, 0], [1, 1]]), start=0, end=1,
                     words=("<eos>", "x"))
