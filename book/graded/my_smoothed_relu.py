"""Tests of the graded exercise `my_smoothed_relu` (Section 7.7): the smoothed ReLU of
the multi-view network."""

WRONG = {
    "the linear piece not shifted (z instead of z - (1 - 1/q) t)": """
        zp = z.clamp(min=0.0)
        return torch.where(zp <= t, zp**q / (q * t ** (q - 1)), zp)
    """,
    "the polynomial piece without its 1/q": """
        zp = z.clamp(min=0.0)
        return torch.where(zp <= t, zp**q / t ** (q - 1), zp - (1 - 1 / q) * t)
    """,
    "negative inputs not set to zero": """
        return torch.where(z <= t, z**q / (q * t ** (q - 1)), z - (1 - 1 / q) * t)
    """,
}


def test_random_inputs(my_smoothed_relu):
    """Pre-activations on both sides of 0 and of t, for a few degrees q."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import multiview

    def reference(z, q, t):
        return multiview.smoothed_relu(z, q=q, threshold=t)

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"z of shape (50,), q = {q}, t = {t}": (
            t * 3 * torch.randn(50, generator=gen, dtype=torch.float64), q, t)
        for q, t in ((2, 1.0), (3, 0.2), (4, 0.5))
    }
    grading.agree(my_smoothed_relu, reference, cases, atol=1e-12, rtol=1e-9)


def test_hidden_edge_cases(my_smoothed_relu):
    """z = 0 and z = t exactly, a batch of shape (2, 3, 4), a large degree q."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import multiview

    def reference(z, q, t):
        return multiview.smoothed_relu(z, q=q, threshold=t)

    gen = torch.Generator().manual_seed(1)
    cases = {
        "z = -t, 0, t/2, t, 2t": (
            torch.tensor([-0.3, 0.0, 0.15, 0.3, 0.6], dtype=torch.float64), 4, 0.3),
        "z of shape (2, 3, 4)": (
            torch.randn(2, 3, 4, generator=gen, dtype=torch.float64), 3, 0.5),
        "q = 8": (torch.linspace(-1, 2, 31, dtype=torch.float64), 8, 1.0),
        "only negative z": (-torch.rand(6, generator=gen, dtype=torch.float64), 2, 0.1),
    }
    grading.agree(my_smoothed_relu, reference, cases, atol=1e-12, rtol=1e-9)
