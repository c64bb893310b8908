"""Tests of the graded exercise `adam_update` (Section 3.3): one Adam step with bias
correction."""

WRONG = {
    "no bias correction": """
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        return x - lr * m / (v.sqrt() + eps), m, v
    """,
    "eps inside the square root": """
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g**2
        m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
        return x - lr * m_hat / (v_hat + eps).sqrt(), m, v
    """,
    "the moments are decayed on the wrong side (beta * g)": """
        m = (1 - beta1) * m + beta1 * g
        v = (1 - beta2) * v + beta2 * g**2
        m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
        return x - lr * m_hat / (v_hat.sqrt() + eps), m, v
    """,
}


def test_random_steps(adam_update):
    """The first step from zero moments, and later steps, for two eps."""
    import torch

    from flt_lib import grading
    from flt_lib.optim import adaptive

    def reference(x, g, m, v, t, lr, beta1, beta2, eps):
        config = adaptive.AdamConfig(lr=lr, betas=(beta1, beta2), eps=eps)
        x_new, s = adaptive.adam_step(x, g, adaptive.AdamState(t - 1, m, v), config)
        return x_new, s.m, s.v

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for t, eps in ((1, 1e-8), (3, 1e-8), (10, 0.1)):
        x, g, m = torch.randn(3, 6, generator=gen, dtype=torch.float64)
        v = torch.rand(6, generator=gen, dtype=torch.float64)
        if t == 1:
            m, v = 0 * m, 0 * v
        cases[f"d = 6, t = {t}, eps = {eps}"] = (x, g, m, v, t, 0.1, 0.9, 0.999, eps)
    grading.agree(adam_update, reference, cases)


def test_hidden_edge_cases(adam_update):
    """A zero gradient, d = 1, tiny gradients, a matrix of parameters, beta1 = 0."""
    import torch

    from flt_lib import grading
    from flt_lib.optim import adaptive

    def reference(x, g, m, v, t, lr, beta1, beta2, eps):
        config = adaptive.AdamConfig(lr=lr, betas=(beta1, beta2), eps=eps)
        x_new, s = adaptive.adam_step(x, g, adaptive.AdamState(t - 1, m, v), config)
        return x_new, s.m, s.v

    gen = torch.Generator().manual_seed(1)
    x, m = torch.randn(2, 4, generator=gen, dtype=torch.float64)
    v = torch.rand(4, generator=gen, dtype=torch.float64)
    W, G = torch.randn(2, 3, 5, generator=gen, dtype=torch.float64)
    one = torch.ones(1, dtype=torch.float64)
    cases = {
        "a zero gradient at t = 5": (x, 0 * x, m, v, 5, 0.1, 0.9, 0.999, 1e-8),
        "d = 1, first step": (one, 2 * one, 0 * one, 0 * one, 1, 0.5, 0.9, 0.999, 1e-8),
        "gradients of size 1e-7, first step, eps = 1e-6": (
            x, 1e-7 * m, 0 * x, 0 * x, 1, 1.0, 0.9, 0.999, 1e-6),
        "parameters of shape (3, 5), t = 2": (
            W, G, 0.1 * G, G**2, 2, 0.01, 0.8, 0.9, 1e-8),
        "beta1 = 0 (RMSProp with bias correction), t = 4": (
            x, m, 0 * x, v, 4, 0.1, 0.0, 0.99, 1e-8),
    }
    grading.agree(adam_update, reference, cases)
