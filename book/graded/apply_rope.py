"""Tests of the graded exercise `apply_rope` (Section 5.3): rotary position embeddings,
adjacent pairs (2j, 2j + 1) rotated by m base^(-2j/d) at position m."""

WRONG = {
    "the pairs are (j, j + d/2) (the half-split layout of some libraries)": """
        T, d = x.shape[-2], x.shape[-1]
        omega = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        angle = (torch.arange(T, dtype=torch.float64)[:, None] * omega).to(x.dtype)
        cos, sin = angle.cos(), angle.sin()
        a, b = x[..., : d // 2], x[..., d // 2 :]
        return torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    """,
    "the pairs are rotated the other way round": """
        T, d = x.shape[-2], x.shape[-1]
        omega = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        angle = (torch.arange(T, dtype=torch.float64)[:, None] * omega).to(x.dtype)
        cos, sin = angle.cos(), angle.sin()
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos + b * sin, -a * sin + b * cos], dim=-1).flatten(-2)
    """,
    "the frequencies are base^(-j/d) instead of base^(-2j/d)": """
        T, d = x.shape[-2], x.shape[-1]
        omega = base ** (-torch.arange(d // 2, dtype=torch.float64) / d)
        angle = (torch.arange(T, dtype=torch.float64)[:, None] * omega).to(x.dtype)
        cos, sin = angle.cos(), angle.sin()
        a, b = x[..., 0::2], x[..., 1::2]
        return torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    """,
}


def test_random_queries(apply_rope):
    """Random queries of a few sizes, with the bases 10000 and 100."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import positions

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"x of shape {shape}, base {base}": (
            torch.randn(*shape, generator=gen, dtype=torch.float64), base)
        for shape, base in (((10, 8), 10000.0), ((3, 20, 16), 100.0), ((6, 4), 10.0))
    }
    grading.agree(apply_rope, lambda x, base: positions.rotary(x, base=base), cases)


def test_hidden_edge_cases(apply_rope):
    """One token (no rotation), d = 2, batch and head dimensions, long sequences,
    float32."""
    import torch

    from flt_lib import grading
    from flt_lib.attention import positions

    gen = torch.Generator().manual_seed(1)

    def rand(*shape, dtype=torch.float64):
        return torch.randn(*shape, generator=gen, dtype=dtype)

    cases = {
        "one token (T = 1)": (rand(1, 6), 10000.0),
        "d = 2 (one pair)": (rand(7, 2), 10000.0),
        "batch 2 x 3 heads, T = 5, d = 4": (rand(2, 3, 5, 4), 10000.0),
        "T = 200, d = 6, base 100": (rand(200, 6), 100.0),
        "float32 input": (rand(9, 8, dtype=torch.float32), 10000.0),
    }
    grading.agree(apply_rope, lambda x, base: positions.rotary(x, base=base), cases,
                  atol=1e-5)
