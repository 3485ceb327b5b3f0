# The workflow is workflow/Snakefile (the catalog's standard layout, what a module deployment declares). This root
# file stays so that a clone runs it as it is: Snakemake finds a root Snakefile first, and looks for the workflow
# profile (profiles/default/) beside the main Snakefile, also with `snakemake -s <clone>/Snakefile -d elsewhere`.


include: "workflow/Snakefile"


# An included file's `default_target` does not carry over to the including one: `snakemake` alone builds `all`.
workflow.default_target = "all"
