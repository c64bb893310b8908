"""book.build: the execution cache is keyed on flt_lib/ and never serves stale output."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT
from book import build as _build
from book.upstream import nbval_kernel_start


def _copy_package(dst: Path) -> Path:
    shutil.copytree(ROOT / "flt_lib", dst / "flt_lib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "requirements.txt", dst / "requirements.txt")
    return dst


def test_key_changes_with_any_library_source(tmp_path):
    root = _copy_package(tmp_path)
    key = _build.cache_key(root)
    assert key == _build.cache_key(root), "the key must be a pure function of the sources"
    target = root / "flt_lib" / "stats.py"
    original = target.read_text()
    target.write_text(original + "\n# an edit\n")
    assert _build.cache_key(root) != key, "editing a flt_lib module must change the key"
    target.write_text(original)
    assert _build.cache_key(root) == key
    (root / "flt_lib" / "attention" / "extra.py").write_text("X = 1\n")
    key2 = _build.cache_key(root)
    assert key2 != key, "a new flt_lib module must change the key"
    (root / "flt_lib" / "attention" / "data.json").write_text("{}\n")
    assert _build.cache_key(root) != key2, "any file of flt_lib/ is in the key"
    (root / "flt_lib" / "attention" / "data.json").unlink()
    (root / "flt_lib" / "__pycache__").mkdir(exist_ok=True)
    (root / "flt_lib" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert _build.cache_key(root) == key2, "byte-code caches are not sources"


def test_key_does_not_see_the_book_tooling(tmp_path):
    root = _copy_package(tmp_path)
    key = _build.cache_key(root)
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "book" / "ext" / "latex.py").write_text("# an edit to book tooling\n")
    assert _build.cache_key(root) == key, "book tooling does not change what notebooks print"


def test_key_changes_with_requirements_and_settings(tmp_path, monkeypatch):
    root = _copy_package(tmp_path)
    monkeypatch.delenv("FLT_DEVICE", raising=False)
    monkeypatch.delenv("FLT_THREADS", raising=False)
    key = _build.cache_key(root)
    monkeypatch.setenv("FLT_DEVICE", "cpu")
    monkeypatch.setenv("FLT_THREADS", "1")
    assert _build.cache_key(root) == key, "the defaults spelled out are the same settings"
    monkeypatch.setenv("FLT_THREADS", "2")
    assert _build.cache_key(root) != key
    monkeypatch.setenv("FLT_THREADS", "1")
    (root / "requirements.txt").write_text("torch==9.9\n")
    assert _build.cache_key(root) != key


def _executed_notebook(text: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell(f"print({text!r})")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
    cell.execution_count = 1
    nb.cells = [cell]
    return nb


def test_open_cache_empties_a_cache_filled_under_another_key(tmp_path):
    path = tmp_path / "cache"
    cache = _build.open_cache(path, key="key-a")
    nb = _executed_notebook("hello")
    source = nbformat.from_dict(nb)
    source.cells[0].outputs, source.cells[0].execution_count = [], None
    nbformat.write(source, tmp_path / "nb.ipynb")  # the file on disk has no outputs
    _build.store(cache, nb, tmp_path / "nb.ipynb", 1.5)
    record = _build.cached_record(_build.open_cache(path, key="key-a"), source)
    assert record is not None and record.data["execution_seconds"] == 1.5
    cached = cache.get_cache_bundle(record.pk).nb
    assert cached.cells[0].outputs[0]["text"] == "hello\n"
    assert _build.cached_record(_build.open_cache(path, key="key-b"), nb) is None
    assert (path / _build.STAMP_NAME).read_text().strip() == "key-b"


@pytest.mark.slow
def test_editing_flt_lib_reexecutes_the_page_on_the_next_build(tmp_path):
    """End to end: a book built with the extension, a library edit, an incremental rebuild."""
    pkg = _copy_package(tmp_path / "pkg")
    book = tmp_path / "book"
    book.mkdir()
    (book / "_config.yml").write_text(
        "title: t\nexecute:\n  execute_notebooks: cache\n  cache: _build/.jupyter_cache\n"
        f"sphinx:\n  local_extensions:\n    book.ext.cache: {ROOT}\n"
        f"  config:\n    flt_library_root: {pkg}\n"
    )
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n- file: page\n")
    (book / "intro.md").write_text("# Intro\n")
    nb = nbformat.v4.new_notebook()
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Page"),
                nbformat.v4.new_code_cell("import flt_lib.stats as s\nprint('MARK', getattr(s, 'MARK', 0))")]
    nbformat.write(nb, book / "page.ipynb")
    env = {**os.environ, "PYTHONPATH": str(pkg), "PYTHONWARNINGS": "ignore"}
    env.pop("FLT_DEVICE", None)
    jb = Path(sys.executable).parent / "jupyter-book"

    def build() -> tuple[str, str]:
        proc = subprocess.run([str(jb), "build", str(book)], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        html = (book / "_build" / "html" / "page.html").read_text(encoding="utf-8")
        return proc.stdout + proc.stderr, html

    log1, html1 = build()
    assert "Executing notebook" in log1 and "MARK 0" in html1
    log2, _ = build()
    assert "Executing notebook" not in log2, "an unchanged book must come from the cache"
    stats = pkg / "flt_lib" / "stats.py"
    stats.write_text(stats.read_text() + "\nMARK = 1\n")
    log3, html3 = build()
    assert "emptied" in log3 and "Executing notebook" in log3, log3[-2000:]
    assert "MARK 1" in html3, "the page still shows the output of the old library"
    records = json.loads(json.dumps(sorted(p.name for p in (book / "_build" / ".jupyter_cache").iterdir())))
    assert _build.STAMP_NAME in records


def test_a_kernel_that_dies_while_starting_is_started_again():
    calls = []

    def start(flaky_times):
        calls.append(1)
        if len(calls) <= flaky_times:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "kernel"

    assert nbval_kernel_start.retry_kernel_start(start, pause=0)(2) == "kernel"
    assert len(calls) == 3
    calls.clear()
    with pytest.raises(RuntimeError, match="kernel_info"):
        nbval_kernel_start.retry_kernel_start(start, attempts=2, pause=0)(5)
    assert len(calls) == 2, "gives up after the given number of attempts"


def test_other_errors_are_not_retried():
    calls = []

    def start():
        calls.append(1)
        raise RuntimeError("a cell raised")

    with pytest.raises(RuntimeError, match="a cell raised"):
        nbval_kernel_start.retry_kernel_start(start, pause=0)()
    assert len(calls) == 1


def test_nbval_plugin_wraps_nbval_kernel_start():
    pytest.importorskip("nbval")
    from nbval import kernel

    from book import nbval_cache

    nbval_cache.pytest_configure(None)
    assert getattr(kernel.start_new_kernel, "__wrapped__", None) is not None
    wrapped = kernel.start_new_kernel
    nbval_cache.pytest_configure(None)
    assert kernel.start_new_kernel is wrapped, "configuring twice does not wrap twice"


@pytest.mark.slow
def test_the_executor_runs_kernels_over_ipc_without_the_tcp_warning(tmp_path, capfd):
    psutil = pytest.importorskip("psutil")
    nb = _executed_notebook("unused")
    nb.cells = [nbformat.v4.new_code_cell(
        "import json\nfrom ipykernel.connect import get_connection_info\n"
        "print(json.loads(get_connection_info())['transport'], 6 * 7)"
    )]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    saved = dict(os.environ)
    try:  # _run_notebook sets the environment of the (worker) process it runs in
        _, done, _, error = _build._run_notebook(str(path), 60, _build.worker_env())
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert not error, error
    assert done["cells"][0]["outputs"][0]["text"] == "ipc 42\n"
    seen = capfd.readouterr()
    assert "without encryption" not in seen.out + seen.err, "the kernel ran over TCP"
    assert not list(tmp_path.glob("kernel*")), "IPC sockets are made in a temporary folder"
    kernels = [c for c in psutil.Process().children(recursive=True)
               if "ipykernel" in " ".join(c.cmdline())]
    assert not kernels, "the kernel must be shut down when its notebook is done"
