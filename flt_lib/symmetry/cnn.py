"""Convolutional layers from the definition, their gradients, pooling and p4
(Section 6.3).

Images are ``(B, C, H, W)`` tensors, kernels ``(C_out, C_in, k_h, k_w)``. Like every
deep learning library we compute the *cross-correlation* (book eq.
``eq-sym-conv2d``)::

    y[b, o, i, j] = bias[o] + sum_{c, p, q} w[o, c, p, q] x_pad[b, c, s i + p, s j + q]

where ``x_pad`` is ``x`` padded by ``padding`` pixels (zeros or wrap-around) and ``s``
is the stride. For stride 1 the gradients of a loss L are (eqs.
``eq-sym-conv-grad-input`` and ``eq-sym-conv-grad-weight``)::

    dL/dx_pad[b, c, u, v] = sum_{o, p, q} w[o, c, p, q] g[b, o, u - p, v - q]
                          (a full convolution of g = dL/dy with the kernel)
    dL/dw[o, c, p, q]     = sum_{b, i, j} g[b, o, i, j] x_pad[b, c, i + p, j + q]
                          (a cross-correlation of the input with g)

The group convolution is the p4 *lifting* layer of Cohen & Welling (2016): the kernel is
applied in its four 90-degree rotations, giving an output with an extra rotation axis.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from flt_lib._validate import (
    check_choice,
    check_generator,
    check_int,
    check_real,
    check_tensor,
)

__all__ = [
    "ShiftNet",
    "SmallCNN",
    "SmallMLP",
    "conv2d",
    "conv2d_input_grad",
    "conv2d_weight_grad",
    "conv_param_count",
    "dense_param_count",
    "max_pool2d",
    "motif_images",
    "p4_lift",
    "p4_rotate",
]


def _images(x: object, name: str = "x") -> torch.Tensor:
    return check_tensor(x, name, ndim=4, floating=True, shape_doc="(B, C, H, W)")


def _pad(x: torch.Tensor, padding: int, mode: str) -> torch.Tensor:
    if padding == 0:
        return x
    return F.pad(
        x, (padding,) * 4, mode="circular" if mode == "circular" else "constant"
    )


def conv2d(
    x: torch.Tensor,
    w: torch.Tensor,
    bias: torch.Tensor | None = None,
    *,
    stride: int = 1,
    padding: int = 0,
    padding_mode: str = "zeros",
) -> torch.Tensor:
    """Multi-channel 2-D cross-correlation written from its definition (eq.
    ``eq-sym-conv2d``).

    One term per kernel offset (p, q): the shifted, strided input window times
    ``w[:, :, p, q]``.

    Args:
        x: images, (B, C_in, H, W).
        w: kernels, (C_out, C_in, k_h, k_w).
        bias: (C_out,) or None.
        stride: step between output positions, >= 1.
        padding: pixels added on every side, >= 0.
        padding_mode: ``"zeros"`` or ``"circular"`` (wrap around: the image lives on a
            torus).

    Returns:
        (B, C_out, H_out, W_out) with ``H_out = (H + 2 padding - k_h) // stride + 1``.
    """
    x = _images(x)
    w = check_tensor(w, "w", ndim=4, floating=True, shape_doc="(C_out, C_in, k_h, k_w)")
    if w.shape[1] != x.shape[1]:
        raise ValueError(
            f"w must have C_in = {x.shape[1]} input channels, got {w.shape[1]}"
        )
    stride = check_int(stride, "stride", min_value=1)
    padding = check_int(padding, "padding", min_value=0)
    check_choice(padding_mode, "padding_mode", ["zeros", "circular"])
    if bias is not None:
        check_tensor(
            bias, "bias", shape=(w.shape[0],), floating=True, shape_doc="(C_out,)"
        )
    xp = _pad(x, padding, padding_mode)  # (B, C_in, H + 2p, W + 2p)
    kh, kw = w.shape[2:]
    if xp.shape[2] < kh or xp.shape[3] < kw:
        raise ValueError(
            f"the kernel ({kh}, {kw}) is larger than the padded input "
            f"{tuple(xp.shape[2:])}"
        )
    return _conv2d(xp, w, bias, stride)


def _conv2d(xp, w, bias, stride):
    # xp: padded input (B, C_in, H, W); w: kernel (C_out, C_in, k_h, k_w)
    kh, kw = w.shape[2:]
    Ho, Wo = (xp.shape[2] - kh) // stride + 1, (xp.shape[3] - kw) // stride + 1
    y = xp.new_zeros(xp.shape[0], w.shape[0], Ho, Wo)            # (B, C_out, Ho, Wo)
    for p in range(kh):      # y[b,o,i,j] += sum_c w[o,c,p,q] x[b,c,s*i+p,s*j+q]
        for q in range(kw):
            window = xp[:, :, p : p + stride * (Ho - 1) + 1 : stride,
                        q : q + stride * (Wo - 1) + 1 : stride]   # (B, C_in, Ho, Wo)
            y = y + torch.einsum("oc,bcij->boij", w[:, :, p, q], window)
    return y if bias is None else y + bias[None, :, None, None]


def max_pool2d(
    x: torch.Tensor, kernel_size: int, stride: int | None = None
) -> torch.Tensor:
    """Max-pooling from the definition:
    ``y[i, j] = max_{p, q < k} x[s i + p, s j + q]``.

    Args:
        x: images, (B, C, H, W).
        kernel_size: window side k >= 1.
        stride: step s >= 1 (default k).

    Returns:
        (B, C, (H - k) // s + 1, (W - k) // s + 1).
    """
    x = _images(x)
    k = check_int(kernel_size, "kernel_size", min_value=1)
    s = k if stride is None else check_int(stride, "stride", min_value=1)
    if k > min(x.shape[2:]):
        raise ValueError(
            f"kernel_size must be <= the image size {tuple(x.shape[2:])}, got {k}"
        )
    Ho, Wo = (x.shape[2] - k) // s + 1, (x.shape[3] - k) // s + 1
    y = None
    for p in range(k):
        for q in range(k):
            window = x[:, :, p : p + s * (Ho - 1) + 1 : s, q : q + s * (Wo - 1) + 1 : s]
            y = window if y is None else torch.maximum(y, window)
    return y


def conv2d_input_grad(
    grad_y: torch.Tensor, w: torch.Tensor, *, padding: int = 0
) -> torch.Tensor:
    """dL/dx of a stride-1, zero-padded :func:`conv2d`, from dL/dy (eq.
    ``eq-sym-conv-grad-input``).

    The gradient with respect to the padded input is the *full* convolution of
    ``grad_y`` with the kernel: pad ``grad_y`` by k - 1 and cross-correlate with the
    flipped kernel whose channel axes are swapped. The padding border is then cut off.

    Args:
        grad_y: dL/dy, (B, C_out, H_out, W_out).
        w: the layer's kernels, (C_out, C_in, k_h, k_w).
        padding: the layer's zero padding, >= 0.

    Returns:
        dL/dx, (B, C_in, H_out + k_h - 1 - 2 padding, W_out + k_w - 1 - 2 padding).
    """
    grad_y = _images(grad_y, "grad_y")
    w = check_tensor(w, "w", ndim=4, floating=True, shape_doc="(C_out, C_in, k_h, k_w)")
    if w.shape[0] != grad_y.shape[1]:
        raise ValueError(
            f"w must have C_out = {grad_y.shape[1]} output channels, got {w.shape[0]}"
        )
    padding = check_int(padding, "padding", min_value=0)
    return _conv2d_input_grad(grad_y, w, padding)


def _conv2d_input_grad(grad_y, w, padding):
    kh, kw = w.shape[2:]
    g = F.pad(grad_y, (kw - 1, kw - 1, kh - 1, kh - 1))  # room for every overlap
    w_flip = torch.flip(w, dims=(2, 3)).transpose(0, 1)  # (C_in, C_out, k_h, k_w)
    grad_xp = conv2d(g, w_flip)  # (B, C_in, H + 2 padding, W + 2 padding)
    if padding == 0:
        return grad_xp
    return grad_xp[:, :, padding:-padding, padding:-padding]


def conv2d_weight_grad(
    x: torch.Tensor,
    grad_y: torch.Tensor,
    *,
    kernel_size: tuple[int, int],
    padding: int = 0,
) -> torch.Tensor:
    """dL/dw of a stride-1, zero-padded :func:`conv2d` (eq.
    ``eq-sym-conv-grad-weight``).

    Entry (o, c, p, q) is the cross-correlation of input channel c with output-gradient
    channel o, summed over the batch, at offset (p, q).

    Args:
        x: the layer's input, (B, C_in, H, W).
        grad_y: dL/dy, (B, C_out, H_out, W_out).
        kernel_size: (k_h, k_w) of the layer.
        padding: the layer's zero padding, >= 0.

    Returns:
        dL/dw, (C_out, C_in, k_h, k_w).
    """
    x = _images(x)
    grad_y = _images(grad_y, "grad_y")
    if grad_y.shape[0] != x.shape[0]:
        raise ValueError(
            f"grad_y must have batch size {x.shape[0]}, got {grad_y.shape[0]}"
        )
    if not (isinstance(kernel_size, tuple) and len(kernel_size) == 2):
        raise TypeError(f"kernel_size must be a tuple (k_h, k_w), got {kernel_size!r}")
    kh = check_int(kernel_size[0], "kernel_size[0]", min_value=1)
    kw = check_int(kernel_size[1], "kernel_size[1]", min_value=1)
    padding = check_int(padding, "padding", min_value=0)
    xp = _pad(x, padding, "zeros")
    Ho, Wo = grad_y.shape[2:]
    if (xp.shape[2] - kh + 1, xp.shape[3] - kw + 1) != (Ho, Wo):
        raise ValueError(
            f"grad_y has spatial shape {(Ho, Wo)}, but a stride-1 layer with kernel "
            f"{(kh, kw)} and padding {padding} on x of shape "
            f"{tuple(x.shape[2:])} gives "
            f"{(xp.shape[2] - kh + 1, xp.shape[3] - kw + 1)}"
        )
    return _conv2d_weight_grad(x, grad_y, (kh, kw), padding=padding)


def _conv2d_weight_grad(
    x: torch.Tensor, grad_y: torch.Tensor, kernel_size: tuple[int, int], *, padding: int
) -> torch.Tensor:
    """The check-free core of :func:`conv2d_weight_grad`."""
    kh, kw = kernel_size
    xp = _pad(x, padding, "zeros")  # (B, C_in, H + 2 pad, W + 2 pad)
    Ho, Wo = grad_y.shape[2:]
    grad_w = x.new_zeros(grad_y.shape[1], x.shape[1], kh, kw)  # (C_out, C_in, kh, kw)
    for p in range(kh):
        for q in range(kw):
            grad_w[:, :, p, q] = torch.einsum(
                "boij,bcij->oc", grad_y, xp[:, :, p : p + Ho, q : q + Wo]
            )
    return grad_w


def p4_lift(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """The p4 lifting convolution: correlate with the kernel in all four 90-degree
    rotations.

    ``y[:, :, r] = conv2d(x, rot90(w, r), padding=k // 2)`` (book eq.
    ``eq-sym-p4-lift``). With an odd kernel on a square image, rotating ``x`` rotates
    every map and shifts r by one.

    Args:
        x: square images, (B, C_in, N, N).
        w: odd square kernels, (C_out, C_in, k, k).

    Returns:
        (B, C_out, 4, N, N).
    """
    x = _images(x)
    w = check_tensor(w, "w", ndim=4, floating=True, shape_doc="(C_out, C_in, k, k)")
    if x.shape[2] != x.shape[3]:
        raise ValueError(
            f"x must hold square images, got spatial shape {tuple(x.shape[2:])}"
        )
    if w.shape[3] != w.shape[2] or w.shape[2] % 2 == 0:
        raise ValueError(
            f"w must hold odd square kernels (k, k), got {tuple(w.shape[2:])}"
        )
    return _p4_lift(x, w)


def _p4_lift(x, w):
    k = w.shape[2]
    maps = [conv2d(x, torch.rot90(w, r, dims=(2, 3)), padding=k // 2) for r in range(4)]
    return torch.stack(maps, dim=2)  # (B, C_out, 4, N, N)


def p4_rotate(y: torch.Tensor) -> torch.Tensor:
    """How a 90-degree rotation acts on p4 feature maps: rotate each map, shift
    r -> r + 1."""
    y = check_tensor(y, "y", ndim=5, floating=True, shape_doc="(B, C, 4, N, N)")
    if y.shape[2] != 4:
        raise ValueError(
            f"y must have a rotation axis of length 4 (dim 2), got {y.shape[2]}"
        )
    return torch.roll(torch.rot90(y, 1, dims=(3, 4)), 1, dims=2)


def conv_param_count(c_in: int, c_out: int, k: int) -> int:
    """Parameters of a k x k convolution from c_in to c_out channels, with bias."""
    c_in, c_out = (
        check_int(c_in, "c_in", min_value=1),
        check_int(c_out, "c_out", min_value=1),
    )
    k = check_int(k, "k", min_value=1)
    return c_out * c_in * k * k + c_out


def dense_param_count(c_in: int, c_out: int, h: int, w: int) -> int:
    """Parameters of a dense layer mapping (c_in, h, w) images to (c_out, h, w), with
    bias."""
    c_in, c_out = (
        check_int(c_in, "c_in", min_value=1),
        check_int(c_out, "c_out", min_value=1),
    )
    h, w = check_int(h, "h", min_value=1), check_int(w, "w", min_value=1)
    return (c_in * h * w) * (c_out * h * w) + c_out * h * w


class ShiftNet(nn.Module):
    """Three 3x3 convolutions with circular padding and ReLUs; the middle one may
    downsample.

    ``downsample`` chooses the middle stage: ``"none"`` (stride 1), ``"stride"`` (stride
    2), ``"maxpool"`` (stride 1, then 2x2 max-pooling with stride 2) or ``"blur"``
    (stride 1, 2x2 max-pooling with stride 1, then a [1, 2, 1]^2/16 blur and subsampling
    by 2, the anti-aliased pooling of Zhang 2019). Weights are drawn from ``generator``.
    """

    def __init__(
        self,
        channels: int = 8,
        *,
        downsample: str = "none",
        generator: torch.Generator,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__()
        c = check_int(channels, "channels", min_value=1)
        self.downsample = check_choice(
            downsample, "downsample", ["none", "stride", "maxpool", "blur"]
        )
        check_generator(generator)
        shapes = [(c, 1, 3, 3), (c, c, 3, 3), (c, c, 3, 3)]
        self.weights = nn.ParameterList(
            nn.Parameter(
                (torch.randn(s, generator=generator) / (3 * s[1] ** 0.5)).to(dtype)
            )
            for s in shapes
        )
        blur = torch.tensor([1.0, 2.0, 1.0], dtype=dtype)
        self.register_buffer(
            "blur", (torch.outer(blur, blur) / 16).expand(c, 1, 3, 3).clone()
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Map (B, 1, N, N) images to (B, C, N', N') feature maps (N' = N or N / 2)."""
        x = _images(x)
        circ = lambda t: F.pad(t, (1, 1, 1, 1), mode="circular")  # noqa: E731
        h = torch.relu(F.conv2d(circ(x), self.weights[0]))
        stride = 2 if self.downsample == "stride" else 1
        h = torch.relu(F.conv2d(circ(h), self.weights[1], stride=stride))
        if self.downsample == "maxpool":
            h = F.max_pool2d(h, 2)
        elif self.downsample == "blur":
            h = F.max_pool2d(F.pad(h, (0, 1, 0, 1), mode="circular"), 2, stride=1)
            h = F.conv2d(circ(h), self.blur, stride=2, groups=h.shape[1])
        return torch.relu(F.conv2d(circ(h), self.weights[2]))


class SmallCNN(nn.Module):
    """conv 3x3 (circular) -> ReLU -> global max-pool -> linear: a shift-invariant
    classifier."""

    def __init__(
        self, channels: int, n_classes: int, *, generator: torch.Generator
    ) -> None:
        super().__init__()
        c = check_int(channels, "channels", min_value=1)
        k = check_int(n_classes, "n_classes", min_value=2)
        check_generator(generator)
        self.conv = nn.Conv2d(1, c, 3, padding=1, padding_mode="circular")
        self.head = nn.Linear(c, k)
        _reinit(self, generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 1, N, N) images to (B, n_classes) logits."""
        h = torch.relu(self.conv(x))  # (B, c, N, N)
        return self.head(h.amax(dim=(2, 3)))


class SmallMLP(nn.Module):
    """flatten -> linear -> ReLU -> linear: a classifier that knows nothing about
    shifts."""

    def __init__(
        self,
        n_pixels: int,
        width: int,
        n_classes: int,
        *,
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        d = check_int(n_pixels, "n_pixels", min_value=1)
        m = check_int(width, "width", min_value=1)
        k = check_int(n_classes, "n_classes", min_value=2)
        check_generator(generator)
        self.hidden = nn.Linear(d, m)
        self.head = nn.Linear(m, k)
        _reinit(self, generator)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, ...) inputs (flattened) to (B, n_classes) logits."""
        return self.head(torch.relu(self.hidden(x.flatten(1))))


def _reinit(model: nn.Module, generator: torch.Generator) -> None:
    """PyTorch's default uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) init, drawn from
    ``generator``."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, (nn.Linear, nn.Conv2d)):
                fan_in = mod.weight[0].numel()
                for t in (mod.weight, mod.bias):
                    t.copy_(
                        (torch.rand(t.shape, generator=generator) * 2 - 1)
                        / fan_in**0.5
                    )


_MOTIFS = {
    "plus": torch.tensor([[0.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]),
    "cross": torch.tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]]),
}


def motif_images(
    n: int, size: int, *, noise: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Images with a "+" (label 0) or an "x" (label 1) at a uniformly random (cyclic)
    position.

    Both motifs have five bright pixels, so the mean brightness does not give the label
    away; the label is invariant under every cyclic shift of the image.

    Args:
        n: number of images, >= 1.
        size: side N of the square images, >= 3.
        noise: standard deviation of the Gaussian background, >= 0.
        generator: a CPU torch.Generator.

    Returns:
        ``(X, y)``: X float32 (n, 1, N, N), y int64 (n,).
    """
    n = check_int(n, "n", min_value=1)
    size = check_int(size, "size", min_value=3)
    noise = check_real(noise, "noise", min_value=0.0)
    check_generator(generator)
    y = torch.randint(0, 2, (n,), generator=generator)
    shifts = torch.randint(0, size, (n, 2), generator=generator)
    X = noise * torch.randn(n, 1, size, size, generator=generator)
    base = torch.zeros(2, size, size)
    base[0, :3, :3], base[1, :3, :3] = _MOTIFS["plus"], _MOTIFS["cross"]
    for i in range(n):
        X[i, 0] += torch.roll(
            base[y[i]], (int(shifts[i, 0]), int(shifts[i, 1])), dims=(0, 1)
        )
    return X, y
