"""Tests of the graded exercise `hopfield_async_sweep` (Section 1.5): asynchronous
updates of a Hopfield network and the energy after each."""

WRONG = {
    "the local fields are computed once, before the sweep": """
        h = W @ x - theta
        x = x.clone()
        energies = []
        for i in order.tolist():
            x[i] = 1.0 if h[i] >= 0 else -1.0
            energies.append(-0.5 * x @ W @ x + theta @ x)
        return x, torch.stack(energies)
    """,
    "the energy lacks the factor 1/2": """
        x = x.clone()
        energies = []
        for i in order.tolist():
            x[i] = 1.0 if W[i] @ x - theta[i] >= 0 else -1.0
            energies.append(-x @ W @ x + theta @ x)
        return x, torch.stack(energies)
    """,
    "a zero field sends the neuron to -1": """
        x = x.clone()
        energies = []
        for i in order.tolist():
            x[i] = 1.0 if W[i] @ x - theta[i] > 0 else -1.0
            energies.append(-0.5 * x @ W @ x + theta @ x)
        return x, torch.stack(energies)
    """,
}


def test_hebbian_networks(hopfield_async_sweep):
    """Hebbian weights of random patterns, random states, two sweeps in random order."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import hopfield

    def reference(W, x, theta, order):
        energies = []
        for i in order.tolist():
            x = hopfield.async_update(W, x, i, theta)
            energies.append(hopfield.energy(W, x, theta))
        return x, torch.stack(energies)

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for n, s in [(12, 2), (30, 5)]:
        patterns = torch.randint(0, 2, (s, n), generator=gen).double() * 2 - 1
        x = torch.randint(0, 2, (n,), generator=gen).double() * 2 - 1
        order = torch.cat([torch.randperm(n, generator=gen) for _ in range(2)])
        theta = 0.3 * torch.randn(n, generator=gen, dtype=torch.float64)
        W = hopfield.hebbian_weights(patterns)
        cases[f"n = {n}, {s} patterns, thresholds 0"] = (W, x, 0 * theta, order)
        cases[f"n = {n}, {s} patterns, random thresholds"] = (W, x, theta, order)
    grading.agree(hopfield_async_sweep, reference, cases)


def test_hidden_ties_and_short_orders(hopfield_async_sweep):
    """Zero fields, a single update, repeated neurons, and a stored pattern."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import hopfield

    def reference(W, x, theta, order):
        energies = []
        for i in order.tolist():
            x = hopfield.async_update(W, x, i, theta)
            energies.append(hopfield.energy(W, x, theta))
        return x, torch.stack(energies)

    gen = torch.Generator().manual_seed(1)
    f64 = dict(dtype=torch.float64)
    patterns = torch.randint(0, 2, (3, 10), generator=gen).double() * 2 - 1
    W = hopfield.hebbian_weights(patterns)
    cases = {
        "W = 0 and theta = 0: every field is zero": (
            torch.zeros(4, 4, **f64), -torch.ones(4, **f64), torch.zeros(4, **f64),
            torch.tensor([2, 0, 3, 1])),
        "one update of neuron 5": (W, -patterns[0], torch.zeros(10, **f64),
                                   torch.tensor([5])),
        "neuron 3 updated three times": (W, -patterns[1], torch.zeros(10, **f64),
                                         torch.tensor([3, 3, 7, 3])),
        "start at a stored pattern": (W, patterns[2].clone(), torch.zeros(10, **f64),
                                      torch.randperm(10, generator=gen)),
    }
    grading.agree(hopfield_async_sweep, reference, cases)
