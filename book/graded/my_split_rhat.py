"""Tests of the graded exercise `my_split_rhat` (Appendix A.7): split R-hat of several
chains."""

WRONG = {
    "the chains are not split": """
        n = x.shape[0]
        W, B_n = x.var(0).mean(), x.mean(0).var()
        return (((n - 1) / n * W + B_n) / W).sqrt()
    """,
    "the second half starts at T // 2, keeping the middle draw of an odd T": """
        n = x.shape[0] // 2
        z = torch.cat([x[:n], x[n : 2 * n]], dim=1)
        W, B_n = z.var(0).mean(), z.mean(0).var()
        return (((n - 1) / n * W + B_n) / W).sqrt()
    """,
    "biased variances within and between the chains": """
        n = x.shape[0] // 2
        z = torch.cat([x[:n], x[x.shape[0] - n :]], dim=1)
        W, B_n = z.var(0, unbiased=False).mean(), z.mean(0).var(unbiased=False)
        return (((n - 1) / n * W + B_n) / W).sqrt()
    """,
}


def test_random_chains(my_split_rhat):
    """Chains with different means and scales, even and odd lengths."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import diagnostics

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for T, C in ((20, 2), (33, 4)):
        x = torch.randn(T, C, generator=gen, dtype=torch.float64)
        x = x * (0.5 + torch.rand(C, generator=gen, dtype=torch.float64))
        x = x + torch.randn(C, generator=gen, dtype=torch.float64)
        cases[f"T = {T}, C = {C}, different means and scales"] = (x,)
    grading.agree(my_split_rhat, diagnostics.split_rhat, cases, atol=1e-10, rtol=0)


def test_hidden_edge_cases(my_split_rhat):
    """T = 4 and T = 5, one chain that drifts, identical chains, C = 1."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import diagnostics

    gen = torch.Generator().manual_seed(1)
    x = torch.randn(7, 3, generator=gen, dtype=torch.float64)
    drift = torch.linspace(0, 3, 40, dtype=torch.float64)[:, None] + torch.randn(
        40, 1, generator=gen, dtype=torch.float64)
    same = torch.randn(15, 1, generator=gen, dtype=torch.float64).expand(15, 3)
    cases = {
        "T = 4, the shortest allowed": (x[:4],),
        "T = 5: the middle draw is dropped": (x[:5],),
        "a single chain that drifts (C = 1)": (drift,),
        "three identical chains": (same.clone(),),
    }
    grading.agree(my_split_rhat, diagnostics.split_rhat, cases, atol=1e-10, rtol=0)
