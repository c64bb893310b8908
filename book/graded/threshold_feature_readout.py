"""Tests of the graded exercise `threshold_feature_readout` (Section 1.4): a random
layer of threshold units read out by a perceptron."""

WRONG = {
    "the read-out uses torch.sign, so a tie gives 0": """
        a = (x @ W.T >= thresholds).to(x.dtype)
        z = torch.cat([a, torch.ones(x.shape[0], 1, dtype=x.dtype)], dim=1) @ w
        return torch.sign(z)
    """,
    "the codes are not lifted: the read-out's bias weight is dropped": """
        a = (x @ W.T >= thresholds).to(x.dtype)
        z = a @ w[:-1]
        return torch.where(z >= 0, 1.0, -1.0).to(x.dtype)
    """,
    "a unit fires only strictly above its threshold": """
        a = (x @ W.T > thresholds).to(x.dtype)
        z = torch.cat([a, torch.ones(x.shape[0], 1, dtype=x.dtype)], dim=1) @ w
        return torch.where(z >= 0, 1.0, -1.0).to(x.dtype)
    """,
}


def test_random_layers(threshold_feature_readout):
    """Random Gaussian layers on the Boolean cube and on Gaussian inputs."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import perceptron, threshold

    def reference(x, W, thresholds, w):
        codes = threshold.threshold_layer(x, W, thresholds)
        return perceptron.predict(perceptron.add_bias(codes), w)

    gen = torch.Generator().manual_seed(0)
    cases = {}
    for d, m in [(2, 8), (3, 16), (4, 5)]:
        cases[f"all 2^{d} binary inputs, {m} random units"] = (
            threshold.boolean_inputs(d, dtype=torch.float64),
            torch.randn(m, d, generator=gen, dtype=torch.float64),
            0.5 + 0.5 * torch.randn(m, generator=gen, dtype=torch.float64),
            torch.randn(m + 1, generator=gen, dtype=torch.float64))
    cases["20 Gaussian inputs in R^3, 6 units"] = (
        torch.randn(20, 3, generator=gen, dtype=torch.float64),
        torch.randn(6, 3, generator=gen, dtype=torch.float64),
        torch.randn(6, generator=gen, dtype=torch.float64),
        torch.randn(7, generator=gen, dtype=torch.float64))
    grading.agree(threshold_feature_readout, reference, cases)


def test_hidden_ties(threshold_feature_readout):
    """Integer weights whose net inputs hit the thresholds, and a read-out at a tie."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import perceptron, threshold

    def reference(x, W, thresholds, w):
        codes = threshold.threshold_layer(x, W, thresholds)
        return perceptron.predict(perceptron.add_bias(codes), w)

    f64 = dict(dtype=torch.float64)
    x2 = threshold.boolean_inputs(2, **f64)
    or_nand = (torch.tensor([[1.0, 1.0], [-1.0, -1.0]], **f64),
               torch.tensor([1.0, -1.0], **f64))  # hidden OR and NAND units
    cases = {
        "OR and NAND units, read-out AND (XOR)": (
            x2, *or_nand, torch.tensor([1.0, 1.0, -1.5], **f64)),
        "OR and NAND units, read-out w = 0 (every output a tie)": (
            x2, *or_nand, torch.zeros(3, **f64)),
        "one unit, read-out a - 1 (zero where the unit fires)": (
            x2, torch.tensor([[1.0, 1.0]], **f64), torch.tensor([2.0], **f64),
            torch.tensor([1.0, -1.0], **f64)),
    }
    grading.agree(threshold_feature_readout, reference, cases)
