"""Every path the workflow writes, named once.

Folder patterns keep Snakemake's `{wildcards}`; the helpers below fill them (their defaults leave the
wildcards in place, so a rule can write `output: **paths.model_files()`). The rules in workflow/rules/
take their inputs and outputs from here, and library code that needs a run's sibling files asks here
instead of joining file names onto a folder itself.
"""

from collections.abc import Mapping

SPLITS = ("train", "dev", "test")
PAPERS = ("jw", "wp", "az")  # Jain & Wallace, Wiegreffe & Pinter, Abnar & Zuidema
COMPARISON = "comparison"  # tables across the three papers (ours beside the published values), in place of a paper
TABLE_FORMATS = ("csv", "md", "tex", "html")  # html: the page the HTML report shows
FIGURE_FORMATS = ("png", "pdf")

RESULTS = "results"
LOGS = "logs"
RESOURCES = "resources"  # downloads (raw archives, word vectors)
REPORT = f"{RESULTS}/report.html"
COMPARISON_DOC = "docs/paper-comparison.md"  # the committed copy of the comparison page (docs/results.md)

# --- folders (patterns) ---
ARCHIVES = f"{RESOURCES}/archives"  # official archives as downloaded
DOWNLOADED = f"{RESOURCES}/raw"  # the archives extracted: the raw-data directory when data.raw_data_dir is null
RAW = f"{RESULTS}/raw"
SYNTHETIC = f"{RAW}/synthetic/{{family}}"
LINZEN = f"{RAW}/linzen"  # the Linzen et al. corpus converted from az.linzen_path
LINZEN_FILE = f"{LINZEN}/data.csv"
AGREEMENT = f"{RAW}/synthetic/agreement/data.csv"  # the generated agreement sentences (A&Z)
PREPROCESSED = f"{RESULTS}/preprocessed/{{dataset}}"
MODEL = f"{RESULTS}/models/{{dataset}}/{{encoder}}-{{attention}}/seed{{seed}}"
ANALYSIS = f"{RESULTS}/analyses/{{dataset}}/{{encoder}}-{{attention}}/seed{{seed}}"
WP_DATASET = f"{RESULTS}/wp/{{dataset}}"
WP_RUN = f"{WP_DATASET}/{{variant}}/seed{{seed}}"
WP_ADVERSARY = f"{WP_DATASET}/adversarial/seed{{seed}}/lambda{{lam}}"
AZ_RUN = f"{RESULTS}/az/{{dataset}}/seed{{seed}}"
HF = f"{RESULTS}/hf/{{hf_model}}"  # Hugging Face models (config hf.models): tokenized data, runs, analyses
HF_PREPROCESSED = f"{HF}/preprocessed/{{dataset}}"
HF_RUN = f"{HF}/{{dataset}}/seed{{seed}}"  # model/ (RUN_FILES), az/ (AZ_FILES), jw/ (ANALYSIS_FILES)
TABLES = f"{RESULTS}/tables/{{paper}}"
FIGURES = f"{RESULTS}/figures/{{paper}}"
# figure stems inside FIGURES (paper "jw"): one model's figures, and the across-model summary per attention
JW_MODEL_FIGURE = "{dataset}/{encoder}-{attention}/seed{seed}/{name}"
JW_SUMMARY_FIGURE = "summary/{attention}/{name}"
FIGURE_MANIFEST = "figures.json"  # lists the figures one batch job drew

# --- file sets (name -> file name inside a folder) ---
PREPROCESSED_FILES = {"instances": "instances.parquet", "meta": "meta.json", "timings": "timings.json"}
RUN_FILES = {
    "model": "model.pt",
    "metrics": "metrics.json",
    "history": "train_log.csv",
    "config": "config.yaml",
    "timings": "timings.json",  # wall-clock seconds per epoch: the one run file that differs between identical runs
}
DONOR_FILES = {f"{split}_{kind}": f"{split}_{kind}.parquet" for split in SPLITS for kind in ("predictions", "attention")}
ANALYSIS_FILES = {
    "importance": "importance.parquet",
    "kendall": "kendall.parquet",
    "kendall_summary": "kendall_summary.csv",
    "permutation": "permutation.parquet",
    "adversary": "adversary.parquet",
    "rationale": "rationale_recovery.csv",
    "config": "analysis_config.yaml",
}
ERASURE_FILES = {  # beside a model's analyses (`analyses.erasure.enabled`): Serrano & Smith's test, ERASER's
    "erasure_attention": "erasure_attention.parquet",
    "erasure_input": "erasure_input.parquet",
}
ERASURE = "erasure"  # the tables' and figures' folder of the erasure tests (in place of a paper)
WP_DATASET_FILES = {
    "seed_variance": "seed_variance.parquet",
    "adv_variance": "adv_variance.parquet",
    "points": "jsd_tvd_points.parquet",
}
WP_JW_ADVERSARY = "jw_adversary.parquet"
AZ_FILES = {
    "relevance": "relevance.parquet",
    "correlations": "correlations.parquet",
    "summary": "correlation_summary.csv",
    "recovery": "subject_recovery.csv",
    "timings": "timings.json",  # flow seconds per example: the one A&Z file that differs between identical runs
}


def in_folder(folder: str, names: Mapping[str, str]) -> dict[str, str]:
    """`{name: folder/file}` for a file set."""
    return {key: f"{folder}/{name}" for key, name in names.items()}


def lambda_label(value: float | str) -> str:
    """How a W&P lambda appears in paths: the shortest float form (0.001, 1, 10)."""
    return value if isinstance(value, str) and value.startswith("{") else f"{float(value):g}"


def preprocessed_files(dataset: str = "{dataset}") -> dict[str, str]:
    return in_folder(PREPROCESSED.format(dataset=dataset), PREPROCESSED_FILES)


def model_dir(dataset="{dataset}", encoder="{encoder}", attention="{attention}", seed="{seed}") -> str:
    return MODEL.format(dataset=dataset, encoder=encoder, attention=attention, seed=seed)


def model_files(dataset="{dataset}", encoder="{encoder}", attention="{attention}", seed="{seed}") -> dict[str, str]:
    return in_folder(model_dir(dataset, encoder, attention, seed), RUN_FILES)


def analysis_files(dataset="{dataset}", encoder="{encoder}", attention="{attention}", seed="{seed}") -> dict[str, str]:
    folder = ANALYSIS.format(dataset=dataset, encoder=encoder, attention=attention, seed=seed)
    return in_folder(folder, ANALYSIS_FILES)


def erasure_files(dataset="{dataset}", encoder="{encoder}", attention="{attention}", seed="{seed}") -> dict[str, str]:
    """The erasure tests of one model, beside its analyses (`analysis_files`)."""
    folder = ANALYSIS.format(dataset=dataset, encoder=encoder, attention=attention, seed=seed)
    return in_folder(folder, ERASURE_FILES)


def wp_run_dir(dataset="{dataset}", variant="{variant}", seed="{seed}", lam=None) -> str:
    """One W&P run; the model-consistent adversary (variant "adversarial") also has a lambda."""
    if variant == "adversarial" or lam is not None:
        return WP_ADVERSARY.format(dataset=dataset, seed=seed, lam=lambda_label("{lam}" if lam is None else lam))
    return WP_RUN.format(dataset=dataset, variant=variant, seed=seed)


def wp_run_files(dataset="{dataset}", variant="{variant}", seed="{seed}", lam=None) -> dict[str, str]:
    """A W&P run's files: the run files plus its stored predictions and attention per split (donor files)."""
    return in_folder(wp_run_dir(dataset, variant, seed, lam), {**RUN_FILES, **DONOR_FILES})


def wp_dataset_files(dataset: str = "{dataset}") -> dict[str, str]:
    """The per-dataset W&P analyses: seed and adversary variance, the JSD/TVD points."""
    return in_folder(WP_DATASET.format(dataset=dataset), WP_DATASET_FILES)


def wp_jw_adversary_file(dataset: str = "{dataset}", seed: str = "{seed}") -> str:
    """J&W's per-instance adversary on a W&P base run, stored beside that run's files."""
    return f"{wp_run_dir(dataset, 'base', seed)}/{WP_JW_ADVERSARY}"


def az_files(dataset="{dataset}", seed="{seed}") -> dict[str, str]:
    return in_folder(AZ_RUN.format(dataset=dataset, seed=seed), AZ_FILES)


def az_erasure_files(dataset="{dataset}", seed="{seed}") -> dict[str, str]:
    """The erasure tests of the A&Z rankings (raw, rollout, flow, blank-out, the input gradient) of one run."""
    return in_folder(AZ_RUN.format(dataset=dataset, seed=seed), ERASURE_FILES)


AZ_COMBINED_FILES = {"summary": "correlation_summary.csv", "recovery": "subject_recovery.csv"}


def az_combined_files() -> dict[str, str]:
    """A&Z summaries of every dataset across its seeds: `results/az/{correlation_summary,subject_recovery}.csv`."""
    return in_folder(f"{RESULTS}/az", AZ_COMBINED_FILES)


def hf_preprocessed_files(hf_model="{hf_model}", dataset="{dataset}") -> dict[str, str]:
    """A grid dataset tokenized by one Hugging Face model's tokenizer (`preprocessed_files` without timings)."""
    files = {key: name for key, name in PREPROCESSED_FILES.items() if key != "timings"}  # re-tokenizing is quick
    return in_folder(HF_PREPROCESSED.format(hf_model=hf_model, dataset=dataset), files)


def hf_run_dir(hf_model="{hf_model}", dataset="{dataset}", seed="{seed}") -> str:
    return HF_RUN.format(hf_model=hf_model, dataset=dataset, seed=seed)


def hf_model_files(hf_model="{hf_model}", dataset="{dataset}", seed="{seed}") -> dict[str, str]:
    """One Hugging Face model's run files (used as given or fine-tuned on `dataset`)."""
    return in_folder(f"{hf_run_dir(hf_model, dataset, seed)}/model", RUN_FILES)


def hf_az_files(hf_model="{hf_model}", dataset="{dataset}", seed="{seed}") -> dict[str, str]:
    """The A&Z analysis of one Hugging Face run (the files of `az_files`)."""
    return in_folder(f"{hf_run_dir(hf_model, dataset, seed)}/az", AZ_FILES)


def hf_analysis_files(hf_model="{hf_model}", dataset="{dataset}", seed="{seed}") -> dict[str, str]:
    """The J&W analyses of one Hugging Face run (the files of `analysis_files`; the adversary table is empty)."""
    return in_folder(f"{hf_run_dir(hf_model, dataset, seed)}/jw", ANALYSIS_FILES)


def hf_erasure_files(hf_model="{hf_model}", dataset="{dataset}", seed="{seed}") -> dict[str, str]:
    """The erasure tests of one Hugging Face run, beside its J&W analyses (`hf_analysis_files`)."""
    return in_folder(f"{hf_run_dir(hf_model, dataset, seed)}/jw", ERASURE_FILES)


def hf_az_erasure_files(hf_model="{hf_model}", dataset="{dataset}", seed="{seed}") -> dict[str, str]:
    """The erasure tests of the A&Z rankings of one Hugging Face run, beside its A&Z analysis (`hf_az_files`)."""
    return in_folder(f"{hf_run_dir(hf_model, dataset, seed)}/az", ERASURE_FILES)


def hf_task(hf_model: str = "{hf_model}", dataset: str = "{dataset}") -> str:
    """How a Hugging Face run is labelled in the A&Z tables (their `task` column): `{dataset}@{hf_model}`."""
    return f"{dataset}@{hf_model}"


def hf_figure_stem(name: str, hf_model="{hf_model}", dataset="{dataset}", seed=None) -> str:
    """A&Z figure stems of a Hugging Face run under results/figures/az/: `hf/{hf_model}/{dataset}/{name}[_seed{seed}]`."""
    return f"hf/{hf_model}/{dataset}/{name}" + ("" if seed is None else f"_seed{seed}")


AZ_PRONOUN_STEM = "pronouns/{hf_model}/{example}"  # A&Z Fig. 4 under results/figures/az/: one per LM and example


def az_pronoun_files(hf_model="{hf_model}", example="{example}") -> dict[str, str]:
    """A&Z Fig. 4 of one language model (a `masked_lm` or `prompted` entry of hf.models) and one pronoun example:
    `results/figures/az/pronouns/{hf_model}/{example}.{png,pdf}` and the numbers drawn, `{example}.csv` beside them."""
    files = figure_files("az", AZ_PRONOUN_STEM.format(hf_model=hf_model, example=example))
    return {**files, "table": files["png"].removesuffix(".png") + ".csv"}


def table_files(paper: str, stem: str) -> dict[str, str]:
    """One table in every format: `results/tables/{paper}/{stem}.{csv,md,tex,html}`."""
    return {fmt: f"{TABLES.format(paper=paper)}/{stem}.{fmt}" for fmt in TABLE_FORMATS}


def paper_comparison_files() -> dict[str, str]:
    """Ours beside the papers' printed values: `results/tables/comparison/paper_comparison.{csv,md,tex,html}`."""
    return table_files(COMPARISON, "paper_comparison")


def paper_comparison_page_files() -> dict[str, str]:
    """The comparison as a results page (table, reasons, provenance): `results/tables/comparison/paper-comparison.md`,
    and its HTML for the report; published by copying the Markdown to COMPARISON_DOC."""
    return {fmt: f"{TABLES.format(paper=COMPARISON)}/paper-comparison.{fmt}" for fmt in ("md", "html")}


def figure_files(paper: str, stem: str) -> dict[str, str]:
    """One figure in every format: `results/figures/{paper}/{stem}.{png,pdf}`."""
    return {fmt: f"{FIGURES.format(paper=paper)}/{stem}.{fmt}" for fmt in FIGURE_FORMATS}


def figure_manifest(paper: str, group: str) -> str:
    """The manifest of a batch of figures: `results/figures/{paper}/{group}/figures.json`."""
    return f"{FIGURES.format(paper=paper)}/{group}/{FIGURE_MANIFEST}"


def jw_model_figure_files(
    dataset="{dataset}", encoder="{encoder}", attention="{attention}", seed="{seed}", name="{name}"
) -> dict[str, str]:
    """`results/figures/jw/{dataset}/{encoder}-{attention}/seed{seed}/{name}.{png,pdf}`."""
    stem = JW_MODEL_FIGURE.format(dataset=dataset, encoder=encoder, attention=attention, seed=seed, name=name)
    return figure_files("jw", stem)


def jw_summary_figure_files(attention="{attention}", name="{name}") -> dict[str, str]:
    """`results/figures/jw/summary/{attention}/{name}.{png,pdf}`."""
    return figure_files("jw", JW_SUMMARY_FIGURE.format(attention=attention, name=name))


def checksum_file(path: str) -> str:
    """The sha256 sidecar of a checkpoint or table (`sha256sum -c` reads it): `{path}.sha256`."""
    return f"{path}.sha256"


def log(stage: str, name: str) -> str:
    return f"{LOGS}/{stage}/{name}.log"
