# Can attention weights explain a neural model's predictions?
# Jain & Wallace (2019), Wiegreffe & Pinter (2019) and Abnar & Zuidema (2020) as one DAG.
# common.smk validates the config (before any job) and builds the plan (attnexp.pipeline.plan); each stage has its
# rule file, and every job calls one entry point of attnexp.pipeline.
import sys

from snakemake.utils import min_version

min_version("9.0")

# A YAML syntax error in the config file should name its line (Snakemake's own message names neither file nor line).
sys.path.insert(0, f"{workflow.basedir}/src")
from attnexp.config import ConfigError, check_config_syntax

try:
    check_config_syntax("config/config.yaml")
except ConfigError as err:
    raise WorkflowError(str(err)) from None


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/resources.smk"
include: "workflow/rules/reporting.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/jw.smk"
include: "workflow/rules/wp.smk"
include: "workflow/rules/az.smk"
include: "workflow/rules/hf.smk"
include: "workflow/rules/erasure.smk"
include: "workflow/rules/report.smk"


# The console (attnexp.runsummary): where per-epoch progress shows, then a closing summary of what ran, the wall
# time and where the results and the report are, or which jobs failed and where their logs are.
from attnexp import runsummary


onstart:
    print(runsummary.start_banner(), file=sys.stderr, flush=True)


onsuccess:
    print(runsummary.success_summary(log), file=sys.stderr, flush=True)


onerror:
    print(runsummary.error_summary(log), file=sys.stderr, flush=True)


rule all:
    default_target: True
    input:
        PLAN.all_targets(),
    localrule: True


rule models:
    input:
        PLAN.model_targets(),
    localrule: True


rule analyses:
    input:
        PLAN.analyses_targets(),
    localrule: True
