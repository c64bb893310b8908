"""Shared fixtures and helpers for the test-suite."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent

# One torch thread per test process (FLT_THREADS overrides), as in the notebooks: the unit
# tests' tensors are small, and two xdist workers with two threads each would fight over the
# two cores.
from flt_lib.device import set_threads  # noqa: E402

set_threads()


def toc_files(root: Path = ROOT) -> list[str]:
    """Every ``file:`` entry of ``_toc.yml`` (root included), in order, without suffix."""
    toc = yaml.safe_load((root / "_toc.yml").read_text(encoding="utf-8"))
    out = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                out.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return out


def toc_notebooks(root: Path = ROOT) -> list[Path]:
    """The notebooks listed in ``_toc.yml``, in reading order."""
    return [root / f"{f}.ipynb" for f in toc_files(root) if (root / f"{f}.ipynb").exists()]


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
