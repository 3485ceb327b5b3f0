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
        **reported_table(
            paths.COMPARISON, "paper_comparison", "Ours beside the published values"
        ),
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
