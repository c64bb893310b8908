"""book.jupyter without Sphinx: the publishing workflow, the Colab address, the setup cell."""

from __future__ import annotations

import re

import nbformat
import pytest
import yaml

from book import jupyter
from conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "publish.yml"


def _steps() -> list[dict]:
    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return [s for job in flow["jobs"].values() for s in job.get("steps", [])]


def test_workflow_parses_runs_on_push_to_main_and_names_the_make_targets():
    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    trigger = flow.get("on", flow.get(True))  # YAML 1.1 reads the key `on` as True
    assert trigger["push"]["branches"] == ["main"]
    runs = [s["run"].strip() for s in _steps() if "run" in s]
    makes = [r for r in runs if r.startswith("make ")]
    assert makes == ["make book", "make student", "make jupyter"], makes
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("book", "student", "jupyter"):
        assert re.search(rf"^{target}:", makefile, re.M), f"no make target {target}"


def test_workflow_publishes_the_site_and_the_notebooks_where_config_says():
    where = jupyter.read_config()["sphinx"]["config"]["flt_notebooks"]
    steps = _steps()
    pushed = [s for s in steps if s.get("uses", "").startswith("peaceiris/actions-gh-pages")]
    assert len(pushed) == 1 and pushed[0]["with"]["publish_branch"] == where["branch"]
    assemble = next(s["run"] for s in steps if s.get("name") == "Assemble the notebooks branch")
    assert "_build/jupyter/." in assemble and "_build/student/jupyter/." in assemble
    pages = [s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact")]
    assert pages and pages[0]["with"]["path"] == "_build/html"
    assert where["repository"] == jupyter.read_config()["repository"]["url"]


def test_colab_url_points_at_the_published_notebook():
    where = {"repository": "https://github.com/org/repo", "branch": "notebooks", "path": ""}
    assert jupyter.colab_url(where, "chapters/04_recurrent/03_lstm_gru") == (
        "https://colab.research.google.com/github/org/repo/blob/notebooks/"
        "04_recurrent/03_lstm_gru.ipynb")
    where["path"] = "/nb/"
    assert jupyter.colab_url(where, "chapters/a/b").endswith("/blob/notebooks/nb/a/b.ipynb")
    with pytest.raises(ValueError, match="flt_notebooks.repository must be a GitHub URL"):
        jupyter.colab_url({"repository": "https://gitlab.com/x/y"}, "chapters/a/b")


def test_reader_setup_source_pins_what_it_is_given_and_rejects_bad_input():
    sha = "0123456789abcdef0123456789abcdef01234567"
    src = jupyter.reader_setup_source("https://github.com/org/repo/", sha)
    assert f'FLT_LIB = "flt_lib @ git+https://github.com/org/repo@{sha}"' in src
    assert "SystemExit" not in src and "_render_traceback_" in src
    compile(src, "setup", "exec")
    with pytest.raises(ValueError, match="repo_url must be an https:// or file:// URL"):
        jupyter.reader_setup_source("github.com/org/repo", sha)
    with pytest.raises(ValueError, match="ref must be a commit sha or a tag name"):
        jupyter.reader_setup_source("https://github.com/org/repo", "")


def test_finish_notebook_pins_setup_strips_outputs_and_validates():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("$$\\newcommand{\\R}{\\mathbb R}$$"),
        nbformat.v4.new_markdown_cell("# 1.1 Title"),
        nbformat.v4.new_code_cell("old setup", metadata={"tags": ["setup", "hide-input"]}),
        nbformat.v4.new_code_cell("x = 1"),
    ])
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", text="1")]
    out = jupyter.finish_notebook(nbformat.from_dict(nb), title="T", setup="new setup",
                                  edition="full", ref="abc")
    assert out["cells"][0]["source"] == "# 1.1 Title"  # the title first, then the macros
    assert out["cells"][2]["source"] == "new setup" and out["cells"][3]["outputs"] == []
    assert out["metadata"]["flt"]["flt_lib_ref"] == "abc"
    assert len({c["id"] for c in out["cells"]}) == 4
