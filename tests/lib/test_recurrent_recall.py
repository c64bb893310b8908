import pytest
import torch

from flt_lib.recurrent import recall
from flt_lib.rng import torch_generator


@pytest.mark.parametrize("n", [3, 8, 12, 20])
def test_min_recall_error_is_n_minus_rank(n):
    K = torch.randn(n, 8, generator=torch_generator(n), dtype=torch.float64)
    assert recall.min_recall_error(K) == pytest.approx(max(0, n - 8), abs=1e-9)
    # a rank-deficient key matrix: duplicate rows
    K2 = torch.cat([K[:2], K[:2]])
    assert recall.min_recall_error(K2) == pytest.approx(2.0, abs=1e-9)


def test_linear_state_has_kernel_beyond_capacity():
    K = torch.randn(1, 6, 4, generator=torch_generator(1), dtype=torch.float64)
    c = torch.linalg.svd(K[0].T).Vh[-1]           # K^T c = 0 since n = 6 > d_k = 4
    V = c[None, :, None] * torch.ones(1, 6, 3, dtype=torch.float64)
    assert recall.linear_state(K, V).abs().max() < 1e-12


def test_recall_layers_exact_below_threshold_and_softmax_above():
    E = recall.key_embedding(64, 16, generator=torch_generator(2))
    for n in (4, 16, 48):
        task = recall.mqar(20, n, n_keys=64, n_values=10, m=6, generator=torch_generator(n))
        ans = task.values.gather(1, task.queries)
        assert torch.equal(recall.softmax_recall(task, E, n_values=10, beta=60.0), ans)
        if n <= 16:
            assert torch.equal(recall.linear_recall(task, E, n_values=10), ans)
    task = recall.mqar(50, 60, n_keys=64, n_values=10, m=6, generator=torch_generator(3))
    ans = task.values.gather(1, task.queries)
    assert (recall.linear_recall(task, E, n_values=10) == ans).double().mean() < 0.9


def test_mqar_keys_distinct():
    t = recall.mqar(10, 7, n_keys=9, n_values=3, m=4, generator=torch_generator(4))
    assert all(len(set(row.tolist())) == 7 for row in t.keys)
    assert t.queries.max() < 7 and t.values.max() < 3


def test_bad_inputs():
    with pytest.raises(ValueError, match="n_keys"):
        recall.mqar(2, 10, n_keys=5, n_values=3, m=1, generator=torch_generator(0))
    E = recall.key_embedding(8, 4, generator=torch_generator(0))
    t = recall.mqar(2, 3, n_keys=8, n_values=3, m=1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="beta"):
        recall.softmax_recall(t, E, n_values=3, beta=0.0)
    with pytest.raises(TypeError, match="task"):
        recall.linear_recall("task", E, n_values=3)
    with pytest.raises(ValueError, match="E has"):
        recall.linear_recall(t, E[:2], n_values=3)
    with pytest.raises(ValueError, match="K and V"):
        recall.linear_state(torch.zeros(1, 3, 2), torch.zeros(1, 4, 2))
