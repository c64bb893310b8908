import pytest
import torch

from flt_lib.recurrent import linear as L
from flt_lib.recurrent import selective as S
from flt_lib.rng import torch_generator



def test_selective_copying_data():
    x, y = S.selective_copying(50, L_noise=10, M=3, A=6, generator=torch_generator(0))
    assert x.shape == (50, 16) and y.shape == (50, 3)
    body = x[:, :13]
    assert ((body > 0).sum(1) == 3).all()                     # exactly M data tokens
    assert torch.equal(body[body > 0].reshape(50, 3), y)      # in order
    assert (x[:, 13:] == 5).all() and y.min() >= 1 and y.max() <= 4


def test_ssm_layer_matches_explicit_recurrence():
    layer = S.SSMLayer(3, 2, selective=True, generator=torch_generator(1)).double()
    x = torch.randn(2, 7, 3, generator=torch_generator(2), dtype=torch.float64)
    with torch.no_grad():
        y = layer(x)
        A = -torch.exp(layer.A_log)
        delta = torch.nn.functional.softplus(x @ layer.W_dt.T + layer.dt_bias)
        Bt, Ct = x @ layer.W_B.T, x @ layer.W_C.T
        h = torch.zeros(2, 3, 2, dtype=torch.float64)
        for t in range(7):
            h = torch.exp(delta[:, t, :, None] * A) * h + delta[:, t, :, None] * Bt[:, t, None, :] * x[:, t, :, None]
            ref = (h * Ct[:, t, None, :]).sum(-1) + layer.D * x[:, t]
            torch.testing.assert_close(y[:, t], ref)


def test_time_invariant_layer_is_a_convolution_of_its_input():
    layer = S.SSMLayer(2, 3, selective=False, generator=torch_generator(3)).double()
    x = torch.randn(1, 9, 2, generator=torch_generator(4), dtype=torch.float64)
    with torch.no_grad():
        y = layer(x)
        shifted = layer(torch.cat([torch.zeros(1, 2, 2, dtype=torch.float64), x[:, :-2]], 1))
    torch.testing.assert_close(shifted[:, 2:], y[:, :-2])     # shift-equivariant (time-invariant)


def test_training_runs_and_records():
    model = S.CopyModel(6, d=8, N=2, selective=True, generator=torch_generator(5))
    h = S.train_copying(model, L_noise=4, M=2, A=6, steps=10, batch_size=8, lr=1e-2,
                        generator=torch_generator(6), n_test=20, eval_every=5)
    assert h.steps == [0, 5, 10] and len(h.train_loss) == 10
    assert all(0 <= a <= 1 for a in h.test_acc)


def test_clipping_bounds_every_step():
    """A clip that no gradient reaches changes nothing; a clip below the gradient norm does."""
    def run(clip):
        model = S.CopyModel(6, d=8, N=2, selective=True, generator=torch_generator(5))
        S.train_copying(model, L_noise=4, M=2, A=6, steps=5, batch_size=8, lr=1e-2,
                        generator=torch_generator(6), n_test=20, eval_every=5, clip=clip)
        return torch.cat([p.detach().reshape(-1) for p in model.parameters()])

    assert torch.equal(run(None), run(1e6)), "a clip no gradient reaches changes nothing"
    assert not torch.equal(run(None), run(1e-3)), "a clip below the gradient norm changes the run"


def test_bad_inputs():
    with pytest.raises(ValueError, match="A must be >= 3"):
        S.selective_copying(2, L_noise=3, M=2, A=2, generator=torch_generator(0))
    with pytest.raises(ValueError, match="M must be >= 1"):
        S.selective_copying(2, L_noise=3, M=0, A=5, generator=torch_generator(0))
    with pytest.raises(TypeError, match="model must be a CopyModel"):
        S.train_copying(torch.nn.Linear(2, 2), L_noise=2, M=1, A=4, steps=1, batch_size=2, lr=1e-2, generator=torch_generator(0))
    model = S.CopyModel(6, d=8, N=2, selective=True, generator=torch_generator(5))
    with pytest.raises(ValueError, match="clip"):
        S.train_copying(model, L_noise=2, M=1, A=6, steps=1, batch_size=2, lr=1e-2,
                        generator=torch_generator(0), clip=0.0)
    with pytest.raises(ValueError, match="N must be >= 1"):
        S.SSMLayer(2, 0, selective=True, generator=torch_generator(0))
