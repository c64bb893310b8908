"""Tests of the graded exercise `leapfrog_trajectory` (Appendix A.3): leapfrog steps of
Hamiltonian dynamics."""

WRONG = {
    "a full first momentum step instead of a half step": """
        p = p + step * grad_log_prob(theta)
        for i in range(n_steps):
            theta = theta + step * p
            kick = step if i < n_steps - 1 else 0.5 * step
            p = p + kick * grad_log_prob(theta)
        return theta, p
    """,
    "explicit Euler: both variables updated from the old state": """
        for _ in range(n_steps):
            theta, p = theta + step * p, p + step * grad_log_prob(theta)
        return theta, p
    """,
    "the kicks go uphill (p - eta/2 grad log pi)": """
        for _ in range(n_steps):
            p = p - 0.5 * step * grad_log_prob(theta)
            theta = theta + step * p
            p = p - 0.5 * step * grad_log_prob(theta)
        return theta, p
    """,
}


def test_gaussian_and_quartic(leapfrog_trajectory):
    """A correlated Gaussian and a quartic potential, several step sizes and lengths."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import hmc

    def reference(grad_log_prob, theta, p, step, n_steps):
        return hmc.leapfrog(grad_log_prob, theta, p, step=step, n_steps=n_steps)

    prec = torch.tensor([[2.0, 0.9], [0.9, 1.0]], dtype=torch.float64)

    def grad_gaussian(th):
        return -th @ prec

    def grad_quartic(th):  # log pi = -sum theta^4 / 4
        return -th**3

    gen = torch.Generator().manual_seed(0)
    theta, p = torch.randn(2, 10, 2, generator=gen, dtype=torch.float64)
    cases = {
        "a correlated Gaussian, eta = 0.2, L = 10": (grad_gaussian, theta, p, 0.2, 10),
        "a quartic potential, eta = 0.1, L = 25": (grad_quartic, theta, p, 0.1, 25),
    }
    grading.agree(leapfrog_trajectory, reference, cases)


def test_hidden_edge_cases(leapfrog_trajectory):
    """A single step, one chain, d = 1, zero momentum, a flat target."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import hmc

    def reference(grad_log_prob, theta, p, step, n_steps):
        return hmc.leapfrog(grad_log_prob, theta, p, step=step, n_steps=n_steps)

    def grad_normal(th):
        return -th

    def grad_flat(th):
        return torch.zeros_like(th)

    gen = torch.Generator().manual_seed(1)
    theta, p = torch.randn(2, 5, 3, generator=gen, dtype=torch.float64)
    cases = {
        "a single leapfrog step, L = 1": (grad_normal, theta, p, 0.5, 1),
        "one chain": (grad_normal, theta[:1], p[:1], 0.3, 4),
        "d = 1": (grad_normal, theta[:, :1], p[:, :1], 0.3, 6),
        "zero momentum": (grad_normal, theta, 0 * p, 0.2, 3),
        "a flat target: straight lines": (grad_flat, theta, p, 0.7, 5),
    }
    grading.agree(leapfrog_trajectory, reference, cases)
