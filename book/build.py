"""Book tooling (not part of the library API): execute each notebook once, build from a cache.

The website is built with MyST-NB's ``cache`` execution mode: executed notebooks live in a
jupyter-cache project at ``_build/.jupyter_cache``, matched by the hash of their code cells.
That hash does not see ``flt_lib``, so on its own the cache would serve stale outputs after a
library change. This module closes the gap: the cache is stamped with :func:`cache_key`, a hash
of every ``flt_lib`` source file, ``requirements.txt`` and the device/thread settings, and a
cache filled under another key is emptied before anything reads it. Everything that touches
the cache goes through :func:`open_cache`:

- the Sphinx extension (this module is listed in ``_config.yml``), so that a plain
  ``jupyter-book build`` can never use stale outputs either;
- :func:`execute`, which runs the notebooks that are not cached on all cores, longest first;
- ``flt_lib._nbval_cache``, the pytest plugin that stores nbval's executed notebooks, so that
  ``make test`` executes every notebook once and the strict build reads them back.

Usage, from the repository root::

    python -m flt_lib._build execute [--jobs N]   # execute what the cache lacks, in parallel
    python -m flt_lib._build book [--jobs N]      # execute, then the strict build (make book)
    python -m flt_lib._build status               # which notebooks are cached
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = ROOT / "_build"
CACHE_DIR = BUILD_DIR / ".jupyter_cache"
STAMP_NAME = "flt_lib.key"
LOG_PATH = BUILD_DIR / "executions.jsonl"
OK_MARKER = BUILD_DIR / ".last_build_ok"
CELL_TIMEOUT = 300  # seconds per cell, as in _config.yml
# Book tooling inside flt_lib: no notebook imports these (tests/test_colab_imports.py), so they
# cannot change what a notebook prints, and editing them must not re-execute the book.
TOOLING = ("_notebook", "_build", "_nbval_cache", "_bench", "_sphinx")

__all__ = ["cache_key", "open_cache", "store", "cached_record", "execute", "notebooks", "setup"]


# ---------------------------------------------------------------------------------------------
# The cache and its key
# ---------------------------------------------------------------------------------------------


def _settings() -> dict[str, str]:
    """The environment settings that change what a notebook prints."""
    device = os.environ.get("FLT_DEVICE", "").strip().lower() or "cpu"
    threads = os.environ.get("FLT_THREADS", "").strip() or "1"
    return {"FLT_DEVICE": device, "FLT_THREADS": threads}


def cache_key(root: Path = ROOT) -> str:
    """Hash of everything besides a notebook's own code that decides its outputs.

    Covers every ``flt_lib/**/*.py`` (path and content) except the book tooling (``TOOLING``,
    which no notebook imports), ``requirements.txt`` (the pinned environment) and the
    ``FLT_DEVICE``/``FLT_THREADS`` settings.
    """
    h = hashlib.sha256()
    for path in sorted((root / "flt_lib").rglob("*.py")):
        if "__pycache__" in path.parts or (path.parent == root / "flt_lib" and path.stem in TOOLING):
            continue
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    req = root / "requirements.txt"
    if req.exists():
        h.update(req.read_bytes())
    h.update(json.dumps(_settings(), sort_keys=True).encode())
    return h.hexdigest()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An inter-process lock (pytest-xdist workers share the cache)."""
    from filelock import FileLock

    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        yield


def open_cache(path: Path = CACHE_DIR, *, key: str | None = None):
    """Return the jupyter-cache at ``path``, emptied first if it was filled under another key.

    Args:
        path: the cache directory.
        key: the key the cache must carry; defaults to :func:`cache_key` of this checkout.

    Returns:
        A ``jupyter_cache`` cache object.
    """
    from jupyter_cache import get_cache

    path = Path(path).resolve()
    key = key or cache_key()
    with _locked(path):
        stamp = path / STAMP_NAME
        if path.exists() and (not stamp.exists() or stamp.read_text().strip() != key):
            shutil.rmtree(path)
            print(f"[flt_lib._build] flt_lib or the settings changed: emptied {path}", flush=True)
        path.mkdir(parents=True, exist_ok=True)
        if not stamp.exists():
            stamp.write_text(key + "\n")
        return get_cache(str(path))


def cached_record(cache, nb):
    """The cache record matching notebook ``nb`` (a ``NotebookNode``), or None."""
    try:
        return cache.match_cache_notebook(nb)
    except KeyError:
        return None


def store(cache, nb, path: Path, seconds: float) -> None:
    """Put an executed notebook into the cache, with its run time for the execution table.

    The outputs are copied into the notebook as it is on disk, so that the cache entry hashes
    exactly like the source (an executor may add cell metadata such as timings).
    """
    import nbformat
    from jupyter_cache.base import CacheBundleIn

    source = nbformat.read(path, as_version=4)
    src_code = [c for c in source.cells if c.cell_type == "code"]
    run_code = [c for c in nb.cells if c.cell_type == "code"]
    if len(src_code) != len(run_code):
        raise ValueError(f"{path}: the executed notebook has {len(run_code)} code cells, "
                         f"the file {len(src_code)}")
    for src, run in zip(src_code, run_code):
        src.outputs, src.execution_count = run.outputs, run.execution_count
    with _locked(Path(cache.path)):
        cache.cache_notebook_bundle(
            CacheBundleIn(source, str(Path(path).resolve()), data={"execution_seconds": seconds}),
            check_validity=False,
            overwrite=True,
        )


def log_execution(path: Path, seconds: float, *, by: str) -> None:
    """Append one line to ``_build/executions.jsonl``: which notebook ran, how long, by whom.

    ``FLT_RUN_ID`` (set by ``make test``) tags the lines of one run, so a test can prove that no
    notebook was executed twice in it.
    """
    rel = Path(path).resolve().relative_to(ROOT).as_posix()
    line = {
        "notebook": rel,
        "seconds": round(seconds, 3),
        "by": by,
        "run": os.environ.get("FLT_RUN_ID", ""),
        "time": time.time(),
    }
    LOG_PATH.parent.mkdir(parents=True, exist_ok=True)
    with _locked(LOG_PATH), LOG_PATH.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


def read_log() -> list[dict]:
    """Every line of ``_build/executions.jsonl`` (empty if there is none)."""
    if not LOG_PATH.exists():
        return []
    return [json.loads(s) for s in LOG_PATH.read_text(encoding="utf-8").splitlines() if s.strip()]


# ---------------------------------------------------------------------------------------------
# Parallel execution
# ---------------------------------------------------------------------------------------------


def notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks listed in ``_toc.yml``, in reading order."""
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [root / f"{f}.ipynb" for f in files if (root / f"{f}.ipynb").exists()]


def worker_env(threads: str | None = None) -> dict[str, str]:
    """The environment of a notebook kernel: ``FLT_THREADS`` (default 1), and BLAS/OpenMP to match."""
    env = dict(os.environ)
    n = threads or env.get("FLT_THREADS", "").strip() or "1"
    env["FLT_THREADS"] = n
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, n)
    env.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    return env


KERNEL_START_ATTEMPTS = 3


def is_kernel_start_failure(err: BaseException) -> bool:
    """Whether ``err`` says that a kernel died while starting, before it ran any code.

    Seen once in a fresh-clone ``make test`` (one notebook of 52). nbval discards the kernel's
    stderr, so the cause is not known; the usual one is two kernels, started at the same
    moment by two processes, being handed the same free port. Starting again is safe because
    no cell has run.
    """
    return isinstance(err, RuntimeError) and "before replying to kernel_info" in str(err)


def retry_kernel_start(start, *, attempts: int = KERNEL_START_ATTEMPTS, pause: float = 1.0):
    """Wrap ``start`` so that a kernel that dies while starting is started again."""

    @functools.wraps(start)
    def started(*args, **kwargs):
        for attempt in range(1, attempts + 1):
            try:
                return start(*args, **kwargs)
            except RuntimeError as err:
                if attempt == attempts or not is_kernel_start_failure(err):
                    raise
                print(f"[flt_lib._build] kernel died while starting ({err}); "
                      f"attempt {attempt + 1} of {attempts}", file=sys.stderr, flush=True)
                time.sleep(pause)

    return started


def _run_notebook(path: str, timeout: int, env: dict[str, str]) -> tuple[str, dict | None, float, str]:
    """Execute one notebook in a fresh kernel; return (path, executed nb, seconds, error)."""
    import nbformat
    from nbclient import NotebookClient

    os.environ.clear()
    os.environ.update(env)  # the kernel inherits this process's environment
    t0 = time.perf_counter()

    def run():
        nb = nbformat.read(path, as_version=4)
        NotebookClient(
            nb, timeout=timeout, kernel_name="python3", record_timing=False,
            resources={"metadata": {"path": str(Path(path).parent)}},
        ).execute()
        return nb

    try:
        nb = retry_kernel_start(run)()
    except Exception as err:  # a failing cell: report it, cache nothing
        return path, None, time.perf_counter() - t0, f"{type(err).__name__}: {err}"
    return path, nb, time.perf_counter() - t0, ""


def _last_times() -> dict[str, float]:
    """The last recorded run time of each notebook (to start the longest ones first)."""
    return {row["notebook"]: row["seconds"] for row in read_log()}


def execute(
    paths: list[Path] | None = None,
    *,
    jobs: int | None = None,
    force: bool = False,
    threads: str | None = None,
    by: str = "executor",
    quiet: bool = False,
) -> dict[str, float]:
    """Execute the notebooks that the cache lacks, ``jobs`` at a time, and cache them.

    Args:
        paths: notebooks to consider; default every notebook in ``_toc.yml``.
        jobs: parallel kernels; default the number of CPU cores.
        force: execute even the notebooks that are cached (``make bench``).
        threads: ``FLT_THREADS`` for the kernels; default the environment's, else 1.
        by: the name this run has in ``_build/executions.jsonl``.
        quiet: print nothing but failures.

    Returns:
        Run time in seconds of each executed notebook, by repository-relative path.

    Raises:
        RuntimeError: if a notebook failed (the others still run and are cached).
    """
    import nbformat

    paths = notebooks() if paths is None else [Path(p).resolve() for p in paths]
    jobs = jobs or os.cpu_count() or 1
    env = worker_env(threads)
    cache = open_cache()
    todo = []
    for p in paths:
        if force or cached_record(cache, nbformat.read(p, as_version=4)) is None:
            todo.append(p)
    if not todo:
        if not quiet:
            print(f"[flt_lib._build] all {len(paths)} notebooks are cached", flush=True)
        return {}
    previous = _last_times()
    todo.sort(key=lambda p: -previous.get(p.relative_to(ROOT).as_posix(), 1e9))
    if not quiet:
        print(f"[flt_lib._build] executing {len(todo)} of {len(paths)} notebooks, {jobs} at a time"
              f" (FLT_THREADS={env['FLT_THREADS']})", flush=True)
    times, failures = {}, []
    t_all = time.perf_counter()
    with cf.ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_run_notebook, str(p), CELL_TIMEOUT, env) for p in todo]
        for fut in cf.as_completed(futures):
            path, nb, seconds, error = fut.result()
            rel = Path(path).relative_to(ROOT).as_posix()
            log_execution(Path(path), seconds, by=by)
            if error:
                failures.append(f"{rel}: {error}")
                print(f"  FAILED {rel} after {seconds:.1f} s\n{error}", flush=True)
                continue
            store(cache, nbformat.from_dict(nb), Path(path), seconds)
            times[rel] = seconds
            if not quiet:
                print(f"  {seconds:6.1f} s  {rel}", flush=True)
    if not quiet:
        print(f"[flt_lib._build] executed {len(times)} notebooks in "
              f"{time.perf_counter() - t_all:.1f} s wall time", flush=True)
    if failures:
        raise RuntimeError("notebooks failed:\n" + "\n".join(failures))
    return times


# ---------------------------------------------------------------------------------------------
# The build
# ---------------------------------------------------------------------------------------------


def build(*, fresh: bool = False, path_output: Path | None = None) -> subprocess.CompletedProcess:
    """Run the strict build ``jupyter-book build -W -n --keep-going`` and return the process.

    Args:
        fresh: re-read every page (``--all``); otherwise Sphinx re-reads only the pages whose
            notebook or cached outputs changed, unless the previous build failed.
        path_output: where ``_build/html`` goes; default the repository.
    """
    jb = Path(sys.executable).parent / "jupyter-book"
    fresh = fresh or not OK_MARKER.exists()
    cmd = [str(jb), "build", "-W", "-n", "--keep-going"]
    if fresh:
        cmd.append("--all")
    if path_output is not None:
        cmd += ["--path-output", str(path_output)]
    cmd.append(str(ROOT))
    OK_MARKER.unlink(missing_ok=True)
    env = worker_env()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    (BUILD_DIR / "build.log").write_text(log, encoding="utf-8")
    warnings = [s for s in log.splitlines() if re.search(r"WARNING: |ERROR: |CRITICAL: ", s)]
    if proc.returncode == 0 and not warnings:
        OK_MARKER.write_text(cache_key() + "\n")
    return proc


# ---------------------------------------------------------------------------------------------
# Sphinx extension: the cache is keyed on flt_lib, also for a plain `jupyter-book build`
# ---------------------------------------------------------------------------------------------


def _on_builder_inited(app) -> None:
    config = getattr(app.env, "mystnb_config", None)
    if config is None or config.execution_mode != "cache":
        return
    path = Path(config.execution_cache_path or CACHE_DIR)
    if not path.is_absolute():
        path = (Path(app.srcdir) / path).resolve()
    app.env.mystnb_config = config.copy(execution_cache_path=str(path))
    open_cache(path)


def _notebook_records(app) -> dict[str, int | None]:
    """For each notebook page, the pk of the cache record that matches it now."""
    import nbformat

    cache = open_cache(Path(app.env.mystnb_config.execution_cache_path))
    out = {}
    for docname in app.env.found_docs:
        path = Path(app.env.doc2path(docname))
        if path.suffix == ".ipynb" and path.exists():
            record = cached_record(cache, nbformat.read(path, as_version=4))
            out[docname] = None if record is None else record.pk
    return out


def _on_env_get_outdated(app, env, added, changed, removed) -> list[str]:
    """Re-read a page whose cached outputs changed (e.g. after a change in flt_lib)."""
    if getattr(env, "mystnb_config", None) is None or env.mystnb_config.execution_mode != "cache":
        return []
    before = getattr(env, "flt_nb_records", {})
    now = _notebook_records(app)
    return [d for d, pk in now.items() if d not in added | changed and before.get(d, -1) != pk]


def _on_env_updated(app, env) -> list[str]:
    if getattr(env, "mystnb_config", None) is not None and env.mystnb_config.execution_mode == "cache":
        env.flt_nb_records = _notebook_records(app)
    return []


def setup(app) -> dict:
    """Sphinx entry point (``sphinx.extra_extensions`` in ``_config.yml``)."""
    app.connect("builder-inited", _on_builder_inited, priority=600)  # after MyST-NB's
    app.connect("env-get-outdated", _on_env_get_outdated)
    app.connect("env-updated", _on_env_updated)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m flt_lib._build", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["execute", "book", "status"])
    parser.add_argument("--jobs", type=int, default=None, help="parallel kernels (default: cores)")
    parser.add_argument("--all", action="store_true", help="book: re-read every page")
    args = parser.parse_args(argv)
    if args.command == "status":
        import nbformat

        cache = open_cache()
        for p in notebooks():
            rec = cached_record(cache, nbformat.read(p, as_version=4))
            print(f"{'cached ' if rec else 'MISSING'}  {p.relative_to(ROOT)}")
        return 0
    t0 = time.perf_counter()
    try:
        execute(jobs=args.jobs)
    except RuntimeError as err:
        print(err, file=sys.stderr)
        return 1
    if args.command == "execute":
        return 0
    t1 = time.perf_counter()
    proc = build(fresh=args.all)
    log = (BUILD_DIR / "build.log").read_text(encoding="utf-8")
    warnings = [s for s in log.splitlines() if re.search(r"WARNING: |ERROR: |CRITICAL: ", s)]
    for line in warnings:
        print(line)
    print(log[-600:] if proc.returncode else "")
    print(f"[flt_lib._build] execution {t1 - t0:.1f} s, build {time.perf_counter() - t1:.1f} s; "
          f"log in _build/build.log; site in _build/html/index.html")
    return 1 if proc.returncode or warnings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
