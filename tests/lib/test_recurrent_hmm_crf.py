import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.recurrent import hmm_crf as H
from flt_lib.rng import torch_generator



def _hmm(seed=0, L=3, V=5):
    g = torch_generator(seed)
    soft = lambda *s: torch.softmax(torch.randn(*s, generator=g, dtype=torch.float64), -1)  # noqa: E731
    return H.HMM(pi=soft(L), A=soft(L, L), E=soft(L, V))


def test_hmm_forward_and_viterbi_equal_brute_force():
    hmm = _hmm()
    x, _ = H.hmm_sample(hmm, 6, generator=torch_generator(1))
    u, pw, st_ = H.hmm_unary(hmm, x), torch.log(hmm.A), torch.log(hmm.pi)
    Y, S = H.brute_force_scores(u, pw, st_)
    assert Y.shape == (3**6, 6)
    # the chain score of an HMM is the log joint probability, computed here directly
    y = Y[123]
    logp = torch.log(hmm.pi[y[0]]) + sum(torch.log(hmm.A[y[t - 1], y[t]]) for t in range(1, 6)) \
        + sum(torch.log(hmm.E[y[t], x[t]]) for t in range(6))
    assert S[123].item() == pytest.approx(logp.item(), abs=1e-12)
    assert abs(H.chain_log_partition(u, pw, st_) - torch.logsumexp(S, 0)).item() < 1e-12
    path, score = H.chain_viterbi(u, pw, st_)
    assert torch.equal(path, Y[S.argmax()]) and abs(score - S.max()).item() < 1e-12


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 5), L=st.integers(1, 4), seed=st.integers(0, 10_000))
def test_crf_log_partition_and_viterbi_property(n, L, seed):
    g = torch_generator(seed)
    unary = 3 * torch.randn(n, L, generator=g, dtype=torch.float64)
    pairwise = 3 * torch.randn(L, L, generator=g, dtype=torch.float64)
    start = torch.randn(L, generator=g, dtype=torch.float64)
    Y, S = H.brute_force_scores(unary, pairwise, start)
    assert abs(H.chain_log_partition(unary, pairwise, start) - torch.logsumexp(S, 0)).item() < 1e-12
    path, score = H.chain_viterbi(unary, pairwise, start)
    assert abs(score - S.max()).item() < 1e-12
    assert abs(H.chain_score(path, unary, pairwise, start) - score).item() < 1e-12


def test_log_partition_gradient_is_marginals():
    g = torch_generator(2)
    unary = torch.randn(4, 3, generator=g, dtype=torch.float64, requires_grad=True)
    pairwise = torch.randn(3, 3, generator=g, dtype=torch.float64)
    logZ = H.chain_log_partition(unary, pairwise)
    (grad,) = torch.autograd.grad(logZ, unary)
    Y, S = H.brute_force_scores(unary.detach(), pairwise)
    p = torch.softmax(S, 0)
    marg = torch.stack([torch.stack([p[Y[:, t] == l].sum() for l in range(3)]) for t in range(4)])
    torch.testing.assert_close(grad, marg, rtol=0, atol=1e-12)


def test_hmm_sample_and_bad_inputs():
    hmm = _hmm()
    x, y = H.hmm_sample(hmm, 50, generator=torch_generator(3))
    assert x.shape == y.shape == (50,) and x.max() < 5 and y.max() < 3
    with pytest.raises(ValueError, match="A must hold probabilities summing to 1"):
        H.HMM(pi=torch.tensor([0.5, 0.5]), A=torch.ones(2, 2), E=torch.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match=r"A must have shape \(L, L\) = \(2, 2\)"):
        H.HMM(pi=torch.tensor([0.5, 0.5]), A=torch.eye(3), E=torch.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="x must hold int64 symbols in 0..4"):
        H.hmm_unary(hmm, torch.tensor([0, 7]))
    with pytest.raises(ValueError, match=r"pairwise must have shape \(L, L\) = \(3, 3\)"):
        H.chain_log_partition(torch.zeros(4, 3), torch.zeros(2, 2))
    with pytest.raises(ValueError, match="keep it below 2e6"):
        H.brute_force_scores(torch.zeros(20, 3), torch.zeros(3, 3))
    with pytest.raises(ValueError, match="y must be int64"):
        H.chain_score(torch.zeros(4), torch.zeros(4, 3), torch.zeros(3, 3))
    with pytest.raises(TypeError, match="hmm must be an HMM"):
        H.hmm_sample("hmm", 3, generator=torch_generator(0))
    with pytest.raises(ValueError, match="unary must have at least one position"):
        H.chain_viterbi(torch.zeros(0, 3), torch.zeros(3, 3))
