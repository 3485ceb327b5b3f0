"""The Hugging Face stage through the workflow: a tiny BERT (and a tiny Llama) built locally, fine-tuned on the generated
sentiment data,
then A&Z (raw / rollout / flow vs blank-out and gradients, tables and figures) and the J&W tests, in one run."""

import json

import numpy as np
import pandas as pd
import pytest

from attnexp import paths
from tests.hf_fixtures import tiny_checkpoint, tiny_lm_checkpoint
from tests.workflow.helpers import snakemake, tiny_config

PROMPTED = {"kind": "prompted", "prompt": "{text} . it was", "verbalizer": {"0": "bad", "1": "good"}}


KINDS = ["bert", "gpt2", "llama_prompted"]
CONSOLE = {}  # the console output of the run


@pytest.fixture(scope="module")
def hf_run(tmp_path_factory):
    """One run of the three tiny models beside the grid's Average model: a BERT encoder, a GPT-2 decoder classifier
    (issue 36: explained at its last token), and a Llama with grouped-query attention as a causal LM prompted
    zero-shot (a template and a verbalizer, never fine-tuned)."""
    workdir = tmp_path_factory.mktemp("hf_workflow")
    models = {}
    for kind in KINDS:
        if kind.endswith("_prompted"):
            models[kind] = {"checkpoint": str(tiny_lm_checkpoint(workdir / "tiny_lm", "llama")), **PROMPTED}
        else:
            models[kind] = {"checkpoint": str(tiny_checkpoint(workdir / f"tiny_{kind}", kind)), "finetune": True}
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    config["synthetic"]["sentiment"]["sizes"] = {"train": 64, "dev": 16, "test": 16}
    # no A&Z Fig. 4 for the prompted LM (its tiny vocabulary lacks the pronoun examples' words; they run in
    # tests/workflow/test_pronoun_workflow.py)
    config["az"].update(datasets=[], n_examples=8, batch_size=8, pronoun_examples=[])
    config["wp"]["datasets"] = []
    config["analyses"] = {"permutations": 4, "ig_steps": 4}
    config["hf"] = {"models": models, "datasets": ["syn_sentiment"], "train": {"epochs": 1, "batch_size": 32}}
    result = snakemake(workdir, "hf", "tables", "figures", config=config)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    CONSOLE["run"] = result.stdout + result.stderr
    return workdir


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_a_tiny_model_runs_the_whole_hf_stage(hf_run, kind):
    """Each model's A&Z (raw / rollout / flow vs blank-out and gradients, tables and figures) and J&W outputs; the
    Llama classifier runs through the same rules in the decoder .test scenario's dry run and the unit tests."""
    tmp_path, prompted = hf_run, kind.endswith("_prompted")
    run = paths.hf_model_files(kind, "syn_sentiment", 0)
    assert len(pd.read_csv(tmp_path / run["history"])) == (0 if prompted else 1)  # fine-tuned for one epoch, or not
    assert json.loads((tmp_path / run["metrics"]).read_text())["n"] == 16

    relevance = pd.read_parquet(tmp_path / paths.hf_az_files(kind, "syn_sentiment", 0)["relevance"])
    assert len(relevance) == 8
    for row in relevance.itertuples():
        for method in ("raw", "rollout", "flow"):
            values = np.array([list(v) for v in getattr(row, method)])
            assert values.shape == (2, row.length)  # 2 layers x every position ([CLS] ... [SEP]; prompted: sink + text)
            np.testing.assert_allclose(values.sum(1), 1, atol=1e-6)
        np.testing.assert_allclose(row.flow[0], row.rollout[0], atol=1e-5)  # layer 1: flow = rollout (A&Z §9)
    table = pd.read_csv(tmp_path / paths.table_files("az", "correlations")["csv"])
    ours = table[table["task"] == f"syn_sentiment@{kind}"]
    assert set(ours["method"]) == {"raw", "rollout", "flow"} and set(ours["layer"]) == {1, 2}
    assert ours["mean"].between(-1, 1).all()
    for stem in ("correlation_by_layer", "cls_maps_seed0"):
        png = paths.figure_files("az", f"hf/{kind}/syn_sentiment/{stem}")["png"]
        assert (tmp_path / png).stat().st_size > 0

    jw = paths.hf_analysis_files(kind, "syn_sentiment", 0)
    kendall = pd.read_csv(tmp_path / jw["kendall_summary"])
    assert {"attn_grad", "attn_ig"} <= set(kendall["pair"])
    permutation = pd.read_parquet(tmp_path / jw["permutation"])
    assert len(permutation) == 16 and permutation["output_changes"].map(len).eq(4).all()
    assert (permutation["median_output_change"] >= 0).all() and permutation["median_output_change"].max() > 0
    assert len(pd.read_parquet(tmp_path / jw["adversary"])) == 0  # no adversary on a multi-head model

    # issue 35: the Hugging Face run is a model of every J&W table and of the erasure tables, as `hf-tiny`, beside
    # the grid's Average model, and the closing summary names it when it is near chance, as Table 1 marks it
    label = {"encoder": "hf", "attention": kind}
    table1 = pd.read_csv(tmp_path / paths.table_files("jw", "table1_datasets")["csv"])
    assert {"average", "hf"} <= set(table1["encoder"])
    (row,) = table1[(table1["encoder"] == "hf") & (table1["attention"] == kind)].itertuples()
    assert (row.dataset, row.attention, row.metric) == ("syn_sentiment", kind, "f1_positive")
    assert row.mean == pytest.approx(json.loads((tmp_path / run["metrics"]).read_text())["f1_positive"])
    for stem in ("table2_kendall", "cross_measure"):
        table = pd.read_csv(tmp_path / paths.table_files("jw", stem)["csv"])
        ours = table[(table["encoder"] == label["encoder"]) & (table["attention"] == label["attention"])]
        assert len(ours) > 0 and {"average"} <= set(table["encoder"]), stem
    assert f"hf-{kind}" in (tmp_path / paths.table_files("jw", "table1_datasets")["md"]).read_text()
    erasure = pd.read_csv(tmp_path / paths.table_files(paths.ERASURE, "erasure_summary")["csv"])
    assert f"hf-{kind}" in set(erasure["model"])
    named = f"syn_sentiment hf-{kind} seed 0" in CONSOLE["run"]
    assert named == (row.near_chance_seeds > 0)
    # and its J&W figures, but the adversary's (no adversary on a multi-head model)
    folder = tmp_path / f"results/figures/jw/syn_sentiment/hf-{kind}/seed0"
    assert (folder / "tau_hist_attn_grad.png").stat().st_size > 0 and (folder / "permutation_violin.pdf").stat().st_size > 0
    assert not list(folder.glob("adversary_*"))
