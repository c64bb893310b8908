"""Tests of the graded exercise `residual_stack_forward` (Section 2.3): a stack of
residual layers with identity shortcuts."""

WRONG = {
    "phi(0) is not subtracted": """
        phi = mlp.activation_fn(activation)
        h = x
        for W, b in layers:
            h = h + phi(h @ W.T + b)
        return h
    """,
    "the activation is applied after the sum": """
        phi = mlp.activation_fn(activation)
        phi0 = phi(torch.zeros((), dtype=x.dtype))
        h = x
        for W, b in layers:
            h = phi(h + h @ W.T + b) - phi0
        return h
    """,
    "W is applied without its transpose": """
        phi = mlp.activation_fn(activation)
        phi0 = phi(torch.zeros((), dtype=x.dtype))
        h = x
        for W, b in layers:
            h = h + phi(h @ W + b) - phi0
        return h
    """,
}


def test_random_stacks(residual_stack_forward):
    """Random stacks of 1 to 4 layers for each activation."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import mlp

    def reference(x, layers, activation):
        for W, b in layers:
            x = mlp.residual_layer(x, W, b, activation=activation)
        return x

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for activation, depth, n, m in [("relu", 3, 6, 4), ("tanh", 4, 5, 3),
                                    ("sigmoid", 2, 7, 5), ("sigmoid", 1, 3, 2)]:
        x = torch.randn(n, m, generator=gen, dtype=torch.float64)
        layers = [(torch.randn(m, m, generator=gen, dtype=torch.float64) / m**0.5,
                   torch.randn(m, generator=gen, dtype=torch.float64))
                  for _ in range(depth)]
        cases[f"{depth} {activation} layers of width {m}, {n} inputs"] = (
            x, layers, activation)
    grading.agree(residual_stack_forward, reference, cases)


def test_hidden_edge_cases(residual_stack_forward):
    """Zero weights (the identity), width 1, and an empty stack."""
    import torch

    from flt_lib import grading
    from flt_lib.feedforward import mlp

    def reference(x, layers, activation):
        for W, b in layers:
            x = mlp.residual_layer(x, W, b, activation=activation)
        return x

    gen = torch.Generator().manual_seed(1)
    f64 = dict(dtype=torch.float64)
    x = torch.randn(4, 3, generator=gen, **f64)
    zero = (torch.zeros(3, 3, **f64), torch.zeros(3, **f64))
    cases = {
        "zero sigmoid layers are the identity": (x, [zero, zero], "sigmoid"),
        "width 1, two tanh layers": (
            torch.randn(5, 1, generator=gen, **f64),
            [(torch.tensor([[2.0]], **f64), torch.tensor([-0.5], **f64))] * 2, "tanh"),
        "no layer at all": (x, [], "relu"),
        "one sigmoid layer with a large bias": (
            x, [(torch.randn(3, 3, generator=gen, **f64), 5 * torch.ones(3, **f64))],
            "sigmoid"),
    }
    grading.agree(residual_stack_forward, reference, cases)
