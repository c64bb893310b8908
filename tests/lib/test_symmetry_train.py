import dataclasses

import pytest
import torch
from torch import nn

from flt_lib.rng import torch_generator
from flt_lib.symmetry import gnn, graphs, train



def _linear(seed=0):
    lin = nn.Linear(3, 2, dtype=torch.float64)
    with torch.no_grad():  # a seeded init, so that two calls give the same model
        g = torch_generator(seed)
        lin.weight.copy_(torch.randn(2, 3, generator=g, dtype=torch.float64))
        lin.bias.copy_(torch.randn(2, generator=g, dtype=torch.float64))
    return lin


def test_fit_matches_torch_adam():
    X = torch.randn(20, 3, generator=torch_generator(0), dtype=torch.float64)
    y = torch.randint(0, 2, (20,), generator=torch_generator(1))
    ours, ref = _linear(), _linear()
    res = train.fit(ours, X, y, task="classification", lr=0.05, steps=5, X_test=X, y_test=y,
                    weight_decay=0.01)
    opt = torch.optim.Adam(ref.parameters(), lr=0.05, weight_decay=0.01)
    for _ in range(5):
        loss = nn.functional.cross_entropy(ref(X), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    for a, b in zip(ours.parameters(), ref.parameters()):
        torch.testing.assert_close(a, b)
    assert res.metric == "accuracy" and res.losses.shape == (5,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.metric = "mse"


def test_regression_and_node_indices():
    X = torch.randn(30, 3, generator=torch_generator(0), dtype=torch.float64)
    y = X @ torch.tensor([[1.0], [-2.0], [0.5]], dtype=torch.float64)
    model = nn.Linear(3, 1, dtype=torch.float64)
    res = train.fit(model, X, y, task="regression", lr=0.1, steps=300, X_test=X, y_test=y)
    assert res.metric == "mse" and res.test_metric < 1e-3 and res.losses[-1] < res.losses[0]
    A, block = graphs.stochastic_block_model([10, 10], 0.8, 0.0, generator=torch_generator(1))
    Xn = gnn.sbm_node_features(block, 2, signal=3.0, generator=torch_generator(2), dtype=torch.float64)
    gcn = gnn.GCN([2, 4, 2], generator=torch_generator(3), dtype=torch.float64)
    res = train.fit(gcn, (Xn, graphs.normalized_adjacency(A)), block, task="classification",
                    lr=0.05, steps=50, train_index=torch.tensor([0, 10]),
                    test_index=torch.arange(1, 10))
    assert res.train_metric == 1.0 and 0.0 <= res.test_metric <= 1.0


def test_bad_inputs():
    X, y = torch.zeros(4, 3), torch.zeros(4, dtype=torch.int64)
    with pytest.raises(TypeError, match="model must be a torch.nn.Module"):
        train.fit(lambda x: x, X, y, task="classification", lr=0.1, steps=1, X_test=X, y_test=y)
    with pytest.raises(ValueError, match="task must be one of"):
        train.fit(_linear(), X, y, task="ranking", lr=0.1, steps=1, X_test=X, y_test=y)
    with pytest.raises(ValueError, match="lr must be > 0.0"):
        train.fit(_linear(), X, y, task="classification", lr=0.0, steps=1, X_test=X, y_test=y)
    with pytest.raises(ValueError, match="train_index and test_index must be given together"):
        train.fit(_linear(), X, y, task="classification", lr=0.1, steps=1, train_index=torch.tensor([0]))
    with pytest.raises(ValueError, match="give either X_test and y_test"):
        train.fit(_linear(), X, y, task="classification", lr=0.1, steps=1)
    with pytest.raises(TypeError, match="y must hold int64 class labels"):
        train.fit(_linear(), X, y.float(), task="classification", lr=0.1, steps=1, X_test=X, y_test=y)
    with pytest.raises(TypeError, match=r"X\[1\] must be a torch.Tensor"):
        train.fit(_linear(), (X, None), y, task="classification", lr=0.1, steps=1, X_test=X, y_test=y)
