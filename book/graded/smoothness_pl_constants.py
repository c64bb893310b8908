"""Tests of the graded exercise `smoothness_pl_constants` (Section 3.2): the smoothness,
strong-convexity and PL constants of a quadratic."""

WRONG = {
    "mu is the smallest eigenvalue, zeros included (strong convexity, not PL)": """
        eig = torch.linalg.eigvalsh(A)
        return eig[-1].item(), eig[0].item(), eig[0].item()
    """,
    "an absolute threshold 1e-9 for zero eigenvalues, not relative to L": """
        eig = torch.linalg.eigvalsh(A)
        return eig[-1].item(), eig[0].item(), eig[eig > 1e-9][0].item()
    """,
}


def test_random_spectra(smoothness_pl_constants):
    """Random rotations of known spectra, full rank and rank-deficient."""
    import torch

    from flt_lib import grading
    from flt_lib.optim import gd

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for eigs in ([1.0, 2.0, 5.0], [0.0, 0.0, 0.5, 3.0, 7.0], [0.1] * 3 + [4.0]):
        e = torch.tensor(eigs, dtype=torch.float64)
        A = gd.random_spectrum_quadratic(e, generator=gen).A
        cases[f"A with eigenvalues {eigs}"] = (A,)
    grading.agree(smoothness_pl_constants, gd.spectrum_constants, cases)


def test_hidden_edge_cases(smoothness_pl_constants):
    """d = 1, a rank-one matrix, a tiny scale, and a rank-deficient Gram matrix."""
    import torch

    from flt_lib import grading
    from flt_lib.optim import gd

    gen = torch.Generator().manual_seed(1)
    v = torch.randn(5, generator=gen, dtype=torch.float64)
    X = torch.randn(30, 3, generator=gen, dtype=torch.float64) @ torch.randn(
        3, 8, generator=gen, dtype=torch.float64)
    e = torch.tensor([0.0, 2e-12, 5e-12], dtype=torch.float64)
    cases = {
        "d = 1, A = [[3]]": (torch.tensor([[3.0]], dtype=torch.float64),),
        "rank one, A = v v^T with d = 5": (torch.outer(v, v),),
        "eigenvalues 0, 2e-12, 5e-12 (a tiny scale)": (
            gd.random_spectrum_quadratic(e, generator=gen).A,),
        "X^T X / n with rank 3 of 8": (X.T @ X / 30,),
    }
    grading.agree(smoothness_pl_constants, gd.spectrum_constants, cases)
