import pytest
import torch

from flt_lib import device


def test_default_is_cpu(monkeypatch):
    monkeypatch.delenv("FLT_DEVICE", raising=False)
    assert device.get_device() == torch.device("cpu")


def test_reads_environment(monkeypatch):
    monkeypatch.setenv("FLT_DEVICE", " CPU ")
    assert device.get_device() == torch.device("cpu")


def test_empty_environment_means_cpu(monkeypatch):
    monkeypatch.setenv("FLT_DEVICE", "")
    assert device.get_device() == torch.device("cpu")


def test_explicit_name_wins(monkeypatch):
    monkeypatch.setenv("FLT_DEVICE", "nonsense")
    assert device.get_device("cpu") == torch.device("cpu")


def test_bad_name(monkeypatch):
    monkeypatch.setenv("FLT_DEVICE", "gpu0")
    with pytest.raises(ValueError, match="FLT_DEVICE must be 'cpu', 'cuda', 'cuda:N' or 'mps', got 'gpu0'"):
        device.get_device()
    with pytest.raises(ValueError, match="name must be 'cpu'.*got 'tpu'"):
        device.get_device("tpu")
    with pytest.raises(TypeError, match="name must be a string"):
        device.get_device(3)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_requested_but_missing():
    with pytest.raises(ValueError, match="asks for CUDA, but torch sees no CUDA device"):
        device.get_device("cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_cuda_when_available():
    assert device.get_device("cuda").type == "cuda"


def test_set_threads_default_is_one(monkeypatch):
    monkeypatch.delenv("FLT_THREADS", raising=False)
    before = torch.get_num_threads()
    try:
        assert device.set_threads() == 1
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_set_threads_reads_environment_and_argument(monkeypatch):
    before = torch.get_num_threads()
    try:
        monkeypatch.setenv("FLT_THREADS", " 2 ")
        assert device.set_threads() == 2
        assert device.set_threads(1) == 1  # the argument wins
    finally:
        torch.set_num_threads(before)


def test_set_threads_bad_input(monkeypatch):
    monkeypatch.setenv("FLT_THREADS", "two")
    with pytest.raises(ValueError, match="FLT_THREADS must be a positive integer such as 1 or 2, got 'two'"):
        device.set_threads()
    with pytest.raises(ValueError, match="n must be a positive integer, got 0"):
        device.set_threads(0)
    with pytest.raises(TypeError, match="n must be an int, got float"):
        device.set_threads(1.5)
    monkeypatch.setenv("FLT_THREADS", "-1")
    with pytest.raises(ValueError, match="FLT_THREADS must be a positive integer, got -1"):
        device.set_threads()


def test_to_device_moves_one_or_many():
    x, y = torch.zeros(2), torch.ones(3, dtype=torch.float64)
    assert device.to_device(x, device="cpu") is x or torch.equal(device.to_device(x, device="cpu"), x)
    a, b = device.to_device(x, y, device=torch.device("cpu"))
    assert a.device.type == b.device.type == "cpu" and b.dtype == torch.float64


def test_to_device_bad_input():
    with pytest.raises(ValueError, match="needs at least one tensor"):
        device.to_device(device="cpu")
    with pytest.raises(TypeError, match=r"tensors\[1\] must be a torch.Tensor, got list"):
        device.to_device(torch.zeros(1), [1.0], device="cpu")
    with pytest.raises(TypeError, match="device must be a torch.device or a string, got int"):
        device.to_device(torch.zeros(1), device=0)
