"""Tests of the graded exercise `bert_corrupt` (Section 5.6): BERT's 15% selection and
80-10-10 corruption, from the draws u, r and the replacement symbols of a generator."""

WRONG = {
    "80% of all positions become [MASK], not 80% of the selected ones": """
        u = torch.rand(tokens.shape, generator=generator)
        r = torch.rand(tokens.shape, generator=generator)
        replacement = torch.randint(0, vocab, tokens.shape, generator=generator)
        selected = u < 0.15
        masked = r < 0.8
        randomised = selected & (r >= 0.8) & (r < 0.9)
        swapped = torch.where(randomised, replacement, tokens)
        inputs = torch.where(masked, vocab, swapped)
        return inputs, torch.where(selected, tokens, bert.IGNORE)
    """,
    "every position gets a label, not only the selected ones": """
        u = torch.rand(tokens.shape, generator=generator)
        r = torch.rand(tokens.shape, generator=generator)
        replacement = torch.randint(0, vocab, tokens.shape, generator=generator)
        selected = u < 0.15
        masked = selected & (r < 0.8)
        randomised = selected & (r >= 0.8) & (r < 0.9)
        swapped = torch.where(randomised, replacement, tokens)
        inputs = torch.where(masked, vocab, swapped)
        return inputs, tokens.clone()
    """,
    "the labels are the corrupted ids, not the original ones": """
        u = torch.rand(tokens.shape, generator=generator)
        r = torch.rand(tokens.shape, generator=generator)
        replacement = torch.randint(0, vocab, tokens.shape, generator=generator)
        selected = u < 0.15
        masked = selected & (r < 0.8)
        randomised = selected & (r >= 0.8) & (r < 0.9)
        swapped = torch.where(randomised, replacement, tokens)
        inputs = torch.where(masked, vocab, swapped)
        return inputs, torch.where(selected, inputs, bert.IGNORE)
    """,
}


def test_random_batches(bert_corrupt):
    """Random batches of a few sizes and vocabularies."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import bert

    def book_rule(tokens, vocab, generator):
        m = bert.mask_tokens(tokens, bert.MaskingRule(), vocab=vocab,
                             generator=generator)
        return m.inputs, m.labels

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"{B} x {T} tokens, vocab = {V}": (
            torch.randint(0, V, (B, T), generator=gen), V,
            torch.Generator().manual_seed(10 + B))
        for B, T, V in ((40, 16, 12), (8, 50, 5))
    }
    grading.agree(bert_corrupt, book_rule, cases)


def test_hidden_edge_cases(bert_corrupt):
    """One position, a vocabulary of one symbol, one long sequence, a large batch."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import bert

    def book_rule(tokens, vocab, generator):
        m = bert.mask_tokens(tokens, bert.MaskingRule(), vocab=vocab,
                             generator=generator)
        return m.inputs, m.labels

    gen = torch.Generator().manual_seed(1)
    cases = {
        "one position (B = T = 1)": (
            torch.tensor([[3]]), 5, torch.Generator().manual_seed(4)),
        "a vocabulary of one symbol": (
            torch.zeros(20, 10, dtype=torch.long), 1, torch.Generator().manual_seed(5)),
        "one sequence of 300 tokens": (
            torch.randint(0, 30, (1, 300), generator=gen), 30,
            torch.Generator().manual_seed(6)),
        "500 x 8 tokens, vocab = 2": (
            torch.randint(0, 2, (500, 8), generator=gen), 2,
            torch.Generator().manual_seed(7)),
    }
    grading.agree(bert_corrupt, book_rule, cases)
