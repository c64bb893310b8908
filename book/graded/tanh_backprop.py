"""Tests of the graded exercise `tanh_backprop` (Section 3.1): the delta recursion of a
tanh MLP, batched."""

WRONG = {
    "the input X is gated by tanh' too": """
        hs = [X, *hidden]
        grads, delta = [None] * len(params), delta_out
        for l in range(len(params) - 1, -1, -1):
            W = params[l][0]
            grads[l] = (delta.T @ hs[l], delta.sum(0))
            delta = (delta @ W) * (1 - hs[l] ** 2)
        return grads, delta
    """,
    "dW is transposed, h^T delta instead of delta^T h": """
        hs = [X, *hidden]
        grads, delta = [None] * len(params), delta_out
        for l in range(len(params) - 1, -1, -1):
            W = params[l][0]
            grads[l] = (hs[l].T @ delta, delta.sum(0))
            delta = delta @ W
            if l > 0:
                delta = delta * (1 - hs[l] ** 2)
        return grads, delta
    """,
    "the gradients are averaged over the batch instead of summed": """
        hs = [X, *hidden]
        n = X.shape[0]
        grads, delta = [None] * len(params), delta_out
        for l in range(len(params) - 1, -1, -1):
            W = params[l][0]
            grads[l] = (delta.T @ hs[l] / n, delta.mean(0))
            delta = delta @ W
            if l > 0:
                delta = delta * (1 - hs[l] ** 2)
        return grads, delta
    """,
}


def test_random_networks(tanh_backprop):
    """Random tanh MLPs of two and three layers on small batches."""
    import math

    import torch

    from flt_lib import autodiff, grading
    from flt_lib.feedforward import mlp

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for sizes, n in (([3, 6, 2], 5), ([4, 8, 8, 3], 7)):
        ps = [(torch.randn(m, k, generator=gen, dtype=torch.float64) / math.sqrt(k),
               torch.randn(m, generator=gen, dtype=torch.float64))
              for k, m in zip(sizes[:-1], sizes[1:])]
        X = torch.randn(n, sizes[0], generator=gen, dtype=torch.float64)
        d_out = torch.randn(n, sizes[-1], generator=gen, dtype=torch.float64)
        hidden = mlp.hidden_activations(ps, X)
        cases[f"sizes {sizes}, batch {n}"] = (ps, X, hidden, d_out)
    grading.agree(tanh_backprop, autodiff.backprop, cases)


def test_hidden_edge_cases(tanh_backprop):
    """One linear layer (nothing to gate), one example, a zero error, a deep net."""
    import math

    import torch

    from flt_lib import autodiff, grading
    from flt_lib.feedforward import mlp

    gen = torch.Generator().manual_seed(1)

    def net(sizes, n, zero=False):
        ps = [(torch.randn(m, k, generator=gen, dtype=torch.float64) / math.sqrt(k),
               torch.randn(m, generator=gen, dtype=torch.float64))
              for k, m in zip(sizes[:-1], sizes[1:])]
        X = torch.randn(n, sizes[0], generator=gen, dtype=torch.float64)
        d_out = torch.randn(n, sizes[-1], generator=gen, dtype=torch.float64)
        return ps, X, mlp.hidden_activations(ps, X), 0 * d_out if zero else d_out

    cases = {
        "one linear layer, sizes [5, 2]": net([5, 2], 4),
        "a batch of one example, sizes [3, 4, 1]": net([3, 4, 1], 1),
        "a zero output error": net([2, 3, 2], 3, zero=True),
        "five layers of width 4": net([4, 4, 4, 4, 4, 4], 6),
    }
    grading.agree(tanh_backprop, autodiff.backprop, cases)
