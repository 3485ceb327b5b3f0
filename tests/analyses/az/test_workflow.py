"""The A&Z rules as a dry run: with several seeds every per-run input meets the run it belongs to."""

import re

from attnexp import paths
from tests.workflow.test_workflow import snakemake, tiny_config


def dry_run_jobs(tmp_path, config: dict, target: str = "az") -> list[dict]:
    """Jobs of `snakemake -n target`: rule name and its input/output/wildcards lines."""
    result = snakemake(tmp_path, "-n", target, "--quiet", "host", config=config, timeout=300)  # list every job
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", result.stdout):
        name = re.match(r"(?:local)?rule (\w+):", block.strip())
        if name:
            fields = dict(re.findall(r"^\s+(input|output|wildcards): (.*)$", block, flags=re.M))
            jobs.append({"rule": name.group(1), **{k: v.split(", ") for k, v in fields.items()}})
    return jobs


def test_two_seeds_give_matching_inputs_and_outputs(tmp_path):
    datasets, seeds = ["syn_agreement", "syn_sentiment"], [0, 1]
    config = tiny_config()
    config["az"].update(datasets=datasets, seeds=seeds)
    jobs = dry_run_jobs(tmp_path, config)
    maps = [job for job in jobs if job["rule"] == "az_cls_maps"]
    assert len(maps) == len(datasets) * len(seeds)
    for job in maps:
        wildcards = dict(w.split("=") for w in job["wildcards"])
        assert job["input"] == [
            paths.az_files(wildcards["dataset"], wildcards["seed"])["relevance"],
            paths.preprocessed_files(wildcards["dataset"])["meta"],
        ]
        expected = paths.figure_files("az", f"{wildcards['dataset']}/cls_maps_seed{wildcards['seed']}")
        assert sorted(job["output"]) == sorted(expected.values())
    (combine,) = [job for job in jobs if job["rule"] == "az_combine"]
    runs = [paths.az_files(d, s) for d in datasets for s in seeds]
    assert combine["input"] == [run[key] for run in runs for key in ("summary", "recovery")]
    assert sum(job["rule"] == "az_correlation_figure" for job in jobs) == len(datasets)
    (target,) = [job for job in jobs if job["rule"] == "az"]
    for stem in ("correlations", "subject_recovery", "importance_recovery"):
        assert set(paths.table_files("az", stem).values()) <= set(target["input"])


def test_no_az_datasets_adds_no_targets(tmp_path):
    config = tiny_config()
    config["az"].update(datasets=[])
    jobs = dry_run_jobs(tmp_path, config)
    assert [job["rule"] for job in jobs] == ["az"] and "input" not in jobs[0]
