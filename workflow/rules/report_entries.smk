# Report entries (snakemake --report): category = the paper, subcategory = the dataset (or "All datasets"), and one
# label, "dataset · model · result" (attnexp.report.order.entry_label). One label, because Snakemake's report turns
# any label after the first into a toggle when it has exactly two values on half the entries of a page (a
# subcategory or a search's results), and a row lacking one of them then has no file (the page crashes); the
# dataset in it keeps a search's rows apart (Snakemake merges entries with equal labels). Snakemake sorts
# categories, subcategories and entries by name, so sections carry the papers' order as a number. Tables enter as their HTML page
# (shown inline; a CSV would only be offered for download). `report(` at the start of a line would parse as the
# global `report:` directive, hence the alias.
from attnexp.report.order import ALL_DATASETS, PAPER_SECTIONS, entry_label

in_report = report
JW_FIGURE_TITLES = catalog.titles("jw", "figure")


def report_section(subcategory):
    """The report subcategory of `subcategory`: "All datasets" or a dataset name, or "{dataset}" (a wildcard),
    numbered in the papers' dataset order over every dataset of this run."""

    def section(wildcards):
        name = subcategory.format(**dict(wildcards.items()))
        return PLAN.report_sections.get(name, name)

    return section


def report_labels(subcategory, model, title):
    """The entry's one label (see above); `model` and `title` are text with wildcards or functions of them."""

    def labels(wildcards):
        values = dict(wildcards.items())
        text = lambda part: part(wildcards) if callable(part) else part.format(**values)
        return entry_label(subcategory.format(**values), text(model), text(title))

    return labels


def reported_page(paper, path, caption, title, subcategory=ALL_DATASETS, model="-"):
    """An HTML page (a table's, or the comparison's results page) as a report entry (caption
    workflow/report/{paper}/{caption}.rst)."""
    return in_report(
        path,
        caption=f"../report/{paper}/{caption}.rst",
        category=PAPER_SECTIONS[paper],
        subcategory=report_section(subcategory),
        labels=report_labels(subcategory, model, title),
    )


def reported_table(paper, stem, title, subcategory=ALL_DATASETS, model="-", prefix=""):
    """A table's CSV, Markdown, LaTeX and HTML (`{prefix}{format}`); the HTML is its report entry (caption
    workflow/report/{paper}/{stem}.rst)."""
    files = paths.table_files(paper, stem)
    caption = stem.rsplit("/", 1)[-1]
    files["html"] = reported_page(
        paper, files["html"], caption, title, subcategory, model
    )
    return {f"{prefix}{fmt}": path for fmt, path in files.items()}


def reported_figure(
    paper, files, caption, title, subcategory="{dataset}", model="-", prefix=""
):
    """A figure's PNG and PDF (`{prefix}{format}`); the PNG is its report entry (caption
    workflow/report/{paper}/{caption}.rst). `model` and `title` may be functions of the wildcards.
    """
    png = in_report(
        files["png"],
        caption=f"../report/{paper}/{caption}.rst",
        category=PAPER_SECTIONS[paper],
        subcategory=report_section(subcategory),
        labels=report_labels(subcategory, model, title),
    )
    return {f"{prefix}png": png, f"{prefix}pdf": files["pdf"]}


def catalog_table(paper, stem, **kwargs):
    """reported_table of an entry of the one catalog of outputs (attnexp.report.catalog), with its title."""
    return reported_table(
        paper, stem, catalog.outputs(paper, "table")[stem].title, **kwargs
    )


def catalog_figure(paper, stem, caption, **kwargs):
    """reported_figure of an entry of the one catalog of outputs (attnexp.report.catalog), with its title."""
    title = catalog.outputs(paper, "figure")[stem].title
    return reported_figure(
        paper, paths.figure_files(paper, stem), caption, title, **kwargs
    )


def model_figure_outputs():
    """Every per-model figure of one dataset ({dataset} left as a wildcard); PNGs go into the report."""
    outputs = []
    for m in PLAN.figure_models(["{dataset}"]):
        label = f"{m['encoder']}-{m['attention']} seed {m['seed']}"
        for name in PLAN.model_figure_names:
            files = PLAN.model_figure_files(m, name)
            title = JW_FIGURE_TITLES[name]
            outputs += reported_figure("jw", files, name, title, model=label).values()
    return outputs


def hf_figure_outputs():
    """The per-model J&W figures of one Hugging Face run ({hf_model}, {dataset}, {seed} left as wildcards)."""
    model = PLAN.hf_figure_model("{hf_model}", "{dataset}", "{seed}")
    return {
        f"{name}_{fmt}": path
        for name, files in model["figures"].items()
        for fmt, path in reported_figure(
            "jw", files, name, JW_FIGURE_TITLES[name], model="hf-{hf_model} seed {seed}"
        ).items()
    }


def summary_figure_outputs():
    outputs = []
    for attention, by_name in PLAN.summary_figure_files().items():
        for name, files in by_name.items():
            title = f"{JW_FIGURE_TITLES[name]} ({attention} attention)"
            outputs += reported_figure("jw", files, name, title, ALL_DATASETS).values()
    return outputs
