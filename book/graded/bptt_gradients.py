"""Tests of the graded exercise `bptt_gradients` (Section 4.2): the gradients of an
Elman network's read-out loss by backpropagation through time."""

WRONG = {
    "the carry skips the tanh derivative (U^T delta instead of U^T D delta)": """
        Zprev = torch.cat([torch.zeros_like(Z[:, :1]), Z[:, :-1]], dim=1)
        R = Z @ W.T - Y
        G = torch.zeros_like(Z)
        carry = torch.zeros_like(Z[:, 0])
        for t in range(Z.shape[1] - 1, -1, -1):
            delta = R[:, t] @ W + carry
            G[:, t] = (1 - Z[:, t] ** 2) * delta
            carry = delta @ U
        dU = torch.einsum("bti,btj->ij", G, Zprev)
        dV = torch.einsum("bti,btj->ij", G, x)
        dW = torch.einsum("btq,btm->qm", R, Z)
        return dU, dV, G.sum(dim=(0, 1)), dW
    """,
    "U instead of its transpose in the carry": """
        Zprev = torch.cat([torch.zeros_like(Z[:, :1]), Z[:, :-1]], dim=1)
        R = Z @ W.T - Y
        G = torch.zeros_like(Z)
        carry = torch.zeros_like(Z[:, 0])
        for t in range(Z.shape[1] - 1, -1, -1):
            delta = R[:, t] @ W + carry
            G[:, t] = (1 - Z[:, t] ** 2) * delta
            carry = G[:, t] @ U.T
        dU = torch.einsum("bti,btj->ij", G, Zprev)
        dV = torch.einsum("bti,btj->ij", G, x)
        dW = torch.einsum("btq,btm->qm", R, Z)
        return dU, dV, G.sum(dim=(0, 1)), dW
    """,
    "no carry: each loss term reaches back one step only": """
        Zprev = torch.cat([torch.zeros_like(Z[:, :1]), Z[:, :-1]], dim=1)
        R = Z @ W.T - Y
        G = (1 - Z ** 2) * (R @ W)
        dU = torch.einsum("bti,btj->ij", G, Zprev)
        dV = torch.einsum("bti,btj->ij", G, x)
        dW = torch.einsum("btq,btm->qm", R, Z)
        return dU, dV, G.sum(dim=(0, 1)), dW
    """,
    "dU pairs g_t with z_t instead of z_{t-1}": """
        R = Z @ W.T - Y
        G = torch.zeros_like(Z)
        carry = torch.zeros_like(Z[:, 0])
        for t in range(Z.shape[1] - 1, -1, -1):
            delta = R[:, t] @ W + carry
            G[:, t] = (1 - Z[:, t] ** 2) * delta
            carry = G[:, t] @ U
        dU = torch.einsum("bti,btj->ij", G, Z)
        dV = torch.einsum("bti,btj->ij", G, x)
        dW = torch.einsum("btq,btm->qm", R, Z)
        return dU, dV, G.sum(dim=(0, 1)), dW
    """,
}


def test_random_networks(bptt_gradients):
    """Random weights, inputs and targets for a few sizes."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import bptt, elman

    def reference(x, U, V, b, W, Y):
        r = bptt.bptt(x, elman.ElmanWeights(U, V, b), W, Y)
        return r.dU, r.dV, r.db, r.dW

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for B, T, n, m, q in ((2, 5, 3, 4, 2), (3, 12, 2, 6, 3)):
        w = elman.elman_init(n, m, generator=gen, gain=1.5)
        cases[f"B = {B}, T = {T}, n = {n}, m = {m}, q = {q}"] = (
            torch.randn(B, T, n, generator=gen, dtype=torch.float64), w.U, w.V, w.b,
            torch.randn(q, m, generator=gen, dtype=torch.float64),
            torch.randn(B, T, q, generator=gen, dtype=torch.float64),
        )
    grading.agree(bptt_gradients, reference, cases)


def test_hidden_edge_cases(bptt_gradients):
    """T = 1 (no carry), one sequence, one state unit and one output."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import bptt, elman

    def reference(x, U, V, b, W, Y):
        r = bptt.bptt(x, elman.ElmanWeights(U, V, b), W, Y)
        return r.dU, r.dV, r.db, r.dW

    gen = torch.Generator().manual_seed(1)
    cases = {}
    for what, (B, T, n, m, q) in {
        "T = 1: one step, nothing to carry": (2, 1, 3, 4, 2),
        "a batch of one sequence": (1, 8, 2, 3, 1),
        "m = 1: one state unit": (3, 6, 2, 1, 2),
    }.items():
        w = elman.elman_init(n, m, generator=gen, gain=2.0)
        cases[what] = (
            torch.randn(B, T, n, generator=gen, dtype=torch.float64), w.U, w.V, w.b,
            torch.randn(q, m, generator=gen, dtype=torch.float64),
            torch.randn(B, T, q, generator=gen, dtype=torch.float64),
        )
    grading.agree(bptt_gradients, reference, cases)
