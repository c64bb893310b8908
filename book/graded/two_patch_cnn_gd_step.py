"""Tests of the graded exercise `two_patch_cnn_gd_step` (Section 7.5): one gradient step
of the two-layer ReLU CNN on two-patch data."""

WRONG = {
    "the signal patch taken as mu, not y_clean mu": """
        j = torch.tensor([1.0, -1.0], dtype=W.dtype)[:, None, None]
        s = (W @ mu)[:, :, None] * torch.ones_like(y_clean)
        v = W @ xi.T
        f = (j * (torch.relu(s) + torch.relu(v))).sum(dim=(0, 1)) / W.shape[1]
        g = -torch.sigmoid(-y * f) * y / y.shape[0]
        coef_mu = (g * (s > 0)).sum(-1)
        grad = j / W.shape[1] * (coef_mu[..., None] * mu + (g * (v > 0)) @ xi)
        return W - lr * grad
    """,
    "the second-layer sign j dropped from the gradient": """
        j = torch.tensor([1.0, -1.0], dtype=W.dtype)[:, None, None]
        s = (W @ mu)[:, :, None] * y_clean
        v = W @ xi.T
        f = (j * (torch.relu(s) + torch.relu(v))).sum(dim=(0, 1)) / W.shape[1]
        g = -torch.sigmoid(-y * f) * y / y.shape[0]
        coef_mu = (g * (s > 0) * y_clean).sum(-1)
        grad = 1 / W.shape[1] * (coef_mu[..., None] * mu + (g * (v > 0)) @ xi)
        return W - lr * grad
    """,
    "the clean label in the loss instead of the observed one": """
        j = torch.tensor([1.0, -1.0], dtype=W.dtype)[:, None, None]
        s = (W @ mu)[:, :, None] * y_clean
        v = W @ xi.T
        f = (j * (torch.relu(s) + torch.relu(v))).sum(dim=(0, 1)) / W.shape[1]
        g = -torch.sigmoid(-y_clean * f) * y_clean / y.shape[0]
        coef_mu = (g * (s > 0) * y_clean).sum(-1)
        grad = j / W.shape[1] * (coef_mu[..., None] * mu + (g * (v > 0)) @ xi)
        return W - lr * grad
    """,
}


def test_two_patch_data(two_patch_cnn_gd_step):
    """Two-patch data with flipped labels, filters at a few scales."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import benign_cnn

    def reference(W, mu, xi, y, y_clean, lr):
        data = benign_cnn.TwoPatchData(xi=xi[None], y_clean=y_clean[None], y=y[None])
        return benign_cnn.cnn_gd_step(W[None], mu[None], data, lr=lr)[0]

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n, m, d, scale in ((10, 5, 20, 0.01), (20, 8, 30, 0.3), (6, 3, 12, 1.0)):
        mu = torch.zeros(1, d, dtype=torch.float64)
        mu[0, 0] = 2.0
        data = benign_cnn.sample_two_patch(
            n, mu, sigma_p=1.0, flip_prob=0.2, generator=gen
        )
        W = scale * torch.randn(2, m, d, generator=gen, dtype=torch.float64)
        cases[f"n = {n}, m = {m}, d = {d}, filters of scale {scale}"] = (
            W, mu[0], data.xi[0], data.y[0], data.y_clean[0], 2.0)
    grading.agree(two_patch_cnn_gd_step, reference, cases, atol=1e-10, rtol=1e-8)


def test_hidden_edge_cases(two_patch_cnn_gd_step):
    """One filter per class, one example, a flipped label, a random mu and labels."""
    import torch

    from flt_lib import grading
    from flt_lib.flt import benign_cnn

    def reference(W, mu, xi, y, y_clean, lr):
        data = benign_cnn.TwoPatchData(xi=xi[None], y_clean=y_clean[None], y=y[None])
        return benign_cnn.cnn_gd_step(W[None], mu[None], data, lr=lr)[0]

    gen = torch.Generator().manual_seed(1)

    def randn(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    one = torch.ones(1, dtype=torch.float64)
    cases = {
        "one filter per class (m = 1)": (
            randn(2, 1, 8), randn(8), randn(5, 8), -one.repeat(5), one.repeat(5), 1.0),
        "one example, its label flipped": (
            randn(2, 4, 6), randn(6), randn(1, 6), -one, one, 0.5),
        "y_clean = -1 for every example": (
            randn(2, 3, 5), randn(5), randn(4, 5), -one.repeat(4), -one.repeat(4), 1.0),
        "random labels, lr = 0.1": (
            randn(2, 6, 10), randn(10), randn(7, 10), randn(7).sign(), randn(7).sign(),
            0.1),
    }
    grading.agree(two_patch_cnn_gd_step, reference, cases, atol=1e-10, rtol=1e-8)
