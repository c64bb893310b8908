import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from flt_lib.rng import torch_generator
from flt_lib.symmetry import cnn, train



def _rand(*shape, seed=0, grad=False):
    return torch.randn(*shape, generator=torch_generator(seed), dtype=torch.float64, requires_grad=grad)


@pytest.mark.parametrize("stride,padding,mode", [(1, 0, "zeros"), (2, 1, "zeros"), (3, 2, "zeros"),
                                                 (1, 1, "circular")])
def test_conv2d_matches_torch(stride, padding, mode):
    x, w, b = _rand(2, 3, 8, 9), _rand(4, 3, 3, 2, seed=1), _rand(4, seed=2)
    xp = F.pad(x, (padding,) * 4, mode="circular" if mode == "circular" else "constant")
    ours = cnn.conv2d(x, w, b, stride=stride, padding=padding, padding_mode=mode)
    torch.testing.assert_close(ours, F.conv2d(xp, w, b, stride=stride))


@pytest.mark.parametrize("k,s", [(2, 2), (3, 1), (3, 2)])
def test_max_pool_matches_torch(k, s):
    x = _rand(2, 3, 7, 8)
    assert torch.equal(cnn.max_pool2d(x, k, s), F.max_pool2d(x, k, s))


@pytest.mark.parametrize("padding,kernel", [(0, (3, 3)), (1, (2, 3)), (2, (5, 5))])
def test_gradients_match_autograd(padding, kernel):
    x, w = _rand(2, 3, 7, 7, grad=True), _rand(4, 3, *kernel, seed=1, grad=True)
    y = F.conv2d(x, w, padding=padding)
    G = _rand(*y.shape, seed=2)
    (y * G).sum().backward()
    torch.testing.assert_close(cnn.conv2d_input_grad(G, w.detach(), padding=padding), x.grad)
    torch.testing.assert_close(
        cnn.conv2d_weight_grad(x.detach(), G, kernel_size=kernel, padding=padding), w.grad)


def test_gradcheck_of_the_definition():
    x, w = _rand(1, 2, 5, 5, grad=True), _rand(2, 2, 3, 3, seed=1, grad=True)
    assert torch.autograd.gradcheck(lambda a, b: cnn.conv2d(a, b, padding=1), (x, w))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), s1=st.integers(0, 8), s2=st.integers(0, 8))
def test_circular_stride_one_net_is_shift_equivariant(seed, s1, s2):
    net = cnn.ShiftNet(4, downsample="none", generator=torch_generator(seed))
    x = _rand(2, 1, 8, 8, seed=seed)
    roll = lambda z: torch.roll(z, (s1, s2), dims=(2, 3))
    torch.testing.assert_close(net(roll(x)), roll(net(x)))


@pytest.mark.parametrize("down", ["stride", "maxpool", "blur"])
def test_downsampling_nets_are_equivariant_to_even_shifts_only(down):
    net = cnn.ShiftNet(4, downsample=down, generator=torch_generator(1))
    x = _rand(4, 1, 8, 8)
    torch.testing.assert_close(net(torch.roll(x, 2, dims=3)), torch.roll(net(x), 1, dims=3))
    pooled = lambda z: net(z).mean(dim=(2, 3))
    assert (pooled(torch.roll(x, 1, dims=3)) - pooled(x)).abs().max() > 1e-6


def test_p4_lifting_is_rotation_equivariant():
    x, w = _rand(2, 2, 9, 9), _rand(3, 2, 3, 3, seed=1)
    rot = lambda z: torch.rot90(z, 1, dims=(-2, -1))
    torch.testing.assert_close(cnn.p4_lift(rot(x), w), cnn.p4_rotate(cnn.p4_lift(x, w)))
    plain = lambda z: cnn.conv2d(z, w, padding=1)
    assert (plain(rot(x)) - rot(plain(x))).abs().max() > 0.1


def test_param_counts_and_data():
    assert cnn.conv_param_count(3, 16, 3) == 448
    assert cnn.dense_param_count(1, 1, 2, 2) == 20
    X, y = cnn.motif_images(10, 6, noise=0.0, generator=torch_generator(0))
    assert X.shape == (10, 1, 6, 6) and set(y.tolist()) <= {0, 1}
    assert torch.allclose(X.sum(dim=(1, 2, 3)), torch.full((10,), 5.0))


def test_cnn_learns_motifs_faster_than_mlp():
    X, y = cnn.motif_images(32, 8, noise=0.3, generator=torch_generator(0))
    Xt, yt = cnn.motif_images(200, 8, noise=0.3, generator=torch_generator(1))
    r_cnn = train.fit(cnn.SmallCNN(8, 2, generator=torch_generator(2)), X, y, task="classification",
                      lr=0.02, steps=60, X_test=Xt, y_test=yt)
    r_mlp = train.fit(cnn.SmallMLP(64, 32, 2, generator=torch_generator(2)), X, y,
                      task="classification", lr=0.02, steps=60, X_test=Xt, y_test=yt)
    assert r_cnn.test_metric > r_mlp.test_metric + 0.2


def test_bad_inputs():
    with pytest.raises(ValueError, match="x must be a 4-D tensor"):
        cnn.conv2d(_rand(3, 4, 4), _rand(1, 3, 2, 2))
    with pytest.raises(ValueError, match="w must have C_in = 3 input channels, got 2"):
        cnn.conv2d(_rand(1, 3, 4, 4), _rand(1, 2, 2, 2))
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        cnn.conv2d(_rand(1, 1, 4, 4), _rand(1, 1, 2, 2), padding_mode="reflect")
    with pytest.raises(ValueError, match="the kernel .* is larger than the padded input"):
        cnn.conv2d(_rand(1, 1, 2, 2), _rand(1, 1, 3, 3))
    with pytest.raises(ValueError, match="kernel_size must be <= the image size"):
        cnn.max_pool2d(_rand(1, 1, 2, 2), 3)
    with pytest.raises(ValueError, match="w must have C_out = 2 output channels, got 3"):
        cnn.conv2d_input_grad(_rand(1, 2, 3, 3), _rand(3, 1, 2, 2))
    with pytest.raises(ValueError, match="grad_y has spatial shape"):
        cnn.conv2d_weight_grad(_rand(1, 1, 5, 5), _rand(1, 1, 2, 2), kernel_size=(3, 3))
    with pytest.raises(TypeError, match="kernel_size must be a tuple"):
        cnn.conv2d_weight_grad(_rand(1, 1, 5, 5), _rand(1, 1, 3, 3), kernel_size=3)
    with pytest.raises(ValueError, match="x must hold square images"):
        cnn.p4_lift(_rand(1, 1, 4, 5), _rand(1, 1, 3, 3))
    with pytest.raises(ValueError, match="w must hold odd square kernels"):
        cnn.p4_lift(_rand(1, 1, 4, 4), _rand(1, 1, 2, 2))
    with pytest.raises(ValueError, match="y must have a rotation axis of length 4"):
        cnn.p4_rotate(_rand(1, 1, 3, 4, 4))
    with pytest.raises(ValueError, match="downsample must be one of"):
        cnn.ShiftNet(2, downsample="avg", generator=torch_generator(0))
    with pytest.raises(ValueError, match="c_in must be >= 1"):
        cnn.conv_param_count(0, 1, 3)
    with pytest.raises(ValueError, match="h must be >= 1"):
        cnn.dense_param_count(1, 1, 0, 2)
    with pytest.raises(ValueError, match="noise must be >= 0.0"):
        cnn.motif_images(2, 5, noise=-1.0, generator=torch_generator(0))
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        cnn.SmallCNN(2, 2, generator=None)
    with pytest.raises(ValueError, match="n_classes must be >= 2"):
        cnn.SmallMLP(4, 4, 1, generator=torch_generator(0))
