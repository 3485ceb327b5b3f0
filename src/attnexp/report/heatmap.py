"""A text heatmap of one sentence: one row of shaded words per measure, drawn with the J&W example-figure code
(`report.jw.adversary`), so a notebook's picture looks like the adversarial-example figures."""

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from attnexp.report.jw.adversary import EXAMPLE_FONT, EXAMPLE_LINE_INCHES, MONOSPACE_ADVANCE, _heat_text, _layout
from attnexp.report.style import COLUMN_WIDTH


def text_heatmap(
    words: Sequence[str], rows: Mapping[str, Sequence[float]], title: str = "", width: float = COLUMN_WIDTH
) -> Figure:
    """`words` shaded by each row of `rows` (name -> one weight per word, each row scaled to its own maximum)."""
    left, right = 0.2, 0.99
    chars_per_line = max(10, int((right - left) * width * 72 / (MONOSPACE_ADVANCE * EXAMPLE_FONT)) - 1)
    lines = _layout(list(words), chars_per_line)[-1][0] + 1 if words else 1
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
        y = _heat_text(ax, list(words), np.abs(weights), y, chars_per_line, 1.0) - 0.4
    return fig
