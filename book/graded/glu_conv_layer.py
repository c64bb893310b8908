"""Tests of the graded exercise `glu_conv_layer` (Section 4.7): a gated linear unit over
causal convolutions."""

WRONG = {
    "padded on both sides ('same' padding): the layer sees the future": """
        k = W.shape[-1]
        left = (k - 1) // 2
        xp = torch.nn.functional.pad(x.transpose(1, 2), (left, k - 1 - left))
        lin = torch.nn.functional.conv1d(xp, W, b).transpose(1, 2)
        gate = torch.nn.functional.conv1d(xp, V, c).transpose(1, 2)
        return lin * torch.sigmoid(gate)
    """,
    "the zeros padded on the right": """
        k = W.shape[-1]
        xp = torch.nn.functional.pad(x.transpose(1, 2), (0, k - 1))
        lin = torch.nn.functional.conv1d(xp, W, b).transpose(1, 2)
        gate = torch.nn.functional.conv1d(xp, V, c).transpose(1, 2)
        return lin * torch.sigmoid(gate)
    """,
    "tanh on the linear path (the gated tanh unit)": """
        k = W.shape[-1]
        xp = torch.nn.functional.pad(x.transpose(1, 2), (k - 1, 0))
        lin = torch.nn.functional.conv1d(xp, W, b).transpose(1, 2)
        gate = torch.nn.functional.conv1d(xp, V, c).transpose(1, 2)
        return torch.tanh(lin) * torch.sigmoid(gate)
    """,
}


def test_random_layers(glu_conv_layer):
    """Random inputs, kernels and biases for a few widths."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import convolution_tree

    gen = torch.Generator().manual_seed(0)
    cases = {
        f"B = {B}, T = {T}, c_in = {c_in}, c_out = {c_out}, k = {k}": tuple(
            torch.randn(*shape, generator=gen, dtype=torch.float64)
            for shape in ((B, T, c_in), (c_out, c_in, k), (c_out,), (c_out, c_in, k),
                          (c_out,))
        )
        for B, T, c_in, c_out, k in ((2, 10, 3, 4, 3), (3, 20, 2, 5, 4))
    }
    grading.agree(glu_conv_layer, convolution_tree.glu_layer, cases)


def test_hidden_edge_cases(glu_conv_layer):
    """k = 1, T = 1, T shorter than k, a batch of one, one channel."""
    import torch

    from flt_lib import grading
    from flt_lib.recurrent import convolution_tree

    gen = torch.Generator().manual_seed(1)

    def draw(B, T, c_in, c_out, k):
        return tuple(
            torch.randn(*shape, generator=gen, dtype=torch.float64)
            for shape in ((B, T, c_in), (c_out, c_in, k), (c_out,), (c_out, c_in, k),
                          (c_out,))
        )

    cases = {
        "k = 1: a position-wise layer": draw(2, 6, 3, 2, 1),
        "T = 1": draw(2, 1, 3, 4, 3),
        "T = 2 shorter than k = 5": draw(1, 2, 2, 3, 5),
        "a batch of one, one channel in and out": draw(1, 9, 1, 1, 2),
    }
    grading.agree(glu_conv_layer, convolution_tree.glu_layer, cases)
