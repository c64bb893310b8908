"""Tests of the graded exercise `threshold_truth_tables` (Section 1.1): the exhaustive
search over threshold units on a grid."""

WRONG = {
    "the unit fires only strictly above its threshold": """
        units = torch.cartesian_prod(*([grid] * (d + 1))).reshape(-1, d + 1)
        W, theta = units[:, :d], units[:, d]
        x = threshold.boolean_inputs(d, dtype=grid.dtype)
        outputs = (W @ x.T > theta[:, None]).long()
        return torch.unique(threshold.truth_table_index(outputs))
    """,
    "the first row of the truth table is read as the least significant bit": """
        units = torch.cartesian_prod(*([grid] * (d + 1))).reshape(-1, d + 1)
        W, theta = units[:, :d], units[:, d]
        x = threshold.boolean_inputs(d, dtype=grid.dtype)
        outputs = (W @ x.T >= theta[:, None]).long()
        return torch.unique((outputs * 2 ** torch.arange(2**d)).sum(1))
    """,
    "the truth tables are not made distinct": """
        units = torch.cartesian_prod(*([grid] * (d + 1))).reshape(-1, d + 1)
        W, theta = units[:, :d], units[:, d]
        x = threshold.boolean_inputs(d, dtype=grid.dtype)
        outputs = (W @ x.T >= theta[:, None]).long()
        return threshold.truth_table_index(outputs).sort().values
    """,
}


def test_small_grids(threshold_truth_tables):
    """d = 2 and 3 on grids of integers and half-integers; d = 1 on the grid {0, 1}."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import threshold

    cases = {
        "d = 2, grid -2, -1.5, ..., 2": (2, torch.arange(-2.0, 2.01, 0.5)),
        "d = 3, grid -2, -1, ..., 2": (3, torch.arange(-2.0, 2.01, 1.0)),
        "d = 1, grid 0, 1": (1, torch.tensor([0.0, 1.0])),
    }
    grading.agree(threshold_truth_tables, threshold.realisable_truth_tables, cases)


def test_hidden_edge_cases(threshold_truth_tables):
    """A grid of one value, a random float64 grid, and four inputs."""
    import torch

    from flt_lib import grading
    from flt_lib.connectionism import threshold

    gen = torch.Generator().manual_seed(3)
    cases = {
        "d = 2, a grid of one value 0.5": (2, torch.tensor([0.5])),
        "d = 2, a random float64 grid of 5 values": (
            2, torch.randn(5, generator=gen, dtype=torch.float64)),
        "d = 4, grid -1, 0, 1": (4, torch.tensor([-1.0, 0.0, 1.0])),
        "d = 1, grid -1, 0, 1": (1, torch.tensor([-1.0, 0.0, 1.0])),
    }
    grading.agree(threshold_truth_tables, threshold.realisable_truth_tables, cases)
