"""Tests of the graded exercise `conv2d_strided` (Section 6.3): a multi-channel 2-D
cross-correlation with a bias and a stride, no padding."""

WRONG = {
    "the kernel is flipped (a true convolution, not the cross-correlation)": """
        w = w.flip((2, 3))
        kh, kw = w.shape[2:]
        Ho, Wo = (x.shape[2] - kh) // stride + 1, (x.shape[3] - kw) // stride + 1
        y = x.new_zeros(x.shape[0], w.shape[0], Ho, Wo) + b[:, None, None]
        for p in range(kh):
            for q in range(kw):
                window = x[:, :, p : p + stride * (Ho - 1) + 1 : stride,
                           q : q + stride * (Wo - 1) + 1 : stride]
                y = y + torch.einsum("oc,bcij->boij", w[:, :, p, q], window)
        return y
    """,
    "the output size is (H - k + 1) // s": """
        kh, kw = w.shape[2:]
        Ho, Wo = (x.shape[2] - kh + 1) // stride, (x.shape[3] - kw + 1) // stride
        y = x.new_zeros(x.shape[0], w.shape[0], Ho, Wo) + b[:, None, None]
        for p in range(kh):
            for q in range(kw):
                window = x[:, :, p : p + stride * (Ho - 1) + 1 : stride,
                           q : q + stride * (Wo - 1) + 1 : stride]
                y = y + torch.einsum("oc,bcij->boij", w[:, :, p, q], window)
        return y
    """,
    "the bias is left out": """
        kh, kw = w.shape[2:]
        Ho, Wo = (x.shape[2] - kh) // stride + 1, (x.shape[3] - kw) // stride + 1
        y = x.new_zeros(x.shape[0], w.shape[0], Ho, Wo)
        for p in range(kh):
            for q in range(kw):
                window = x[:, :, p : p + stride * (Ho - 1) + 1 : stride,
                           q : q + stride * (Wo - 1) + 1 : stride]
                y = y + torch.einsum("oc,bcij->boij", w[:, :, p, q], window)
        return y
    """,
}


def test_random_images(conv2d_strided):
    """Random images and kernels, strides 1 and 2."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import cnn

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"2 images 2 x 8 x 8, kernels 3 x 2 x 3 x 3, stride {s}": (
            torch.randn(2, 2, 8, 8, generator=gen, dtype=torch.float64),
            torch.randn(3, 2, 3, 3, generator=gen, dtype=torch.float64),
            torch.randn(3, generator=gen, dtype=torch.float64), s)
        for s in (1, 2)
    }
    grading.agree(conv2d_strided, lambda *a: cnn.conv2d(*a[:3], stride=a[3]), cases)


def test_hidden_edge_cases(conv2d_strided):
    """1 x 1 kernels, a stride that does not divide H - k, a kernel as large as the
    image, non-square images and kernels, one channel."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import cnn

    gen = torch.Generator().manual_seed(1)

    def case(B, C_in, H, W, C_out, kh, kw, s):
        return (torch.randn(B, C_in, H, W, generator=gen, dtype=torch.float64),
                torch.randn(C_out, C_in, kh, kw, generator=gen, dtype=torch.float64),
                torch.randn(C_out, generator=gen, dtype=torch.float64), s)

    cases = {
        "a 1 x 1 kernel (mixes channels only), stride 1": case(2, 3, 5, 5, 4, 1, 1, 1),
        "a 1 x 1 kernel, stride 2 on a 7 x 7 image": case(1, 2, 7, 7, 2, 1, 1, 2),
        "a 3 x 3 kernel, stride 2, 7 x 7 image (H' = 3)": case(1, 2, 7, 7, 2, 3, 3, 2),
        "stride 3 on a 10 x 10 image, 3 x 3 kernel": case(2, 1, 10, 10, 1, 3, 3, 3),
        "the kernel as large as the image": case(2, 2, 4, 4, 3, 4, 4, 1),
        "a 6 x 9 image, a 2 x 3 kernel, stride 2": case(1, 1, 6, 9, 2, 2, 3, 2),
        "a stride larger than the kernel": case(1, 1, 9, 9, 1, 2, 2, 4),
    }
    grading.agree(conv2d_strided, lambda *a: cnn.conv2d(*a[:3], stride=a[3]), cases)
