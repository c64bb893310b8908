"""Tests of the graded exercise `gp_mean_cov` (Appendix A.5): the GP regression
posterior."""

WRONG = {
    "the noise is left out of the inverse": """
        V = torch.linalg.solve(K_train, K_cross.T)
        return K_cross @ torch.linalg.solve(K_train, y), K_test - K_cross @ V
    """,
    "the noise is added to K_test as well (the law of y*, not of f*)": """
        n, m = K_train.shape[0], K_test.shape[0]
        A = K_train + noise_var * torch.eye(n, dtype=K_train.dtype)
        cov = K_test + noise_var * torch.eye(m, dtype=K_test.dtype)
        cov = cov - K_cross @ torch.linalg.solve(A, K_cross.T)
        return K_cross @ torch.linalg.solve(A, y), cov
    """,
    "the data term is added to the covariance": """
        n = K_train.shape[0]
        A = K_train + noise_var * torch.eye(n, dtype=K_train.dtype)
        cov = K_test + K_cross @ torch.linalg.solve(A, K_cross.T)
        return K_cross @ torch.linalg.solve(A, y), cov
    """,
}


def test_rbf_problems(gp_mean_cov):
    """RBF kernels on random inputs in one and two dimensions."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import gp

    def reference(K_train, y, K_cross, K_test, noise_var):
        post = gp.gp_posterior(K_train, y, K_cross, K_test, noise_var=noise_var)
        return post.mean, post.cov

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n, m, d, s2 in ((10, 4, 1, 0.1), (15, 6, 2, 0.01)):
        x = torch.rand(n, d, generator=gen, dtype=torch.float64)
        xs = torch.rand(m, d, generator=gen, dtype=torch.float64)
        y = torch.randn(n, generator=gen, dtype=torch.float64)
        K, Ks, Kss = (gp.rbf_kernel(a, b, lengthscale=0.5)
                      for a, b in ((x, x), (xs, x), (xs, xs)))
        cases[f"RBF, n = {n}, m = {m}, d = {d}, noise {s2}"] = (K, y, Ks, Kss, s2)
    grading.agree(gp_mean_cov, reference, cases)


def test_hidden_edge_cases(gp_mean_cov):
    """One training point, one test point, a linear kernel, zero targets."""
    import torch

    from flt_lib import grading
    from flt_lib.bayes import gp

    def reference(K_train, y, K_cross, K_test, noise_var):
        post = gp.gp_posterior(K_train, y, K_cross, K_test, noise_var=noise_var)
        return post.mean, post.cov

    gen = torch.Generator().manual_seed(1)
    x = torch.randn(8, 3, generator=gen, dtype=torch.float64)
    xs = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    y = torch.randn(8, generator=gen, dtype=torch.float64)

    def k(a, b):
        return 1.0 + a @ b.T  # a linear kernel with a bias

    cases = {
        "a single training point": (
            k(x[:1], x[:1]), y[:1], k(xs, x[:1]), k(xs, xs), 0.5),
        "a single test point": (k(x, x), y, k(xs[:1], x), k(xs[:1], xs[:1]), 0.2),
        "zero targets: the mean is 0": (k(x, x), 0 * y, k(xs, x), k(xs, xs), 0.1),
        "large noise, 100": (k(x, x), y, k(xs, x), k(xs, xs), 100.0),
    }
    grading.agree(gp_mean_cov, reference, cases)
