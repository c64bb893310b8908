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


def test_saved_tensor_shapes_of_attention_keep_one_h_T_T_tensor():
    """The book's attention layer keeps the softmax output, one (h, T, T) tensor, and
    not the scores; shapes and bytes agree."""
    from flt_lib.attention.multi_head import MultiHeadAttention

    mha = MultiHeadAttention(16, 4, generator=torch_generator(0))
    x = torch.randn(1, 12, 16, generator=torch_generator(1)).requires_grad_()
    params = list(mha.parameters())
    shapes = cost.saved_tensor_shapes(lambda: mha(x)[0], exclude=params)
    square = [s for s in shapes if s[-2:] == (12, 12)]
    assert len(square) == 1 and torch.Size(square[0]).numel() == 4 * 12 * 12, shapes
    n_bytes = cost.saved_tensor_bytes(lambda: mha(x)[0], exclude=params)
    assert n_bytes == 4 * sum(torch.Size(s).numel() for s in shapes)
    with pytest.raises(TypeError, match="fn must be callable"):
        cost.saved_tensor_shapes(3)
