"""book.bench: the table marks every row over its budget with ✗ (timings are never asserted)."""

from book.bench import Row, format_table, median


def test_rows_over_budget_are_marked():
    rows = [
        Row("fast", 0.1, "s", 0.3),
        Row("slow", 0.5, "s", 0.3),
        Row("speed-up", 12.0, "x", 10.0, at_least=True),
        Row("too little speed-up", 3.0, "x", 10.0, at_least=True),
        Row("no budget", 7.0, "s", None),
    ]
    assert [r.ok for r in rows] == [True, False, True, False, True]
    lines = format_table(rows).splitlines()[2:]
    assert [("✗" in line, "✓" in line) for line in lines] == [
        (False, True), (True, False), (False, True), (True, False), (False, False)
    ]
    assert "12.00x" in lines[2] and ">= 10x" in lines[2]


def test_median():
    assert median([3.0, 1.0, 2.0]) == 2.0
