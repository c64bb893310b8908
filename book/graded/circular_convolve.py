"""Tests of the graded exercise `circular_convolve` (Section 6.2): the circular
convolution of a batch of signals with a short kernel."""

WRONG = {
    "a cross-correlation: the signal is shifted the wrong way": """
        y = torch.zeros_like(x)
        for t in range(h.shape[0]):
            y = y + h[t] * torch.roll(x, -t, dims=-1)
        return y
    """,
    "no wrap-around: the linear convolution cut to length n": """
        y = torch.zeros_like(x)
        n = x.shape[-1]
        for t in range(h.shape[0]):
            y[..., t:] = y[..., t:] + h[t] * x[..., : n - t]
        return y
    """,
}


def test_random_signals(circular_convolve):
    """Batches of random signals with kernels of a few lengths."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import conv

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"5 signals of length {n}, kernel of length {m}": (
            torch.randn(5, n, generator=gen, dtype=torch.float64),
            torch.randn(m, generator=gen, dtype=torch.float64))
        for n, m in ((10, 3), (12, 5), (9, 2))
    }
    grading.agree(circular_convolve, conv.circular_conv, cases)


def test_hidden_edge_cases(circular_convolve):
    """One tap, a kernel as long as the signal, length 1, more batch axes, a delta."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import conv

    gen = torch.Generator().manual_seed(1)
    delta = torch.zeros(4, dtype=torch.float64)
    delta[1] = 1.0                                  # convolving with it shifts by 1
    cases = {
        "a kernel of one tap": (
            torch.randn(3, 6, generator=gen, dtype=torch.float64),
            torch.tensor([2.5], dtype=torch.float64)),
        "a kernel as long as the signal": (
            torch.randn(2, 7, generator=gen, dtype=torch.float64),
            torch.randn(7, generator=gen, dtype=torch.float64)),
        "signals of length 1": (
            torch.randn(4, 1, generator=gen, dtype=torch.float64),
            torch.tensor([-1.5], dtype=torch.float64)),
        "x of shape (2, 3, 8)": (
            torch.randn(2, 3, 8, generator=gen, dtype=torch.float64),
            torch.randn(3, generator=gen, dtype=torch.float64)),
        "one signal (no batch axis), the kernel a delta at t = 1": (
            torch.arange(6, dtype=torch.float64), delta),
    }
    grading.agree(circular_convolve, conv.circular_conv, cases)
