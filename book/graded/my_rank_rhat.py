"""Tests of the graded exercise `my_rank_rhat` (Appendix A.7): rank-normalised split
R-hat, the larger of the bulk and the folded value."""

WRONG = {
    "the bulk value only, no folding": """
        n = x.shape[0] // 2
        z = torch.cat([x[:n], x[x.shape[0] - n :]], dim=1)
        flat = z.flatten()
        less = (flat[:, None] > flat[None, :]).sum(1)
        ties = (flat[:, None] == flat[None, :]).sum(1)
        r = less.to(z.dtype) + (ties.to(z.dtype) + 1) / 2
        s = torch.special.ndtri((r - 0.375) / (flat.numel() + 0.25)).reshape(z.shape)
        W, B_n = s.var(0).mean(), s.mean(0).var()
        return (((n - 1) / n * W + B_n) / W).sqrt()
    """,
    "ties get distinct ranks (argsort) instead of their average rank": """
        n = x.shape[0] // 2
        z = torch.cat([x[:n], x[x.shape[0] - n :]], dim=1)

        def rhat_of(c):
            W, B_n = c.var(0).mean(), c.mean(0).var()
            return (((n - 1) / n * W + B_n) / W).sqrt()

        def scores(v):
            flat = v.flatten()
            r = flat.argsort().argsort().to(v.dtype) + 1
            return torch.special.ndtri((r - 0.375) / (flat.numel() + 0.25)).reshape(
                v.shape)

        fold = (z - z.flatten().quantile(0.5)).abs()
        return torch.maximum(rhat_of(scores(z)), rhat_of(scores(fold)))
    """,
    "ranks within each chain instead of over all draws": """
        n = x.shape[0] // 2
        z = torch.cat([x[:n], x[x.shape[0] - n :]], dim=1)

        def rhat_of(c):
            W, B_n = c.var(0).mean(), c.mean(0).var()
            return (((n - 1) / n * W + B_n) / W).sqrt()

        def scores(v):
            less = (v[:, None, :] > v[None, :, :]).sum(1)
            ties = (v[:, None, :] == v[None, :, :]).sum(1)
            r = less.to(v.dtype) + (ties.to(v.dtype) + 1) / 2
            return torch.special.ndtri((r - 0.375) / (v.shape[0] + 0.25))

        fold = (z - z.flatten().quantile(0.5)).abs()
        return torch.maximum(rhat_of(scores(z)), rhat_of(scores(fold)))
    """,
}


def test_random_chains(my_rank_rhat):
    """Chains with different means and scales, and with ties."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import diagnostics

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for T, C in ((20, 2), (31, 4)):
        x = torch.randn(T, C, generator=gen, dtype=torch.float64)
        x = x * (0.5 + torch.rand(C, generator=gen, dtype=torch.float64))
        x = x + torch.randn(C, generator=gen, dtype=torch.float64)
        x[::5] = x[0, 0]  # ties
        cases[f"T = {T}, C = {C}, different means and scales, ties"] = (x,)
    grading.agree(my_rank_rhat, diagnostics.rank_normalised_rhat, cases, atol=1e-10,
                  rtol=0)


def test_hidden_edge_cases(my_rank_rhat):
    """T = 5, same location but different scales (the folded value wins), heavy tails,
    C = 1."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import diagnostics

    gen = torch.Generator().manual_seed(1)
    scales = torch.tensor([0.2, 1.0, 5.0], dtype=torch.float64)
    x = torch.randn(60, 3, generator=gen, dtype=torch.float64) * scales
    cauchy = torch.randn(40, 2, generator=gen, dtype=torch.float64) / torch.randn(
        40, 2, generator=gen, dtype=torch.float64)
    drift = torch.linspace(0, 3, 40, dtype=torch.float64)[:, None] + torch.randn(
        40, 1, generator=gen, dtype=torch.float64)
    cases = {
        "T = 5: the middle draw is dropped": (x[:5],),
        "same location, scales 0.2, 1 and 5": (x,),
        "heavy tails (ratios of Gaussians)": (cauchy,),
        "a single chain that drifts (C = 1)": (drift,),
    }
    grading.agree(my_rank_rhat, diagnostics.rank_normalised_rhat, cases, atol=1e-10,
                  rtol=0)
