# Validation, the plan and the input functions (get_*) shared by every stage. What the config asks for is decided
# in the library (attnexp.pipeline.plan: datasets per paper, runs, targets, wildcard alternatives) and every path
# is named in attnexp.paths; a ConfigError from either stops the workflow before any job runs.
# attnexp: this checkout's src/ (put on sys.path by workflow/Snakefile) or the installed package.
import os
import sys

from attnexp import paths
from attnexp.config import ConfigError, config_warnings, validate_config
from attnexp.datasets.acquire import DOWNLOADS
from attnexp.datasets.generated.synthetic import FAMILY_FILES
from attnexp.models import names
from attnexp.pipeline import settings as job
from attnexp.pipeline.plan import Plan, alternatives
from attnexp.report import catalog

try:
    validate_config(config)
    # basedir ".": the working directory, so that relative raw-data paths stay relative (a moved project reruns nothing)
    PLAN = Plan.from_config(config, basedir=".")
    for warning in config_warnings(config):
        print(f"Warning: {warning}", file=sys.stderr)
except ConfigError as err:
    raise WorkflowError(
        f"{err}\nFix config/config.yaml (or the file given with --configfile)."
    ) from None


wildcard_constraints:
    **PLAN.wildcards(),


def settings(kind, **fixed):
    """`params: settings=` of a rule: kind.from_plan(PLAN, **wildcards, **fixed) as plain data (compared by
    Snakemake, so that a changed setting reruns exactly the jobs that read it); the report shows it short
    (attnexp.pipeline.settings.Param)."""
    return lambda wildcards: kind.from_plan(
        PLAN, **dict(wildcards.items()), **fixed
    ).as_param()


def get_raw_files(wildcards):
    """The raw files of the {dataset} wildcard by role (resolved once, by the plan)."""
    return PLAN.raw_files(wildcards.dataset)


def get_train_inputs(wildcards):
    """A grid model's preprocessed dataset and word-vector file (when one is set: its download rule runs first)."""
    return PLAN.train_inputs(wildcards.dataset)


def get_hf_tokenize_inputs(wildcards):
    """The preprocessed dataset and its raw files (`raw_{role}`), whose text is read again."""
    raw = {f"raw_{role}": path for role, path in get_raw_files(wildcards).items()}
    return {**paths.preprocessed_files(wildcards.dataset), **raw}


def get_download_outputs(archive):
    """The files (and folders) the download rule of one archive extracts into resources/raw, and the sha256 files
    it records beside word vectors."""
    return [
        (
            directory(f"{paths.DOWNLOADED}/{out[:-1]}")
            if out.endswith("/")
            else f"{paths.DOWNLOADED}/{out}"
        )
        for out in DOWNLOADS[archive].files
    ]


def get_linzen_path(wildcards):
    if not config["az"]["linzen_path"]:
        raise WorkflowError(
            "dataset linzen_agreement needs the Linzen et al. corpus: set az.linzen_path "
            "to agr_50_mostcommon_10K.tsv(.gz) from the rnn_agreement release"
        )
    return config["az"]["linzen_path"]


def get_table_files(kind, key):
    """One file of every model the J&W tables show (the grid's, then the Hugging Face runs'): kind "model" (run
    files) or "analysis" (analysis tables)."""
    return [PLAN.table_model_files(m, kind)[key] for m in PLAN.table_models(kind)]


def get_table_metas(wildcards=None):
    return [paths.preprocessed_files(d)["meta"] for d in PLAN.table_datasets()]


def get_dataset_figure_inputs(wildcards):
    return PLAN.dataset_figure_inputs(wildcards.dataset)


def get_hf_figure_inputs(wildcards):
    model = PLAN.hf_figure_model(
        wildcards.hf_model, wildcards.dataset, int(wildcards.seed)
    )
    return [model[t] for t in PLAN.figure_tables(PLAN.hf_figure_names)]


def get_model_figure_inputs(wildcards):
    model = PLAN.single_model_figure(**dict(wildcards.items()))[0]
    return [model[t] for t in PLAN.figure_tables([wildcards.figure])]


def get_erasure_inputs(wildcards):
    """The erasure files of every model of the {dataset} wildcard."""
    return PLAN.erasure_inputs(wildcards.dataset)


def get_wp_train_inputs(wildcards):
    return PLAN.wp_train_inputs(wildcards.dataset, wildcards.variant)


def get_wp_adversary_inputs(wildcards):
    base = PLAN.wp_run_files(wildcards.dataset, "base")
    return {
        **PLAN.train_inputs(wildcards.dataset),
        **{f"base_{key}": path for key, path in base.items()},
    }


def get_wp_analysis_inputs(analysis):
    return lambda wildcards: PLAN.wp_analysis_inputs(wildcards.dataset, analysis)


def get_wp_metrics(variant):
    return PLAN.wp_metrics(variant)
