"""Tests of the graded exercise `conv_by_attention` (Section 5.7): a K x K convolution
on a torus computed by K^2 heads with quadratic relative-position scores."""

WRONG = {
    "the centres are mirrored (a true convolution: the kernel is flipped)": """
        C_in, H, W = image.shape
        K = kernel.shape[-1]
        a, b = torch.meshgrid(torch.arange(K), torch.arange(K), indexing="ij")
        shifts = K // 2 - torch.stack([a.flatten(), b.flatten()], dim=1)
        offsets = circuits.torus_offsets(H, W)
        scores = circuits.quadratic_position_scores(offsets, shifts, alpha)
        X = image.flatten(1).T
        W_h = kernel.flatten(2).permute(2, 1, 0)
        heads, _ = scoring.attention_from_scores(scores, X @ W_h)
        return heads.sum(0).T.reshape(-1, H, W)
    """,
    "the centres are not shifted by K // 2": """
        C_in, H, W = image.shape
        K = kernel.shape[-1]
        a, b = torch.meshgrid(torch.arange(K), torch.arange(K), indexing="ij")
        shifts = torch.stack([a.flatten(), b.flatten()], dim=1)
        offsets = circuits.torus_offsets(H, W)
        scores = circuits.quadratic_position_scores(offsets, shifts, alpha)
        X = image.flatten(1).T
        W_h = kernel.flatten(2).permute(2, 1, 0)
        heads, _ = scoring.attention_from_scores(scores, X @ W_h)
        return heads.sum(0).T.reshape(-1, H, W)
    """,
    "the heads' outputs are averaged, not summed": """
        C_in, H, W = image.shape
        K = kernel.shape[-1]
        a, b = torch.meshgrid(torch.arange(K), torch.arange(K), indexing="ij")
        shifts = torch.stack([a.flatten(), b.flatten()], dim=1) - K // 2
        offsets = circuits.torus_offsets(H, W)
        scores = circuits.quadratic_position_scores(offsets, shifts, alpha)
        X = image.flatten(1).T
        W_h = kernel.flatten(2).permute(2, 1, 0)
        heads, _ = scoring.attention_from_scores(scores, X @ W_h)
        return heads.mean(0).T.reshape(-1, H, W)
    """,
}


def test_random_images(conv_by_attention):
    """Random images and 3 x 3 kernels, soft and sharp attention."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import circuits

    gen = torch.Generator().manual_seed(0)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    cases = {
        "3 x 6 x 6 image, 2 x 3 x 3 x 3 kernel, alpha = 1": (
            rand(3, 6, 6), rand(2, 3, 3, 3), 1.0),
        "2 x 5 x 5 image, 4 x 2 x 3 x 3 kernel, alpha = 10": (
            rand(2, 5, 5), rand(4, 2, 3, 3), 10.0),
    }
    grading.agree(conv_by_attention, circuits.conv_as_attention, cases)


def test_hidden_edge_cases(conv_by_attention):
    """A 1 x 1 kernel, one channel, a non-square image, a 5 x 5 kernel, very sharp
    attention."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import circuits

    gen = torch.Generator().manual_seed(1)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    cases = {
        "1 x 1 kernel (K = 1)": (rand(3, 4, 4), rand(2, 3, 1, 1), 2.0),
        "one channel in and out": (rand(1, 5, 5), rand(1, 1, 3, 3), 3.0),
        "non-square 2 x 4 x 7 image": (rand(2, 4, 7), rand(3, 2, 3, 3), 5.0),
        "5 x 5 kernel on a 6 x 6 image": (rand(1, 6, 6), rand(2, 1, 5, 5), 4.0),
        "alpha = 50 (the convolution itself)": (rand(2, 5, 6), rand(1, 2, 3, 3), 50.0),
    }
    grading.agree(conv_by_attention, circuits.conv_as_attention, cases)
