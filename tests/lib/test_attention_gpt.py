import math

import pytest
import torch

from flt_lib.attention import bert, gpt
from flt_lib.rng import torch_generator


def _model(n_kv=2, seed=0):
    cfg = gpt.GPTConfig(vocab=7, d_model=16, n_heads=4, n_kv_heads=n_kv, n_layers=2,
                        d_ff=24, max_len=20)
    return gpt.GPT(cfg, generator=torch_generator(seed)).double()


@pytest.mark.parametrize("n_kv", [4, 2, 1])
def test_cache_gives_the_same_logits_and_tokens(n_kv):
    m = _model(n_kv)
    x = torch.randint(0, 7, (3, 12), generator=torch_generator(1))
    full = m(x)
    cache = gpt.KVCache(2)
    steps = [m(x[:, :5], cache)] + [m(x[:, t:t + 1], cache) for t in range(5, 12)]
    assert (torch.cat(steps, 1) - full).abs().max() < 1e-12
    assert cache.nbytes() == 3 * 12 * gpt.kv_bytes_per_token(m.cfg, bytes_per_number=8)
    a = gpt.generate(m, x[:, :3], 8, top_k=4, generator=torch_generator(2))
    b = gpt.generate(m, x[:, :3], 8, top_k=4, use_cache=False, generator=torch_generator(2))
    assert torch.equal(a, b)


def test_causality_and_weight_tying():
    m = _model()
    x = torch.randint(0, 7, (2, 10), generator=torch_generator(3))
    y = x.clone()
    y[:, 6:] = (y[:, 6:] + 1) % 7
    assert (m(x)[:, :6] - m(y)[:, :6]).abs().max() < 1e-12   # the future is not seen
    names = [n for n, _ in m.named_parameters()]
    assert "embed" in names and not any("head" in n for n in names)


def test_kv_memory_formula_and_entropy_rate():
    cfg = gpt.GPTConfig(vocab=5, d_model=64, n_heads=8, n_kv_heads=2, n_layers=3, d_ff=8,
                        max_len=4)
    assert gpt.kv_bytes_per_token(cfg, bytes_per_number=2) == 2 * 3 * 2 * 8 * 2
    P = torch.tensor([[0.5, 0.5], [1.0, 0.0]], dtype=torch.float64)
    # pi = (2/3, 1/3); H = 2/3 log 2
    assert abs(gpt.entropy_rate(P) - 2 / 3 * math.log(2)) < 1e-12
    P = bert.markov_chain(6, successors=6, generator=torch_generator(0))
    assert 0 < gpt.entropy_rate(P) < math.log(6)


def test_next_token_loss_is_the_mean_cross_entropy():
    m = _model()
    x = torch.randint(0, 7, (2, 6), generator=torch_generator(4))
    logp = torch.log_softmax(m(x[:, :-1]), -1)
    manual = -logp.gather(-1, x[:, 1:, None]).mean()
    torch.testing.assert_close(gpt.next_token_loss(m, x), manual)


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="n_kv_heads must divide n_heads"):
        gpt.GPTConfig(vocab=5, d_model=8, n_heads=4, n_kv_heads=3, n_layers=1, d_ff=4,
                      max_len=4)
    with pytest.raises(ValueError, match="n_heads must divide d_model"):
        gpt.GPTConfig(vocab=5, d_model=10, n_heads=4, n_kv_heads=1, n_layers=1, d_ff=4,
                      max_len=4)
    m = _model()
    with pytest.raises(ValueError, match="max_len = 20"):
        m(torch.zeros(1, 21, dtype=torch.long))
    with pytest.raises(ValueError, match="tokens must have T >= 2"):
        gpt.next_token_loss(m, torch.zeros(1, 1, dtype=torch.long))
    with pytest.raises(TypeError, match="cfg must be a GPTConfig"):
        gpt.kv_bytes_per_token("cfg")
    with pytest.raises(ValueError, match="n_new must be >= 0"):
        gpt.generate(m, torch.zeros(1, 2, dtype=torch.long), -1,
                     generator=torch_generator(0))
