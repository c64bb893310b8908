"""Tests of the graded exercise `relu_nngp_kernel` (Appendix A.6): the NNGP kernel of a
deep ReLU network by the arc-cosine recursion."""

WRONG = {
    "the diagonals are not updated: K^0(x, x) at every layer": """
        d = X1.shape[1]
        k12 = bias_var + weight_var * X1 @ X2.T / d
        k11 = bias_var + weight_var * (X1**2).sum(1) / d
        k22 = bias_var + weight_var * (X2**2).sum(1) / d
        norm = torch.sqrt(k11[:, None] * k22[None, :])
        for _ in range(depth):
            rho = (k12 / norm).clamp(-1.0, 1.0)
            acos = torch.arccos(rho)
            kappa1 = (torch.sqrt(1 - rho**2) + rho * (math.pi - acos)) / math.pi
            k12 = bias_var + 0.5 * weight_var * norm * kappa1
        return k12
    """,
    "the factor 1/2 of the ReLU is missing": """
        d = X1.shape[1]
        k12 = bias_var + weight_var * X1 @ X2.T / d
        k11 = bias_var + weight_var * (X1**2).sum(1) / d
        k22 = bias_var + weight_var * (X2**2).sum(1) / d
        for _ in range(depth):
            norm = torch.sqrt(k11[:, None] * k22[None, :])
            rho = (k12 / norm).clamp(-1.0, 1.0)
            acos = torch.arccos(rho)
            kappa1 = (torch.sqrt(1 - rho**2) + rho * (math.pi - acos)) / math.pi
            k12 = bias_var + weight_var * norm * kappa1
            k11, k22 = (bias_var + weight_var * k for k in (k11, k22))
        return k12
    """,
    "the input kernel is not divided by d": """
        k12 = bias_var + weight_var * X1 @ X2.T
        k11 = bias_var + weight_var * (X1**2).sum(1)
        k22 = bias_var + weight_var * (X2**2).sum(1)
        for _ in range(depth):
            norm = torch.sqrt(k11[:, None] * k22[None, :])
            rho = (k12 / norm).clamp(-1.0, 1.0)
            acos = torch.arccos(rho)
            kappa1 = (torch.sqrt(1 - rho**2) + rho * (math.pi - acos)) / math.pi
            k12 = bias_var + 0.5 * weight_var * norm * kappa1
            k11, k22 = (bias_var + 0.5 * weight_var * k for k in (k11, k22))
        return k12
    """,
}


def test_random_inputs(relu_nngp_kernel):
    """Random inputs, a few depths, with and without bias."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import nngp

    def reference(X1, X2, depth, weight_var, bias_var):
        return nngp.relu_nngp(X1, X2, depth=depth, weight_var=weight_var,
                              bias_var=bias_var)

    gen = torch.Generator().manual_seed(0)
    X1 = torch.randn(6, 4, generator=gen, dtype=torch.float64)
    X2 = 3 * torch.randn(3, 4, generator=gen, dtype=torch.float64)
    cases = {
        "6 x 3 pairs in d = 4, depth 1, He weights, no bias": (X1, X2, 1, 2.0, 0.0),
        "6 x 3 pairs, depth 3, sigma_w^2 = 1, sigma_b^2 = 0.2": (X1, X2, 3, 1.0, 0.2),
        "6 x 6, depth 4, sigma_w^2 = 2.5, sigma_b^2 = 1": (X1, X1, 4, 2.5, 1.0),
    }
    grading.agree(relu_nngp_kernel, reference, cases)


def test_hidden_edge_cases(relu_nngp_kernel):
    """d = 1, one pair, identical and opposite inputs, a deep network."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import nngp

    def reference(X1, X2, depth, weight_var, bias_var):
        return nngp.relu_nngp(X1, X2, depth=depth, weight_var=weight_var,
                              bias_var=bias_var)

    gen = torch.Generator().manual_seed(1)
    x = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    line = torch.tensor([[-2.0], [-0.5], [1.0]], dtype=torch.float64)
    cases = {
        "d = 1, inputs -2, -0.5, 1": (line, line, 2, 2.0, 0.0),
        "a single pair": (x[:1], x[1:2], 2, 2.0, 0.3),
        "x against itself and -x (correlations 1 and -1)": (
            x, torch.cat([x, -x]), 1, 2.0, 0.0),
        "depth 20": (x, x, 20, 2.0, 0.05),
    }
    grading.agree(relu_nngp_kernel, reference, cases)
