import pytest
import torch

from flt_lib.recurrent import gated as G
from flt_lib.rng import torch_generator



def _x(seed=0, B=3, T=6, n=4, dtype=torch.float64):
    return torch.randn(B, T, n, generator=torch_generator(seed), dtype=dtype)


def test_lstm_equals_torch():
    torch.manual_seed(0)
    ref = torch.nn.LSTM(4, 5, batch_first=True)
    x = _x(dtype=torch.float32)
    H, C = G.lstm(x, G.from_torch_lstm(ref))
    out, (h, c) = ref(x)
    assert (H - out).abs().max() < 1e-6 and (C[:, -1] - c[0]).abs().max() < 1e-6


def test_gru_equals_torch():
    torch.manual_seed(1)
    ref = torch.nn.GRU(4, 5, batch_first=True).double()
    x = _x(1)
    torch.testing.assert_close(G.gru(x, G.from_torch_gru(ref)), ref(x)[0], rtol=0, atol=1e-12)


def test_constant_error_carousel():
    m, n = 3, 2
    g = torch_generator(2)
    Wx = torch.randn(4 * m, n, generator=g, dtype=torch.float64)
    Wh = torch.randn(4 * m, m, generator=g, dtype=torch.float64)
    b = torch.zeros(4 * m, dtype=torch.float64)
    b[:m], b[m:2 * m] = -60.0, 60.0                      # input gate shut, forget gate open
    w = G.LSTMWeights(Wx=Wx, Wh=Wh, b=b)
    x = _x(3, B=1, T=40, n=n)
    c0 = torch.randn(1, m, generator=g, dtype=torch.float64).requires_grad_(True)
    _, C = G.lstm(x, w, state=(torch.zeros(1, m, dtype=torch.float64), c0))
    torch.testing.assert_close(C[:, -1], c0.detach(), rtol=0, atol=0)
    J = torch.autograd.functional.jacobian(lambda c: G.lstm(x, w, state=(torch.zeros(1, m, dtype=torch.float64), c))[1][0, -1], c0)
    torch.testing.assert_close(J[:, 0, :], torch.eye(m, dtype=torch.float64), rtol=0, atol=1e-12)


def test_adding_problem_structure():
    x, y = G.adding_problem(500, 20, generator=torch_generator(4))
    assert x.shape == (500, 20, 2) and y.shape == (500,)
    marks = x[..., 1]
    assert torch.equal(marks.sum(1), torch.full((500,), 2.0))
    assert (marks[:, :10].sum(1) == 1).all() and (marks[:, 10:].sum(1) == 1).all()
    torch.testing.assert_close((x[..., 0] * marks).sum(1), y)
    assert abs(((y - 1) ** 2).mean().item() - 1 / 6) < 0.03     # the constant predictor's error


def test_regressor_forget_bias_and_short_training():
    model = G.SequenceRegressor("lstm", 2, 8, forget_bias=1.0, generator=torch_generator(5))
    b = model.rnn.bias_ih_l0.detach() + model.rnn.bias_hh_l0.detach()
    assert torch.equal(b[8:16], torch.ones(8))
    h = G.train_adding(model, T=8, steps=30, batch_size=16, lr=1e-2, clip=1.0,
                       generator=torch_generator(6), n_test=64, eval_every=10)
    assert h.steps == [0, 10, 20, 30] and len(h.train_loss) == 30
    assert h.final_mse == h.test_mse[-1] < h.test_mse[0]
    # after 30 steps it already beats the best constant predictor, whose error is 1/6
    assert h.final_mse < 1 / 6, h.final_mse
    # the run is a function of its generators: the same seeds give the same history
    again = G.SequenceRegressor("lstm", 2, 8, forget_bias=1.0, generator=torch_generator(5))
    h2 = G.train_adding(again, T=8, steps=30, batch_size=16, lr=1e-2, clip=1.0,
                        generator=torch_generator(6), n_test=64, eval_every=10)
    assert h2.train_loss == h.train_loss and h2.test_mse == h.test_mse


def test_lstm_and_gru_check_their_initial_state():
    w = G.LSTMWeights(Wx=torch.ones(8, 3), Wh=torch.ones(8, 2), b=torch.ones(8))
    x = torch.ones(4, 5, 3)
    with pytest.raises(ValueError, match=r"state\[0\] \(h_0\) must have shape \(B, m\)"):
        G.lstm(x, w, (torch.zeros(4, 3), torch.zeros(4, 2)))
    with pytest.raises(TypeError, match="state must be a pair"):
        G.lstm(x, w, torch.zeros(4, 2))
    H, C = G.lstm(x, w, (torch.zeros(4, 2), torch.zeros(4, 2)))
    torch.testing.assert_close(H, G.lstm(x, w)[0])
    gw = G.GRUWeights(Wx=torch.ones(6, 3), Wh=torch.ones(6, 2), bx=torch.ones(6), bh=torch.ones(6))
    with pytest.raises(ValueError, match=r"h0 must have shape \(B, m\)"):
        G.gru(x, gw, torch.zeros(3, 2))


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"Wx must have shape \(4m, n\) with m = 2"):
        G.LSTMWeights(Wx=torch.ones(6, 3), Wh=torch.ones(8, 2), b=torch.ones(8))
    with pytest.raises(ValueError, match=r"bh must have shape \(3m,\)"):
        G.GRUWeights(Wx=torch.ones(6, 3), Wh=torch.ones(6, 2), bx=torch.ones(6), bh=torch.ones(5))
    torch.manual_seed(0)
    w = G.from_torch_lstm(torch.nn.LSTM(4, 2))
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, n\) with n = 4"):
        G.lstm(torch.ones(1, 3, 5), w)
    with pytest.raises(TypeError, match="w must be a GRUWeights"):
        G.gru(torch.ones(1, 3, 4), w)
    with pytest.raises(ValueError, match="module must have one layer"):
        G.from_torch_lstm(torch.nn.LSTM(4, 2, num_layers=2))
    with pytest.raises(TypeError, match="module must be a torch.nn.GRU"):
        G.from_torch_gru(torch.nn.LSTM(4, 2))
    with pytest.raises(ValueError, match="T must be >= 2"):
        G.adding_problem(3, 1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="kind must be one of"):
        G.SequenceRegressor("rnn", 2, 4, generator=torch_generator(0))
    with pytest.raises(ValueError, match="forget_bias applies to kind='lstm' only"):
        G.SequenceRegressor("gru", 2, 4, forget_bias=1.0, generator=torch_generator(0))
    with pytest.raises(TypeError, match="model must be a SequenceRegressor"):
        G.train_adding(torch.nn.Linear(2, 1), T=5, steps=1, batch_size=2, lr=1e-2, clip=1.0, generator=torch_generator(0))


def test_adam_train_step_equals_per_tensor_adam():
    from flt_lib.optim.adaptive import AdamConfig, adam_init, adam_step

    g = torch_generator(7)
    params = [torch.randn(3, 2, generator=g, dtype=torch.float64).requires_grad_(True),
              torch.randn(4, generator=g, dtype=torch.float64).requires_grad_(True)]
    ref = [p.detach().clone() for p in params]
    ref_states = [adam_init(r, AdamConfig(lr=0.1)) for r in ref]
    state = None
    for _ in range(3):
        loss = (params[0] ** 2).sum() + (params[1] ** 3).sum()
        state = G.adam_train_step(params, loss, state, AdamConfig(lr=0.1))
        grads = [2 * ref[0], 3 * ref[1] ** 2]
        for i in range(2):
            ref[i], ref_states[i] = adam_step(ref[i], grads[i], ref_states[i], AdamConfig(lr=0.1))
    for p, r in zip(params, ref):
        torch.testing.assert_close(p.detach(), r, rtol=0, atol=1e-14)
    # with clipping, the step uses the clipped gradient: the first Adam step has length lr per entry
    q = [torch.full((2,), 5.0, dtype=torch.float64, requires_grad=True)]
    G.adam_train_step(q, (1e6 * q[0]).sum(), None, AdamConfig(lr=0.1), clip=1.0)
    torch.testing.assert_close(q[0].detach(), torch.full((2,), 4.9, dtype=torch.float64), rtol=0, atol=1e-6)
