"""Tests of the graded exercise `viterbi_decode` (Section 4.1): the Viterbi recursion
of a chain model, with back-pointers."""

WRONG = {
    "the transition read the wrong way round (P_ji for i followed by j)": """
        delta = start + unary[0]
        back = []
        for u_t in unary[1:]:
            delta, arg = (delta[None, :] + pairwise).max(dim=1)
            delta = delta + u_t
            back.append(arg)
        score, last = delta.max(dim=0)
        path = [int(last)]
        for arg in reversed(back):
            path.append(int(arg[path[-1]]))
        return torch.tensor(path[::-1], dtype=torch.int64), score
    """,
    "greedy: the best label of each delta_t, no back-pointers": """
        delta = start + unary[0]
        path = [int(delta.argmax())]
        for u_t in unary[1:]:
            delta = (delta[:, None] + pairwise).max(dim=0).values + u_t
            path.append(int(delta.argmax()))
        return torch.tensor(path, dtype=torch.int64), delta.max()
    """,
    "the start scores are forgotten": """
        delta = unary[0].clone()
        back = []
        for u_t in unary[1:]:
            delta, arg = (delta[:, None] + pairwise).max(dim=0)
            delta = delta + u_t
            back.append(arg)
        score, last = delta.max(dim=0)
        path = [int(last)]
        for arg in reversed(back):
            path.append(int(arg[path[-1]]))
        return torch.tensor(path[::-1], dtype=torch.int64), score
    """,
}


def test_random_chains(viterbi_decode):
    """Random unary, pairwise and start scores for a few lengths and label counts."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import hmm_crf

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"n = {n} positions, L = {L} labels, random scores": (
            2 * torch.randn(n, L, generator=gen, dtype=torch.float64),
            2 * torch.randn(L, L, generator=gen, dtype=torch.float64),
            torch.randn(L, generator=gen, dtype=torch.float64),
        )
        for n, L in ((2, 2), (6, 3), (10, 5), (20, 4))
    }
    grading.agree(viterbi_decode, hmm_crf.chain_viterbi, cases)


def test_hidden_edge_cases(viterbi_decode):
    """One position, one label, forbidden transitions (-inf) and a strong start."""
    import math

    import torch

    from flt_lib import grading
    from flt_lib.recurrent import hmm_crf

    gen = torch.Generator().manual_seed(1)
    forbid = torch.randn(4, 4, generator=gen, dtype=torch.float64)
    forbid[0, 1] = forbid[2, 3] = forbid[3, 0] = -math.inf
    cases = {
        "n = 1: the best single label": (
            torch.randn(1, 4, generator=gen, dtype=torch.float64),
            torch.randn(4, 4, generator=gen, dtype=torch.float64),
            torch.randn(4, generator=gen, dtype=torch.float64),
        ),
        "L = 1: only one labelling": (
            torch.randn(5, 1, generator=gen, dtype=torch.float64),
            torch.randn(1, 1, generator=gen, dtype=torch.float64),
            torch.zeros(1, dtype=torch.float64),
        ),
        "forbidden transitions (pairwise -inf)": (
            torch.randn(7, 4, generator=gen, dtype=torch.float64), forbid,
            torch.randn(4, generator=gen, dtype=torch.float64),
        ),
        "a start score that decides the first label": (
            0.1 * torch.randn(3, 3, generator=gen, dtype=torch.float64),
            torch.tensor([[0.0, 0, 2], [3, 0, 0], [0, 1, 0]], dtype=torch.float64),
            torch.tensor([0.0, 5.0, 0.0], dtype=torch.float64),
        ),
    }
    grading.agree(viterbi_decode, hmm_crf.chain_viterbi, cases)
