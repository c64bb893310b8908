"""Packaging facts: version in step, cheap import, no import side effects, no bare PyPI name."""

import re
import subprocess
import sys
import tomllib

import flt_lib
from conftest import ROOT


def test_version_is_single_sourced():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["dynamic"] == ["version"]
    assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "flt_lib.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", flt_lib.__version__)


def test_runtime_dependencies_are_ranges_not_pins():
    # Installing flt_lib on Colab must not replace Colab's torch.
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(d.startswith("torch>=") for d in deps)
    assert not any("==" in d for d in deps), deps


def test_requirements_pin_cpu_torch():
    reqs = (ROOT / "requirements.txt").read_text().splitlines()
    assert "torch==2.13.0" in reqs


def test_import_is_light_and_has_no_side_effects():
    # Importing flt_lib must not pull in matplotlib, scipy or any topic module, and must not
    # add warning filters beyond what torch itself sets. (The 0.3 s import budget is measured in
    # MAINTAINING.md; this test checks the structural reason it holds.)
    code = (
        "import sys, warnings, torch, numpy; before = list(warnings.filters); import flt_lib; "
        "heavy = [m for m in ('matplotlib', 'scipy', 'flt_lib.plotting', 'flt_lib.connectionism', "
        "'flt_lib.flt', 'flt_lib.feedforward', 'flt_lib.optim') if m in sys.modules]; "
        "assert not heavy, heavy; assert warnings.filters == before; print('ok')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_lazy_submodules_load_on_access():
    assert flt_lib.plotting.__name__ == "flt_lib.plotting"
    try:
        flt_lib.no_such_module
    except AttributeError as err:
        assert "no attribute 'no_such_module'" in str(err)
    else:
        raise AssertionError("expected AttributeError")
