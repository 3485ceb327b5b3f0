# Targets across the three papers: every table, every figure, and the HTML report (grouped by paper, then
# dataset, then model; see workflow/report/workflow.rst).


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
        get_table_targets(),
        get_figure_targets(),
    output:
        paths.REPORT,
    log:
        paths.log("report", "report"),
    localrule: True
    conda:
        "../envs/attnexp.yaml"
    params:
        snakefile=workflow.main_snakefile,
    script:
        "../scripts/report.py"


rule paper_comparison:
    input:
        get_paper_comparison_inputs(),
    output:
        **reported_table(
            paths.COMPARISON, "paper_comparison", "Ours beside the published values"
        ),
    log:
        paths.log("tables", "comparison/paper_comparison"),
    conda:
        "../envs/attnexp.yaml"
    resources:
        **RESOURCES["small"],
    params:
        runs=get_paper_comparison_runs(),
        nan_policy=config["analyses"]["kendall"]["nan_policy"],  # as Table 2
        bootstrap=bootstrap_options(),
    script:
        "../scripts/paper_comparison.py"
