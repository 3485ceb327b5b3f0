"""The paper_comparison table from small fake runs (join, difference, interval over seeds, why settings differ, the
empty case) and the schema of the published-values file. Nothing here compares ours with a published number."""

import numpy as np
import pandas as pd
import pytest

from attnexp import paths
from attnexp.io import write_json, write_parquet, write_yaml
from attnexp.report import comparison
from attnexp.report import published as published_values_file
from attnexp.report.tables import seed_interval
from tests.fakes import fake_analyses, fake_instances

BOOTSTRAP = {"n_resamples": 200, "seed": 0}
PAPER_DATASETS = ["sst", "agnews", "snli", "babi3", "linzen_agreement"]


def published(rows: list[tuple]) -> pd.DataFrame:
    """A small published-values frame: (paper, table, dataset, model, measure, group, statistic, value)."""
    frame = pd.DataFrame(rows, columns=["paper", "table", "dataset", "model", "measure", "group", "statistic", "value"])
    return frame.assign(page="9", source="Fake paper, " + frame["table"], note="")


def run_config(embeddings: str = "random", split: str = "dev") -> dict:
    return {"embeddings": embeddings, "model_selection": {"split": split}}


def model(dataset: str, encoder: str, seed: int, metrics: dict, config: dict | None = None, **extra) -> dict:
    return {
        "dataset": dataset,
        "encoder": encoder,
        "attention": "tanh",
        "seed": seed,
        "metrics": metrics,
        "config": config or run_config(),
        **extra,
    }


META = {
    "sst": {"task": "bc", "classes": ["0", "1"], "comparable": True, "sizes": {"test": 20}},
    "agnews_testonly": {"task": "bc", "classes": ["0", "1"], "comparable": False, "note": "test rows only"},
    "snli_devtrain": {
        "task": "nli",
        "classes": ["contradiction", "entailment", "neutral"],
        "comparable": True,
        "sizes": {"test": 30},  # every instance analysed (the fake analyses cover 30)
    },
}


def test_the_published_values_file_has_a_source_on_every_row():
    table = comparison.published_values()
    assert list(table.columns) == list(comparison.PUBLISHED_COLUMNS)
    assert (table["source"].str.len() > 0).all() and np.isfinite(table["value"]).all()
    assert set(table["paper"]) == set(paths.PAPERS)
    assert not table.duplicated(comparison.KEYS).any()
    for row in table.itertuples():  # every source names its paper's table (and page, where one is given)
        assert row.table in row.source and (not row.page or f"p. {row.page}" in row.source)
    assert set(table["measure"]) <= set(comparison.MEASURE_NAMES)


def test_a_row_without_a_source_or_number_is_rejected():
    table = comparison.published_values().astype({"value": str})
    with pytest.raises(ValueError, match=r"rows \[3\] have no source"):
        comparison.check_published(table.assign(source=["" if i == 3 else s for i, s in enumerate(table["source"])]))
    with pytest.raises(ValueError, match="no number"):
        comparison.check_published(table.assign(value=["n/a", *table["value"][1:]]))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("sst", "sst"),
        ("agnews_testonly", "agnews"),
        ("babi3_1k", "babi3"),
        ("snli_devtrain", "snli"),
        ("syn_sentiment", None),
        ("syn_agreement", "linzen_agreement"),  # the generated substitute of A&Z's corpus
    ],
)
def test_a_fallback_dataset_stands_for_the_one_it_replaces(name, expected):
    assert published_values_file.paper_dataset(name, PAPER_DATASETS) == expected


def test_a_grid_of_generated_data_compares_nothing():
    assert published_values_file.compared(["syn_sentiment", "syn_nli", "syn_babi1"], "jw") == {}
    assert published_values_file.compared(["sst", "syn_nli"], "wp") == {"sst": ["lstm-tanh", "lstm-uniform"]}


def test_the_generated_agreement_task_is_compared_with_a_and_z_alone():
    """syn_agreement stands for A&Z's Linzen corpus (registry `stands_for`), in no other paper's comparison."""
    assert published_values_file.compared(["syn_agreement"], "az") == {"syn_agreement": ["transformer-self"]}
    assert published_values_file.compared(["syn_agreement"], "jw") == {}
    assert published_values_file.paper_dataset("syn_agreement", ["sst", "agnews"]) is None


@pytest.fixture(scope="module")
def table():
    """SST with three seeds (random vectors, dev selection), AG News' fallback with one seed (vectors, test
    selection), SNLI's fallback with per-class τ; W&P and A&Z runs; published values only for some of them."""
    rng = np.random.default_rng(5)
    instances = fake_instances(30, 3, rng)
    jw_models = [model("sst", "lstm", s, {"f1_positive": v}) for s, v in enumerate([0.70, 0.74, 0.78])]
    jw_models += [
        model("sst", "cnn", 0, {"f1_positive": 0.5}),
        model("agnews_testonly", "lstm", 0, {"f1_positive": 0.9}, run_config("fasttext_simple:/v.txt", "test")),
        model(
            "snli_devtrain",
            "lstm",
            0,
            {"accuracy": 0.6},
            run_config("glove_840b:/g.txt", "test"),
            kendall=fake_analyses(instances, 3, rng)["kendall"],
        ),
    ]
    wp_runs = [
        {"dataset": "sst", "variant": v, "seed": 10, "metrics": {"f1_positive": f}, "config": run_config()}
        for v, f in (("base", 0.8), ("uniform", 0.79))
    ]
    summary = pd.DataFrame(
        [
            {"task": "linzen_agreement", "method": m, "importance": i, "layer": layer, "mean": 0.1 * layer, "std": 0.2}
            for m in ("raw", "flow")
            for i in ("blankout", "grad", "grad_x_input")
            for layer in (1, 2)
        ]
    )
    az_runs = [{"dataset": "linzen_agreement", "seed": s, "summary": summary.assign(mean=summary["mean"] + s)} for s in (0, 1)]
    per_seed = pd.concat(
        [
            comparison.jw_per_seed(jw_models, META),
            comparison.wp_per_seed(wp_runs, META),
            comparison.az_per_seed(az_runs),
        ],
        ignore_index=True,
    )
    values = published(
        [
            ("jw", "Table 1", "sst", "lstm-tanh", "test_performance", "", "value", 0.81),
            ("jw", "Table 1", "agnews", "lstm-tanh", "test_performance", "", "value", 0.96),
            ("jw", "Table 1", "imdb", "lstm-tanh", "test_performance", "", "value", 0.88),  # not run: no row
            ("jw", "Table 2", "snli", "lstm-tanh", "tau_attn_grad", "class 2", "mean", 0.40),
            ("jw", "Table 2", "snli", "lstm-tanh", "tau_attn_loo", "class 0", "sig_frac", 0.60),
            ("wp", "Table 2", "sst", "lstm-uniform", "f1_positive", "", "value", 0.822),
            ("az", "Table 1", "linzen_agreement", "transformer-self", "spearman_blankout", "flow L2", "mean", 0.44),
        ]
    )
    return comparison.comparison(per_seed, values, BOOTSTRAP).set_index(["paper", "table", "dataset", "measure", "group"])


def test_rows_are_the_published_numbers_the_grid_ran(table):
    assert len(table) == 6  # not imdb (not run), not the cnn model and nothing unpublished
    assert table.loc[("jw", "Table 1", "agnews_testonly", "test_performance", ""), "paper_dataset"] == "agnews"
    assert set(table.reset_index()["model"]) == {"lstm-tanh", "lstm-uniform", "transformer-self"}


def test_ours_is_the_mean_over_seeds_with_its_bootstrap_interval(table):
    row = table.loc[("jw", "Table 1", "sst", "test_performance", "")]
    assert row["n_seeds"] == 3 and row["ours"] == pytest.approx(0.74)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(seed_interval([0.70, 0.74, 0.78], **BOOTSTRAP))
    assert 0.70 - 1e-9 <= row["ci_low"] < 0.74 < row["ci_high"] <= 0.78 + 1e-9
    assert row["difference"] == pytest.approx(0.74 - 0.81)
    single = table.loc[("jw", "Table 1", "agnews_testonly", "test_performance", "")]
    assert single["n_seeds"] == 1 and np.isnan(single["ci_low"]) and single["difference"] == pytest.approx(0.9 - 0.96)
    az = table.loc[("az", "Table 1", "linzen_agreement", "spearman_blankout", "flow L2")]
    assert az["ours"] == pytest.approx(0.7) and az["difference"] == pytest.approx(0.7 - 0.44)


def test_per_class_tau_is_joined_by_class_index(table):
    row = table.loc[("jw", "Table 2", "snli_devtrain", "tau_attn_grad", "class 2")]
    assert row["statistic"] == "mean" and np.isfinite(row["ours"])
    assert row["difference"] == pytest.approx(row["ours"] - 0.40)
    assert table.loc[("jw", "Table 2", "snli_devtrain", "tau_attn_loo", "class 0"), "statistic"] == "sig_frac"


def test_the_reason_names_each_setting_that_differs(table):
    sst = table.loc[("jw", "Table 1", "sst", "test_performance", ""), "reason"]
    assert "random instead of pretrained embeddings (paper: fasttext_simple)" in sst
    assert "model selected on dev (paper: test set)" in sst and "mean of 3 seeds" in sst
    agnews = table.loc[("jw", "Table 1", "agnews_testonly", "test_performance", ""), "reason"]
    assert agnews == "fallback dataset agnews_testonly: test rows only"
    assert table.loc[("jw", "Table 2", "snli_devtrain", "tau_attn_grad", "class 2"), "reason"] == ""
    assert "mean of 2 seeds" in table.loc[("az", "Table 1", "linzen_agreement", "spearman_blankout", "flow L2"), "reason"]


def test_tau_over_a_test_sample_says_so_in_the_reason():
    """`analyses.test_sample`: a τ row computed on 12 of the 30 test instances names the sample; Table 1's row, over
    the whole test split, does not."""
    rng = np.random.default_rng(2)
    kendall = fake_analyses(fake_instances(30, 3, rng).iloc[:12], 3, rng)["kendall"]
    runs = [model("snli_devtrain", "lstm", 0, {"accuracy": 0.6}, run_config("glove_840b:/g.txt", "test"), kendall=kendall)]
    values = published(
        [
            ("jw", "Table 1", "snli", "lstm-tanh", "test_performance", "", "value", 0.78),
            ("jw", "Table 2", "snli", "lstm-tanh", "tau_attn_grad", "class 2", "mean", 0.40),
        ]
    )
    table = comparison.comparison(comparison.jw_per_seed(runs, META), values, BOOTSTRAP).set_index("table")
    assert table.loc["Table 2", "reason"] == (
        "a seeded sample of 12 of 30 test instances (analyses.test_sample, paper: the whole test set)"
    )
    assert table.loc["Table 1", "reason"] == ""


def test_the_workflow_entry_writes_every_format_and_an_empty_grid_gives_a_valid_table(tmp_path):
    outputs = {fmt: tmp_path / f"paper_comparison.{fmt}" for fmt in ("csv", "md", "tex")}
    empty = comparison.build_paper_comparison(metas={}, jw_models=[], wp_runs=[], az_runs=[], outputs=outputs)
    assert empty.empty and list(pd.read_csv(outputs["csv"]).columns) == comparison.COLUMNS
    assert "(no rows)" in outputs["md"].read_text() and "no rows" in outputs["md"].read_text()
    assert "\\begin{tabular}" in outputs["tex"].read_text()

    write_json(tmp_path / "meta.json", META["sst"])
    models = []
    for seed, f1 in enumerate([0.6, 0.7]):
        folder = tmp_path / f"seed{seed}"
        folder.mkdir()
        write_json(folder / "metrics.json", {"f1_positive": f1})
        write_yaml(folder / "config.yaml", run_config())
        kendall = fake_analyses(fake_instances(20, 2, np.random.default_rng(seed)), 2, np.random.default_rng(seed))["kendall"]
        write_parquet(folder / "kendall.parquet", kendall)
        files = {k: str(folder / f"{k}.{ext}") for k, ext in (("metrics", "json"), ("config", "yaml"), ("kendall", "parquet"))}
        models.append({"dataset": "sst", "encoder": "lstm", "attention": "tanh", "seed": seed, **files})
    metas = {"sst": tmp_path / "meta.json"}
    table = comparison.build_paper_comparison(
        metas=metas, jw_models=models, wp_runs=[], az_runs=[], outputs=outputs, bootstrap_options=BOOTSTRAP
    )
    written = pd.read_csv(outputs["csv"], keep_default_na=False)
    assert len(written) == len(table) == 1 + 2 * 2 * 3  # Table 1, and τ(attn, grad/loo) x 2 classes x 3 statistics
    assert (written["source"] != "").all() and set(written["n_seeds"]) == {2}
    markdown = outputs["md"].read_text()
    assert "Jain & Wallace 2019" in markdown and "τ(attention, leave-one-out) frac. p ≤ 0.05" in markdown


def test_az_rows_name_the_model_read_and_the_gradient_measured():
    """transformer-tiedcls stands for the paper's Transformer, labelled as itself; Table 2 takes the run's gradient
    measure (grad_x_input on the pre-LN Transformer), and the reason says both."""
    summary = pd.DataFrame(
        [
            {"task": "linzen_agreement", "method": "flow", "importance": i, "layer": 2, "mean": mean, "std": 0.1}
            for i, mean in (("blankout", 0.3), ("grad_x_input", 0.5), ("grad_l2", 0.7))
        ]
    )
    runs = [
        {"dataset": "linzen_agreement", "seed": 0, "summary": summary, "model": "transformer-tiedcls", "gradient": "grad_x_input"}
    ]
    values = published(
        [
            ("az", "Table 1", "linzen_agreement", "transformer-self", "spearman_blankout", "flow L2", "mean", 0.44),
            ("az", "Table 2", "linzen_agreement", "transformer-self", "spearman_grad", "flow L2", "mean", 0.40),
        ]
    )
    table = comparison.comparison(comparison.az_per_seed(runs), values, BOOTSTRAP).set_index("table")
    assert set(table["model"]) == {"transformer-tiedcls"}
    assert table.loc["Table 2", "ours"] == 0.5  # grad_x_input, not grad_l2
    assert "transformer-tiedcls instead of the paper's transformer-self" in table.loc["Table 1", "reason"]
    assert "gradient × input" in table.loc["Table 2", "reason"] and "gradient" not in table.loc["Table 1", "reason"]


def agreement_summary(n: int) -> pd.DataFrame:
    """An A&Z correlation summary of `n` examples per row (layer 2 pools layers 1-2, as cumulative_layer_lists)."""
    return pd.DataFrame(
        [
            {"task": "syn_agreement", "method": m, "importance": i, "layer": layer, "mean": 0.2, "std": 0.1, "n": n * layer}
            for m in ("raw", "flow")
            for i in ("blankout", "grad_x_input")
            for layer in (1, 2)
        ]
    )


def test_az_rows_on_the_generated_task_say_how_task_model_and_sample_differ():
    """Issue 38 §4: A&Z's rows from syn_agreement join the paper's Linzen rows, each naming the generated data in
    place of the corpus (not "fallback dataset ...: a substitute"), a Transformer smaller than the paper's and the
    number of examples correlated; a run at the paper's size and sample names neither."""
    meta = {"syn_agreement": {"task": "bc", "classes": ["0", "1"], "comparable": False, "note": ""}}
    small = {"az": {"model": {"n_layers": 2, "n_heads": 2, "width": 16, "dropout": 0.1}}}
    paper = {"az": {"model": {"n_layers": 6, "n_heads": 8, "width": 128, "dropout": 0.1}}}
    runs = [
        {
            "dataset": "syn_agreement",
            "seed": 0,
            "summary": agreement_summary(20),
            "model": "transformer-self",
            "gradient": "grad_x_input",
            "config": small,
        },
    ]
    table = comparison.comparison(comparison.az_per_seed(runs, meta), comparison.published_values(), BOOTSTRAP)
    assert len(table) == 2 * 2 * 2 * 2  # raw and flow, layers 1-2, mean and std, Tables 1 and 2
    assert set(table["paper_dataset"]) == {"linzen_agreement"} and set(table["dataset"]) == {"syn_agreement"}
    assert set(table["model"]) == {"transformer-self"} and set(table["table"]) == {"Table 1", "Table 2"}
    reasons = set(table["reason"].str.split(comparison.REASON_SEPARATOR).explode())
    assert (
        "generated data syn_agreement instead of the paper's linzen_agreement: Linzen et al. (2016) agreement corpus"
        in " ".join(reasons)
    )
    assert "a Transformer of 2 layers, 2 heads, width 16 (paper: 6 layers, 8 heads, width 128)" in reasons
    assert "correlations over 20 test examples (paper: 2000)" in reasons  # layer 1's count, not layer 2's pooled 40
    assert not any(r.startswith("fallback dataset") for r in reasons)
    at_paper = [{**runs[0], "summary": agreement_summary(2000).assign(n=2000), "config": paper}]
    reasons = set(
        comparison.comparison(comparison.az_per_seed(at_paper, meta), comparison.published_values(), BOOTSTRAP)["reason"]
    )
    assert not any("Transformer of" in r or "test examples" in r for r in reasons) and all("generated data" in r for r in reasons)


def test_w_and_p_table_2_rows_are_the_base_and_uniform_runs_of_each_dataset():
    """W&P's base run stands for the paper's reproduced BiLSTM-tanh, the uniform run for its uniform model, on every
    dataset of the published file that ran; one run each, selected on dev, from random vectors."""
    runs = [
        {"dataset": d, "variant": v, "seed": 10, "metrics": {"f1_positive": 0.5}, "config": run_config()}
        for d in ("sst", "imdb", "20news")
        for v in ("base", "uniform")
    ]
    metas = {d: {"task": "bc", "classes": ["0", "1"], "comparable": True} for d in ("sst", "imdb", "20news")}
    table = comparison.comparison(comparison.wp_per_seed(runs, metas), comparison.published_values(), BOOTSTRAP)
    assert len(table) == 6 and set(table["paper"]) == {"wp"} and set(table["table"]) == {"Table 2"}
    assert {(r.dataset, r.model) for r in table.itertuples()} == {
        (d, m) for d in ("sst", "imdb", "20news") for m in ("lstm-tanh", "lstm-uniform")
    }
    assert set(table["measure"]) == {"f1_positive"} and set(table["n_seeds"]) == {1}
    for reason in table["reason"]:
        assert "random instead of pretrained embeddings (paper: fasttext_simple)" in reason
        assert "model selected on dev (paper: test set)" in reason and "seeds" not in reason
