import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from flt_lib import plotting  # noqa: E402


def test_get_ax_axes_in_axes_out():
    fig, ax = plt.subplots()
    assert plotting.get_ax(ax) is ax
    new = plotting.get_ax(None, figsize=(2, 2))
    assert new is not ax and tuple(new.figure.get_size_inches()) == (2, 2)
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes or None, got str"):
        plotting.get_ax("ax")
    plt.close("all")


def test_plot_loglog_draws_data_and_fit():
    ax = plotting.plot_loglog([1, 10, 100], [1, 0.1, 0.01], label="data")
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["data", "fit: slope -1.00"]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="strictly positive"):
        plotting.plot_loglog([1, 2], [0, 1])
    plt.close("all")


def test_reference_slope():
    fig, ax = plt.subplots()
    plotting.reference_slope(ax, -0.5, x0=1, y0=2, x1=100)
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_ydata(), [2, 0.2])
    with pytest.raises(ValueError, match="x1 must be > 1.0, got 0.5"):
        plotting.reference_slope(ax, 1, x0=1, y0=1, x1=0.5)
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes, got NoneType"):
        plotting.reference_slope(None, 1, x0=1, y0=1, x1=2)
    plt.close("all")


def test_style_is_scoped_and_opaque():
    before = matplotlib.rcParams["figure.facecolor"]
    with plotting.book_style():
        # An opaque white card with dark ink reads on both light and dark page themes.
        assert matplotlib.rcParams["figure.facecolor"] == "white"
        assert matplotlib.rcParams["savefig.facecolor"] == "white"
        assert matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][0] == plotting.COLORS[0]
    assert matplotlib.rcParams["figure.facecolor"] == before


def test_importing_plotting_changes_no_rcparams():
    import importlib
    import matplotlib as mpl

    snapshot = dict(mpl.rcParams)
    importlib.reload(plotting)
    assert dict(mpl.rcParams) == snapshot


def test_as_numpy_and_tensor_inputs():
    import torch

    t = torch.tensor([1.0, 10.0, 100.0], requires_grad=True)
    np.testing.assert_array_equal(plotting.as_numpy(t), [1.0, 10.0, 100.0])
    np.testing.assert_array_equal(plotting.as_numpy([1, 2]), [1, 2])
    ax = plotting.plot_loglog(t, torch.tensor([1.0, 0.1, 0.01]), label="tensors")
    assert [line.get_label() for line in ax.get_lines()] == ["tensors", "fit: slope -1.00"]
    plt.close("all")
