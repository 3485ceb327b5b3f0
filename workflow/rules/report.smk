# Targets across the three papers: every table, every figure, and the HTML report (grouped by paper, then
# dataset, then model; see workflow/report/workflow.rst).


rule tables:
    input:
        PLAN.table_targets(),
    localrule: True


rule figures:
    input:
        PLAN.figure_targets(),
    localrule: True


rule report:
    input:
        tables=PLAN.table_targets(),
        figures=PLAN.figure_targets(),
    output:
        report=paths.REPORT,
    log:
        paths.log("report", "report"),
    localrule: True
    conda:
        "../envs/attnexp.yaml"
    params:
        settings=settings(
            job.ReportSettings, snakefile=os.path.relpath(workflow.main_snakefile)
        ),
    script:
        "../scripts/report.py"


rule paper_comparison:
    input:
        PLAN.paper_comparison_inputs(),
    output:
        **catalog_table(paths.COMPARISON, "paper_comparison"),
    log:
        paths.log("tables", "comparison/paper_comparison"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(job.TableSettings, table="paper_comparison"),
    script:
        "../scripts/paper_comparison.py"


# The comparison as a results page (docs/results.md): the table, why each row's
# settings differ, the compared datasets, and what made it. Its params record the run's config files and --config
# values (relative paths), not the whole command line: options such as --cores would otherwise rerun it.
rule paper_comparison_page:
    input:
        **PLAN.comparison_page_inputs(),
    output:
        md=paths.paper_comparison_page_files()["md"],
        html=reported_page(
            paths.COMPARISON,
            paths.paper_comparison_page_files()["html"],
            "paper_comparison_page",
            "Results page: ours beside the published values",
        ),
    log:
        paths.log("tables", "comparison/paper_comparison_page"),
    localrule: True
    conda:
        "../envs/attnexp.yaml"
    resources:
        **JOB_RESOURCES,
    params:
        settings=settings(
            job.ComparisonPageSettings,
            snakefile=os.path.relpath(workflow.main_snakefile),
            configfiles=[
                os.path.relpath(f) for f in workflow.config_settings.configfiles
            ],
            config_args=list(workflow.config_settings.config_args or ()),
            replace_workflow_config=workflow.config_settings.replace_workflow_config,
        ),
    script:
        "../scripts/paper_comparison_page.py"
