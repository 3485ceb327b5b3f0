"""One look for every figure: paper-column width, despined axes, the spec's class palette (J&W §7).

The default class colours (#43406b / #d15a00 / #27f77d) differ strongly in lightness (about 28 / 57 / 87
on CIELAB L*), so the classes stay distinguishable under every form of colour blindness and in greyscale.
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from attnexp.io import atomic_path  # noqa: E402

PALETTES = {
    "spec": ("#43406b", "#d15a00", "#27f77d"),
    "paper_era": ("#7570b3", "#d95f02", "#1b9e77"),
    "okabe_ito": ("#0072B2", "#E69F00", "#009E73"),
}
OVERALL_COLOUR = "#8c8c8c"
ENCODER_COLOURS = {"lstm": "#43406b", "average": "#d15a00", "cnn": "#27f77d"}
ENCODER_NAMES = {"lstm": "BiLSTM", "cnn": "CNN", "average": "Average"}
ATTENTION_NAMES = {"tanh": "additive (tanh)", "dot": "scaled dot", "uniform": "uniform"}
MAX_HUE_CLASSES = 3  # J&W §6.3: per-class groups only when there are fewer than 4 classes
MAX_ATTENTION_BINS = (0.0, 0.25, 0.5, 0.75, 1.0001)
MAX_ATTENTION_LABELS = ("[0, .25)", "[.25, .5)", "[.5, .75)", "[.75, 1]")

COLUMN_WIDTH = 3.3  # inches: one column of an ACL/NAACL paper
RC_PARAMS = {
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.labelsize": 8,
    "xtick.labelsize": 7,
    "ytick.labelsize": 7,
    "legend.fontsize": 7,
    "legend.title_fontsize": 7,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.2,
    "svg.fonttype": "none",
}


@contextmanager
def paper_style() -> Iterator[None]:
    """Apply the project's rcParams for the duration of the block."""
    with plt.rc_context(RC_PARAMS):
        yield


def new_figure(
    width: float = COLUMN_WIDTH, aspect: float = 1.0, nrows: int = 1, ncols: int = 1, **kwargs
) -> tuple[Figure, object]:
    """A figure `width` inches wide and `width * aspect` tall (square by default, as the spec asks)."""
    return plt.subplots(nrows, ncols, figsize=(width, width * aspect), layout="constrained", **kwargs)


def class_colours(classes: Sequence[str], palette: str = "spec") -> dict[str, str]:
    """Colour per class label for hue-by-predicted-class plots (classes 0/1/2 in the spec's order)."""
    if palette not in PALETTES:
        raise ValueError(f"unknown palette {palette!r}; choose one of {', '.join(PALETTES)}")
    colours = PALETTES[palette]
    if len(classes) > len(colours):
        return {name: OVERALL_COLOUR for name in classes}
    return dict(zip(classes, colours, strict=False))


def hue_labels(predicted, classes: Sequence[str]) -> list[str]:
    """Predicted class names for hue, or "Overall" for every row when there are too many classes to colour."""
    if len(classes) > MAX_HUE_CLASSES:
        return ["Overall"] * len(predicted)
    return [classes[int(index)] for index in predicted]


def hue_palette(classes: Sequence[str], palette: str = "spec") -> dict[str, str]:
    """Palette matching `hue_labels`."""
    if len(classes) > MAX_HUE_CLASSES:
        return {"Overall": OVERALL_COLOUR}
    return class_colours(classes, palette)


def save_figure(fig: Figure, paths: Sequence[str | Path], dpi: int = 150) -> None:
    """Write `fig` to every path (format from the suffix) atomically, then close it.

    The layout is solved once, for the first format, and then frozen: the second save only redraws.
    """
    for index, path in enumerate(paths):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=Path(path).suffix.lstrip("."), dpi=dpi)
        if index == 0:
            fig.set_layout_engine("none")
    plt.close(fig)


def place_legend(ax, title: str = "Predicted class") -> None:
    """Move a hue legend above the axes in one row (off the data); drop it when there is a single hue."""
    legend = ax.get_legend()
    if legend is None:
        return
    handles, labels = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
    legend.remove()
    if len(labels) < 2:
        return
    ax.legend(
        handles,
        labels,
        title=f"{title}:",
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=len(labels),
        alignment="center",
        handlelength=1.0,
        columnspacing=0.9,
        borderaxespad=0.2,
    )


def set_title(fig, title: str) -> None:
    fig.suptitle(title, fontsize=8)
