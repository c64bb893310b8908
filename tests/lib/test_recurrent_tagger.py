import pytest
import torch

from flt_lib.recurrent import hmm_crf, tagger
from flt_lib.rng import torch_generator


def test_batched_log_partition_equals_single_chain_recursion():
    g = torch_generator(0)
    u = torch.randn(5, 4, 3, generator=g, dtype=torch.float64)
    P = torch.randn(3, 3, generator=g, dtype=torch.float64)
    s = torch.randn(3, generator=g, dtype=torch.float64)
    got = tagger.batched_log_partition(u, P, s)
    want = torch.stack([hmm_crf.chain_log_partition(ui, P, s) for ui in u])
    assert torch.allclose(got, want, atol=1e-12)


def test_crf_nll_is_minus_log_posterior_by_brute_force():
    hmm = tagger.pos_hmm()
    x, y = tagger.sample_hmm(hmm, 3, 5, generator=torch_generator(1))
    u = torch.log(hmm.E[:, x]).permute(1, 2, 0)
    nll = tagger.crf_nll(u, y, hmm.A.log(), hmm.pi.log())
    want = []
    for ui, yi in zip(u, y):
        _, S = hmm_crf.brute_force_scores(ui, hmm.A.log(), hmm.pi.log())
        want.append(torch.logsumexp(S, 0) - hmm_crf.chain_score(yi, ui, hmm.A.log(), hmm.pi.log()))
    assert nll.item() == pytest.approx(torch.stack(want).mean().item(), abs=1e-12)


def test_sample_hmm_frequencies():
    hmm = tagger.pos_hmm()
    x, y = tagger.sample_hmm(hmm, 4000, 2, generator=torch_generator(2))
    assert abs((y[:, 0] == 0).double().mean().item() - 0.7) < 0.03
    # DET emits only 'the' and 'a'
    assert set(x[y == 0].tolist()) <= {0, 1}


def test_tagger_trains_and_decodes():
    hmm = tagger.pos_hmm()
    x, y = tagger.sample_hmm(hmm, 200, 6, generator=torch_generator(3))
    m = tagger.BiLSTMCRF(6, 3, d=4, m=4, generator=torch_generator(4))
    h = tagger.train_tagger(m, x, y, steps=40, batch_size=16, lr=2e-2,
                            generator=torch_generator(5), record_every=20)
    assert h.loss[-1] < h.loss[0]
    with torch.no_grad():
        tags = tagger.viterbi_tags(m(x[:4]), m.pairwise, m.start)
    assert tags.shape == (4, 6)


def test_bad_inputs():
    with pytest.raises(ValueError, match="unary"):
        tagger.batched_log_partition(torch.zeros(2, 3), torch.zeros(3, 3), torch.zeros(3))
    with pytest.raises(ValueError, match="pairwise"):
        tagger.batched_log_partition(torch.zeros(1, 2, 3), torch.zeros(2, 2), torch.zeros(3))
    with pytest.raises(TypeError, match="hmm"):
        tagger.sample_hmm("hmm", 2, 2, generator=torch_generator(0))
    with pytest.raises(TypeError, match="model"):
        tagger.train_tagger(torch.nn.Linear(2, 2), torch.zeros(2, 2, dtype=torch.int64),
                            torch.zeros(2, 2, dtype=torch.int64), steps=1, batch_size=1,
                            lr=0.1, generator=torch_generator(0))
