"""`make release-check`: __version__, the stamped setup cells and a git tag of that name agree."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from book import notebook as nbt

URL = "https://github.com/org/book"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(root), "PATH": "/usr/bin:/bin"})


def _book(root, version="1.2.3", stamped="1.2.3"):
    (root / "flt_lib").mkdir(parents=True)
    (root / "flt_lib" / "__init__.py").write_text(f'__version__ = "{version}"\n')
    (root / "pyproject.toml").write_text("[project]\nname = 'flt_lib'\n")
    (root / "_config.yml").write_text(f"repository:\n  url: {URL}\n")
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# T"},
                    {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                     "source": nbt.setup_source(URL, stamped)}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (root / "chapters" / "01_a").mkdir(parents=True)
    (root / "chapters" / "01_a" / "01_x.ipynb").write_text(json.dumps(nb))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "book")
    return root


def test_consistent_release_passes(tmp_path):
    root = _book(tmp_path)
    _git(root, "tag", "v1.2.3")
    assert nbt.release_problems(root) == []


def test_missing_tag_is_reported(tmp_path):
    problems = nbt.release_problems(_book(tmp_path))
    assert len(problems) == 1 and "no git tag v1.2.3" in problems[0]


def test_stale_setup_cell_is_reported(tmp_path):
    root = _book(tmp_path, stamped="1.2.2")
    _git(root, "tag", "v1.2.3")
    (problem,) = nbt.release_problems(root)
    assert "chapters/01_a/01_x.ipynb: setup cell not stamped for v1.2.3" in problem


def test_library_changed_since_the_tag_is_reported(tmp_path):
    root = _book(tmp_path)
    _git(root, "tag", "v1.2.3")
    (root / "flt_lib" / "new.py").write_text("x = 1\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "change")
    (problem,) = nbt.release_problems(root)
    assert "flt_lib differs from tag v1.2.3 (flt_lib/new.py)" in problem


def test_tag_with_another_version_is_reported(tmp_path):
    root = _book(tmp_path)
    _git(root, "tag", "v1.2.4")  # the tag is not where the version says
    (root / "flt_lib" / "__init__.py").write_text('__version__ = "1.2.4"\n')
    (root / "chapters" / "01_a" / "01_x.ipynb").write_text(
        (root / "chapters" / "01_a" / "01_x.ipynb").read_text().replace("1.2.3", "1.2.4"))
    problems = nbt.release_problems(root)
    assert any("tag v1.2.4 carries __version__ '1.2.3', not '1.2.4'" in p for p in problems)
