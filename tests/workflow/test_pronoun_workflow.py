"""A&Z Fig. 4 through the workflow: a tiny masked LM (BERT) and a tiny causal LM (Llama, grouped-query heads) built
here, configured under hf.models without any hf.datasets; `snakemake hf` draws every pronoun example for both."""

import re

import numpy as np
import pytest
from PIL import Image

from attnexp import paths
from attnexp.io import read_csv
from tests.pronoun_fixtures import tiny_pronoun_lm
from tests.workflow.helpers import snakemake, tiny_config


@pytest.mark.slow
def test_the_pronoun_figures_of_a_masked_and_a_causal_lm(tmp_path):
    models = {
        "tiny_mlm": {"checkpoint": str(tiny_pronoun_lm(tmp_path / "tiny_bert", "bert")), "kind": "masked_lm"},
        "tiny_clm": {"checkpoint": str(tiny_pronoun_lm(tmp_path / "tiny_llama", "llama")), "kind": "prompted"},
    }
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    config["az"]["datasets"] = []
    config["wp"]["datasets"] = []
    config["hf"] = {"models": models, "datasets": []}
    result = snakemake(tmp_path, "hf", config=config)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", result.stdout + result.stderr, flags=re.M))  # Snakemake's job table
    assert jobs == {"az_pronouns": "4", "hf": "1", "total": "5"}, jobs  # nothing else: no dataset, no training

    for model in models:
        for example in ("author_sara", "mary_john"):
            files = {key: tmp_path / path for key, path in paths.az_pronoun_files(model, example).items()}
            assert files["pdf"].read_bytes()[:4] == b"%PDF"
            assert Image.open(files["png"]).width > 500
            assert (tmp_path / paths.log("az", f"pronouns/{model}/{example}")).exists()
            table = read_csv(files["table"], keep_default_na=False, na_values=[""])  # its sha256 sidecar checked
            candidates = table[table["method"] == "candidate"]
            assert list(candidates["token"]) == ["his", "her"] and candidates["value"].sum() == pytest.approx(1)
            for method in ("raw", "rollout", "flow"):
                part = table[table["method"] == method]
                assert set(part["layer"]) == {1, 2}
                np.testing.assert_allclose(part.groupby("layer")["value"].sum(), 1, atol=1e-6)
            q = int(candidates["position"].iloc[0])
            tokens = table[(table["method"] == "raw") & (table["layer"] == 1)].sort_values("position")["token"].tolist()
            if model == "tiny_mlm":
                assert tokens[0] == "[CLS]" and tokens[q] == "[MASK]" and tokens[-1] == "[SEP]"
            else:  # the causal LM read the text before the pronoun only, and is explained at its last token
                assert q == len(tokens) - 1 and tokens[q] == {"author_sara": "about", "mary_john": "of"}[example]
            marked = table.loc[table["referent"].fillna("") != "", "token"].str.lower()
            assert set(marked) == ({"author", "sara"} if example == "author_sara" else {"mary", "john"})
