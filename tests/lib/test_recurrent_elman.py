import pytest
import torch

from flt_lib.recurrent import elman as E
from flt_lib.rng import torch_generator



def _x(seed=0, B=2, T=7, n=3):
    return torch.randn(B, T, n, generator=torch_generator(seed), dtype=torch.float64)


def test_elman_matches_definition():
    w = E.elman_init(3, 4, generator=torch_generator(1))
    x = _x()
    z, rows = torch.zeros(2, 4, dtype=torch.float64), []
    for t in range(7):
        z = torch.tanh(z @ w.U.T + x[:, t] @ w.V.T + w.b)
        rows.append(z)
    torch.testing.assert_close(E.elman(x, w), torch.stack(rows, 1), rtol=0, atol=1e-15)
    rev = E.elman(x, w, reverse=True)
    torch.testing.assert_close(rev, E.elman(x.flip(1), w).flip(1), rtol=0, atol=1e-15)


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_stacked_bidirectional_equals_torch(nonlinearity):
    torch.manual_seed(0)  # torch's own initialisation of the reference module
    rnn = torch.nn.RNN(3, 5, num_layers=2, bidirectional=True, batch_first=True, nonlinearity=nonlinearity).double()
    x = _x(2)
    ref, _ = rnn(x)
    ours = E.stacked(x, E.from_torch_rnn(rnn), activation=nonlinearity)
    torch.testing.assert_close(ours, ref, rtol=0, atol=1e-12)


def test_stacked_unidirectional_and_float32():
    torch.manual_seed(1)
    rnn = torch.nn.RNN(3, 4, num_layers=3, batch_first=True)
    x = _x(3).float()
    assert (E.stacked(x, E.from_torch_rnn(rnn)) - rnn(x)[0]).abs().max() < 1e-6


def test_bad_inputs():
    w = E.elman_init(3, 4, generator=torch_generator(1))
    with pytest.raises(ValueError, match=r"x must have shape \(B, T, n\) with n = 3"):
        E.elman(torch.ones(2, 5, 4, dtype=torch.float64), w)
    with pytest.raises(ValueError, match="x must be a 3-D tensor"):
        E.elman(torch.ones(5, 3), w)
    with pytest.raises(ValueError, match="activation must be one of"):
        E.elman(_x(), w, activation="sigmoid")
    with pytest.raises(ValueError, match=r"V must have shape \(m, n\) with m = 4"):
        E.ElmanWeights(U=torch.eye(4), V=torch.ones(3, 2), b=torch.zeros(4))
    with pytest.raises(TypeError, match="U, V, b must share a dtype"):
        E.ElmanWeights(U=torch.eye(2), V=torch.ones(2, 2, dtype=torch.float64), b=torch.zeros(2))
    with pytest.raises(TypeError, match="layers must be a non-empty sequence"):
        E.stacked(_x(), [])
    with pytest.raises(TypeError, match="rnn must be a torch.nn.RNN"):
        E.from_torch_rnn(torch.nn.GRU(2, 2))
    with pytest.raises(TypeError, match="w must be an ElmanWeights"):
        E.elman(_x(), "w")
    with pytest.raises(ValueError, match="m must be >= 1"):
        E.elman_init(3, 0, generator=torch_generator(0))
