"""The check-free cores that the pages show (issue 24) compute what their public functions
compute.

A core ``_f`` (docstring "The check-free core of ...") holds the mathematics; its public
``f`` checks the arguments, then returns ``_f(...)``. The structural test proves that
every wrapper ends by returning its core's value; the spot checks compare the two on
real inputs, and the bad-input tests of each module keep proving the wrapper's checks.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap

import pytest
import torch

import flt_lib

MARK = "The check-free core of"


def _cores():
    out = []
    for info in pkgutil.walk_packages(flt_lib.__path__, "flt_lib."):
        mod = importlib.import_module(info.name)
        owners = [mod] + [c for _, c in inspect.getmembers(mod, inspect.isclass)
                          if c.__module__ == mod.__name__]
        for owner in owners:
            for name, obj in vars(owner).items():
                if inspect.isfunction(obj) and (obj.__doc__ or "").startswith(MARK) \
                        and obj.__module__ == mod.__name__:
                    out.append((owner, name, obj))
    return out


CORES = _cores()


def test_there_are_cores():
    assert len(CORES) >= 80


@pytest.mark.parametrize("owner,name,core", CORES,
                         ids=[f"{c.__module__}.{c.__qualname__}" for _, _, c in CORES])
def test_the_public_function_returns_its_core(owner, name, core):
    public_name = name[1:] if not name.endswith("_core") else name[: -len("_core")]
    public = vars(owner).get(public_name)
    assert public is not None, f"{core.__qualname__} has no public {public_name}"
    tree = ast.parse(textwrap.dedent(inspect.getsource(public)))
    last = tree.body[0].body[-1]
    assert isinstance(last, ast.Return) and isinstance(last.value, ast.Call), (
        f"{public.__qualname__} must end with `return {name}(...)`")
    f = last.value.func
    called = f.id if isinstance(f, ast.Name) else f.attr
    assert called == name, f"{public.__qualname__} returns {called}, not {name}"
    # the core's body holds no argument check
    from book.listings import is_check  # noqa: PLC0415

    body = ast.parse(textwrap.dedent(inspect.getsource(core))).body[0].body[1:]
    checks = [ast.unparse(s)[:60] for st in body for s in ast.walk(st)
              if isinstance(s, ast.stmt) and is_check(s)]
    assert not checks, f"{core.__qualname__} still checks: {checks}"


def _g(seed=0):
    return torch.Generator().manual_seed(seed)


def test_spot_checks_public_equals_core():
    from flt_lib.bayes import linear
    from flt_lib.feedforward.mlp import residual, symmetries
    from flt_lib.feedforward.regions import arrangements
    from flt_lib.symmetry import spectral
    from flt_lib.training import distillation, normalisation

    g = _g()
    x = torch.randn(5, 3, generator=g, dtype=torch.float64)
    W = torch.randn(3, 3, generator=g, dtype=torch.float64)
    b = torch.randn(3, generator=g, dtype=torch.float64)
    assert torch.equal(residual.residual_layer(x, W, b),
                       residual._residual_layer(x, W, b, V=None, activation="relu"))
    Ws = [torch.randn(4, 3, generator=g, dtype=torch.float64),
          torch.randn(2, 4, generator=g, dtype=torch.float64)]
    assert torch.equal(residual.compose_linear(Ws), Ws[1] @ Ws[0])
    params = [(torch.randn(2, 3, generator=g, dtype=torch.float64), torch.zeros(2)),
              (torch.randn(2, 5, generator=g, dtype=torch.float64), torch.zeros(2))]
    assert torch.equal(residual.dense_forward(params, x),
                       residual._dense_forward(params, x, activation="relu"))
    Pi = torch.full((3, 3), 0.1, dtype=torch.float64) + 0.7 * torch.eye(3, dtype=torch.float64)
    y = torch.tensor([0, 2, 1])
    assert torch.equal(distillation.smooth_labels(y, Pi), Pi[y])
    X = torch.randn(20, 3, generator=g, dtype=torch.float64)
    assert torch.equal(normalisation.whiten(X), normalisation._whiten(X))
    v = torch.randn(4, 3, generator=g, dtype=torch.float64)
    gains = torch.rand(4, generator=g, dtype=torch.float64)
    assert torch.equal(normalisation.weight_norm(v, gains), normalisation._weight_norm(v, gains))
    A = torch.tensor([[0, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=torch.float64)
    for kind in ("combinatorial", "normalized"):
        assert torch.equal(spectral.laplacian(A, kind), spectral._laplacian(A, kind))
    f = torch.randn(6, 4, generator=g, dtype=torch.float64)
    lw = torch.randn(6, generator=g, dtype=torch.float64)
    for a, c in zip(linear.ensemble_predictive(f, lw), linear._ensemble_predictive(f, lw)):
        assert torch.equal(a, c)
    assert symmetries.count_symmetries([3, 2], odd=True) == 6 * 8 * 2 * 4
    lines = [(1, 0, 0), (0, 1, 0), (1, 1, -1)]
    assert arrangements.zaslavsky_regions_2d(lines) == 7
