"""Tests of the graded exercise `ula_chain` (Appendix A.4): the unadjusted Langevin
algorithm."""

WRONG = {
    "the drift is eps grad log pi, without the factor 1/2": """
        theta, out = theta0, []
        for _ in range(n_steps):
            xi = torch.randn(theta.shape, generator=generator, dtype=theta.dtype)
            theta = theta + step * grad_log_prob(theta) + math.sqrt(step) * xi
            out.append(theta)
        return torch.stack(out)
    """,
    "noise of standard deviation eps instead of sqrt(eps)": """
        theta, out = theta0, []
        for _ in range(n_steps):
            xi = torch.randn(theta.shape, generator=generator, dtype=theta.dtype)
            theta = theta + 0.5 * step * grad_log_prob(theta) + step * xi
            out.append(theta)
        return torch.stack(out)
    """,
    "the starting point is recorded and the last state dropped": """
        theta, out = theta0, []
        for _ in range(n_steps):
            out.append(theta)
            xi = torch.randn(theta.shape, generator=generator, dtype=theta.dtype)
            theta = theta + 0.5 * step * grad_log_prob(theta) + math.sqrt(step) * xi
        return torch.stack(out)
    """,
}


def test_gaussian_targets(ula_chain):
    """Standard and correlated Gaussian targets, a few chains and steps."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import langevin

    def reference(grad_log_prob, theta0, step, n_steps, generator):
        return langevin.ula(grad_log_prob, theta0, step=step, n_steps=n_steps,
                            generator=generator).samples

    prec = torch.tensor([[2.0, 0.9], [0.9, 1.0]], dtype=torch.float64)

    def grad_gaussian(th):
        return -th @ prec

    def grad_normal(th):
        return -th

    gen = torch.Generator().manual_seed(0)
    theta = torch.randn(6, 2, generator=gen, dtype=torch.float64)
    cases = {
        "N(0, I), 6 chains in d = 2, 10 steps of 0.3": (
            grad_normal, theta, 0.3, 10, torch.Generator().manual_seed(1)),
        "a correlated Gaussian, 6 chains, 8 steps of 0.1": (
            grad_gaussian, theta, 0.1, 8, torch.Generator().manual_seed(2)),
    }
    grading.agree(ula_chain, reference, cases)


def test_hidden_edge_cases(ula_chain):
    """One step, one chain, d = 1, a flat target (a pure random walk)."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import langevin

    def reference(grad_log_prob, theta0, step, n_steps, generator):
        return langevin.ula(grad_log_prob, theta0, step=step, n_steps=n_steps,
                            generator=generator).samples

    def grad_normal(th):
        return -th

    def grad_flat(th):
        return torch.zeros_like(th)

    def g(k):
        return torch.Generator().manual_seed(k)

    gen = torch.Generator().manual_seed(3)
    theta = torch.randn(4, 3, generator=gen, dtype=torch.float64)
    cases = {
        "a single step": (grad_normal, theta, 0.5, 1, g(4)),
        "one chain, 5 steps": (grad_normal, theta[:1], 0.2, 5, g(5)),
        "d = 1, 4 chains": (grad_normal, theta[:, :1], 1.0, 6, g(6)),
        "a flat target, 3 steps of 2.0": (grad_flat, theta, 2.0, 3, g(7)),
    }
    grading.agree(ula_chain, reference, cases)
