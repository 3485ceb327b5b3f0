"""One look for every figure of every paper (J&W, W&P, A&Z): paper-column width, despined axes, one palette set,
PNG + PDF output. Figures take the config section `figures` (palette, width, dpi) as a `FigureStyle`:

    style = FigureStyle.from_config(config)
    with paper_style(style):
        fig, ax = style.figure()
        ...
        style.save(fig, paths.figure_files("wp", "syn_sentiment/jsd_tvd"))

The default class colours (#43406b / #d15a00 / #27f77d) differ strongly in lightness (about 28 / 57 / 87
on CIELAB L*), so the classes stay distinguishable under every form of colour blindness and in greyscale.

Importing this module leaves matplotlib's backend alone (a notebook keeps its own); the workflow's jobs draw
headless because their environment sets MPLBACKEND=Agg.
"""

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
from cycler import cycler
from matplotlib.figure import Figure

from attnexp.io import atomic_path

# Categorical colours (classes, compared runs or measures, in this order): config `figures.palette`.
PALETTES = {
    "spec": ("#43406b", "#d15a00", "#27f77d"),
    "paper_era": ("#7570b3", "#d95f02", "#1b9e77"),
    "okabe_ito": ("#0072B2", "#E69F00", "#009E73"),
}
OVERALL_COLOUR = "#8c8c8c"  # one group for everything (tasks with more than three classes)
SEQUENTIAL_CMAP = "Oranges"  # weights from 0 to their maximum (token heatmaps)
ENCODER_COLOURS = {"lstm": "#43406b", "average": "#d15a00", "cnn": "#27f77d"}
ENCODER_NAMES = {"lstm": "BiLSTM", "cnn": "CNN", "average": "Average"}
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
    "text.parse_math": False,  # labels come from the data: a class named "$5" is text, not mathtext
    # Unhinted glyphs keep the font's own advance (monospace: 0.602 em) at every dpi; hinting rounds it to whole
    # pixels (0.64 em at 150 dpi), which pushed long words of the text heatmaps into the next word's box.
    "text.hinting": "no_hinting",
}


@dataclass(frozen=True)
class FigureStyle:
    """The look a figure takes from the config section `figures` (defaults in the schema)."""

    palette: str  # a key of PALETTES
    width: float  # inches; one paper column by default
    dpi: int  # PNG resolution (PDFs are vector)

    def __post_init__(self) -> None:
        if self.palette not in PALETTES:
            raise ValueError(f"unknown palette {self.palette!r}; choose one of {', '.join(PALETTES)}")

    @property
    def colours(self) -> tuple[str, ...]:
        return PALETTES[self.palette]

    def figure(self, aspect: float = 1.0, nrows: int = 1, ncols: int = 1, **kwargs) -> tuple[Figure, object]:
        """`new_figure` at this style's width."""
        return new_figure(self.width, aspect, nrows, ncols, **kwargs)

    def save(self, fig: Figure, paths: Sequence[str | Path] | Mapping[str, str | Path]) -> None:
        """`save_figure` at this style's dpi."""
        save_figure(fig, paths, dpi=self.dpi)


@contextmanager
def paper_style(style: FigureStyle | None = None) -> Iterator[None]:
    """Apply the project's rcParams for the duration of the block; with a `style`, its palette also becomes the
    colour cycle (so plain `plot` calls take the house colours)."""
    params = dict(RC_PARAMS)
    if style is not None:
        params["axes.prop_cycle"] = cycler(color=list(style.colours))
    with plt.rc_context(params):
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


def save_figure(fig: Figure, paths: Sequence[str | Path] | Mapping[str, str | Path], dpi: int = 150) -> None:
    """Write `fig` to every path (format from the suffix) atomically, then close it.

    `paths`: a list, or a format -> path mapping such as `attnexp.paths.figure_files(paper, stem)` (then the PDF
    is written first). The layout is solved once, for the first format, and then frozen: later saves only redraw.
    """
    if isinstance(paths, Mapping):
        paths = sorted(paths.values(), key=lambda path: Path(path).suffix != ".pdf")
    for index, path in enumerate(paths):
        fmt = Path(path).suffix.lstrip(".")
        with atomic_path(path) as tmp:  # no creation date in a PDF: the same figure gives the same bytes
            fig.savefig(tmp, format=fmt, dpi=dpi, metadata={"CreationDate": None} if fmt == "pdf" else None)
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
