"""Tests of the graded exercise `lstm_cell_step` (Section 4.3): one step of the LSTM
cell."""

WRONG = {
    "tanh instead of sigmoid on the input gate": """
        i, f, g, o = (x_t @ Wx.T + h @ Wh.T + b).chunk(4, dim=-1)
        i, f, g, o = torch.tanh(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        return o * torch.tanh(c), c
    """,
    "the forget gate is forgotten (the cell always keeps c_{t-1})": """
        i, f, g, o = (x_t @ Wx.T + h @ Wh.T + b).chunk(4, dim=-1)
        i, g, o = torch.sigmoid(i), torch.tanh(g), torch.sigmoid(o)
        c = c + i * g
        return o * torch.tanh(c), c
    """,
    "the new hidden state reads the old cell c_{t-1}": """
        i, f, g, o = (x_t @ Wx.T + h @ Wh.T + b).chunk(4, dim=-1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        return o * torch.tanh(c), f * c + i * g
    """,
    "the gates taken in the order i, g, f, o": """
        i, g, f, o = (x_t @ Wx.T + h @ Wh.T + b).chunk(4, dim=-1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        return o * torch.tanh(c), c
    """,
}


def test_random_steps(lstm_cell_step):
    """Random inputs, states and weights for a few sizes."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import gated

    def reference(x_t, h, c, Wx, Wh, b):
        return gated.lstm_cell(x_t, h, c, gated.LSTMWeights(Wx, Wh, b))

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"B = {B}, n = {n}, m = {m}": tuple(
            torch.randn(*shape, generator=gen, dtype=torch.float64)
            for shape in ((B, n), (B, m), (B, m), (4 * m, n), (4 * m, m), (4 * m,))
        )
        for B, n, m in ((2, 3, 4), (5, 2, 8))
    }
    grading.agree(lstm_cell_step, reference, cases)


def test_hidden_edge_cases(lstm_cell_step):
    """A batch of one, one unit, the zero state, and saturated gates."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import gated

    def reference(x_t, h, c, Wx, Wh, b):
        return gated.lstm_cell(x_t, h, c, gated.LSTMWeights(Wx, Wh, b))

    gen = torch.Generator().manual_seed(1)

    def draw(B, n, m, scale=1.0):
        return tuple(
            scale * torch.randn(*shape, generator=gen, dtype=torch.float64)
            for shape in ((B, n), (B, m), (B, m), (4 * m, n), (4 * m, m), (4 * m,))
        )

    x_t, _, _, Wx, Wh, b = draw(3, 2, 5)
    cases = {
        "a batch of one sequence": draw(1, 3, 4),
        "m = 1: one unit": draw(4, 2, 1),
        "the zero state h = c = 0": (
            x_t, torch.zeros(3, 5, dtype=torch.float64),
            torch.zeros(3, 5, dtype=torch.float64), Wx, Wh, b),
        "large weights: saturated gates": draw(2, 3, 3, scale=5.0),
    }
    grading.agree(lstm_cell_step, reference, cases)
