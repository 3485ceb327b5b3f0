"""The plan, without Snakemake: which datasets each paper runs on, the runs and targets, the wildcard alternatives."""

import re

import pytest
import yaml

from attnexp import paths
from attnexp.models import names
from attnexp.pipeline.plan import PARTS, Plan, not_drawn_by
from attnexp.pipeline.settings import default_config
from tests.conftest import REPO


def embedded() -> dict:
    """config/config.yaml (the embedded default grid), validated."""
    return default_config(**yaml.safe_load((REPO / "config/config.yaml").read_text()))


def test_the_embedded_grid_plans_every_paper():
    config = embedded()
    plan = Plan.from_config(config)
    assert plan.datasets == config["datasets"]
    assert plan.az_datasets == config["az"]["datasets"] and plan.wp_datasets == config["wp"]["datasets"]
    models = plan.model_targets()
    assert len(models) == len(config["datasets"]) * len(config["encoders"]) * len(config["attentions"]) * len(config["seeds"])
    assert models[0] == paths.model_files("syn_sentiment", "lstm", "tanh", 0)["metrics"]
    everything = plan.all_targets()
    assert len(everything) == len(set(everything))
    for part in (models, plan.analyses_targets(), plan.az_targets(), plan.wp_targets(), plan.table_targets()):
        assert set(part) <= set(everything)
    assert paths.REPORT not in everything  # the report is its own target
    assert plan.hf_targets() == []


def test_the_plan_is_a_copy_of_its_config_built_anew_each_time():
    config = embedded()
    plan = Plan.from_config(config)
    assert Plan.from_config(config) == plan and Plan.from_config(default_config()) != plan
    assert plan.validated == config and plan.validated is not config
    config["seeds"].append(99)  # a later change to the config leaves the plan (and the settings it feeds) as it is
    assert 99 not in plan.seeds and 99 not in plan.validated["seeds"]


def test_the_facade_shows_each_parts_names_as_its_own():
    plan = Plan.from_config(embedded())
    for part, shown in PARTS.items():
        for name in shown:
            assert getattr(plan, name) == getattr(getattr(plan, part), name), name
    assert plan.validated["stage_datasets"] == plan.config["stage_datasets"]


def test_wildcard_alternatives_come_from_the_model_names():
    wildcards = Plan.from_config(embedded()).wildcards()
    for encoder in [*names.ENCODERS, names.TRANSFORMER_ENCODER]:
        assert re.fullmatch(wildcards["encoder"], encoder)
    for attention in [*names.ATTENTIONS, *names.TRANSFORMER_ATTENTIONS]:
        assert re.fullmatch(wildcards["attention"], attention)
    assert not re.fullmatch(wildcards["encoder"], "hf")


def test_single_figure_rules_never_match_a_figure_a_batch_job_draws():
    plan = Plan.from_config(embedded())
    constraint = plan.single_model_figure_encoder()
    drawn = f"{plan.figure_models(['x'])[0]['encoder']}-tanh/seed0/{plan.model_figure_names[0]}.png"
    rest = drawn.split("-", 1)[1]
    assert not re.match(constraint, drawn)  # drawn by dataset_figures
    assert re.match(constraint, f"transformer-{rest}")  # any other model: drawn alone
    assert re.match(not_drawn_by(set(), "a|b"), "a")


def test_missing_raw_data_is_skipped_or_refused(tmp_path, capsys):
    empty = tmp_path / "raw"
    empty.mkdir()
    data = {"raw_data_dir": str(empty), "on_missing": "skip"}
    plan = Plan.from_config(default_config(datasets=["sst", "syn_sentiment"], data=data))
    assert plan.datasets == ["syn_sentiment"]
    assert "sst" in capsys.readouterr().err
    from attnexp.errors import ConfigError

    with pytest.raises(ConfigError, match="raw data missing"):
        Plan.from_config(default_config(datasets=["sst"], data={**data, "on_missing": "fail"}))


def test_wp_runs_and_the_guide_of_the_adversarial_mlp():
    config = embedded()
    plan = Plan.from_config(config)
    dataset = plan.wp_datasets[0]
    runs = plan.wp_dataset_runs(dataset)
    assert runs["base"] == paths.wp_run_files(dataset, "base", config["wp"]["base_seed"])
    assert len(runs["adversaries"]) == len(plan.wp.lambdas_for(dataset))
    inputs = plan.wp_train_inputs(dataset, "mlp_adv")
    lam = paths.lambda_label(plan.wp.diag_lambda_for(dataset))
    assert inputs["test_attention"].endswith(f"lambda{lam}/test_attention.parquet")
    assert set(plan.wp_train_inputs(dataset, "base")) == set(paths.PREPROCESSED_FILES)


def test_hugging_face_figures_are_figure_targets(tmp_path):
    from tests.hf_fixtures import tiny_checkpoint

    checkpoint = tiny_checkpoint(tmp_path / "tiny")
    hf = {"models": {"tiny": {"checkpoint": str(checkpoint)}}, "datasets": ["syn_sentiment"], "seeds": [0, 1]}
    plan = Plan.from_config(default_config(hf=hf))
    stems = [paths.hf_figure_stem("correlation_by_layer", "tiny", "syn_sentiment")]
    stems += [paths.hf_figure_stem("cls_maps", "tiny", "syn_sentiment", seed) for seed in (0, 1)]
    for stem in stems:
        png = paths.figure_files("az", stem)["png"]
        assert png in plan.figure_targets() and png in plan.hf_targets()
    assert set(plan.az_table_targets()) <= set(plan.table_targets())
    assert [run["dataset"] for run in plan.az_runs()][-2:] == ["syn_sentiment@tiny"] * 2


def test_each_az_run_names_the_model_read_and_the_gradient_its_tables_show(tmp_path):
    """A&Z §4: grad_x_input for our pre-LN Transformer (grad is identically zero there), grad for a Hugging Face
    BERT; the model label follows az.tied_cls_attention."""
    from tests.hf_fixtures import tiny_checkpoint

    hf = {"models": {"tiny": {"checkpoint": str(tiny_checkpoint(tmp_path / "tiny"))}}, "datasets": ["syn_sentiment"]}
    runs = {run["dataset"]: run for run in Plan.from_config(default_config(hf=hf)).az_runs()}
    assert (runs["syn_agreement"]["model"], runs["syn_agreement"]["gradient"]) == ("transformer-self", "grad_x_input")
    assert (runs["syn_sentiment@tiny"]["model"], runs["syn_sentiment@tiny"]["gradient"]) == ("tiny", "grad")
    tied = Plan.from_config(default_config(az={"tied_cls_attention": True, "gradient": "grad_l2"})).az_runs()
    assert (tied[0]["model"], tied[0]["gradient"]) == ("transformer-tiedcls", "grad_l2")


def test_the_comparison_reads_the_generated_agreement_runs_and_their_model_config():
    """Issue 38 §4: syn_agreement stands for A&Z's Linzen corpus, so the comparison reads its A&Z summary and the
    Transformer's config.yaml (its size), and the page that run's code version; generated data of the other papers
    is still compared with nothing."""
    plan = Plan.from_config(embedded())
    runs = plan.paper_comparison_runs()
    assert runs["jw_models"] == [] and runs["wp_runs"] == []
    config = paths.model_files("syn_agreement", names.TRANSFORMER_ENCODER, names.TRANSFORMER_ATTENTION, 0)["config"]
    assert [(r["dataset"], r["seed"], r["config"]) for r in runs["az_runs"]] == [("syn_agreement", 0, config)]
    assert runs["az_runs"][0]["summary"] == paths.az_files("syn_agreement", 0)["summary"]
    assert {runs["az_runs"][0]["summary"], config} <= set(plan.paper_comparison_inputs())
    assert plan.comparison_page_inputs()["configs"] == [config]
    assert list(runs["metas"]) == ["syn_agreement"]
    tied = Plan.from_config(default_config(az={"tied_cls_attention": True})).paper_comparison_runs()["az_runs"]
    assert tied[0]["config"] == paths.model_files("syn_agreement", "transformer", names.TRANSFORMER_TIED_ATTENTION, 0)["config"]


def test_a_narrowed_grid_narrows_every_stage(tmp_path):
    """Issue 23 item 8: `--config datasets='[x]'` runs x alone; W&P and Hugging Face lists follow `datasets`, A&Z keeps
    its own agreement task; `stage_datasets: as_listed` keeps each stage's list."""
    from tests.hf_fixtures import tiny_checkpoint

    hf = {"models": {"tiny": {"checkpoint": str(tiny_checkpoint(tmp_path / "tiny"))}}}
    stages = {
        "wp": {"datasets": ["syn_sentiment", "syn_agreement"]},
        "hf": {**hf, "datasets": ["syn_sentiment", "syn_nli"]},
        "az": {"datasets": ["syn_agreement", "syn_sentiment", "syn_nli"]},
    }
    narrowed = Plan.from_config(default_config(datasets=["syn_nli"], **stages))
    assert narrowed.wp_datasets == [] and narrowed.wp_targets() == []
    assert narrowed.hf_datasets == ["syn_nli"]
    assert narrowed.az_datasets == ["syn_agreement", "syn_nli"]
    kept = Plan.from_config(default_config(datasets=["syn_nli"], stage_datasets="as_listed", **stages))
    assert kept.wp_datasets == ["syn_sentiment", "syn_agreement"]
    assert kept.hf_datasets == ["syn_sentiment", "syn_nli"]
    assert kept.az_datasets == ["syn_agreement", "syn_sentiment", "syn_nli"]


def test_a_hugging_face_checkpoint_is_needed_only_where_the_stage_runs(tmp_path):
    from attnexp.errors import ConfigError

    missing = {"models": {"gone": {"checkpoint": str(tmp_path / "nowhere")}}, "datasets": ["syn_sentiment"]}
    assert Plan.from_config(default_config(datasets=["syn_nli"], hf=missing)).hf_runs == []  # narrowed away
    with pytest.raises(ConfigError, match="hf.models.gone"):
        default_config(datasets=["syn_nli"], stage_datasets="as_listed", hf=missing)


def test_erasure_targets_follow_the_one_switch():
    on = Plan.from_config(default_config(az={"datasets": ["syn_agreement"]}))
    models = on.erasure_models()
    assert [m["model"] for m in models] == ["lstm-tanh", "transformer-tiedcls", "transformer-self (A&Z)"]
    assert models[0]["erasure_input"] == paths.erasure_files("syn_sentiment", "lstm", "tanh", 0)["erasure_input"]
    assert models[2]["erasure_attention"] == paths.az_erasure_files("syn_agreement", 0)["erasure_attention"]
    assert set(on.erasure_table_targets()) <= set(on.table_targets())
    figures = on.erasure_figure_targets()
    assert "results/figures/erasure/syn_agreement/first_flip.png" in figures and set(figures) <= set(on.figure_targets())
    off = Plan.from_config(default_config(analyses={"erasure": {"enabled": False}}, az={"datasets": ["syn_agreement"]}))
    assert off.erasure_models() == [] and off.erasure_table_targets() == [] and off.erasure_figure_targets() == []
    assert not any("erasure" in target for target in off.all_targets())


def test_every_job_reading_runs_gets_the_plan_list_its_catalog_entry_names():
    from attnexp.report import catalog

    plan = Plan.from_config(embedded())
    rules = {o.rule for o in catalog.CATALOG if "runs" in o.reads} | set(catalog.AGGREGATE_READS)
    assert rules == {"az_combine", "erasure_tables", "paper_comparison"}
    assert {rule: catalog.runs(rule) for rule in rules} == {
        "az_combine": "az_runs",
        "erasure_tables": "erasure_models",
        "paper_comparison": "paper_comparison_runs",
    }
    for rule in rules:
        assert isinstance(getattr(plan, catalog.runs(rule))(), list | dict), rule
    with pytest.raises(KeyError, match="names no single list of runs"):
        catalog.runs("table1")


def test_figure_jobs_draw_the_plans_lists_and_the_others_their_inputs_alone():
    plan = Plan.from_config(embedded())
    assert plan.figure_job("wp_variance_figures", dataset="syn_sentiment", kind="adv") == "adversary"
    assert plan.figure_job("dataset_figures", dataset="syn_sentiment") == plan.dataset_figure_models("syn_sentiment")
    assert plan.figure_job("az_cls_maps", dataset="syn_agreement", seed="0") is None
    assert plan.figure_job("wp_jsd_tvd_figure", dataset="syn_sentiment") is None
