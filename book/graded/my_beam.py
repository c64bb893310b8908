"""Tests of the graded exercise `my_beam` (Section 4.8): beam search with the early
stopping rule and no length penalty."""

WRONG = {
    "the score of a prefix is its last token's log-probability only": """
        for _ in range(max_len):
            cands = []
            for toks, lp in alive:
                logq = step(torch.tensor([(bos, *toks)]))[0].double()
                cands += [((*toks, v), logq[v].item()) for v in range(len(logq))]
            cands.sort(key=lambda c: -c[1])
            alive = []
            for toks, lp in cands[:beam]:
                (done if toks[-1] == eos else alive).append((toks, lp))
            if not alive or (done and max(d[1] for d in done) >= alive[0][1]):
                break
        return max(done, key=lambda d: d[1]) if done else alive[0]
    """,
    "the first hypothesis to finish is returned, not the best": """
        for _ in range(max_len):
            cands = []
            for toks, lp in alive:
                logq = step(torch.tensor([(bos, *toks)]))[0].double()
                cands += [((*toks, v), lp + logq[v].item()) for v in range(len(logq))]
            cands.sort(key=lambda c: -c[1])
            alive = []
            for toks, lp in cands[:beam]:
                (done if toks[-1] == eos else alive).append((toks, lp))
            if done:
                return done[0]
            if not alive:
                break
        return alive[0]
    """,
    "the beam keeps the best `beam` alive prefixes, finished ones take no slot": """
        for _ in range(max_len):
            cands = []
            for toks, lp in alive:
                logq = step(torch.tensor([(bos, *toks)]))[0].double()
                cands += [((*toks, v), lp + logq[v].item()) for v in range(len(logq))]
            cands.sort(key=lambda c: -c[1])
            done += [c for c in cands if c[0][-1] == eos]
            alive = [c for c in cands if c[0][-1] != eos][:beam]
            if not alive or (done and max(d[1] for d in done) >= alive[0][1]):
                break
        return max(done, key=lambda d: d[1]) if done else alive[0]
    """,
}


def test_random_table_models(my_beam):
    """Random "table" models: the next-token law depends on the last token only."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import decoding

    def reference(step, beam, bos, eos, max_len):
        best = decoding.beam_search(
            step, beam=beam, bos=bos, eos=eos, max_len=max_len)[0]
        return best.tokens, best.log_prob

    cases = {}
    for seed in range(5):
        gen = torch.Generator().manual_seed(seed)
        table = torch.log_softmax(
            2 * torch.randn(5, 5, generator=gen, dtype=torch.float64), dim=-1)
        for k in (1, 2, 3, 4):
            cases[f"table model {seed} (5 tokens, bos 0, eos 4), beam {k}"] = (
                lambda x, table=table: table[x[:, -1]], k, 0, 4, 8)
    grading.agree(my_beam, reference, cases)


def test_hidden_edge_cases(my_beam):
    """max_len = 1, a beam wider than the vocabulary, eos certain, eos never chosen."""
    import math

    import torch

    from flt_lib import grading
    from flt_lib.recurrent import decoding

    def reference(step, beam, bos, eos, max_len):
        best = decoding.beam_search(
            step, beam=beam, bos=bos, eos=eos, max_len=max_len)[0]
        return best.tokens, best.log_prob

    gen = torch.Generator().manual_seed(10)
    table = torch.log_softmax(
        2 * torch.randn(4, 4, generator=gen, dtype=torch.float64), dim=-1)
    certain = torch.full((3, 3), -math.inf, dtype=torch.float64)
    certain[:, 2] = 0.0                             # eos (token 2) with probability 1
    rare = torch.log(torch.tensor([[0.5, 0.49, 0.01]] * 3, dtype=torch.float64))
    cases = {
        "max_len = 1": (lambda x: table[x[:, -1]], 2, 0, 3, 1),
        "a beam of 10 over 4 tokens": (lambda x: table[x[:, -1]], 10, 0, 3, 6),
        "eos has probability 1": (lambda x: certain[x[:, -1]], 3, 0, 2, 5),
        "eos rare: nothing finishes within max_len = 3": (
            lambda x: rare[x[:, -1]], 2, 0, 2, 3),
    }
    grading.agree(my_beam, reference, cases)
