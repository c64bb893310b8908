"""Tests of the graded exercise `linear_attention_rnn` (Section 4.6): causal linear
attention computed as a recurrence."""

WRONG = {
    "no normaliser (the denominator forgotten)": """
        fq = torch.nn.functional.elu(q) + 1
        fk = torch.nn.functional.elu(k) + 1
        S = q.new_zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]))
        out = []
        for t in range(q.shape[-2]):
            S = S + fk[..., t, :, None] * v[..., t, None, :]
            out.append((fq[..., t, None, :] @ S).squeeze(-2))
        return torch.stack(out, dim=-2)
    """,
    "the state is read before the current token is written": """
        fq = torch.nn.functional.elu(q) + 1
        fk = torch.nn.functional.elu(k) + 1
        S = q.new_zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]))
        z = q.new_zeros(q.shape[:-2] + (q.shape[-1],))
        out = []
        for t in range(q.shape[-2]):
            num = (fq[..., t, None, :] @ S).squeeze(-2)
            out.append(num / (fq[..., t, :] * z).sum(-1, keepdim=True))
            S = S + fk[..., t, :, None] * v[..., t, None, :]
            z = z + fk[..., t, :]
        return torch.stack(out, dim=-2)
    """,
    "the feature map is left out (raw q and k)": """
        S = q.new_zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]))
        z = q.new_zeros(q.shape[:-2] + (q.shape[-1],))
        out = []
        for t in range(q.shape[-2]):
            S = S + k[..., t, :, None] * v[..., t, None, :]
            z = z + k[..., t, :]
            num = (q[..., t, None, :] @ S).squeeze(-2)
            out.append(num / (q[..., t, :] * z).sum(-1, keepdim=True))
        return torch.stack(out, dim=-2)
    """,
}


def test_random_sequences(linear_attention_rnn):
    """Random queries, keys and values, with and without a batch dimension."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import modern

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"q, k of shape {shape_k}, v of shape {shape_v}": (
            torch.randn(*shape_k, generator=gen, dtype=torch.float64),
            torch.randn(*shape_k, generator=gen, dtype=torch.float64),
            torch.randn(*shape_v, generator=gen, dtype=torch.float64),
        )
        for shape_k, shape_v in (((10, 4), (10, 4)), ((3, 16, 5), (3, 16, 2)))
    }
    grading.agree(linear_attention_rnn, modern.linear_attention_parallel, cases)


def test_hidden_edge_cases(linear_attention_rnn):
    """T = 1, two batch dimensions, d_k = 1, d_v = 1, and large scores."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import modern

    gen = torch.Generator().manual_seed(1)

    def draw(shape_k, shape_v, scale=1.0):
        return (scale * torch.randn(*shape_k, generator=gen, dtype=torch.float64),
                scale * torch.randn(*shape_k, generator=gen, dtype=torch.float64),
                torch.randn(*shape_v, generator=gen, dtype=torch.float64))

    cases = {
        "T = 1: the output is v_1": draw((2, 1, 3), (2, 1, 4)),
        "batch dimensions (2, 3)": draw((2, 3, 6, 4), (2, 3, 6, 5)),
        "d_k = 1": draw((8, 1), (8, 3)),
        "d_v = 1": draw((7, 3), (7, 1)),
        "large queries and keys": draw((9, 4), (9, 4), scale=6.0),
    }
    grading.agree(linear_attention_rnn, modern.linear_attention_parallel, cases)
