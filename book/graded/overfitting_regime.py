"""Tests of the graded exercise `overfitting_regime` (Section 7.8): the outcome of a
token-selection run, named from its history."""

WRONG = {
    "the drop of test accuracy taken with the wrong sign": """
        fit = history.flipped_fit[-1]
        if fit == 0.0:
            return token_selection.REGIMES[0]
        if fit < 1.0:
            return token_selection.REGIMES[1]
        drop = history.test_acc[-1] - history.test_acc[0]
        return token_selection.REGIMES[3 if drop > tol else 2]
    """,
    "the best fit of the flipped labels during training, not the last": """
        fit = max(history.flipped_fit)
        if fit == 0.0:
            return token_selection.REGIMES[0]
        if fit < 1.0:
            return token_selection.REGIMES[1]
        drop = history.test_acc[0] - history.test_acc[-1]
        return token_selection.REGIMES[3 if drop > tol else 2]
    """,
    "a drop of exactly tol called harmful (>= instead of >)": """
        fit = history.flipped_fit[-1]
        if fit == 0.0:
            return token_selection.REGIMES[0]
        if fit < 1.0:
            return token_selection.REGIMES[1]
        drop = history.test_acc[0] - history.test_acc[-1]
        return token_selection.REGIMES[3 if drop >= tol else 2]
    """,
    "harm measured against the previous record, not step 0": """
        fit = history.flipped_fit[-1]
        if fit == 0.0:
            return token_selection.REGIMES[0]
        if fit < 1.0:
            return token_selection.REGIMES[1]
        drop = history.test_acc[-2] - history.test_acc[-1]
        return token_selection.REGIMES[3 if drop > tol else 2]
    """,
}


def test_four_outcomes(overfitting_regime):
    """Histories that end in each of the four outcomes."""
    import dataclasses

    import torch

    from flt_lib import grading
    from flt_lib.flt import token_selection

    run = token_selection.run_experiment(
        token_selection.TokenData(d=16, mu=3.0), n=4, n_test=8, steps=2,
        record_every=1, generator=torch.Generator().manual_seed(0),
    )
    cases = {}
    for fit, acc in (
        ([0.0, 0.0, 0.0], [0.9, 0.95, 0.97]),
        ([0.0, 0.5, 0.5], [0.9, 0.9, 0.9]),
        ([0.0, 0.5, 1.0], [0.9, 0.95, 0.96]),
        ([0.0, 0.5, 1.0], [0.9, 0.8, 0.7]),
    ):
        history = dataclasses.replace(run, flipped_fit=fit, test_acc=acc)
        cases[f"flipped_fit = {fit}, test_acc = {acc}, tol = 0.01"] = (history, 0.01)
    grading.agree(
        overfitting_regime, lambda h, tol: token_selection.regime(h, tol=tol), cases
    )


def test_hidden_edge_cases(overfitting_regime):
    """A drop of exactly tol, a fit that is lost again, a rise that is lost, tol = 0."""
    import dataclasses

    import torch

    from flt_lib import grading
    from flt_lib.flt import token_selection

    run = token_selection.run_experiment(
        token_selection.TokenData(d=16, mu=3.0), n=4, n_test=8, steps=2,
        record_every=1, generator=torch.Generator().manual_seed(1),
    )
    cases = {
        f"flipped_fit = {fit}, test_acc = {acc}, tol = {tol}": (
            dataclasses.replace(run, flipped_fit=fit, test_acc=acc), tol)
        for fit, acc, tol in (
            ([0.0, 1.0, 1.0], [0.75, 0.6, 0.5], 0.25),      # drop == tol: benign
            ([0.0, 1.0, 0.0], [0.9, 0.5, 0.5], 0.01),       # fitted, then unlearned
            ([0.0, 1.0, 1.0], [0.875, 0.9375, 0.875], 0.01),  # up, then back
            ([0.0, 1.0, 1.0], [0.5, 0.5, 0.25], 0.0),       # tol = 0
            ([0.25, 1.0], [0.8, 0.9], 0.01),                # two records only
        )
    }
    grading.agree(
        overfitting_regime, lambda h, tol: token_selection.regime(h, tol=tol), cases
    )
