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
