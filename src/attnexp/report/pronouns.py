"""A&Z Fig. 4, the pronoun examples: the candidates' relative probabilities at q beside raw attention, rollout and
flow from q over every token at every layer, drawn from the table the analysis wrote
(`attnexp.analyses.az.pronouns.reading_table`); nothing here computes an analysis."""

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from attnexp.analyses.az import METHODS
from attnexp.io import read_csv
from attnexp.report.az import MAP_COLOURS, MAX_LABEL_CHARS, METHOD_NAMES, _layer_ticks, word_labels
from attnexp.report.style import RC_PARAMS, FigureStyle, class_colours, new_figure, paper_style, save_figure

CANDIDATE = "candidate"  # the table's candidate rows (`analyses.az.pronouns.CANDIDATE`; not imported: no torch here)
REFERENT_EDGE = "#1a1a1a"  # the outline of a referent's column
QUERY_COLOUR = "#2166ac"  # q's tick label and the mark above its column


def _label(token: str) -> str:
    return token if len(token) <= MAX_LABEL_CHARS else token[: MAX_LABEL_CHARS - 1] + "…"


def _maps(table: pd.DataFrame) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """method -> [layers, n] relevance, the shown tokens and each position's referent word ("" for none)."""
    relevance = table[table["method"].isin(METHODS)]
    first = relevance[relevance["method"] == METHODS[0]]
    n, layers = int(first["position"].max()) + 1, int(first["layer"].max())
    maps = {}
    for method in METHODS:
        part = relevance[relevance["method"] == method]
        grid = np.full((layers, n), np.nan)
        grid[part["layer"].to_numpy(int) - 1, part["position"].to_numpy(int)] = part["value"].to_numpy(float)
        maps[method] = grid
    positions = first[first["layer"] == 1].sort_values("position")
    return maps, positions["token"].astype(str).tolist(), positions["referent"].fillna("").astype(str).tolist()


def pronoun_figure(table: pd.DataFrame, width: float, palette: str = "spec", sentence: str = "") -> Figure:
    """One model's reading of one pronoun example (A&Z Fig. 4): left, the candidates' p(c) / Σ p over the candidates
    at q (a scale from 0 to 1, the even split dashed); then one map per method (raw, rollout, flow), rows the layers
    (L1 at the bottom), columns every token the model read, specials included, on one colour scale from 0 to the
    largest relevance shown. The referents' columns are outlined and their labels starred; q's label is blue and
    marked ▼ above each map. With more tokens than fit, every k-th is labelled (and always q and the referents). A
    causal LM's figure says that it read the text before the pronoun only."""
    candidates = table[table["method"] == CANDIDATE]
    maps, tokens, referents = _maps(table)
    layers, n = maps[METHODS[0]].shape
    query = int(candidates["position"].iloc[0])
    causal = str(candidates["kind"].iloc[0]) != "masked_lm"
    tick_size = RC_PARAMS["xtick.labelsize"]
    panel = float(np.clip(0.17 * layers, 0.75, 2.6))  # inches of map height: 12 pt per layer, up to 15 layers
    label_room = 0.09 * max(len(_label(t)) + 4 for t in tokens) + 0.2  # the rotated token labels
    height = panel + label_room + 1.15  # + titles and the colour bar
    fig, axes = new_figure(
        2 * width, aspect=height / (2 * width), ncols=1 + len(METHODS), squeeze=False,
        gridspec_kw={"width_ratios": [0.55] + [1] * len(METHODS)},
    )  # fmt: skip
    bars, *heat = axes[0]

    words = candidates["token"].astype(str).tolist()
    values = candidates["value"].to_numpy(float)
    colours = class_colours(words, palette)
    y = np.arange(len(words))[::-1]
    bars.barh(y, values, color=[colours[w] for w in words], height=0.6)
    bars.axvline(1 / len(words), color="grey", lw=0.6, ls="--")
    for position, value in zip(y, values, strict=True):
        inside = value > 0.62
        bars.text(
            value - 0.03 if inside else value + 0.03, position, f"{value:.2f}", va="center",
            ha="right" if inside else "left", color="white" if inside else "black", fontsize=tick_size,
        )  # fmt: skip
    bars.set_yticks(y, words)
    bars.set_xlim(0, 1)
    bars.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
    bars.set_ylim(-0.6, len(words) - 0.4)
    bars.set_xlabel("p(c) / Σ p(candidates)")
    q_token = tokens[query] if 0 <= query < len(tokens) else "?"
    bars.set_title(f"next token after “{q_token}”" if causal else "at the mask", fontsize=RC_PARAMS["axes.titlesize"])

    vmax = max(float(np.nanmax(m)) for m in maps.values()) or 1.0
    map_width = 72 * 2 * width / (0.55 + len(METHODS)) * 0.9  # points per map
    most = max(4, int(map_width / (1.3 * tick_size)))
    marked = {j for j, word in enumerate(referents) if word}
    labels = word_labels(tokens, marked, most)
    labels[query] = labels.get(query, _label(tokens[query]))
    gap = -(-n // most)  # a plain label this close to q or a referent would overlap it: dropped
    labels = {
        j: text for j, text in sorted(labels.items()) if j in marked | {query} or min(abs(j - k) for k in marked | {query}) >= gap
    }
    shown = _layer_ticks(layers, panel * 72, tick_size)
    for m, (ax, method) in enumerate(zip(heat, METHODS, strict=True)):
        image = ax.imshow(maps[method], aspect="auto", cmap=MAP_COLOURS, vmin=0, vmax=vmax, origin="lower", interpolation="none")
        ax.set_title(METHOD_NAMES[method])
        ax.set_xticks(range(n), minor=True)
        ax.tick_params(axis="x", which="minor", length=1.5)
        ax.set_xticks(list(labels), list(labels.values()), rotation=90, fontsize=tick_size)
        q_label = ax.get_xticklabels()[list(labels).index(query)]
        q_label.set_color(QUERY_COLOUR)
        q_label.set_fontweight("bold")
        ax.set_yticks(shown, [f"L{k + 1}" for k in shown] if m == 0 else [], fontsize=tick_size)
        if m == 0:
            ax.set_ylabel("layer")
        for j, word in enumerate(referents):
            if word:
                ax.add_patch(Rectangle((j - 0.5, -0.5), 1, layers, fill=False, edgecolor=REFERENT_EDGE, lw=1.0, clip_on=False))
        ax.plot([query], [layers - 0.5], marker="v", color=QUERY_COLOUR, markersize=4, clip_on=False, transform=ax.transData)
        ax.set_ylim(-0.5, layers - 0.5)
        for spine in ax.spines.values():  # no frame: an outline is a referent's
            spine.set_visible(False)
    bar = fig.colorbar(image, ax=list(heat), location="bottom", shrink=0.6, aspect=40, pad=0.05)
    bar.set_label("relevance from q (one scale for every map)\n▼ and blue: q; outlined and *starred*: the referents")
    bar.ax.tick_params(labelsize=tick_size)

    model, example = str(candidates["model"].iloc[0]), str(candidates["example"].iloc[0])
    read = "causal LM: the text before the pronoun only, q = its last token" if causal else "masked LM: q = the mask"
    title = f"{model} · {example}: “{sentence or candidates['text'].iloc[0]}”"
    fig.suptitle(f"{title}\n{read}", fontsize=RC_PARAMS["axes.titlesize"])
    return fig


def write_pronoun_figure(*, table: str | Path, sentence: str, style: FigureStyle, outputs: Mapping[str, str | Path]) -> None:
    """A&Z Fig. 4 of one model and example from its table (`reading_table`'s CSV); `sentence`: the example as
    configured, with [MASK]; `outputs`: png, pdf."""
    with paper_style(style):
        fig = pronoun_figure(read_csv(table, keep_default_na=False, na_values=[""]), style.width, style.palette, sentence)
        save_figure(fig, [outputs["png"], outputs["pdf"]], dpi=style.dpi)
