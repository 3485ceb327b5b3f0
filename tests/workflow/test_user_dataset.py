"""A dataset declared in the config runs through every stage under its own name: the dry-run DAG of the whole
workflow (J&W, A&Z, W&P, tables, figures), and the preprocess job's library call in a process whose registry
knows only the built-in datasets."""

import re
from pathlib import Path

from attnexp import paths
from attnexp.data.preprocess import read_preprocessed
from attnexp.datasets import DATASETS
from attnexp.pipeline.data import run_preprocess
from attnexp.pipeline.plan import Plan
from attnexp.pipeline.settings import PreprocessSettings
from tests.factories import validated_config
from tests.workflow.helpers import snakemake, tiny_config

REVIEWS = Path(__file__).parents[1] / "datasets" / "fixtures" / "reviews.csv"
NAME = "my_reviews"
DECLARATION = {"task": "bc", "path": str(REVIEWS), "text": "review", "label": "sentiment", "split_column": "part"}


def test_a_csv_dataset_runs_through_every_stage_under_its_own_name(tmp_path):
    config = tiny_config(datasets=[NAME], encoders=["average"], user_datasets={NAME: {**DECLARATION, "epochs": 2}})
    config["hyperparameters"] = {NAME: {"embedding_dim": 16, "hidden_size": 8}}
    config["az"]["datasets"] = [NAME]
    config["wp"]["datasets"] = [NAME]
    dry = snakemake(tmp_path, "--dry-run", "--quiet", "host", config=config)  # list every job
    assert dry.returncode == 0, dry.stderr
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", dry.stdout, flags=re.M))
    for rule in ("preprocess", "train", "train_transformer", "analyze", "az_analyse", "wp_train", "table1", "dataset_figures"):
        assert int(jobs.get(rule, 0)) >= 1, (rule, jobs)
    for path in (
        paths.preprocessed_files(NAME)["meta"],
        paths.model_files(NAME, "average", "tanh", 0)["model"],
        paths.analysis_files(NAME, "average", "tanh", 0)["kendall"],
        paths.az_files(NAME, 0)["relevance"],
        paths.wp_run_files(NAME, "base", 50)["model"],
        paths.FIGURES.format(paper="jw") + f"/{NAME}/average-tanh/seed0/",
        paths.FIGURES.format(paper="wp") + f"/{NAME}/",
    ):
        assert path in dry.stdout, path
    assert "syn_sentiment" not in dry.stdout

    # the preprocess job: its process has only the built-in registry, and gets the declaration as a parameter
    config = validated_config(datasets=[NAME], user_datasets={NAME: dict(DECLARATION)})
    plan = Plan.from_config(config)
    inputs = plan.raw_files(NAME)
    settings = PreprocessSettings.from_param(PreprocessSettings.from_plan(plan, NAME).as_param())  # the rule's params
    assert settings.declaration == config["user_datasets"][NAME]
    assert NAME not in DATASETS  # validating and planning leave the registry alone
    files = {k: tmp_path / v for k, v in paths.preprocessed_files(NAME).items()}
    run_preprocess(inputs=inputs, outputs=files, settings=settings)
    instances, meta = read_preprocessed(files["instances"], files["meta"])
    assert meta["dataset"] == NAME and meta["sizes"] == {"train": 40, "dev": 10, "test": 10}
    assert instances["instance_id"].str.startswith(f"{NAME}/").all()
