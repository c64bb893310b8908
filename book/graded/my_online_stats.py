"""Tests of the graded exercise `my_online_stats` (Section 5.9): the running maximum and
normaliser (m, l) of the online softmax, read block by block."""

WRONG = {
    "the running sum is not rescaled when the maximum grows": """
        m = torch.full(x.shape[:-1], -math.inf, dtype=x.dtype)
        l = torch.zeros(x.shape[:-1], dtype=x.dtype)
        for j in range(0, x.shape[-1], block):
            m_new = torch.maximum(m, x[..., j:j + block].amax(-1))
            l = l + torch.exp(x[..., j:j + block] - m_new[..., None]).sum(-1)
            m = m_new
        return m, l
    """,
    "the rescaling factor is exp(m_new - m), upside down": """
        m = torch.full(x.shape[:-1], -math.inf, dtype=x.dtype)
        l = torch.zeros(x.shape[:-1], dtype=x.dtype)
        for j in range(0, x.shape[-1], block):
            m_new = torch.maximum(m, x[..., j:j + block].amax(-1))
            l = l * torch.exp(m_new - m).nan_to_num(0.0) + torch.exp(
                x[..., j:j + block] - m_new[..., None]).sum(-1)
            m = m_new
        return m, l
    """,
    "the block's maximum replaces the running maximum": """
        m = torch.full(x.shape[:-1], -math.inf, dtype=x.dtype)
        l = torch.zeros(x.shape[:-1], dtype=x.dtype)
        for j in range(0, x.shape[-1], block):
            m_new = x[..., j:j + block].amax(-1)
            l = l * torch.exp(m - m_new) + torch.exp(x[..., j:j + block]
                                                     - m_new[..., None]).sum(-1)
            m = m_new
        return m, l
    """,
}


def test_random_scores(my_online_stats):
    """Random scores of a few shapes and block sizes."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import flash

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"x of shape {shape}, block {block}": (
            5 * torch.randn(*shape, generator=gen, dtype=torch.float64), block)
        for shape, block in (((3, 20), 6), ((2, 4, 9), 2), ((31,), 8))
    }
    grading.agree(my_online_stats, flash.online_softmax_stats, cases)


def test_hidden_edge_cases(my_online_stats):
    """One entry, a block longer than T, blocks of one, increasing and decreasing
    scores, and scores too large for a plain exp."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import flash

    gen = torch.Generator().manual_seed(1)
    ramp = torch.arange(12, dtype=torch.float64)
    cases = {
        "T = 1": (torch.randn(4, 1, generator=gen, dtype=torch.float64), 3),
        "block longer than T": (
            torch.randn(2, 5, generator=gen, dtype=torch.float64), 8),
        "block = 1": (torch.randn(3, 7, generator=gen, dtype=torch.float64), 1),
        "increasing scores (the maximum moves at every block)": (ramp, 3),
        "decreasing scores (the maximum is in the first block)": (ramp.flip(0), 3),
        "scores near 1000 (exp would overflow)": (
            1000 + torch.randn(2, 10, generator=gen, dtype=torch.float64), 4),
    }
    grading.agree(my_online_stats, flash.online_softmax_stats, cases)
