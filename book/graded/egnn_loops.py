"""Tests of the graded exercise `egnn_loops` (Section 6.9): the EGNN update written with
explicit loops over pairs of points."""

WRONG = {
    "the message sum includes j = i": """
        B, n, _ = x.shape
        out_h, out_x, out_v = [], [], []
        for i in range(n):
            push, msum = 0.0, 0.0
            for j in range(n):
                d2 = ((x[:, i] - x[:, j]) ** 2).sum(-1, keepdim=True)
                m_ij = layer.phi_e(torch.cat([h[:, i], h[:, j], d2], dim=-1))
                push = push + (x[:, i] - x[:, j]) * layer.phi_x(m_ij)
                msum = msum + m_ij
            v_i = layer.phi_v(h[:, i]) * v[:, i] + push / (n - 1)
            out_v.append(v_i)
            out_x.append(x[:, i] + v_i)
            out_h.append(h[:, i] + layer.phi_h(torch.cat([h[:, i], msum], dim=-1)))
        return tuple(torch.stack(t, dim=1) for t in (out_h, out_x, out_v))
    """,
    "C = 1/n instead of 1/(n - 1)": """
        B, n, _ = x.shape
        out_h, out_x, out_v = [], [], []
        for i in range(n):
            push, msum = 0.0, 0.0
            for j in range(n):
                if j == i:
                    continue
                d2 = ((x[:, i] - x[:, j]) ** 2).sum(-1, keepdim=True)
                m_ij = layer.phi_e(torch.cat([h[:, i], h[:, j], d2], dim=-1))
                push = push + (x[:, i] - x[:, j]) * layer.phi_x(m_ij)
                msum = msum + m_ij
            v_i = layer.phi_v(h[:, i]) * v[:, i] + push / n
            out_v.append(v_i)
            out_x.append(x[:, i] + v_i)
            out_h.append(h[:, i] + layer.phi_h(torch.cat([h[:, i], msum], dim=-1)))
        return tuple(torch.stack(t, dim=1) for t in (out_h, out_x, out_v))
    """,
    "the position moves by the old velocity (x + v instead of x + v')": """
        B, n, _ = x.shape
        out_h, out_x, out_v = [], [], []
        for i in range(n):
            push, msum = 0.0, 0.0
            for j in range(n):
                if j == i:
                    continue
                d2 = ((x[:, i] - x[:, j]) ** 2).sum(-1, keepdim=True)
                m_ij = layer.phi_e(torch.cat([h[:, i], h[:, j], d2], dim=-1))
                push = push + (x[:, i] - x[:, j]) * layer.phi_x(m_ij)
                msum = msum + m_ij
            v_i = layer.phi_v(h[:, i]) * v[:, i] + push / (n - 1)
            out_v.append(v_i)
            out_x.append(x[:, i] + v[:, i])
            out_h.append(h[:, i] + layer.phi_h(torch.cat([h[:, i], msum], dim=-1)))
        return tuple(torch.stack(t, dim=1) for t in (out_h, out_x, out_v))
    """,
}


def test_random_clouds(egnn_loops):
    """A random layer and random point clouds in 3-D."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import egnn

    gen = torch.Generator().manual_seed(0)
    layer = egnn.EGNNLayer(3, 8, generator=gen)
    cases = {
        f"{B} clouds of {n} points in 3-D, d_h = 3": (layer, *(
            torch.randn(B, n, 3, generator=gen, dtype=torch.float64) for _ in range(3)))
        for B, n in ((2, 3), (1, 5))
    }
    grading.agree(egnn_loops, lambda lay, h, x, v: lay(h, x, v), cases,
                  atol=1e-12, rtol=0)


def test_hidden_edge_cases(egnn_loops):
    """Two points, points in a plane, one feature, zero velocities, equal points."""
    import torch

    from flt_lib import grading
    from flt_lib.symmetry import egnn

    gen = torch.Generator().manual_seed(1)
    layer1 = egnn.EGNNLayer(1, 4, generator=gen)
    layer2 = egnn.EGNNLayer(2, 6, generator=gen)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=torch.float64)

    x_same = rand(1, 1, 2).expand(1, 3, 2).clone()
    cases = {
        "two points (n = 2)": (layer2, rand(3, 2, 2), rand(3, 2, 3), rand(3, 2, 3)),
        "points in the plane, one feature": (layer1, rand(1, 4, 1), rand(1, 4, 2),
                                             rand(1, 4, 2)),
        "zero velocities": (layer2, rand(2, 4, 2), rand(2, 4, 3),
                            torch.zeros(2, 4, 3, dtype=torch.float64)),
        "three coincident points": (layer2, rand(1, 3, 2), x_same, rand(1, 3, 2)),
    }
    grading.agree(egnn_loops, lambda lay, h, x, v: lay(h, x, v), cases,
                  atol=1e-12, rtol=0)
