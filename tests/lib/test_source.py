"""flt_lib.source.show_source: the page shows the library's real, current code."""

from __future__ import annotations

import inspect

import pytest

from flt_lib.optim import sgd
from flt_lib.source import Listing, show_source


def test_listing_is_the_current_source():
    listing = show_source(sgd.per_example_gradients, docstring=True)
    lines, first = inspect.getsourcelines(sgd.per_example_gradients)
    assert isinstance(listing, Listing)
    assert listing.code == "".join(lines).rstrip("\n")
    assert listing.first_line == first and listing.last_line == first + len(lines) - 1
    assert listing.path == "flt_lib/optim/sgd.py"
    assert listing.qualname == "flt_lib.optim.sgd.per_example_gradients"


def test_markdown_is_a_python_code_block():
    md = show_source(sgd.per_example_gradients)._repr_markdown_()
    assert md.splitlines()[0].startswith("`flt_lib.optim.sgd.per_example_gradients` in `flt_lib/optim/sgd.py`")
    assert "```python\ndef per_example_gradients(" in md and md.rstrip().endswith("```")


def test_docstring_is_left_out_by_default():
    full = show_source(sgd.per_example_gradients, docstring=True)
    bare = show_source(sgd.per_example_gradients)
    assert bare == show_source(sgd.per_example_gradients, docstring=False)
    assert '"""' in full.code and '"""' not in bare.code
    assert bare.code.splitlines()[0] == full.code.splitlines()[0]  # the signature stays
    assert bare.code.splitlines()[-1] == full.code.splitlines()[-1]  # and the body


def test_classes_and_methods():
    from flt_lib.source import Listing as cls

    assert show_source(cls).code.startswith("@dataclass(frozen=True)\nclass Listing")
    assert show_source(Listing.header).code.startswith("def header(self)")  # dedented method


def test_bad_input():
    with pytest.raises(TypeError, match="obj must be an flt_lib function, method or class, got str"):
        show_source("sgd.per_example_gradients")
    with pytest.raises(ValueError, match="obj must be defined in flt_lib, got 'dumps' from module 'json'"):
        import json

        show_source(json.dumps)
    with pytest.raises(TypeError, match="docstring must be a bool, got int"):
        show_source(sgd.per_example_gradients, docstring=1)
