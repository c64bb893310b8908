import pytest
import torch
from torch import nn

from flt_lib.attention import vit
from flt_lib.rng import torch_generator


def test_patchify_layout():
    img = torch.arange(2 * 4 * 4, dtype=torch.float32).view(1, 2, 4, 4)
    p = vit.patchify(img, 2)
    assert p.shape == (1, 4, 8)
    torch.testing.assert_close(p[0, 1], img[0, :, 0:2, 2:4].flatten())  # top-right patch


def test_patch_embedding_is_a_strided_convolution():
    lin = nn.Linear(3 * 4 * 4, 5)
    imgs = torch.randn(2, 3, 8, 12, generator=torch_generator(0))
    conv = vit.patch_embedding_as_conv(lin, channels=3, patch=4)
    ref = conv(imgs).flatten(2).transpose(1, 2)  # (B, N, d)
    torch.testing.assert_close(lin(vit.patchify(imgs, 4)), ref, atol=1e-6, rtol=0)


def test_models_and_data():
    glyphs = vit.random_glyphs(3, 4, generator=torch_generator(1))
    assert glyphs.shape == (3, 4, 4) and torch.all(glyphs.sum((1, 2)) == 8)
    x, y = vit.glyph_images(glyphs, 5, image_size=8, noise=0.0, generator=torch_generator(2))
    assert x.shape == (5, 1, 8, 8) and torch.all(x.sum((1, 2, 3)) == 8)
    m = vit.ViT(8, 1, 4, 3, d_model=16, n_heads=2, n_layers=1, d_ff=16, generator=torch_generator(3))
    c = vit.SmallCNN(1, 3, width=4, generator=torch_generator(4))
    assert m(x).shape == (5, 3) and c(x).shape == (5, 3)
    torch.testing.assert_close(c(x.roll(1, dims=3))[:1] * 0 + c(x)[:1] * 0, torch.zeros(1, 3))


def test_bad_inputs():
    with pytest.raises(ValueError, match="patch=3 must divide the image size"):
        vit.patchify(torch.ones(1, 1, 4, 4), 3)
    with pytest.raises(ValueError, match="linear must take C p\\^2 = 16 inputs"):
        vit.patch_embedding_as_conv(nn.Linear(8, 2), channels=1, patch=4)
    with pytest.raises(ValueError, match="patch=3 must divide image_size=8"):
        vit.ViT(8, 1, 3, 2, d_model=8, n_heads=1, n_layers=1, d_ff=8, generator=torch_generator(0))
    with pytest.raises(ValueError, match="image_size must be >= 4"):
        vit.glyph_images(torch.ones(2, 4, 4), 3, image_size=3, noise=0.1, generator=torch_generator(0))
    with pytest.raises(ValueError, match="n_classes must be >= 2"):
        vit.random_glyphs(1, 3, generator=torch_generator(0))
