"""Execute each notebook once, keep the outputs in a cache, build the website from it.

The website is built with MyST-NB's ``cache`` execution mode: executed notebooks live in
a jupyter-cache project at ``_build/.jupyter_cache``, matched by the hash of their code
cells. That hash does not see ``flt_lib``, so on its own the cache would serve stale
outputs after a library change. This module closes the gap: the cache is stamped with
:func:`cache_key`, a hash of every file of ``flt_lib/``, ``requirements.txt`` and the
device/thread settings, and a cache filled under another key is emptied before anything
reads it. Everything that touches the cache goes through :func:`open_cache`:

- the Sphinx extension (:mod:`book.ext.cache`), so that a plain ``jupyter-book build``
  can never use stale outputs either;
- :func:`execute`, which runs the notebooks that are not cached on all cores, longest
  first;
- ``book.nbval_cache``, the pytest plugin that stores nbval's executed notebooks, so
  that ``make test`` executes every notebook once and the strict build reads them back.

Usage, from the repository root::

    python -m book.build execute [--jobs N]  # execute what the cache lacks, in parallel
    python -m book.build book [--jobs N]     # execute, then the strict build
    python -m book.build status              # which notebooks are cached
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import contextlib
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from book import ROOT
from book.upstream.nbval_kernel_start import retry_kernel_start

BUILD_DIR = ROOT / "_build"
CACHE_DIR = BUILD_DIR / ".jupyter_cache"
STAMP_NAME = "flt_lib.key"
LOG_PATH = BUILD_DIR / "executions.jsonl"
OK_MARKER = BUILD_DIR / ".last_build_ok"
CELL_TIMEOUT = 300  # seconds per cell, as in _config.yml

__all__ = [
    "cache_key",
    "open_cache",
    "store",
    "cached_record",
    "execute",
    "notebooks",
    "build",
]


# --------------------------------------------------------------------------------------
# The cache and its key
# --------------------------------------------------------------------------------------


def _settings() -> dict[str, str]:
    """The environment settings that change what a notebook prints."""
    device = os.environ.get("FLT_DEVICE", "").strip().lower() or "cpu"
    threads = os.environ.get("FLT_THREADS", "").strip() or "1"
    return {"FLT_DEVICE": device, "FLT_THREADS": threads}


def cache_key(root: Path = ROOT) -> str:
    """Hash of everything besides a notebook's own code that decides its outputs.

    Covers every file of ``flt_lib/`` (path and content; caches such as ``__pycache__``
    left out), ``requirements.txt`` (the pinned environment) and the
    ``FLT_DEVICE``/``FLT_THREADS`` settings. The book's tooling lives in ``book/``,
    outside the key: editing it never re-executes a notebook.
    """
    h = hashlib.sha256()
    for path in sorted((root / "flt_lib").rglob("*")):
        rel = path.relative_to(root)
        if (
            not path.is_file()
            or path.suffix == ".pyc"
            or any(part == "__pycache__" or part.startswith(".") for part in rel.parts)
        ):
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
    """Return the jupyter-cache at ``path``, emptied first if it was filled under
    another key.

    Args:
        path: the cache directory.
        key: the key the cache must carry; default :func:`cache_key` of this checkout.

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
            print(f"[book] flt_lib or the settings changed: emptied {path}", flush=True)
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
    """Put an executed notebook into the cache, with its run time for the execution
    table.

    The outputs are copied into the notebook as it is on disk, so that the cache entry
    hashes exactly like the source (an executor may add cell metadata such as timings).
    """
    import nbformat
    from jupyter_cache.base import CacheBundleIn

    source = nbformat.read(path, as_version=4)
    src_code = [c for c in source.cells if c.cell_type == "code"]
    run_code = [c for c in nb.cells if c.cell_type == "code"]
    if len(src_code) != len(run_code):
        raise ValueError(
            f"{path}: the executed notebook has {len(run_code)} code cells, "
            f"the file {len(src_code)}"
        )
    for src, run in zip(src_code, run_code):
        src.outputs, src.execution_count = run.outputs, run.execution_count
    with _locked(Path(cache.path)):
        cache.cache_notebook_bundle(
            CacheBundleIn(
                source, str(Path(path).resolve()), data={"execution_seconds": seconds}
            ),
            check_validity=False,
            overwrite=True,
        )


def log_execution(path: Path, seconds: float, *, by: str) -> None:
    """Append one line to ``_build/executions.jsonl``: which notebook ran, how long, by
    whom.

    ``FLT_RUN_ID`` (set by ``make test``) tags the lines of one run, so a test can prove
    that no notebook was executed twice in it.
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
    return [
        json.loads(s)
        for s in LOG_PATH.read_text(encoding="utf-8").splitlines()
        if s.strip()
    ]


# --------------------------------------------------------------------------------------
# Parallel execution
# --------------------------------------------------------------------------------------


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
    """The environment of a notebook kernel: ``FLT_THREADS`` (default 1), and
    BLAS/OpenMP to match."""
    env = dict(os.environ)
    n = threads or env.get("FLT_THREADS", "").strip() or "1"
    env["FLT_THREADS"] = n
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, n)
    env.setdefault("PYTHONWARNINGS", "ignore::DeprecationWarning")
    return env


def ipc_config(folder: str):
    """Configuration for kernels that talk over IPC (Unix sockets in ``folder``).

    Over TCP, ipykernel logs "Kernel is running over TCP without encryption" on every
    start (52 lines in ``make book``), and two kernels started at once can be handed the
    same free port (:mod:`book.upstream.nbval_kernel_start`). IPC sockets are files that
    only this user can open, and need no port. The configuration, not a kernel manager,
    is handed to the client, so that the client owns its kernel manager and shuts the
    kernel down when the notebook is done.
    """
    from traitlets.config import Config

    config = Config()
    config.KernelManager.transport = "ipc"
    config.KernelManager.ip = str(Path(folder) / "kernel")
    return config


def _run_notebook(
    path: str, timeout: int, env: dict[str, str]
) -> tuple[str, dict | None, float, str]:
    """Execute one notebook in a fresh kernel: (path, executed nb, seconds, error)."""
    import nbformat
    from nbclient import NotebookClient

    os.environ.clear()
    os.environ.update(env)  # the kernel inherits this process's environment
    t0 = time.perf_counter()

    def run(sockets: str):
        nb = nbformat.read(path, as_version=4)
        NotebookClient(
            nb,
            kernel_name="python3",
            config=ipc_config(sockets),
            timeout=timeout,
            record_timing=False,
            resources={"metadata": {"path": str(Path(path).parent)}},
        ).execute()
        return nb

    with tempfile.TemporaryDirectory(prefix="flt-kernel-") as sockets:
        try:
            nb = retry_kernel_start(run)(sockets)
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
            print(f"[book] all {len(paths)} notebooks are cached", flush=True)
        return {}
    previous = _last_times()
    todo.sort(key=lambda p: -previous.get(p.relative_to(ROOT).as_posix(), 1e9))
    if not quiet:
        print(
            f"[book] executing {len(todo)} of {len(paths)} notebooks, {jobs} at a time"
            f" (FLT_THREADS={env['FLT_THREADS']})",
            flush=True,
        )
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
        print(
            f"[book] executed {len(times)} notebooks in "
            f"{time.perf_counter() - t_all:.1f} s wall time",
            flush=True,
        )
    if failures:
        raise RuntimeError("notebooks failed:\n" + "\n".join(failures))
    return times


# --------------------------------------------------------------------------------------
# The build
# --------------------------------------------------------------------------------------


def build(
    *, fresh: bool = False, path_output: Path | None = None
) -> subprocess.CompletedProcess:
    """Run the strict build ``jupyter-book build -W -n --keep-going`` and return the
    process.

    Args:
        fresh: re-read every page (``--all``); otherwise Sphinx re-reads only the pages
            whose notebook or cached outputs changed, unless the previous build failed.
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
    warnings = [
        s for s in log.splitlines() if re.search(r"WARNING: |ERROR: |CRITICAL: ", s)
    ]
    if proc.returncode == 0 and not warnings:
        OK_MARKER.write_text(cache_key() + "\n")
    return proc


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    """Command line: ``execute``, ``book`` (``make book``) or ``status``; returns the
    exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m book.build", description=__doc__.split("\n")[0]
    )
    parser.add_argument("command", choices=["execute", "book", "status"])
    parser.add_argument(
        "--jobs", type=int, default=None, help="parallel kernels (default: cores)"
    )
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
    print("[book] building the website (strict: a warning fails the build)", flush=True)
    proc = build(fresh=args.all)
    log = (BUILD_DIR / "build.log").read_text(encoding="utf-8")
    warnings = [
        s for s in log.splitlines() if re.search(r"WARNING: |ERROR: |CRITICAL: ", s)
    ]
    for line in warnings:
        print(line)
    if proc.returncode:
        print(log[-600:])
    failed = bool(proc.returncode or warnings)
    where = "the build FAILED; the log" if failed else "the website"
    path = "_build/build.log" if failed else "_build/html/index.html"
    print(
        f"[book] done in {time.perf_counter() - t0:.0f} s (executing "
        f"{t1 - t0:.1f} s, building {time.perf_counter() - t1:.1f} s); "
        f"{where} is in {path}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
