"""Tests of the graded exercise `my_step` (Section 5.5): an encoder-decoder as the step
function of beam search, prefixes (K, t) -> next-token log-probabilities (K, V)."""

WRONG = {
    "the scores of the first position, not of the last": """
        dev = next(model.parameters()).device
        with torch.no_grad():
            memory = model.encode(src[None].to(dev))

        def step(prefixes):
            with torch.no_grad():
                out = model.decode(prefixes.to(dev),
                                   memory.expand(len(prefixes), -1, -1))
            return torch.log_softmax(out.logits[:, 0], dim=-1).cpu()

        return step
    """,
    "the logits, not the log-probabilities": """
        dev = next(model.parameters()).device
        with torch.no_grad():
            memory = model.encode(src[None].to(dev))

        def step(prefixes):
            with torch.no_grad():
                out = model.decode(prefixes.to(dev),
                                   memory.expand(len(prefixes), -1, -1))
            return out.logits[:, -1].cpu()

        return step
    """,
}


def test_random_model(my_step):
    """An untrained model (fixed seed), random sources and prefixes."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import seq2seq, seq2seq_eos

    def my_step_values(model, src, prefixes):
        return my_step(model, src)(prefixes)

    def book_step_values(model, src, prefixes):
        return seq2seq_eos.step_function(model, src)(prefixes)

    cfg = seq2seq.Seq2SeqConfig(vocab=7, d_model=16, n_heads=2, n_layers=1, d_ff=32,
                                max_len=8)
    model = seq2seq.EncoderDecoder(cfg, generator=torch.Generator().manual_seed(0))
    gen = torch.Generator().manual_seed(1)

    def prefixes(K, t):
        body = torch.randint(0, cfg.vocab, (K, t - 1), generator=gen)
        return torch.cat([torch.full((K, 1), cfg.bos), body], dim=1)

    cases = {
        f"source of length {S}, {K} prefixes of length {t}": (
            model, torch.randint(0, cfg.vocab, (S,), generator=gen), prefixes(K, t))
        for S, K, t in ((6, 3, 4), (8, 5, 2))
    }
    grading.agree(my_step_values, book_step_values, cases)


def test_hidden_edge_cases(my_step):
    """Only [BOS], one prefix, a source of one token, the longest prefix, and a deeper
    Post-LN model."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import seq2seq, seq2seq_eos

    def my_step_values(model, src, prefixes):
        return my_step(model, src)(prefixes)

    def book_step_values(model, src, prefixes):
        return seq2seq_eos.step_function(model, src)(prefixes)

    gen = torch.Generator().manual_seed(2)
    cfg = seq2seq.Seq2SeqConfig(vocab=5, d_model=8, n_heads=2, n_layers=1, d_ff=16,
                                max_len=6)
    model = seq2seq.EncoderDecoder(cfg, generator=torch.Generator().manual_seed(3))
    deep_cfg = seq2seq.Seq2SeqConfig(vocab=5, d_model=8, n_heads=1, n_layers=2,
                                     d_ff=16, max_len=6, norm="post")
    deep = seq2seq.EncoderDecoder(deep_cfg, generator=torch.Generator().manual_seed(4))

    def prefixes(K, t):
        body = torch.randint(0, cfg.vocab, (K, t - 1), generator=gen)
        return torch.cat([torch.full((K, 1), cfg.bos), body], dim=1)

    def source(S):
        return torch.randint(0, cfg.vocab, (S,), generator=gen)

    cases = {
        "prefixes that are only [BOS]": (model, source(5), prefixes(3, 1)),
        "one prefix (K = 1)": (model, source(5), prefixes(1, 4)),
        "a source of one token": (model, source(1), prefixes(2, 3)),
        "prefixes of the longest length, 6": (model, source(6), prefixes(4, 6)),
        "two Post-LN layers, one head": (deep, source(4), prefixes(3, 3)),
    }
    grading.agree(my_step_values, book_step_values, cases)
