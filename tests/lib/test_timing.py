"""flt_lib.timing.best_time: the fastest round, with a warm-up call (timings are never asserted)."""

import pytest

from flt_lib.timing import best_time


def test_calls_and_result():
    calls = []
    t = best_time(lambda: calls.append(1), repeat=3, number=2)
    assert t >= 0 and len(calls) == 1 + 3 * 2  # one warm-up call, then 3 rounds of 2
    calls.clear()
    best_time(lambda: calls.append(1), repeat=2, warmup=False, device="cpu")
    assert len(calls) == 2


def test_bad_input():
    with pytest.raises(TypeError, match="fn must be callable, got int"):
        best_time(3)
    with pytest.raises(ValueError, match="repeat must be"):
        best_time(lambda: None, repeat=0)
    with pytest.raises(TypeError, match="warmup must be a bool, got int"):
        best_time(lambda: None, warmup=1)
