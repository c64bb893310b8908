"""The book's figure style: sizes for the content column, and crisp (2x PNG) inline figures."""

import base64
import struct

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from flt_lib import plotting  # noqa: E402


def _png_size(data: str) -> tuple[int, int]:
    raw = base64.b64decode(data) if isinstance(data, str) else data
    return struct.unpack(">II", raw[16:24])


def test_book_style_sizes_suit_the_column():
    with plotting.book_style():
        assert tuple(matplotlib.rcParams["figure.figsize"]) == (6.4, 3.6)
        assert matplotlib.rcParams["legend.fontsize"] >= 8
        assert matplotlib.rcParams["xtick.labelsize"] >= 8


def test_use_book_style_outside_ipython_only_sets_rcparams():
    with matplotlib.rc_context():
        plotting.use_book_style()
        assert matplotlib.rcParams["figure.facecolor"] == "white"
        assert plotting._use_crisp_inline_figures() is False


def test_use_book_style_in_ipython_sends_2x_png():
    """In a kernel, a 6.4 in figure arrives as a 1280 px PNG that says: show me 640 px wide."""
    interactiveshell = pytest.importorskip("IPython.core.interactiveshell")
    shell = interactiveshell.InteractiveShell.instance()
    try:
        with matplotlib.rc_context():
            plotting.use_book_style()
            fig, ax = plt.subplots()
            ax.plot([0, 1], [0, 1])
            data, metadata = shell.display_formatter.format(fig)
            plt.close(fig)
        width, height = _png_size(data["image/png"])
        shown = metadata["image/png"]["width"]
        assert 600 <= shown <= 660, f"figure shown {shown} px wide, expected about 640"
        assert width == 2 * shown, f"PNG is {width} px for {shown} px on the page: not 2x"
    finally:
        interactiveshell.InteractiveShell.clear_instance()
