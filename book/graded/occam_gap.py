"""Tests of the graded exercise `occam_gap` (Section 7.1): the Occam bound gap."""

WRONG = {
    "the class size counted in bits, not nats (no ln 2)": """
        log_size = bits * n_params
        return loss_range * math.sqrt((log_size + math.log(1 / delta)) / (2 * n))
    """,
    "Hoeffding's exponent without its 2 (n instead of 2n)": """
        log_size = bits * n_params * math.log(2)
        return loss_range * math.sqrt((log_size + math.log(1 / delta)) / n)
    """,
    "the loss range forgotten": """
        log_size = bits * n_params * math.log(2)
        return math.sqrt((log_size + math.log(1 / delta)) / (2 * n))
    """,
}


def test_networks_of_several_sizes(occam_gap):
    """Classes of quantised networks with 10 to 10^5 parameters."""
    from flt_lib import grading
    from flt_lib.flt import ntk

    def reference(n_params, bits, n, delta, loss_range):
        return ntk.occam_bound(
            n_params, bits=bits, n=n, delta=delta, loss_range=loss_range
        )

    cases = {
        f"P = {P}, b = {b}, n = {n}, delta = 0.05, loss in [0, {B}]": (P, b, n, 0.05, B)
        for P, b, n, B in (
            (10, 8, 100, 1.0), (2100, 8, 150, 1.0), (10**5, 4, 10**6, 2.0)
        )
    }
    grading.agree(occam_gap, reference, cases, atol=1e-12, rtol=1e-9)


def test_hidden_edge_cases(occam_gap):
    """One bit per parameter, one parameter, a loss range other than 1, delta near 1."""
    from flt_lib import grading
    from flt_lib.flt import ntk

    def reference(n_params, bits, n, delta, loss_range):
        return ntk.occam_bound(
            n_params, bits=bits, n=n, delta=delta, loss_range=loss_range
        )

    cases = {
        "one parameter of one bit, n = 1": (1, 1, 1, 0.5, 1.0),
        "loss in [0, 4]": (50, 8, 1000, 0.01, 4.0),
        "loss in [0, 0.25]": (50, 8, 1000, 0.01, 0.25),
        "delta = 0.999 (almost no confidence)": (20, 2, 500, 0.999, 1.0),
        "delta = 1e-9": (20, 2, 500, 1e-9, 1.0),
    }
    grading.agree(occam_gap, reference, cases, atol=1e-12, rtol=1e-9)
