"""Tests of the graded exercise `cover_count_recursive` (Section 1.3): Cover's count of
separable labelings from its recursion."""

WRONG = {
    "every new point doubles the count": """
        count = 2
        for _ in range(s - 1):
            count = 2 * count
        return count
    """,
    "one step of the recursion too many": """
        row = [2] * n
        for _ in range(s):
            row = [2] + [row[k] + row[k - 1] for k in range(1, n)]
        return row[-1]
    """,
}


def test_small_counts(cover_count_recursive):
    """Every s <= 12 and n <= 5."""
    from flt_lib import grading
    from flt_lib.connectionism import cover

    cases = {f"s = {s}, n = {n}": (s, n) for s in range(1, 13) for n in range(1, 6)}
    grading.agree(cover_count_recursive, cover.cover_count, cases)


def test_hidden_boundaries_and_large_counts(cover_count_recursive):
    """One point, the line, s <= n, s = 2n, and large s."""
    from flt_lib import grading
    from flt_lib.connectionism import cover

    cases = {
        "one point in R^1": (1, 1),
        "one point in R^9": (1, 9),
        "40 points on the line": (40, 1),
        "s = 6 points in n = 10 dimensions": (6, 10),
        "s = 2n = 24": (24, 12),
        "s = 60, n = 20": (60, 20),
    }
    grading.agree(cover_count_recursive, cover.cover_count, cases)
