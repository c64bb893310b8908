"""The vision transformer at toy scale (5.6): patches as tokens, and a CNN to compare
with.

An image (C, H, W) is cut into non-overlapping ``p x p`` patches, each flattened to a
vector of ``C p^2`` numbers and mapped linearly to ``d_model``
(Dosovitskiy et al. 2021). That linear map is a convolution with kernel size and stride
``p`` (:func:`patch_embedding_as_conv`). A learned [CLS] vector and learned positions
are added and an :class:`~flt_lib.attention.encoder.Encoder` does the rest; the class is
read at [CLS].

The data are synthetic: each class is a small binary glyph placed at a random position
on a noisy background, so the label is invariant to translations, the bias a CNN has
built in.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from flt_lib._validate import check_generator, check_int, check_real, check_tensor
from flt_lib.attention.encoder import Encoder, EncoderConfig

__all__ = [
    "SmallCNN",
    "ViT",
    "glyph_images",
    "patch_embedding_as_conv",
    "patchify",
    "random_glyphs",
]


def patchify(images: torch.Tensor, patch: int) -> torch.Tensor:
    """Cut images into flattened patches in row-major order (def-attn-patches).

    Args:
        images: shape (B, C, H, W), with ``H`` and ``W`` divisible by ``patch``.
        patch: the patch side ``p``.

    Returns:
        Patches, shape (B, N, C p^2) with ``N = H W / p^2``; each patch is flattened
        channel first, then row, then column (the order of a ``Conv2d`` kernel).
    """
    images = check_tensor(images, "images", ndim=4, shape_doc="(B, C, H, W)")
    p = check_int(patch, "patch", min_value=1)
    H, W = images.shape[2:]
    if H % p or W % p:
        raise ValueError(f"patch={p} must divide the image size, got H={H}, W={W}")
    return _patchify(images, p)


def _patchify(images, p):
    B, C, H, W = images.shape
    x = images.reshape(B, C, H // p, p, W // p, p)  # (B, C, H/p, p, W/p, p)
    return x.permute(0, 2, 4, 1, 3, 5).reshape(B, (H // p) * (W // p), C * p * p)


def patch_embedding_as_conv(
    linear: nn.Linear, *, channels: int, patch: int
) -> nn.Conv2d:
    """The strided convolution that computes ``linear`` applied to :func:`patchify`'s
    patches.

    Output channel ``j`` has kernel ``linear.weight[j]`` reshaped to (C, p, p), stride
    ``p``.
    """
    if not isinstance(linear, nn.Linear):
        raise TypeError(
            f"linear must be a torch.nn.Linear, got {type(linear).__name__}"
        )
    C = check_int(channels, "channels", min_value=1)
    p = check_int(patch, "patch", min_value=1)
    if linear.in_features != C * p * p:
        raise ValueError(
            f"linear must take C p^2 = {C * p * p} inputs, got {linear.in_features}"
        )
    conv = nn.Conv2d(
        C, linear.out_features, kernel_size=p, stride=p, bias=linear.bias is not None
    )
    conv = conv.to(device=linear.weight.device, dtype=linear.weight.dtype)
    with torch.no_grad():
        conv.weight.copy_(linear.weight.view(linear.out_features, C, p, p))
        if linear.bias is not None:
            conv.bias.copy_(linear.bias)
    return conv


class ViT(nn.Module):
    """Vision transformer: :func:`patchify`, then an :class:`Encoder` with [CLS], read
    at [CLS].

    Args:
        image_size: side ``H = W`` of the (square) images.
        channels: ``C``.
        patch: patch side ``p`` (divides ``image_size``).
        n_classes: number of classes.
        d_model, n_heads, n_layers, d_ff: the encoder's sizes.
        generator: draws the initial weights.
    """

    def __init__(
        self, image_size: int, channels: int, patch: int, n_classes: int, *,
        d_model: int, n_heads: int, n_layers: int, d_ff: int,
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        self.patch = check_int(patch, "patch", min_value=1)
        image_size = check_int(image_size, "image_size", min_value=patch)
        if image_size % patch:
            raise ValueError(f"patch={patch} must divide image_size={image_size}")
        cfg = EncoderConfig(vocab=0, d_in=channels * patch * patch, d_model=d_model,
                            n_heads=n_heads, n_layers=n_layers, d_ff=d_ff,
                            max_len=(image_size // patch) ** 2, d_out=n_classes,
                            positions="learned", cls=True)
        self.encoder = Encoder(cfg, generator=generator)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Class scores (B, n_classes) for images (B, C, H, W)."""
        return self.encoder(patchify(images, self.patch)).logits[:, 0]


class SmallCNN(nn.Module):
    """Two 3x3 convolutions with ReLU, a global max pool and a linear classifier."""

    def __init__(
        self, channels: int, n_classes: int, *, width: int, generator: torch.Generator
    ) -> None:
        super().__init__()
        check_int(channels, "channels", min_value=1)
        check_int(n_classes, "n_classes", min_value=2)
        width = check_int(width, "width", min_value=1)
        check_generator(generator)
        self.conv1 = nn.Conv2d(channels, width, 3, padding=1)
        self.conv2 = nn.Conv2d(width, width, 3, padding=1)
        self.head = nn.Linear(width, n_classes)
        with torch.no_grad():
            for layer in (self.conv1, self.conv2, self.head):
                fan_in = layer.weight[0].numel()
                for p in (layer.weight, layer.bias):
                    p.copy_(
                        (torch.rand(p.shape, generator=generator) * 2 - 1) / fan_in**0.5
                    )

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """Class scores (B, n_classes) for images (B, C, H, W)."""
        h = torch.relu(self.conv2(torch.relu(self.conv1(images))))  # (B, width, H, W)
        return self.head(h.amax(dim=(-2, -1)))  # translation-invariant pooling


def random_glyphs(
    n_classes: int, size: int, *, generator: torch.Generator
) -> torch.Tensor:
    """``n_classes`` random binary glyphs of side ``size``, half of each on:
    (K, size, size)."""
    n_classes = check_int(n_classes, "n_classes", min_value=2)
    size = check_int(size, "size", min_value=2)
    check_generator(generator)
    n_on = size * size // 2
    glyphs = torch.zeros(n_classes, size * size)
    for c in range(n_classes):
        glyphs[c, torch.randperm(size * size, generator=generator)[:n_on]] = 1.0
    return glyphs.view(n_classes, size, size)


def glyph_images(
    glyphs: torch.Tensor,
    n: int,
    *,
    image_size: int,
    noise: float,
    generator: torch.Generator,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Images with one glyph of a random class at a uniformly random position, plus
    Gaussian noise.

    Args:
        glyphs: the class glyphs, shape (K, s, s).
        n: number of images.
        image_size: side of the square single-channel images, >= s.
        noise: standard deviation of the background noise, >= 0.
        generator: CPU generator.

    Returns:
        ``(images, labels)``: (n, 1, image_size, image_size) floats and (n,) class ids.
    """
    glyphs = check_tensor(
        glyphs, "glyphs", ndim=3, floating=True, shape_doc="(K, s, s)"
    )
    n = check_int(n, "n", min_value=1)
    K, s, _ = glyphs.shape
    size = check_int(image_size, "image_size", min_value=s)
    noise = check_real(noise, "noise", min_value=0.0)
    check_generator(generator)
    labels = torch.randint(0, K, (n,), generator=generator)
    rows = torch.randint(0, size - s + 1, (n,), generator=generator)
    cols = torch.randint(0, size - s + 1, (n,), generator=generator)
    images = noise * torch.randn(n, 1, size, size, generator=generator)
    # (n, size, size), glyph at (0, 0)
    canvas = F.pad(glyphs[labels], (0, size - s, 0, size - s))
    for i in range(n):  # move each glyph to its position
        images[i, 0] += canvas[i].roll((int(rows[i]), int(cols[i])), dims=(0, 1))
    return images, labels
