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


def _luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour with channels in [0, 1]."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a, b) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _dimmed(rgb):
    """A colour as the dark theme shows images: pydata-sphinx-theme's
    `filter: brightness(.8) contrast(1.2)` on every image of the page."""
    return tuple(min(1.0, max(0.0, (0.8 * c - 0.5) * 1.2 + 0.5)) for c in rgb)


def test_contrast_formula_matches_wcag_examples():
    assert _contrast((0, 0, 0), (1, 1, 1)) == pytest.approx(21.0)
    assert _contrast((1, 1, 1), (1, 1, 1)) == pytest.approx(1.0)
    # #767676 on white is WCAG's smallest grey with 4.5:1.
    assert _contrast(matplotlib.colors.to_rgb("#767676"), (1, 1, 1)) == pytest.approx(4.54, abs=0.01)


@pytest.mark.parametrize("color", plotting.COLORS)
def test_palette_contrasts_with_the_figure_background_light_and_dark(color):
    """Every colour of the cycle stands out from the figure's white card by at least 3:1
    (WCAG 2.1, 1.4.11, graphical objects), on the light theme and dimmed by the dark one.
    Okabe & Ito's yellow #F0E442 had 1.3:1, its orange and sky blue 2.3:1."""
    face = matplotlib.colors.to_rgb(plotting.BOOK_RC["axes.facecolor"])
    rgb = matplotlib.colors.to_rgb(color)
    light, dark = _contrast(rgb, face), _contrast(_dimmed(rgb), _dimmed(face))
    assert light >= 3.0, f"{color} on {face}: contrast {light:.2f} < 3"
    assert dark >= 3.0, f"{color} on the dark theme's dimmed white: contrast {dark:.2f} < 3"


def test_darkened_colours_keep_okabe_ito_hues():
    """The three darkened colours keep the hue of Okabe & Ito's originals (within 3
    degrees), which is what keeps the palette readable with colour blindness."""
    import colorsys

    originals = {4: "#E69F00", 5: "#56B4E9", 6: "#F0E442"}
    for index, original in originals.items():
        ours = colorsys.rgb_to_hsv(*matplotlib.colors.to_rgb(plotting.COLORS[index]))[0]
        theirs = colorsys.rgb_to_hsv(*matplotlib.colors.to_rgb(original))[0]
        gap = min(abs(ours - theirs), 1 - abs(ours - theirs)) * 360
        assert gap <= 3, f"COLORS[{index}] is {gap:.1f} degrees off {original}'s hue"


def test_images_have_no_grid_in_the_book_style():
    with plotting.book_style():
        fig, (ax_img, ax_line, ax_mat, ax_mesh) = plt.subplots(1, 4)
        ax_img.imshow([[0, 1], [1, 0]])
        ax_line.plot([0, 1], [0, 1])
        ax_mat.matshow([[0, 1], [1, 0]])
        ax_mesh.pcolormesh([[0, 1], [1, 0]])
        fig.canvas.draw()
        shown = [any(line.get_visible() for line in ax.get_xgridlines())
                 for ax in (ax_img, ax_line, ax_mat, ax_mesh)]
        plt.close(fig)
    assert shown == [False, True, False, False], (
        f"grid shown on (imshow, plot, matshow, pcolormesh): {shown}")


def test_imshow_outside_the_book_style_is_untouched():
    with plotting.book_style():
        pass  # installs the wrapper
    with matplotlib.rc_context({"axes.grid": True, "grid.color": "#b0b0b0"}):
        fig, ax = plt.subplots()
        ax.imshow([[0, 1], [1, 0]])
        fig.canvas.draw()
        visible = any(line.get_visible() for line in ax.get_xgridlines())
        plt.close(fig)
    assert visible, "imshow turned the grid off outside the book style"
