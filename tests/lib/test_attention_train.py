import math

import pytest
import torch
from torch import nn

from flt_lib.attention.train import History, train
from flt_lib.rng import torch_generator


def test_train_fits_a_linear_map_and_records():
    g = torch_generator(0)
    model = nn.Linear(3, 1)
    w = torch.tensor([[1.0, -2.0, 0.5]])

    def batch():
        x = torch.randn(32, 3, generator=g)
        return x, x @ w.T

    loss = lambda m, b: ((m(b[0]) - b[1]) ** 2).mean()
    h = train(model, batch, loss, steps=250, lr=0.05, record_every=100, eval_fn=lambda m: (m.weight - w).norm())
    assert isinstance(h, History) and h.steps == [100, 200, 250]
    assert h.loss[-1] < 1e-3 * h.loss[0] and h.final_metric < 1e-2 and h.seconds > 0
    h2 = train(nn.Linear(3, 1), batch, loss, steps=3, lr=0.1, record_every=2)
    assert h2.steps == [2, 3] and all(math.isnan(m) for m in h2.metric)


def test_bad_inputs():
    m = nn.Linear(2, 1)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        train(lambda x: x, lambda: 0, lambda m, b: 0, steps=1, lr=0.1)
    with pytest.raises(TypeError, match="batch_fn must be callable"):
        train(m, None, lambda m, b: 0, steps=1, lr=0.1)
    with pytest.raises(ValueError, match="lr must be > 0.0"):
        train(m, lambda: 0, lambda m, b: 0, steps=1, lr=0.0)
    with pytest.raises(ValueError, match="steps must be >= 1"):
        train(m, lambda: 0, lambda m, b: 0, steps=0, lr=0.1)


def test_stop_at_ends_training_at_the_first_good_record():
    calls = []
    model = nn.Linear(1, 1)
    batch = lambda: None
    loss = lambda m, b: (m.weight ** 2).sum()
    metric = lambda m: float(len(calls.append(0) or calls))  # 1, 2, 3, ... per record
    h = train(model, batch, loss, steps=100, lr=0.1, record_every=10, eval_fn=metric,
              stop_at=3.0)
    assert h.steps == [10, 20, 30] and h.metric == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="stop_at needs an eval_fn"):
        train(model, batch, loss, steps=5, lr=0.1, stop_at=0.5)
