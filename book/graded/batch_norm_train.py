"""Tests of the graded exercise `batch_norm_train` (Section 3.6): batch normalisation in
training mode."""

WRONG = {
    "the unbiased variance (torch's default var)": """
        mean = z.mean(0)
        return gamma * (z - mean) / torch.sqrt(z.var(0) + eps) + beta
    """,
    "statistics over the units of each example (layer norm)": """
        mean = z.mean(1, keepdim=True)
        var = ((z - mean) ** 2).mean(1, keepdim=True)
        return gamma * (z - mean) / torch.sqrt(var + eps) + beta
    """,
    "eps added to the standard deviation": """
        mean = z.mean(0)
        var = ((z - mean) ** 2).mean(0)
        return gamma * (z - mean) / (torch.sqrt(var) + eps) + beta
    """,
}


def test_random_batches(batch_norm_train):
    """Random batches with shifted and scaled units."""
    import torch

    from flt_lib import grading
    from flt_lib.training import normalisation

    def reference(z, gamma, beta, eps):
        return normalisation.batch_norm(z, gamma, beta, eps=eps)

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for B, m, eps in ((16, 4, 1e-5), (5, 6, 0.5)):
        z = 1 + 3 * torch.randn(B, m, generator=gen, dtype=torch.float64)
        gamma = torch.rand(m, generator=gen, dtype=torch.float64) + 0.5
        beta = torch.randn(m, generator=gen, dtype=torch.float64)
        cases[f"B = {B}, m = {m}, eps = {eps}"] = (z, gamma, beta, eps)
    grading.agree(batch_norm_train, reference, cases)


def test_hidden_edge_cases(batch_norm_train):
    """B = 2, m = 1, a constant unit, unit gamma and zero beta, a square batch."""
    import torch

    from flt_lib import grading
    from flt_lib.training import normalisation

    def reference(z, gamma, beta, eps):
        return normalisation.batch_norm(z, gamma, beta, eps=eps)

    gen = torch.Generator().manual_seed(1)
    z = torch.randn(6, 3, generator=gen, dtype=torch.float64)
    const = z.clone()
    const[:, 1] = 2.0
    one, zero = torch.ones(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    sq = 5 * torch.randn(4, 4, generator=gen, dtype=torch.float64)
    g4 = torch.rand(4, generator=gen, dtype=torch.float64) + 0.5
    cases = {
        "a batch of two": (z[:2], one, zero, 1e-5),
        "one unit, m = 1": (z[:, :1], 2 * one[:1], one[:1], 1e-5),
        "a constant unit (variance 0), eps = 1e-3": (const, one, zero, 1e-3),
        "a square batch, B = m = 4": (sq, g4, -g4, 0.01),
    }
    grading.agree(batch_norm_train, reference, cases)
