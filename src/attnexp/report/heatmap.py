"""Text heatmaps: words in monospace character cells, each shaded by its weight. `text_heatmap` draws one
sentence with one row per measure (the API's `heatmap`); `layout_words` and `draw_heat_text` are the drawing
code it shares with the J&W adversarial-example figures (`report.jw.adversary`), so both look alike."""

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib import colormaps
from matplotlib import pyplot as plt
from matplotlib.colors import Colormap, ListedColormap, to_hex
from matplotlib.figure import Figure

from attnexp.report.style import COLUMN_WIDTH, SEQUENTIAL_CMAP

EXAMPLE_FONT = 6.0  # points
MONOSPACE_ADVANCE = 0.602  # DejaVu Sans Mono: character width per point of font size
EXAMPLE_LINE_INCHES = 0.125


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


def draw_heat_text(ax, words: list[str], weights: np.ndarray | None, y0: float, chars_per_line: int, line_h: float) -> float:
    """Draw `words` (x in character cells) shaded ∝ weight, normalised to the row's max (unshaded where `weights`
    is None); return the next free y."""
    cmap = colormaps[SEQUENTIAL_CMAP]
    shaded = weights is not None
    weights = np.asarray(weights, dtype=float) if shaded else np.zeros(len(words))
    top = float(weights.max()) if len(weights) and weights.max() > 0 else 1.0
    places = layout_words(words, chars_per_line)
    for word, weight, (line, column) in zip(words, weights, places, strict=True):
        ax.text(
            column,
            y0 - line * line_h,
            word,
            family="monospace",
            fontsize=EXAMPLE_FONT,
            va="top",
            ha="left",
            bbox={"boxstyle": "square,pad=0.1", "facecolor": cmap(0.85 * weight / top), "edgecolor": "none"} if shaded else None,
            color="white" if weight / top > 0.7 else "black",
        )
    lines = (places[-1][0] + 1) if places else 1
    return y0 - lines * line_h


def text_heatmap(
    words: Sequence[str], rows: Mapping[str, Sequence[float]], title: str = "", width: float = COLUMN_WIDTH
) -> Figure:
    """`words` shaded by each row of `rows` (name -> one weight per word, each row scaled to its own maximum)."""
    left, right = 0.2, 0.99
    chars_per_line = max(10, int((right - left) * width * 72 / (MONOSPACE_ADVANCE * EXAMPLE_FONT)) - 1)
    lines = layout_words(list(words), chars_per_line)[-1][0] + 1 if words else 1
    total_lines = len(rows) * (lines + 0.4)
    top = 0.3 if title else 0.05  # inches above the rows
    height = total_lines * EXAMPLE_LINE_INCHES + top
    fig = plt.figure(figsize=(width, height))
    ax = fig.add_axes((left, 0.0, right - left, 1 - top / height))
    ax.set_axis_off()
    ax.set_xlim(0, chars_per_line)
    ax.set_ylim(-total_lines, 0)
    if title:
        fig.suptitle(title, fontsize=EXAMPLE_FONT + 1, y=1 - 0.04 / height)
    y = 0.0
    for name, weights in rows.items():
        weights = np.nan_to_num(np.asarray(weights, dtype=float))
        if len(weights) != len(words):
            raise ValueError(f"heatmap row {name!r} has {len(weights)} weights for {len(words)} words")
        ax.text(-0.5, y, name, fontsize=EXAMPLE_FONT - 0.5, va="top", ha="right", color="0.35")
        y = draw_heat_text(ax, list(words), np.abs(weights), y, chars_per_line, 1.0) - 0.4
    return fig
