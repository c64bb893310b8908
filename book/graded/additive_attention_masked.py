"""Tests of the graded exercise `additive_attention_masked` (Section 4.5): additive
(Bahdanau) attention over a padded batch, with a mask."""

WRONG = {
    "the mask is ignored": """
        scores = torch.tanh((s @ W_a.T).unsqueeze(1) + H @ U_a.T) @ v
        alpha = torch.softmax(scores, dim=-1)
        return (alpha.unsqueeze(-1) * H).sum(dim=1), alpha
    """,
    "padded scores set to 0 instead of -inf": """
        scores = torch.tanh((s @ W_a.T).unsqueeze(1) + H @ U_a.T) @ v
        alpha = torch.softmax(scores.masked_fill(~mask, 0.0), dim=-1)
        return (alpha.unsqueeze(-1) * H).sum(dim=1), alpha
    """,
    "the weights masked after the softmax, not renormalised": """
        scores = torch.tanh((s @ W_a.T).unsqueeze(1) + H @ U_a.T) @ v
        alpha = torch.softmax(scores, dim=-1) * mask
        return (alpha.unsqueeze(-1) * H).sum(dim=1), alpha
    """,
    "no tanh in the scoring network": """
        scores = ((s @ W_a.T).unsqueeze(1) + H @ U_a.T) @ v
        alpha = torch.softmax(scores.masked_fill(~mask, -torch.inf), dim=-1)
        return (alpha.unsqueeze(-1) * H).sum(dim=1), alpha
    """,
}


def test_padded_batches(additive_attention_masked):
    """Random annotations, each row padded after a random length."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import seq2seq

    def reference(s, H, W_a, U_a, v, mask):  # the library on each row's real positions
        context = torch.zeros(H.shape[0], H.shape[2], dtype=H.dtype)
        alpha = torch.zeros(mask.shape, dtype=H.dtype)
        for r in range(H.shape[0]):
            c_r, a_r = seq2seq.additive_attention(
                s[r:r + 1], H[r:r + 1, mask[r]], W_a, U_a, v)
            context[r], alpha[r, mask[r]] = c_r[0], a_r[0]
        return context, alpha

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for B, L, d_s, d_h, d_a in ((3, 6, 4, 5, 3), (5, 9, 2, 3, 6)):
        lengths = torch.randint(1, L + 1, (B,), generator=gen)
        cases[f"B = {B}, L = {L}, lengths {lengths.tolist()}"] = (
            torch.randn(B, d_s, generator=gen, dtype=torch.float64),
            torch.randn(B, L, d_h, generator=gen, dtype=torch.float64),
            torch.randn(d_a, d_s, generator=gen, dtype=torch.float64),
            torch.randn(d_a, d_h, generator=gen, dtype=torch.float64),
            torch.randn(d_a, generator=gen, dtype=torch.float64),
            torch.arange(L)[None, :] < lengths[:, None],
        )
    grading.agree(additive_attention_masked, reference, cases)


def test_hidden_edge_cases(additive_attention_masked):
    """One real position, no padding, a batch of one, a hole in the mask, d_a = 1."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import seq2seq

    def reference(s, H, W_a, U_a, v, mask):
        context = torch.zeros(H.shape[0], H.shape[2], dtype=H.dtype)
        alpha = torch.zeros(mask.shape, dtype=H.dtype)
        for r in range(H.shape[0]):
            c_r, a_r = seq2seq.additive_attention(
                s[r:r + 1], H[r:r + 1, mask[r]], W_a, U_a, v)
            context[r], alpha[r, mask[r]] = c_r[0], a_r[0]
        return context, alpha

    gen = torch.Generator().manual_seed(1)

    def draw(B, L, d_s, d_h, d_a, mask):
        return (
            torch.randn(B, d_s, generator=gen, dtype=torch.float64),
            torch.randn(B, L, d_h, generator=gen, dtype=torch.float64),
            torch.randn(d_a, d_s, generator=gen, dtype=torch.float64),
            torch.randn(d_a, d_h, generator=gen, dtype=torch.float64),
            torch.randn(d_a, generator=gen, dtype=torch.float64),
            mask,
        )

    cases = {
        "one real position per row": draw(
            2, 4, 3, 2, 3, torch.tensor([[True, False, False, False]] * 2)),
        "no padding at all": draw(3, 5, 2, 4, 3, torch.ones(3, 5, dtype=torch.bool)),
        "a batch of one, L = 1": draw(
            1, 1, 2, 3, 2, torch.ones(1, 1, dtype=torch.bool)),
        "a masked position in the middle": draw(
            2, 5, 3, 3, 4, torch.tensor([[True, False, True, True, False],
                                         [False, True, True, False, True]])),
        "d_a = 1": draw(
            2, 6, 3, 2, 1, torch.arange(6)[None, :] < torch.tensor([[3], [6]])),
    }
    grading.agree(additive_attention_masked, reference, cases)
