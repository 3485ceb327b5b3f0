"""The results page from real runs at seconds' scale (issue 38 §4): W&P's Table 2 rows (the base and uniform runs on
SST) and A&Z's rows from the generated agreement task reach the comparison table and the page, with their models'
names and the reasons their settings differ. Nothing here compares ours with a published number."""

import re

import pandas as pd
import pytest

from attnexp import paths
from tests.workflow.helpers import snakemake, tiny_config

pytestmark = pytest.mark.slow


def test_w_and_p_and_a_and_z_rows_reach_the_table_and_the_page(shared_data, tmp_path):
    config = tiny_config(datasets=["syn_sentiment"], stage_datasets="as_listed")
    config["wp"]["datasets"] = ["sst"]  # as_listed: W&P on SST, which the J&W grid does not run
    config["hyperparameters"]["sst"] = {"epochs": 1, "embedding_dim": 16, "hidden_size": 8}
    config["data"]["raw_data_dir"] = str(shared_data)
    page = paths.paper_comparison_page_files()["md"]
    result = snakemake(tmp_path, page, config=config)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    assert not (tmp_path / paths.model_files("syn_sentiment", "cnn", "tanh", 0)["metrics"]).exists()  # not compared

    table = pd.read_csv(tmp_path / paths.paper_comparison_files()["csv"], keep_default_na=False)
    assert set(table["paper"]) == {"wp", "az"}
    wp = table[table["paper"] == "wp"]
    assert sorted(wp["model"]) == ["lstm-tanh", "lstm-uniform"] and set(wp["dataset"]) == {"sst"}
    assert set(wp["table"]) == {"Table 2"} and set(wp["measure"]) == {"f1_positive"} and set(wp["n_seeds"]) == {1}
    assert all(0 <= float(v) <= 1 for v in wp["ours"])
    assert all("random instead of pretrained embeddings (paper: fasttext_simple)" in r for r in wp["reason"])

    az = table[table["paper"] == "az"]
    assert set(az["dataset"]) == {"syn_agreement"} and set(az["paper_dataset"]) == {"linzen_agreement"}
    assert len(az) == 2 * 3 * 2 * 2  # Tables 1-2 x raw, rollout, flow x the tiny model's 2 layers x mean, std
    assert set(az["model"]) == {"transformer-self"}
    for reason in az["reason"]:
        assert reason.startswith("generated data syn_agreement instead of the paper's linzen_agreement")
        assert "a Transformer of 2 layers, 2 heads, width 16 (paper: 6 layers, 8 heads, width 128)" in reason
        assert "correlations over 20 test examples (paper: 2000)" in reason  # tiny_config: 20 test sentences

    text = (tmp_path / page).read_text()
    assert "## Wiegreffe & Pinter 2019" in text and "## Abnar & Zuidema 2020" in text
    assert "## Jain & Wallace 2019" not in text  # the J&W grid's generated data is compared with nothing
    assert "- Datasets the grid ran: syn_sentiment; W&P: sst; A&Z: syn_agreement." in text
    assert re.search(r"^\| syn_agreement +\| linzen_agreement +\| \*\*no\*\* \(generated\) +\|", text, flags=re.M)
