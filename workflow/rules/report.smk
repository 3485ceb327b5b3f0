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
