"""Tests of the graded exercise `permute_hidden_units` (Section 2.2): the permutation
symmetry of the units of a hidden layer."""

WRONG = {
    "the next layer's columns get the inverse permutation": """
        out = list(params)
        W, b = params[layer]
        W_next, b_next = params[layer + 1]
        out[layer] = (W[perm], b[perm])
        out[layer + 1] = (W_next[:, perm.argsort()], b_next)
        return out
    """,
    "the bias is not permuted": """
        out = list(params)
        W, b = params[layer]
        W_next, b_next = params[layer + 1]
        out[layer] = (W[perm], b)
        out[layer + 1] = (W_next[:, perm], b_next)
        return out
    """,
    "the next layer is left unchanged": """
        out = list(params)
        W, b = params[layer]
        out[layer] = (W[perm], b[perm])
        return out
    """,
}


def test_random_networks(permute_hidden_units):
    """Depth 2 and 3; each hidden layer permuted by a cycle and by a random perm."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import mlp

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for sizes in [(3, 5, 2), (2, 4, 6, 1)]:
        weights = mlp.init_mlp(list(sizes), generator=gen, dtype=torch.float64)
        params = [(W, torch.randn(W.shape[0], generator=gen, dtype=torch.float64))
                  for W, _ in weights]
        for layer in range(len(sizes) - 2):
            m = sizes[layer + 1]
            perm = torch.roll(torch.arange(m), 1)  # j -> j - 1, a cycle of length m
            cases[f"sizes {sizes}, hidden layer {layer}, a cycle"] = (
                params, layer, perm)
            perm = torch.randperm(m, generator=gen)
            cases[f"sizes {sizes}, hidden layer {layer}, {perm.tolist()}"] = (
                params, layer, perm)
    grading.agree(permute_hidden_units, mlp.permute_hidden, cases)


def test_hidden_edge_cases(permute_hidden_units):
    """The identity, a width of one, and a transposition in a deep network."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import mlp

    gen = torch.Generator().manual_seed(1)
    def network(sizes):
        """Gaussian weights and biases (init_mlp's biases are zero)."""
        return [(W, torch.randn(W.shape[0], generator=gen, dtype=torch.float64))
                for W, _ in mlp.init_mlp(sizes, generator=gen, dtype=torch.float64)]

    deep = network([2, 3, 3, 3, 2])
    cases = {
        "the identity permutation": (deep, 1, torch.arange(3)),
        "a hidden layer of width 1": (network([4, 1, 3]), 0, torch.tensor([0])),
        "swap units 0 and 2 of the last hidden layer": (
            deep, 2, torch.tensor([2, 1, 0])),
        "the cycle [1, 2, 0] in the middle layer": (deep, 1, torch.tensor([1, 2, 0])),
    }
    grading.agree(permute_hidden_units, mlp.permute_hidden, cases)
