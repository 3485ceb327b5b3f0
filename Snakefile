# Can attention weights explain a neural model's predictions?
# Jain & Wallace (2019), Wiegreffe & Pinter (2019) and Abnar & Zuidema (2020) as one DAG.
import sys

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/analyze.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/transformer.smk"
include: "workflow/rules/wp.smk"


rule all:
    default_target: True
    input:
        get_all_targets(),
    localrule: True


rule models:
    input:
        get_model_targets(),
    localrule: True


rule analyses:
    input:
        get_analyses_targets(),
    localrule: True


rule tables:
    input:
        get_table_targets(),
    localrule: True


rule figures:
    input:
        get_figure_targets(),
    localrule: True


rule report:
    input:
        get_figures_targets(),
    output:
        "results/report.html",
    log:
        "logs/report.log",
    localrule: True
    conda:
        "workflow/envs/attnexp.yaml"
    params:
        snakemake=f"{sys.executable} -m snakemake",
    shell:
        "{params.snakemake} --nolock --report {output} {input} > {log} 2>&1"
