"""Tests of the graded exercise `p4_gconv_loops` (Section 6.8): the p4 group convolution
as a loop of planar cross-correlations with rotated, cycled filters."""

WRONG = {
    "the rotation axis of the filter is not cycled (psi[:, :, s])": """
        out = []
        for r in range(4):
            out.append(sum(
                cnn.conv2d(f[:, :, s], torch.rot90(psi[:, :, s], r, dims=(2, 3)),
                           padding=1, padding_mode="circular")
                for s in range(4)))
        return torch.stack(out, dim=2)
    """,
    "the filter slice (r - s) mod 4 instead of (s - r) mod 4": """
        out = []
        for r in range(4):
            out.append(sum(
                cnn.conv2d(f[:, :, s],
                           torch.rot90(psi[:, :, (r - s) % 4], r, dims=(2, 3)),
                           padding=1, padding_mode="circular")
                for s in range(4)))
        return torch.stack(out, dim=2)
    """,
    "the filter is rotated the other way (rot90 by -r)": """
        out = []
        for r in range(4):
            out.append(sum(
                cnn.conv2d(f[:, :, s],
                           torch.rot90(psi[:, :, (s - r) % 4], -r, dims=(2, 3)),
                           padding=1, padding_mode="circular")
                for s in range(4)))
        return torch.stack(out, dim=2)
    """,
}


def test_random_maps(p4_gconv_loops):
    """Random p4 feature maps and filters."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import group_conv

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"{B} maps {C} x 4 x {N} x {N}, filters {O} x {C} x 4 x 3 x 3": (
            torch.randn(B, C, 4, N, N, generator=gen, dtype=torch.float64),
            torch.randn(O, C, 4, 3, 3, generator=gen, dtype=torch.float64))
        for B, C, O, N in ((2, 2, 3, 5), (1, 3, 2, 6))
    }
    grading.agree(p4_gconv_loops, group_conv.p4_group_conv, cases, atol=1e-12, rtol=0)


def test_hidden_edge_cases(p4_gconv_loops):
    """One channel, 3 x 3 maps, a filter on one rotation slice only, a rotated input."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import cnn, group_conv

    gen = torch.Generator().manual_seed(1)
    one_slice = torch.zeros(1, 1, 4, 3, 3, dtype=torch.float64)
    one_slice[0, 0, 1] = torch.randn(3, 3, generator=gen, dtype=torch.float64)
    f = torch.randn(1, 2, 4, 4, 4, generator=gen, dtype=torch.float64)
    cases = {
        "one channel in and out, 4 x 4 maps": (
            torch.randn(1, 1, 4, 4, 4, generator=gen, dtype=torch.float64),
            torch.randn(1, 1, 4, 3, 3, generator=gen, dtype=torch.float64)),
        "3 x 3 maps (the filter covers the whole torus)": (
            torch.randn(2, 1, 4, 3, 3, generator=gen, dtype=torch.float64),
            torch.randn(2, 1, 4, 3, 3, generator=gen, dtype=torch.float64)),
        "a filter that is zero except on rotation slice 1": (
            torch.randn(1, 1, 4, 5, 5, generator=gen, dtype=torch.float64), one_slice),
        "an input rotated by p4_rotate": (
            cnn.p4_rotate(f),
            torch.randn(3, 2, 4, 3, 3, generator=gen, dtype=torch.float64)),
    }
    grading.agree(p4_gconv_loops, group_conv.p4_group_conv, cases, atol=1e-12, rtol=0)
