import pytest
import torch

from flt_lib import _validate as v


def test_check_tensor_accepts_and_returns():
    x = torch.zeros(3, 2)
    assert v.check_tensor(x, "X", ndim=2, shape=(None, 2), floating=True) is x


def test_check_tensor_messages():
    with pytest.raises(TypeError, match="X must be a torch.Tensor, got list"):
        v.check_tensor([1, 2], "X")
    with pytest.raises(ValueError, match=r"X must be a 2-D tensor \(n, d\), got shape \(3,\)"):
        v.check_tensor(torch.zeros(3), "X", ndim=2, shape_doc="(n, d)")
    with pytest.raises(ValueError, match=r"w must have shape \(\*, 4\), got \(2, 3\)"):
        v.check_tensor(torch.zeros(2, 3), "w", shape=(None, 4))
    with pytest.raises(TypeError, match="X must have a floating-point dtype, got torch.int64"):
        v.check_tensor(torch.zeros(2, dtype=torch.long), "X", floating=True)


def test_check_int():
    assert v.check_int(3, "n", min_value=1) == 3
    with pytest.raises(TypeError, match="n must be an int, got 2.0"):
        v.check_int(2.0, "n")
    with pytest.raises(ValueError, match="n must be <= 5, got 6"):
        v.check_int(6, "n", max_value=5)


def test_check_real():
    assert v.check_real(1, "lr", min_value=0.0, strict_min=True) == 1.0
    with pytest.raises(ValueError, match="lr must be > 0.0, got 0.0"):
        v.check_real(0.0, "lr", min_value=0.0, strict_min=True)
    with pytest.raises(ValueError, match="lr must be finite, got nan"):
        v.check_real(float("nan"), "lr")
    with pytest.raises(TypeError, match="lr must be a real number, got 'a'"):
        v.check_real("a", "lr")
    with pytest.raises(ValueError, match="p must be <= 1.0, got 2.0"):
        v.check_real(2.0, "p", max_value=1.0)
    with pytest.raises(ValueError, match="p must be >= 0.0, got -1.0"):
        v.check_real(-1.0, "p", min_value=0.0)


def test_check_choice_and_generator():
    assert v.check_choice("a", "mode", ["a", "b"]) == "a"
    with pytest.raises(ValueError, match=r"mode must be one of \['a', 'b'\], got 'c'"):
        v.check_choice("c", "mode", ["a", "b"])
    g = torch.Generator()
    assert v.check_generator(g) is g
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        v.check_generator(0)


def test_check_xy():
    X, y = torch.zeros(4, 2), torch.zeros(4)
    assert v.check_xy(X, y) == (X, y)
    with pytest.raises(ValueError, match=r"y must have one entry per row of X \(length n = 4\), got length 3"):
        v.check_xy(X, torch.zeros(3))
    with pytest.raises(ValueError, match=r"labels must have one entry per row of X"):
        v.check_xy(X, torch.zeros(5), y_name="labels")
    with pytest.raises(ValueError, match="X must"):
        v.check_xy(torch.zeros(4), y)
    with pytest.raises(TypeError, match="y must have a floating-point dtype"):
        v.check_xy(X, torch.zeros(4, dtype=torch.long))


def test_check_vector_or_batch():
    x = torch.zeros(2, 5)
    assert v.check_vector_or_batch(x, "x", 5) is x
    assert v.check_vector_or_batch(torch.zeros(5), "x", 5).shape == (5,)
    with pytest.raises(ValueError, match=r"x must have shape \(n,\) or \(B, n\) with n=4, got \(2, 5\)"):
        v.check_vector_or_batch(x, "x", 4)
    with pytest.raises(TypeError, match="x must have a floating-point dtype"):
        v.check_vector_or_batch(torch.zeros(5, dtype=torch.long), "x", 5)
