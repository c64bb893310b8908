"""Tests of the graded exercise `rwm_step` (Appendix A.2): one transition of random-walk
Metropolis."""

WRONG = {
    "the density ratio is upside down": """
        C, d = theta.shape
        xi = torch.randn(C, d, generator=generator, dtype=theta.dtype)
        u = torch.rand(C, generator=generator, dtype=theta.dtype)
        prop = theta + step * xi
        accept = u.log() < log_prob(theta) - log_prob(prop)
        return torch.where(accept[:, None], prop, theta)
    """,
    "u is compared with the log ratio, not with the ratio": """
        C, d = theta.shape
        xi = torch.randn(C, d, generator=generator, dtype=theta.dtype)
        u = torch.rand(C, generator=generator, dtype=theta.dtype)
        prop = theta + step * xi
        accept = u < log_prob(prop) - log_prob(theta)
        return torch.where(accept[:, None], prop, theta)
    """,
    "the proposal noise is not scaled by the step": """
        C, d = theta.shape
        xi = torch.randn(C, d, generator=generator, dtype=theta.dtype)
        u = torch.rand(C, generator=generator, dtype=theta.dtype)
        prop = theta + xi
        accept = u.log() < log_prob(prop) - log_prob(theta)
        return torch.where(accept[:, None], prop, theta)
    """,
}


def test_gaussian_targets(rwm_step):
    """Many chains on standard and correlated Gaussian targets."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import mcmc

    def reference(log_prob, theta, step, generator):
        return mcmc.random_walk_metropolis(log_prob, theta, step=step, n_steps=1,
                                           generator=generator).samples[0]

    def standard_normal(th):
        return -0.5 * (th**2).sum(1)

    prec = torch.tensor([[2.0, 1.8], [1.8, 2.0]], dtype=torch.float64)

    def correlated_normal(th):
        return -0.5 * ((th @ prec) * th).sum(1)

    gen = torch.Generator().manual_seed(0)
    theta3 = torch.randn(200, 3, generator=gen, dtype=torch.float64)
    theta2 = torch.randn(200, 2, generator=gen, dtype=torch.float64)
    cases = {
        "N(0, I) in d = 3, 200 chains, s = 1": (
            standard_normal, theta3, 1.0, torch.Generator().manual_seed(1)),
        "a correlated Gaussian in d = 2, 200 chains, s = 0.5": (
            correlated_normal, theta2, 0.5, torch.Generator().manual_seed(2)),
    }
    grading.agree(rwm_step, reference, cases)


def test_hidden_edge_cases(rwm_step):
    """One chain, d = 1, a huge step (almost all rejected), a flat target."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import mcmc

    def reference(log_prob, theta, step, generator):
        return mcmc.random_walk_metropolis(log_prob, theta, step=step, n_steps=1,
                                           generator=generator).samples[0]

    def standard_normal(th):
        return -0.5 * (th**2).sum(1)

    def flat(th):
        return torch.zeros(th.shape[0], dtype=th.dtype)

    def g(k):
        return torch.Generator().manual_seed(k)

    gen = torch.Generator().manual_seed(3)
    theta = torch.randn(300, 2, generator=gen, dtype=torch.float64)
    cases = {
        "a single chain in d = 2": (standard_normal, theta[:1], 0.7, g(4)),
        "d = 1, 300 chains": (standard_normal, theta[:, :1], 2.0, g(5)),
        "a huge step, s = 50": (standard_normal, theta, 50.0, g(6)),
        "a flat target: every proposal is accepted": (flat, theta, 0.3, g(7)),
    }
    grading.agree(rwm_step, reference, cases)
