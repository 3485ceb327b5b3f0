"""Text heatmaps: words in monospace character cells, each in a box shaded by its weight on an explicit scale
with a colour bar. `text_heatmap` draws one sentence with one row per measure (the API's `heatmap`);
`text_canvas`, `draw_heat_text` and `heat_colorbar` are the drawing code it shares with the J&W
adversarial-example figures (`report.jw.adversary`), so both look alike."""

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib import pyplot as plt
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Colormap, ListedColormap, Normalize, to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from attnexp.report.style import COLUMN_WIDTH, SEQUENTIAL_CMAP

EXAMPLE_FONT = 6.0  # points
MONOSPACE_ADVANCE = 0.602  # DejaVu Sans Mono: character width per point of font size
EXAMPLE_LINE_INCHES = 0.125  # one line: 9 pt for 6 pt letters
# Within a line (units of a line, from its top): the box spans BOX_TOP..BOX_BOTTOM, the baseline is BASELINE
# (ascenders and descenders of 6 pt letters fit inside), boxes stick out BOX_PAD characters either side.
BOX_TOP, BASELINE, BOX_BOTTOM, BOX_PAD = 0.06, 0.72, 0.94, 0.2
COLOURBAR_INCHES = 0.4  # below the text: the shading's colour bar


def heat_cmap() -> Colormap:
    """The shading's colour map: the sequential map up to 85 % of its range, so dark cells keep readable words."""
    return ListedColormap(colormaps[SEQUENTIAL_CMAP](np.linspace(0.0, 0.85, 256)), name="heat")


def shares(weights: Sequence[float]) -> np.ndarray:
    """|w| / sum |w|: each word's share of the row's total (all zero where the row is), so that rows of different
    measures (attention, gradients, LOO, …) shade on one scale."""
    weights = np.abs(np.nan_to_num(np.asarray(weights, dtype=float)))
    total = weights.sum()
    return weights / total if total > 0 else weights


def word_colours(weights: Sequence[float], vmax: float) -> list[str]:
    """The shading of each weight on the scale 0..`vmax` (hex colours, for HTML)."""
    cmap = heat_cmap()
    scaled = np.clip(np.asarray(weights, dtype=float) / vmax, 0, 1) if vmax > 0 else np.zeros(len(weights))
    return [to_hex(cmap(w)) for w in scaled]


def layout_words(words: list[str], chars_per_line: int) -> list[tuple[int, int]]:
    """(line, column) of each word in monospace character cells, wrapping at `chars_per_line`."""
    places, line, column = [], 0, 0
    for word in words:
        if column and column + len(word) > chars_per_line:
            line, column = line + 1, 0
        places.append((line, column))
        column += len(word) + 1
    return places


def lines_needed(words: Sequence[str], chars_per_line: int) -> int:
    return layout_words(list(words), chars_per_line)[-1][0] + 1 if len(words) else 1


def cells(width_inches: float) -> float:
    """How many characters of EXAMPLE_FONT (monospace) fit `width_inches`."""
    return width_inches * 72 / (MONOSPACE_ADVANCE * EXAMPLE_FONT)


def line_capacity(width_inches: float) -> int:
    """Characters per line of text drawn across `width_inches` (a cell to spare for the boxes' padding)."""
    return max(10, int(cells(width_inches)) - 1)


def text_canvas(width: float, left: float, right: float, total_lines: float, top: float) -> tuple[Figure, object]:
    """A figure for lines of words in character cells: the axes span `left`..`right` (figure fractions) and
    `total_lines` lines, with `top` inches above (title) and COLOURBAR_INCHES below (the colour scale). One x unit
    is exactly one character's advance, one y unit one line (EXAMPLE_LINE_INCHES), so boxes and words line up
    whatever the words' lengths."""
    height = top + total_lines * EXAMPLE_LINE_INCHES + COLOURBAR_INCHES
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((left, COLOURBAR_INCHES / height, right - left, total_lines * EXAMPLE_LINE_INCHES / height))
    ax.set_axis_off()
    ax.set_xlim(0, cells((right - left) * width))
    ax.set_ylim(-total_lines, 0)
    return fig, ax


def heat_colorbar(fig: Figure, vmax: float, label: str, left: float) -> None:
    """The shading's scale, 0..`vmax`, as a horizontal colour bar along the bottom of a `text_canvas`."""
    height = fig.get_figheight()
    cax = fig.add_axes((left, 0.2 / height, 0.35, 0.06 / height))
    bar = fig.colorbar(ScalarMappable(Normalize(0, vmax if vmax > 0 else 1.0), heat_cmap()), cax=cax, orientation="horizontal")
    bar.ax.tick_params(labelsize=EXAMPLE_FONT - 1, length=2, pad=1)
    bar.outline.set_linewidth(0.4)
    fig.text(left + 0.37, 0.23 / height, label, fontsize=EXAMPLE_FONT - 0.5, va="center", ha="left", color="0.25")


def row_label(ax, y0: float, text: str) -> None:
    """A row's name left of its first line, on that line's baseline."""
    ax.text(-0.6, y0 - BASELINE, text, fontsize=EXAMPLE_FONT - 0.5, va="baseline", ha="right", color="0.35")


def draw_heat_text(
    ax, words: list[str], weights: np.ndarray | None, y0: float, chars_per_line: int, line_h: float = 1.0, vmax: float = 1.0
) -> float:
    """Draw `words` from line top `y0` (x in character cells, as `text_canvas` sets them), each on its line's
    baseline in a box of the line's full height shaded by its weight on the scale 0..`vmax` (unshaded where
    `weights` is None); return the next free y."""
    cmap = heat_cmap()
    shaded = weights is not None
    weights = np.nan_to_num(np.asarray(weights, dtype=float)) if shaded else np.zeros(len(words))
    scale = vmax if vmax > 0 else 1.0
    places = layout_words(words, chars_per_line)
    for word, weight, (line, column) in zip(words, weights, places, strict=True):
        top = y0 - line * line_h
        level = float(np.clip(weight / scale, 0, 1))
        if shaded:
            ax.add_patch(
                Rectangle(
                    (column - BOX_PAD, top - BOX_BOTTOM),
                    len(word) + 2 * BOX_PAD,
                    BOX_BOTTOM - BOX_TOP,
                    facecolor=cmap(level),
                    edgecolor="none",
                    clip_on=False,
                )
            )
        ax.text(
            column,
            top - BASELINE,
            word,
            family="monospace",
            fontsize=EXAMPLE_FONT,
            va="baseline",
            ha="left",
            color="white" if shaded and level > 0.6 else "black",
        )
    lines = (places[-1][0] + 1) if places else 1
    return y0 - lines * line_h


def text_heatmap(
    words: Sequence[str], rows: Mapping[str, Sequence[float]], title: str = "", width: float = COLUMN_WIDTH
) -> Figure:
    """`words` shaded by each row of `rows` (name -> one weight per word): each row as its words' shares of the
    row's total |weight| (`shares`), all rows on one scale with its colour bar, so that near-uniform attention
    looks pale instead of uniformly maximal."""
    left, right = 0.2, 0.99
    chars_per_line = line_capacity((right - left) * width)
    lines = lines_needed(words, chars_per_line)
    total_lines = len(rows) * (lines + 0.4)
    fig, ax = text_canvas(width, left, right, total_lines, top=0.3 if title else 0.05)
    if title:
        fig.suptitle(title, fontsize=EXAMPLE_FONT + 1, y=1 - 0.04 / fig.get_figheight())
    share = {}
    for name, weights in rows.items():
        if len(weights) != len(words):
            raise ValueError(f"heatmap row {name!r} has {len(weights)} weights for {len(words)} words")
        share[name] = shares(weights)
    vmax = max((float(v.max(initial=0)) for v in share.values()), default=1.0)
    y = 0.0
    for name, values in share.items():
        row_label(ax, y, name)
        y = draw_heat_text(ax, list(words), values, y, chars_per_line, 1.0, vmax) - 0.4
    heat_colorbar(fig, vmax, "share of the row's total", left)
    return fig
