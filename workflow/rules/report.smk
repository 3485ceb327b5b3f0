# Targets across the three papers: every table, every figure, and the HTML report.


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
        "../envs/attnexp.yaml"
    params:
        snakemake=f"{sys.executable} -m snakemake",
    shell:
        "{params.snakemake} --nolock --report {output} {input} > {log} 2>&1"
