"""The setup-cell template, stamping, stripping and the student edition (book.notebook)."""

import ast
import json

import pytest

from book import notebook as nbt


def _nb(cells):
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def _md(text):
    return {"cell_type": "markdown", "metadata": {}, "source": text}


def _code(text, tags=None, outputs=None, count=None):
    return {
        "cell_type": "code",
        "metadata": {"tags": tags} if tags else {},
        "source": text,
        "outputs": outputs or [],
        "execution_count": count,
    }


def test_setup_source_pins_the_version_and_never_a_bare_name():
    src = nbt.setup_source("https://github.com/org/book/", "1.2.3")
    assert 'url = "git+https://github.com/org/book@v1.2.3"' in src
    assert 'spec = os.environ.get("FLT_LIB_SPEC", f"flt_lib @ {url}")' in src
    assert "set_seed(0)" in src and "get_device()" in src and "set_threads()" in src
    # The spec always carries a URL: never `pip install flt_lib` / `flt-lib` from PyPI.
    assert "install flt" not in src and '"flt_lib"' not in src.split("find_spec")[1].split("\n")[1]


def test_setup_source_bad_input():
    with pytest.raises(ValueError, match="repo_url must be an https:// URL, got 'git@x'"):
        nbt.setup_source("git@x", "1.0")
    with pytest.raises(ValueError, match="version must be a non-empty string, got ''"):
        nbt.setup_source("https://x", "")


def test_setup_source_compiles_and_installs_only_when_missing():
    src = nbt.setup_source("https://github.com/org/book", "0.1.0")
    code = compile(src, "<setup>", "exec")
    assert code.co_filename == "<setup>"
    tree = ast.parse(src)
    guards = [n for n in ast.walk(tree)
              if isinstance(n, ast.If) and "find_spec" in ast.unparse(n.test)]
    assert guards and all(ast.unparse(n.test).endswith("is None") for n in guards)
    # pip runs only inside that guard
    unguarded = [s for s in tree.body if not (isinstance(s, ast.If) and s in guards)]
    assert not any("pip" in ast.unparse(s) for s in unguarded)
    assert any("pip" in ast.unparse(n) for n in guards)


def test_stamp_inserts_after_leading_markdown_then_is_idempotent(tmp_path):
    path = tmp_path / "a.ipynb"
    path.write_text(json.dumps(_nb([_md("# Title"), _md("goals"), _code("x = 1")])))
    assert nbt.stamp_notebook(path, "SETUP") is True
    nb = json.loads(path.read_text())
    assert [c["cell_type"] for c in nb["cells"]] == ["markdown", "markdown", "code", "code"]
    assert nb["cells"][2]["source"] == "SETUP"
    assert nb["cells"][2]["metadata"]["tags"] == ["setup", "hide-input"]
    assert nb["cells"][2]["id"] == "flt-setup"
    assert nbt.stamp_notebook(path, "SETUP") is False
    # A stale setup cell is replaced in place, not duplicated.
    assert nbt.stamp_notebook(path, "NEW") is True
    nb = json.loads(path.read_text())
    assert [c["source"] for c in nb["cells"] if c["cell_type"] == "code"] == ["NEW", "x = 1"]


def test_strip_removes_outputs(tmp_path):
    path = tmp_path / "b.ipynb"
    out = [{"output_type": "stream", "name": "stdout", "text": "1\n"}]
    path.write_text(json.dumps(_nb([_code("print(1)", outputs=out, count=3)])))
    assert nbt.strip_notebook(path) is True
    cell = json.loads(path.read_text())["cells"][0]
    assert cell["outputs"] == [] and cell["execution_count"] is None
    assert nbt.strip_notebook(path) is False


def test_student_copy_drops_solutions_only():
    nb = _nb(
        [
            _md("# T"),
            _md(":::{exercise}\n:label: ex-a\n\nDo it.\n:::\n\n:::{solution-start} ex-a\n:class: dropdown\n:::\n\nAnswer text."),
            _code("answer = 42", tags=["solution"]),
            _md(":::{solution-end}\n:::"),
            _code("kept = 1"),
        ]
    )
    out = nbt.student_copy(nb)
    text = json.dumps(out)
    assert "Do it." in text and "kept = 1" in text
    assert "Answer text" not in text and "answer = 42" not in text and "solution-end" not in text
    assert len(out["cells"]) == 3


def test_stamp_fills_missing_cell_ids_uniquely(tmp_path):
    path = tmp_path / "c.ipynb"
    cells = [_md("# T"), _code("a = 1"), _code("b = 2")]
    cells[2]["id"] = "cell-1"  # an existing id that a naive scheme would collide with
    path.write_text(json.dumps(_nb(cells)))
    assert nbt.stamp_notebook(path, "SETUP") is True
    ids = [c["id"] for c in json.loads(path.read_text())["cells"]]
    assert len(ids) == 4 and len(set(ids)) == 4
    assert nbt.stamp_notebook(path, "SETUP") is False
