"""Tests of the graded exercise `my_linear_recall` (Section 4.9): associative recall by
a linear-attention state read with the pseudo-inverse dual vectors."""

WRONG = {
    "the keys themselves as queries (no dual vectors)": """
        S = K.transpose(1, 2) @ V
        q = torch.stack([k[i] for k, i in zip(K, queries)])
        return (q @ S).argmax(-1)
    """,
    "the pseudo-inverse not transposed (rows of K^+ taken as dual vectors)": """
        S = K.transpose(1, 2) @ V
        Psi = torch.linalg.pinv(K)
        psi = torch.stack([P[q] for P, q in zip(Psi, queries)])
        return (psi @ S).argmax(-1)
    """,
}


def test_random_instances(my_linear_recall):
    """Random MQAR instances below and above the threshold n = d_k."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import recall

    def reference(K, V, queries):  # the library's linear recall on these keys, values
        B, n, d_k = K.shape
        task = recall.MQAR(keys=torch.arange(B * n).reshape(B, n), values=V.argmax(-1),
                           queries=queries)
        return recall.linear_recall(task, K.reshape(B * n, d_k), n_values=V.shape[-1])

    gen = torch.Generator().manual_seed(0)
    E = recall.key_embedding(64, 16, generator=gen)
    cases = {}
    for n in (8, 16, 40):
        task = recall.mqar(6, n, n_keys=64, n_values=10, m=5, generator=gen)
        cases[f"{n} pairs, d_k = 16, 10 values"] = (
            E[task.keys], torch.nn.functional.one_hot(task.values, 10).double(),
            task.queries)
    grading.agree(my_linear_recall, reference, cases)


def test_hidden_edge_cases(my_linear_recall):
    """One pair, one query, a batch of one, and d_k = 1."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import recall

    def reference(K, V, queries):
        B, n, d_k = K.shape
        task = recall.MQAR(keys=torch.arange(B * n).reshape(B, n), values=V.argmax(-1),
                           queries=queries)
        return recall.linear_recall(task, K.reshape(B * n, d_k), n_values=V.shape[-1])

    gen = torch.Generator().manual_seed(1)
    cases = {}
    for what, (B, n, d_k, m) in {
        "one pair": (3, 1, 4, 2),
        "a batch of one, one query": (1, 6, 8, 1),
        "d_k = 1 and two pairs": (2, 2, 1, 3),
    }.items():
        E = recall.key_embedding(2 * n, d_k, generator=gen)
        task = recall.mqar(B, n, n_keys=2 * n, n_values=5, m=m, generator=gen)
        V = torch.nn.functional.one_hot(task.values, 5).double()
        cases[what] = (E[task.keys], V, task.queries)
    grading.agree(my_linear_recall, reference, cases)
