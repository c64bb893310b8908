"""The book's figure style, and a few axes-in, axes-out helpers.

Figures are drawn on an opaque white card with dark ink, so they stay readable on both
the light and the dark theme of the website (a transparent figure with black text
disappears on a dark page). The colour cycle is Okabe & Ito's colour-blind-safe palette.

Nothing here runs on import: call :func:`use_book_style` (the setup cell does) or wrap a
figure in ``with book_style(): ...``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes

from flt_lib._validate import check_real
from flt_lib.stats import loglog_slope

__all__ = [
    "BOOK_RC",
    "COLORS",
    "as_numpy",
    "book_style",
    "get_ax",
    "plot_loglog",
    "reference_slope",
    "use_book_style",
]

# Okabe & Ito (2008), "Color universal design": distinguishable under colour blindness.
# Three of its eight colours (orange, sky blue, yellow) are darkened at the same hue: on
# the figure's white card they had a contrast of 2.3, 2.3 and 1.3, and a thin line or an
# arc in them was hard to see. Every colour now has a contrast of at least 3 (WCAG's
# minimum for graphics) against white, and against the white as the dark theme dims it
# (tests/lib/test_plotting_style.py computes both).
COLORS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#D55E00",  # vermillion
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#C28500",  # orange (Okabe & Ito: #E69F00)
    "#3797D2",  # sky blue (#56B4E9)
    "#A09000",  # yellow (#F0E442), an olive yellow
    "#000000",  # black
)

# Sizes for the website's content column (about 700 px) and the PDF's text width: a
# figure 6.4 in wide is shown 640 px wide, so 10 pt text is about 14 px, as large as the
# page's own. Two panels side by side: at most (8, 3.4); three or more: stack them or
# use a 2x2 grid.
BOOK_RC: dict[str, object] = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.facecolor": "white",
    "axes.edgecolor": "#333333",
    "axes.labelcolor": "#111111",
    "text.color": "#111111",
    "xtick.color": "#333333",
    "ytick.color": "#333333",
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.prop_cycle": mpl.cycler(color=list(COLORS)),
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "image.cmap": "viridis",
    "figure.autolayout": True,
}

# How notebooks send figures to the page: PNG at twice the pixel density ("retina": the
# image carries its 1x size, so it is shown at that size and stays sharp on high-density
# screens). PNG, unlike SVG, also goes into the PDF through LaTeX unchanged.
INLINE_FORMAT = "retina"


def use_book_style() -> None:
    """Apply the book style to matplotlib's global settings (once, in the setup cell).

    Inside Jupyter (or Colab) it also makes the inline backend send crisp 2x PNG
    figures, and images (``imshow``, ``matshow``, ``pcolormesh``) are drawn without
    grid lines.
    """
    mpl.rcParams.update(BOOK_RC)
    _no_grid_over_images()
    _use_crisp_inline_figures()


def _in_book_style() -> bool:
    """True while the book style's grid is in effect."""
    return bool(mpl.rcParams["axes.grid"]) and mpl.rcParams["grid.color"] == BOOK_RC[
        "grid.color"
    ]


def _no_grid_over_images() -> None:
    """Make ``Axes.imshow`` (and ``matshow``, which calls it), ``pcolormesh`` and
    ``pcolor`` turn the axes' grid off while the book style is in effect: grid lines
    over a heatmap hide its cells.

    matplotlib has no setting for this (``axes.grid`` applies to every axes), so the
    methods are wrapped, once; outside the book style they do what they always did.
    """
    for name in ("imshow", "pcolormesh", "pcolor"):
        original = getattr(Axes, name)
        if getattr(original, "_flt_no_grid", False):
            continue
        setattr(Axes, name, _without_grid(original))


def _without_grid(original: Callable[..., Any]) -> Callable[..., Any]:
    """``original``, an ``Axes`` method that draws an image, turning the grid off."""

    @functools.wraps(original)
    def draw(self: Axes, *args: Any, **kwargs: Any) -> Any:
        artist = original(self, *args, **kwargs)
        if _in_book_style():
            self.grid(False)
        return artist

    draw._flt_no_grid = True  # type: ignore[attr-defined]
    return draw


def _use_crisp_inline_figures() -> bool:
    """Switch the inline backend to 2x PNG when running in IPython; True if it did."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:
        return False
    if get_ipython() is None:
        return False
    set_matplotlib_formats(INLINE_FORMAT)
    return True


@contextlib.contextmanager
def book_style() -> Iterator[None]:
    """Context manager that applies the book style only inside the ``with`` block."""
    _no_grid_over_images()
    with mpl.rc_context(BOOK_RC):
        yield


def as_numpy(x: object) -> np.ndarray:
    """Return ``x`` as a NumPy array, whatever it is: a tensor on any device, a list, a
    number.

    Matplotlib reads CPU tensors but not GPU ones; plotting through this helper lets a
    notebook compute on ``FLT_DEVICE`` and plot the result without
    ``.detach().cpu().numpy()``.

    Args:
        x: a ``torch.Tensor`` (any device, with or without grad), array, sequence or
            number.

    Returns:
        A NumPy array with the dtype of ``x``.
    """
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def get_ax(
    ax: Axes | None = None, *, figsize: tuple[float, float] | None = None
) -> Axes:
    """Return ``ax`` if given, otherwise a fresh ``Axes`` on a new figure.

    Args:
        ax: an existing ``Axes``, or None.
        figsize: size of the new figure in inches, used only when ``ax`` is None.
    """
    if ax is not None and not isinstance(ax, Axes):
        raise TypeError(
            f"ax must be a matplotlib Axes or None, got {type(ax).__name__}"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_loglog(
    x: Sequence[float] | np.ndarray | torch.Tensor,
    y: Sequence[float] | np.ndarray | torch.Tensor,
    *,
    ax: Axes | None = None,
    label: str | None = None,
    fit: bool = True,
    marker: str = "o",
) -> Axes:
    """Plot ``y`` against ``x`` on log-log axes, optionally with the fitted power law.

    Args:
        x: positive abscissae, shape (k,) (a tensor on any device, an array or a list).
        y: positive ordinates, shape (k,).
        ax: axes to draw on, or None for a new figure.
        label: legend label for the data.
        fit: if True, draw the least-squares line and put its slope in the legend.
        marker: matplotlib marker for the data points.

    Returns:
        The ``Axes`` drawn on.
    """
    xa, ya = as_numpy(x).astype(float), as_numpy(y).astype(float)
    slope, intercept = loglog_slope(xa, ya)  # validates x and y
    ax = get_ax(ax)
    (line,) = ax.loglog(xa, ya, marker=marker, linestyle="", label=label)
    if fit:
        grid = np.geomspace(xa.min(), xa.max(), 50)
        ax.loglog(
            grid,
            np.exp(intercept) * grid**slope,
            color=line.get_color(),
            linestyle="--",
            linewidth=1.2,
            label=f"fit: slope {slope:.2f}",
        )
    return ax


def reference_slope(
    ax: Axes,
    slope: float,
    *,
    x0: float,
    y0: float,
    x1: float,
    label: str | None = None,
) -> Axes:
    """Draw a reference power law ``y = y0 * (x / x0) ** slope`` between ``x0`` and
    ``x1``.

    Args:
        ax: log-log axes to draw on.
        slope: the exponent of the reference line.
        x0: left end (> 0), where the line passes through ``y0``.
        y0: value at ``x0`` (> 0).
        x1: right end (> x0).
        label: legend label; defaults to ``"slope {slope}"``.
    """
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes, got {type(ax).__name__}")
    slope = check_real(slope, "slope")
    x0 = check_real(x0, "x0", min_value=0.0, strict_min=True)
    y0 = check_real(y0, "y0", min_value=0.0, strict_min=True)
    x1 = check_real(x1, "x1", min_value=x0, strict_min=True)
    xs = np.array([x0, x1])
    ax.loglog(
        xs,
        y0 * (xs / x0) ** slope,
        color="#777777",
        linestyle=":",
        label=label or f"slope {slope:g}",
    )
    return ax
