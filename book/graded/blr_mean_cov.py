"""Tests of the graded exercise `blr_mean_cov` (Appendix A.1): the posterior of Bayesian
linear regression."""

WRONG = {
    "the mean is not divided by the noise variance": """
        eye = torch.eye(X.shape[1], dtype=X.dtype)
        Sigma = torch.linalg.inv(X.T @ X / noise_var + eye / prior_var)
        return Sigma @ X.T @ y, Sigma
    """,
    "the prior precision is the prior variance": """
        eye = torch.eye(X.shape[1], dtype=X.dtype)
        Sigma = torch.linalg.inv(X.T @ X / noise_var + eye * prior_var)
        return Sigma @ X.T @ y / noise_var, Sigma
    """,
    "the Gram matrix X X^T instead of X^T X": """
        Sigma = torch.linalg.inv(X @ X.T / noise_var + 1 / prior_var)
        return X.T @ Sigma @ y / noise_var, Sigma
    """,
}


def test_random_designs(blr_mean_cov):
    """Random designs and targets, several prior and noise variances."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import linear

    def reference(X, y, prior_var, noise_var):
        post = linear.blr_posterior(X, y, prior_var=prior_var, noise_var=noise_var)
        return post.mean, post.cov

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n, d, s2, g2 in ((20, 3, 1.0, 0.1), (8, 4, 4.0, 1.0), (50, 2, 0.5, 0.05)):
        X = torch.randn(n, d, generator=gen, dtype=torch.float64)
        y = torch.randn(n, generator=gen, dtype=torch.float64)
        cases[f"n = {n}, d = {d}, prior {s2}, noise {g2}"] = (X, y, s2, g2)
    grading.agree(blr_mean_cov, reference, cases)


def test_hidden_edge_cases(blr_mean_cov):
    """One example, d = 1, more weights than examples, zero targets."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import linear

    def reference(X, y, prior_var, noise_var):
        post = linear.blr_posterior(X, y, prior_var=prior_var, noise_var=noise_var)
        return post.mean, post.cov

    gen = torch.Generator().manual_seed(1)
    X = torch.randn(6, 9, generator=gen, dtype=torch.float64)
    y = torch.randn(6, generator=gen, dtype=torch.float64)
    cases = {
        "a single example, d = 3": (X[:1, :3], y[:1], 1.0, 0.2),
        "d = 1": (X[:, :1], y, 3.0, 0.5),
        "n = 6 < d = 9": (X, y, 1.0, 0.1),
        "zero targets (the mean is 0)": (X[:, :4], 0 * y, 2.0, 0.3),
    }
    grading.agree(blr_mean_cov, reference, cases)
