"""A&Z tables and figures: the paper layout of the combined summaries, every format written."""

import re

import numpy as np
import pandas as pd
import pytest

from attnexp.analyses.az.measures import IMPORTANCES, METHODS
from attnexp.io import write_csv, write_json, write_parquet
from attnexp.report import az
from attnexp.report.style import FigureStyle


@pytest.fixture
def combined(tmp_path):
    rng = np.random.default_rng(0)
    summary = pd.DataFrame(
        [
            {"task": task, "method": m, "importance": i, "layer": layer, "n_seeds": seeds}
            for task, seeds in (("syn_sentiment", 2), ("syn_agreement", 1))
            for m in METHODS
            for i in IMPORTANCES
            for layer in (1, 2)
        ]
    )
    summary["mean"] = rng.uniform(-1, 1, len(summary))
    summary["std"] = rng.uniform(0, 0.5, len(summary))
    summary["mean_seed_std"] = np.where(summary["n_seeds"] > 1, 0.05, 0.0)
    summary["n"], summary["n_nan"] = 40, 1
    recovery = pd.DataFrame(
        [{"task": "syn_agreement", "method": m, "layer": layer} for m in METHODS for layer in (1, 2)]
        + [{"task": "syn_agreement", "method": i, "layer": 0} for i in IMPORTANCES]
    )
    recovery = recovery.assign(n_seeds=1, top1=0.5, mrr=0.75, share=0.25, top1_seed_std=0.0, n=20)
    write_csv(tmp_path / "summary.csv", summary)
    write_csv(tmp_path / "recovery.csv", recovery)
    return summary, recovery


def test_correlation_table_has_the_paper_layout(combined):
    summary, _ = combined
    display = az.correlation_display(summary, {"syn_sentiment": "grad", "syn_agreement": "grad_x_input"})
    shown = display.groupby("Dataset", sort=False)["Importance"].unique().map(list).to_dict()
    assert shown == {"syn_sentiment": ["blank-out", "gradient"], "syn_agreement": ["blank-out", "gradient × input"]}
    assert list(display.columns) == ["Dataset", "Importance", "Method", "L1", "L2", "n", "NaN rho"]
    assert len(display) == 2 * 2 * 3 and list(display["Method"][:3]) == ["Raw", "Rollout", "Flow"]
    assert list(dict.fromkeys(display["Dataset"])) == ["syn_sentiment", "syn_agreement"]  # the paper's order
    row = summary[(summary["task"] == "syn_agreement") & (summary["method"] == "flow") & (summary["importance"] == "blankout")]
    cell = display[(display["Dataset"] == "syn_agreement") & (display["Method"] == "Flow")].iloc[0]["L2"]
    assert cell == f"{row['mean'].iloc[1]:.2f} ± {row['std'].iloc[1]:.2f}"
    assert display["L1"].iloc[0].endswith("(seeds ± 0.05)")


def test_every_table_and_figure_is_written(combined, tmp_path):
    outputs = {f"{stem}_{fmt}": tmp_path / f"{stem}.{fmt}" for stem in az.TABLES for fmt in ("csv", "md", "tex")}
    az.write_az_tables(summary=tmp_path / "summary.csv", recovery=tmp_path / "recovery.csv", gradients={}, outputs=outputs)
    assert all(path.stat().st_size > 0 for path in outputs.values())
    assert re.search(r"\| syn_agreement \| Raw\s+\|\s+0.500\s+\|\s+0.500\s+\|", (tmp_path / "subject_recovery.md").read_text())
    assert len(pd.read_csv(outputs["importance_recovery_csv"])) == len(IMPORTANCES)
    shown = pd.read_csv(outputs["correlations_csv"])  # the whole summary; the display picks per task
    assert set(shown["importance"]) == set(IMPORTANCES)
    rows = (tmp_path / "correlations.md").read_text().split("\n\n", 1)[1]
    assert "gradient × input" not in rows and "| gradient " in rows  # no mapping: the first measure held, grad
    assert "&" not in (tmp_path / "correlations.tex").read_text().split("\\caption{")[1].split("}")[0]
    figure = {"png": tmp_path / "curves.png", "pdf": tmp_path / "curves.pdf"}
    az.write_correlation_figure(
        summary=tmp_path / "summary.csv",
        dataset="syn_agreement",
        gradient="grad",
        style=FigureStyle(palette="spec", width=3.3, dpi=60),
        outputs=figure,
    )
    assert all(path.stat().st_size > 0 for path in figure.values())


def test_cls_maps_pick_a_correct_and_a_wrong_example(tmp_path):
    rng = np.random.default_rng(1)
    lengths = [4, 6, 6, 7]
    relevance = pd.DataFrame(
        {
            "instance_id": ["d", "c", "b", "a"],
            "length": lengths,
            "label": [0, 1, 1, 0],
            "predicted": [0, 1, 0, 0],
            "tokens": [list(range(2, 2 + n)) for n in lengths],
            "subject": [[1]] * 4,
            **{m: [rng.random((2, n)).tolist() for n in lengths] for m in METHODS},
        }
    )
    assert list(az.picked_examples(relevance)["instance_id"]) == ["a", "b"]
    write_parquet(tmp_path / "relevance.parquet", relevance)
    write_json(tmp_path / "meta.json", {"vocab": ["<pad>", "<unk>", "<s>", "x", "y", "z", "w", "v", "u"]})
    outputs = {"png": tmp_path / "maps.png", "pdf": tmp_path / "maps.pdf"}
    az.write_cls_maps(
        relevance=tmp_path / "relevance.parquet",
        meta=tmp_path / "meta.json",
        style=FigureStyle(palette="spec", width=3.3, dpi=60),
        outputs=outputs,
    )
    assert all(path.stat().st_size > 0 for path in outputs.values())


def _sunk_relevance(closing: bool, recorded: bool) -> pd.DataFrame:
    """Two examples of 40 words, [CLS] (and the closing marker) carrying 0.8 of every row, as a decoder's sink."""
    rng = np.random.default_rng(2)
    n = 1 + 40 + int(closing)
    records = []
    for instance_id, predicted in (("a", 0), ("b", 1)):
        record = {"instance_id": instance_id, "length": n, "label": 0, "predicted": predicted}
        record["tokens"] = [2, *rng.integers(4, 9, 40).tolist(), *([3] if closing else [])]
        record["subject"] = [8]  # map column 7: off the every-2nd labels, kept as the ground truth
        for method in METHODS:
            rows = []
            for _ in range(6):
                special = [0.75, 0.05] if closing else [0.8]
                rows.append([special[0], *(rng.dirichlet(np.ones(40)) * 0.2).tolist(), *special[1:]])
            record[method] = rows
            if recorded:
                record[f"{method}_sink"] = [0.8] * 6
        records.append(record)
    return pd.DataFrame(records)


@pytest.mark.parametrize(("closing", "recorded"), [(False, False), (True, True)], ids=["transformer", "hf-sink"])
def test_cls_maps_show_the_words_with_the_specials_apart(closing, recorded):
    from matplotlib.text import Text

    relevance = _sunk_relevance(closing, recorded)
    assert az.reads_closing(relevance) is closing  # the recorded sink shares say whether [SEP] is in the rows
    fig = az.cls_map_figure(relevance, ["<pad>", "<unk>", "<s>", "</s>", "v", "w", "x", "y", "z"], 3.3)
    maps = [ax for ax in fig.axes if ax.images]
    assert len(maps) == 2 * len(METHODS)
    for ax in maps:
        shown = np.asarray(ax.images[0].get_array())
        assert shown.shape == (6, 40)  # the rankable tokens only: no [CLS], no closing marker
        np.testing.assert_allclose(shown.sum(axis=1), 1.0)  # each row renormalised over the words
        labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
        assert len(labels) <= az.MAX_WORD_LABELS
        assert all(t.get_rotation() == 90 for t in ax.get_xticklabels())
    bottom = [t.get_text() for t in maps[len(METHODS) - 1].get_xticklabels() if t.get_text()]
    assert 0 < len(bottom) <= 30 and any(label.startswith("*") for label in bottom)  # the subject stays labelled
    texts = [t.get_text() for t in fig.findobj(Text)]
    assert any(text == "0.80" for text in texts)  # the specials' share, beside every map
