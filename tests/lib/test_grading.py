"""flt_lib.grading.agree: passes equal functions, names the input that fails."""

import numpy as np
import pytest
import torch

from flt_lib import grading


def _double(x):
    return 2 * x


def test_equal_functions_agree_on_every_case():
    cases = {"a vector": (torch.arange(3.0),), "a scalar": (torch.tensor(1.5),)}
    assert grading.agree(lambda x: x + x, _double, cases) == 2


def test_a_wrong_value_names_the_case_and_the_input():
    def wrong(x):
        return 2 * x + (x > 1)

    with pytest.raises(AssertionError) as err:
        grading.agree(wrong, _double, {"small": (torch.arange(2.0),),
                                       "three": (torch.arange(3.0),)})
    msg = str(err.value)
    assert "'three'" in msg and "x=[0, 1, 2]" in msg
    assert "expected 4, received 5" in msg and "index (2,)" in msg


def test_a_wrong_shape_is_reported_as_a_shape():
    with pytest.raises(AssertionError, match=r"expected shape \(3,\), received shape \(3, 1\)"):
        grading.agree(lambda x: _double(x)[:, None], _double, {"v": (torch.ones(3),)})


def test_a_stub_says_it_is_not_written_and_other_errors_are_reported():
    def stub(x):
        raise NotImplementedError("stub")

    with pytest.raises(AssertionError, match="stub is not written yet"):
        grading.agree(stub, _double, {"v": (torch.ones(2),)})
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        grading.agree(lambda x: 1 / 0, _double, {"v": (torch.ones(2),)})
    with pytest.raises(AssertionError, match="expected a tensor of shape"):
        grading.agree(lambda x: None, _double, {"v": (torch.ones(2),)})


def test_tuples_numpy_and_tolerances():
    ref = lambda x: (x.sum(), np.asarray([1, 2]))  # noqa: E731
    near = lambda x: (x.sum() + 1e-9, np.asarray([1, 2]))  # noqa: E731
    assert grading.agree(near, ref, {"v": (torch.ones(4, dtype=torch.float64),)}) == 1
    far = lambda x: (x.sum() + 1e-3, np.asarray([1, 2]))  # noqa: E731
    with pytest.raises(AssertionError, match=r"in output\[0\]"):
        grading.agree(far, ref, {"v": (torch.ones(4, dtype=torch.float64),)})
    ints = lambda x: (x.sum(), np.asarray([1, 3]))  # noqa: E731
    with pytest.raises(AssertionError, match=r"in output\[1\]"):
        grading.agree(ints, ref, {"v": (torch.ones(4, dtype=torch.float64),)})


def test_infinities_in_the_same_places_agree():
    ref = lambda x: x.masked_fill(x < 0, -float("inf"))  # noqa: E731
    assert grading.agree(ref, ref, {"v": (torch.tensor([-1.0, 2.0]),)}) == 1


def test_the_student_cannot_change_the_reference_inputs():
    def in_place(x):
        x.mul_(2)
        return x

    assert grading.agree(in_place, _double, {"v": (torch.ones(3),)}) == 1


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        (dict(fn=None), TypeError, "run the cell"),
        (dict(fn=3), TypeError, "fn must be callable, got int"),
        (dict(reference="f"), TypeError, "reference must be callable, got str"),
        (dict(cases={}), ValueError, "cases must be a non-empty mapping"),
        (dict(cases=[(1,)]), ValueError, "cases must be a non-empty mapping"),
        (dict(cases={"v": torch.ones(2)}), TypeError, "str description to a tuple"),
        (dict(atol=-1.0), ValueError, "atol must be a number >= 0, got -1.0"),
        (dict(rtol="0"), ValueError, "rtol must be a number >= 0"),
    ],
)
def test_bad_input_is_named(kwargs, error, words):
    args = dict(fn=_double, reference=_double, cases={"v": (torch.ones(2),)})
    args.update(kwargs)
    with pytest.raises(error, match=words):
        grading.agree(args.pop("fn"), args.pop("reference"), args.pop("cases"), **args)
