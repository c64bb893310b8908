"""Tests of the graded exercise `hillis_steele_scan` (Section 4.4): the states of a
diagonal linear recurrence by Hillis and Steele's doubling scan."""

WRONG = {
    "A is updated before U in the same round": """
        A, U, d = a, u, 1
        while d < u.shape[-2]:
            A = torch.cat([A[..., :d, :], A[..., d:, :] * A[..., :-d, :]], dim=-2)
            U = torch.cat(
                [U[..., :d, :], A[..., d:, :] * U[..., :-d, :] + U[..., d:, :]], dim=-2)
            d *= 2
        return U
    """,
    "the two steps composed in the wrong order (A_{t-d} U_t + U_{t-d})": """
        A, U, d = a, u, 1
        while d < u.shape[-2]:
            U = torch.cat(
                [U[..., :d, :], A[..., :-d, :] * U[..., d:, :] + U[..., :-d, :]],
                dim=-2)
            A = torch.cat([A[..., :d, :], A[..., d:, :] * A[..., :-d, :]], dim=-2)
            d *= 2
        return U
    """,
    "the offset grows by one instead of doubling": """
        A, U, d = a, u, 1
        while d < u.shape[-2]:
            U = torch.cat(
                [U[..., :d, :], A[..., d:, :] * U[..., :-d, :] + U[..., d:, :]], dim=-2)
            A = torch.cat([A[..., :d, :], A[..., d:, :] * A[..., :-d, :]], dim=-2)
            d += 1
        return U
    """,
}


def test_random_recurrences(hillis_steele_scan):
    """Random decays in (0.5, 1) and inputs, T a power of two and not."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import linear

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"T = {T}, N = {N}": (
            0.5 + 0.5 * torch.rand(T, N, generator=gen, dtype=torch.float64),
            torch.randn(T, N, generator=gen, dtype=torch.float64),
        )
        for T, N in ((16, 8), (100, 3))
    }
    grading.agree(hillis_steele_scan, linear.scan_loop, cases)


def test_hidden_edge_cases(hillis_steele_scan):
    """T = 1, T = 5, batch dimensions, N = 1, and decays of zero and above one."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import linear

    gen = torch.Generator().manual_seed(1)

    def draw(*shape):
        return (torch.rand(*shape, generator=gen, dtype=torch.float64),
                torch.randn(*shape, generator=gen, dtype=torch.float64))

    a_zero, u_zero = draw(9, 2)
    a_zero[4] = 0.0                                  # the state is reset at step 5
    cases = {
        "T = 1: z_1 = u_1": draw(1, 4),
        "T = 5, not a power of two": draw(5, 3),
        "batch dimensions (2, 3), T = 7, N = 4": draw(2, 3, 7, 4),
        "N = 1, T = 33": draw(33, 1),
        "a zero decay at t = 5": (a_zero, u_zero),
        "decays above one (a growing state)": (
            1 + torch.rand(12, 2, generator=gen, dtype=torch.float64),
            torch.randn(12, 2, generator=gen, dtype=torch.float64)),
    }
    grading.agree(hillis_steele_scan, linear.scan_loop, cases)
