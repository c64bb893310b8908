import pytest
import torch

from flt_lib.attention import cost
from flt_lib.rng import torch_generator


def test_saved_bytes_scale_as_T_squared_and_T():
    rows = cost.sequence_costs([32, 64, 128], d_model=8, n_heads=2, generator=torch_generator(0), repeat=1)
    a = [r.attention_bytes for r in rows]
    r = [r.recurrence_bytes for r in rows]
    assert 3.0 < a[2] / a[1] < 4.2 and 1.9 < r[2] / r[1] < 2.1
    assert all(x.attention_s > 0 and x.recurrence_s > 0 for x in rows)


def test_saved_tensor_bytes_counts_storages_once():
    x = torch.randn(100, requires_grad=True)
    assert cost.saved_tensor_bytes(lambda: (x * x).sum()) == 400
    assert cost.saved_tensor_bytes(lambda: (x * x).sum(), exclude=[x]) == 0


def test_bad_inputs():
    with pytest.raises(TypeError, match="fn must be callable"):
        cost.saved_tensor_bytes(3)
    with pytest.raises(ValueError, match="lengths\\[i\\] must be >= 1"):
        cost.sequence_costs([0], d_model=4, n_heads=1, generator=torch_generator(0))
