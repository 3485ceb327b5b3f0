"""Issue 25: bad configs, bad data and faults that used to fail late, silently or with a raw traceback. Each bad
config goes through the real command line (`snakemake --dry-run`) and must stop before any job, naming the key,
file, row or column and the fix."""

import re
from pathlib import Path

import pytest
import yaml

from tests.workflow.helpers import snakemake, tiny_config

NAME = "mine"


def _user_config(declaration: dict, **overrides) -> dict:
    config = tiny_config(datasets=[NAME], encoders=["average"], user_datasets={NAME: declaration}, **overrides)
    config["hyperparameters"] = {NAME: {"epochs": 1, "embedding_dim": 16, "hidden_size": 8}}
    config["wp"]["datasets"] = []
    return config


def _refused(workdir: Path, config: dict | None, *expected: str, args: tuple[str, ...] = ()) -> str:
    """Run `snakemake --dry-run` on `config`; assert it stopped before any job with every `expected` text."""
    result = snakemake(workdir, "--dry-run", *args, config=config)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    for text in expected:
        assert text in output, (text, output[-3000:])
    assert "Traceback" not in output and "Job stats" not in output and not (workdir / "results").exists()
    return output


def _rows(n: int = 12) -> str:
    return "".join(f"word{i} is good and fine today,{'pos' if i % 2 else 'neg'}\n" for i in range(n))


# 4. Validation names the key and the file for every kind of unreadable file.
@pytest.mark.parametrize(
    "name,content,expected",
    [
        ("bad.jsonl", b'{"text": "a b c", "label": "x"}\n{"text": oops\n', ["invalid JSON in line 2"]),
        ("quote.csv", ("text,label\n" + _rows() + '"never closed,pos\n' + _rows()).encode(), ["EOF inside string"]),
        ("fake.csv.gz", ("text,label\n" + _rows()).encode(), ["cannot be read as a gzip file", "not truncated"]),
        ("latin1.csv", ("text,label\n" + _rows() + "caf\xe9 au lait is nice,pos\n").encode("latin-1"), ["not UTF-8", "iconv"]),
    ],
)
def test_an_unreadable_user_file_is_refused_naming_key_and_file(tmp_path, name, content, expected):
    (tmp_path / name).write_bytes(content)
    config = _user_config({"task": "bc", "path": str(tmp_path / name), "text": "text", "label": "label"})
    _refused(tmp_path, config, f"user_datasets.{NAME}.path", name, *expected)


def test_an_hf_checkpoint_name_with_a_space_is_refused(tmp_path):
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    config["hf"].update(datasets=["syn_sentiment"], models={"bert": {"checkpoint": "bert base uncased"}})
    _refused(tmp_path, config, "hf.models.bert", "'bert base uncased'", "nor a valid hub name")


# 5. Empty data.
def test_a_header_only_file_is_refused(tmp_path):
    (tmp_path / "empty.csv").write_text("text,label\n")
    config = _user_config({"task": "bc", "path": str(tmp_path / "empty.csv"), "text": "text", "label": "label"})
    _refused(tmp_path, config, f"user_datasets.{NAME}.path", "empty.csv", "no data rows")


def test_length_bounds_that_keep_nothing_are_refused(tmp_path):
    (tmp_path / "d.csv").write_text("text,label\n" + _rows())
    declaration = {"task": "bc", "path": str(tmp_path / "d.csv"), "text": "text", "label": "label", "length_bounds": [10, 5]}
    _refused(tmp_path, _user_config(declaration), f"user_datasets.{NAME}.length_bounds", "[10, 5]", "low + 2 <= high")


def test_a_length_filter_that_removes_every_row_stops_preprocessing_naming_the_key(tmp_path):
    from attnexp import paths
    from attnexp.errors import DataError
    from attnexp.pipeline.data import run_preprocess
    from attnexp.pipeline.plan import Plan
    from attnexp.pipeline.settings import PreprocessSettings
    from tests.factories import validated_config

    (tmp_path / "d.csv").write_text("text,label\n" + _rows(40))  # 6 tokens a text
    declaration = {"task": "bc", "path": str(tmp_path / "d.csv"), "text": "text", "label": "label", "length_bounds": [50, None]}
    config = validated_config(datasets=[NAME], user_datasets={NAME: declaration})
    plan = Plan.from_config(config)
    settings = PreprocessSettings.from_param(PreprocessSettings.from_plan(plan, NAME).as_param())
    outputs = {k: tmp_path / v for k, v in paths.preprocessed_files(NAME).items()}
    with pytest.raises(DataError, match=rf"removed every train.*user_datasets\.{NAME}\.length_bounds"):
        run_preprocess(inputs=plan.raw_files(NAME), outputs=outputs, settings=settings)
    assert not any(path.exists() for path in outputs.values())


# 6. Labels are data, not markup or near-duplicates.
def test_a_class_label_with_dollars_draws_as_text():
    import io

    import matplotlib

    matplotlib.use("Agg")
    from attnexp.report.style import new_figure, paper_style

    with paper_style():
        fig, ax = new_figure()
        for label in ("$^$", "cost $5 to $10"):
            ax.bar([label], [1.0], label=label)
        ax.legend()
        fig.savefig(io.BytesIO(), format="png")  # mathtext would raise on "$^$"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["$^$", "cost $5 to $10"]


@pytest.mark.parametrize("task", ["nli", "qa"])
def test_labels_differing_only_by_case_or_spaces_are_refused(tmp_path, task):
    rows = "".join(f"a premise {i},a hypothesis {i},{['yes', 'no', 'Yes', 'no '][i % 4]}\n" for i in range(20))
    (tmp_path / "d.csv").write_text("text,question,label\n" + rows)
    declaration = {"task": task, "path": str(tmp_path / "d.csv"), "text": "text", "question": "question", "label": "label"}
    _refused(tmp_path, _user_config(declaration), f"user_datasets.{NAME}.label", "'Yes' vs 'yes'", "'no' vs 'no '")


# 7. Training data is never the test data.
def test_one_file_as_train_dev_and_test_is_refused(tmp_path):
    (tmp_path / "d.csv").write_text("text,label\n" + _rows())
    same = str(tmp_path / "d.csv")
    files = {"train": same, "dev": str(tmp_path / "." / "d.csv"), "test": same}
    config = _user_config({"task": "bc", "files": files, "text": "text", "label": "label"})
    _refused(tmp_path, config, f"user_datasets.{NAME}.files", "dev and train are the same file", "test and train")


# 8. A key given twice is refused, in a config file and inside a --config value.
def _config_text(**overrides) -> str:
    return yaml.safe_dump(tiny_config(datasets=["syn_sentiment"], encoders=["average"], **overrides))


def test_a_key_given_twice_in_the_config_file_is_refused(tmp_path):
    (tmp_path / "config").mkdir()
    text = _config_text()
    line = len(text.splitlines()) + 1
    (tmp_path / "config/config.yaml").write_text(text + "seeds: [5]\n")
    _refused(tmp_path, None, f"config/config.yaml, line {line}", "duplicate key", "'seeds' appears twice")


def test_a_key_given_twice_in_a_configfile_is_refused(tmp_path):
    (tmp_path / "extra.yaml").write_text("analyses:\n  permutations: 10\n  memory_budget_mb: 100\n  permutations: 20\n")
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    _refused(tmp_path, config, "extra.yaml, line 4", "'permutations' appears twice", args=("--configfile", "extra.yaml"))


def test_a_key_given_twice_inside_a_config_value_is_refused(tmp_path):
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    args = ("--config", "seeds=[0]", "analyses={permutations: 10, permutations: 20}")
    _refused(tmp_path, config, "--config analyses=", "'permutations' appears twice", args=args)


# 12. Messages quote bad values shortly.
def test_an_alias_bomb_gives_a_short_message(tmp_path):
    (tmp_path / "config").mkdir()
    levels = ["  - &l0 [" + ", ".join(["lol"] * 10) + "]"]
    levels += [f"  - &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 6)]  # 10**6 strings
    (tmp_path / "config/config.yaml").write_text(_config_text() + "\n".join(["encoders:", *levels]) + "\n")
    text = (tmp_path / "config/config.yaml").read_text().replace("encoders:\n- average\n", "")
    (tmp_path / "config/config.yaml").write_text(text)
    output = _refused(tmp_path, None, "config key 'encoders[0]'", "...")
    assert len(output) < 20_000, len(output)


# 11. Contradictory settings.
@pytest.mark.parametrize(
    "overrides,expected",
    [
        ({"gpu_jobs": True, "device": "cpu"}, ["config key 'gpu_jobs'", "device: cpu"]),
        ({"hf": {"datasets": ["syn_sentiment"], "models": {}}}, ["config key 'hf.models' is empty", "hf.datasets"]),
        ({"az": {"linzen_path": "no/such/agr_50_mostcommon_10K.tsv"}}, ["config key 'az.linzen_path'", "does not exist"]),
        (
            {"analyses": {"ig_steps": None}, "figures": {"table_pairs": ["attn_grad", "attn_ig"]}},
            ["config key 'figures.table_pairs' lists attn_ig", "analyses.ig_steps: null"],
        ),
    ],
)
def test_contradictory_settings_are_refused(tmp_path, overrides, expected):
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    for key, value in overrides.items():
        config[key].update(value) if isinstance(value, dict) else config.update({key: value})
    _refused(tmp_path, config, *expected)


def test_figure_models_outside_the_grid_are_named(tmp_path):
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    config["figures"]["models"] = ["average-tanh", "lstm-dot"]
    result = snakemake(tmp_path, "--dry-run", config=config)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "config key 'figures.models': lstm-dot not in the grid" in result.stderr


# 10. Markdown and HTML tables escape what they show.
def test_markdown_and_html_tables_escape_headers_and_labels(tmp_path):
    import re

    import pandas as pd

    from attnexp.report.tables import write_table

    table = pd.DataFrame({"Dataset": ["<img src=x onerror=alert(1)>", "a|b", "back\\slash"], "|V|": [10, 20, 30]})
    outputs = {kind: tmp_path / f"t.{kind}" for kind in ("csv", "md", "tex", "html")}
    write_table(table, outputs, caption="Table 1 analogue: |V| per <b>dataset</b>")
    markdown = outputs["md"].read_text()
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    cells = [re.split(r"(?<!\\)\|", line.strip())[1:-1] for line in rows]
    assert len(rows) == 5 and all(len(row) == 2 for row in cells), markdown  # header, rule, 3 rows: 2 cells each
    assert cells[0][1].strip() == r"\|V\|" and cells[3][0].strip() == r"a\|b" and cells[4][0].strip() == r"back\\slash"
    for text in (markdown, outputs["html"].read_text()):
        assert "<img" not in text and "<b>" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text


# 3. A deleted checksum sidecar is an error, not verification switched off.
def test_a_table_or_checkpoint_without_its_sidecar_is_refused(tmp_path):
    import pandas as pd

    from attnexp.errors import CorruptFileError
    from attnexp.io import read_csv, read_parquet, write_csv, write_parquet
    from attnexp.models.checkpoint import read_checkpoint, save_model
    from tests.analyses.az.test_az import tiny_model

    table = pd.DataFrame({"x": [1.0, 2.0]})
    write_parquet(tmp_path / "t.parquet", table)
    write_csv(tmp_path / "t.csv", table)
    save_model(tiny_model(), tmp_path / "model.pt")
    for path, read in (
        (tmp_path / "t.parquet", read_parquet),
        (tmp_path / "t.csv", read_csv),
        (tmp_path / "model.pt", read_checkpoint),
    ):
        read(path)
        Path(f"{path}.sha256").unlink()
        with pytest.raises(CorruptFileError, match=rf"{path.name} has no checksum file {path.name}\.sha256.*--forcerun"):
            read(path)
    with pytest.raises(FileNotFoundError):
        read_parquet(tmp_path / "absent.parquet")


# 9. The command that CorruptFileError gives rebuilds a damaged or deleted intermediate file and its dependents.
def test_the_rebuild_command_of_the_error_rebuilds_a_damaged_or_deleted_intermediate(tmp_path):
    import re
    import shlex

    from attnexp import paths
    from attnexp.errors import CorruptFileError
    from attnexp.io import read_parquet

    model = paths.model_files("syn_sentiment", "average", "tanh", 0)["model"]
    instances = paths.preprocessed_files("syn_sentiment")["instances"]
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    assert snakemake(tmp_path, model, config=config).returncode == 0
    original = (tmp_path / instances).read_bytes()
    damaged = bytearray(original)
    damaged[len(damaged) // 2] ^= 1
    (tmp_path / instances).write_bytes(bytes(damaged))
    with pytest.raises(CorruptFileError) as err:
        read_parquet(tmp_path / instances)
    command = shlex.split(re.search(r"`(snakemake [^`]*)`", str(err.value)).group(1).replace(str(tmp_path) + "/", ""))
    assert command[:2] == ["snakemake", "--cores"] and command[-2:] == ["--forcerun", instances], command
    for fault in ("damaged", "deleted"):
        if fault == "deleted":
            (tmp_path / instances).unlink()
            plain = snakemake(tmp_path, model)  # Snakemake >= 7.7 leaves a deleted intermediate alone
            assert "Nothing to be done" in plain.stdout + plain.stderr and not (tmp_path / instances).exists()
        before = (tmp_path / model).stat().st_mtime_ns
        result = snakemake(tmp_path, model, *command[3:])  # the target first, as the README says
        assert result.returncode == 0, result.stderr[-3000:]
        assert (tmp_path / instances).read_bytes() == original and (tmp_path / model).stat().st_mtime_ns > before
        read_parquet(tmp_path / instances)


# 1. Leave-one-out (and integrated gradients) stay within analyses.memory_budget_mb at any document length.
LONG_DOCUMENT = """
import resource, sys
import torch
torch.set_num_threads(1)
from attnexp.analyses.jw.importance import integrated_gradients, leave_one_out, rows_per_chunk
from attnexp.data.batching import collate
from tests.analyses.jw.test_measures import make_model
import numpy as np, pandas as pd

n, budget = int(sys.argv[1]), float(sys.argv[2])
model = make_model("bc", "average", "tanh")
tokens = [2, *np.random.default_rng(0).integers(4, 30, n).tolist(), 3]
batch = collate(pd.DataFrame({"instance_id": ["long"], "tokens": [tokens], "label": [1]}))
size = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (size + 2**20 * 400, resource.RLIM_INFINITY))  # far below the n x n deletions
loo = leave_one_out(model, batch, memory_budget_mb=budget)
ig = integrated_gradients(model, batch, 16, rows_per_chunk(model, batch.tokens.shape[1], budget))
assert loo.shape == ig.shape == batch.tokens.shape and bool((loo[0, 1 : n + 1] > 0).any())
print("within budget")
"""


def test_leave_one_out_of_a_long_document_stays_within_the_memory_budget():
    import subprocess
    import sys

    from tests.conftest import REPO
    from tests.workflow.helpers import local_env

    # all 6000 deletions at once: 3 x 6000 x 6000 x 8 bytes (tokens, gather index, copy) = 864 MB
    done = subprocess.run(
        [sys.executable, "-c", LONG_DOCUMENT, "6000", "16"], cwd=REPO, env=local_env(), capture_output=True, text=True
    )
    assert done.returncode == 0 and "within budget" in done.stdout, done.stderr[-2000:]


# 2. The effective thread count (threads capped at --cores) is recorded, and a change reruns what it changes.
def test_a_different_effective_thread_count_reruns_the_jobs_it_changes(tmp_path):
    from attnexp import paths

    files = paths.model_files("syn_sentiment", "average", "tanh", 0)
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"], threads={"train": 2, "analysis": 2})
    assert snakemake(tmp_path, files["model"], "--cores", "1", config=config).returncode == 0
    assert yaml.safe_load((tmp_path / files["config"]).read_text())["threads"] == 1
    for same_count in (("--cores", "1"), ("--cores", "2", "--set-threads", "train=1")):
        same = snakemake(tmp_path, files["model"], *same_count, "--dry-run")
        assert "Nothing to be done" in same.stdout + same.stderr, same_count
    more = snakemake(tmp_path, files["model"], "--cores", "2", "--dry-run", "--quiet", "host")  # the train job gets 2
    assert more.returncode == 0 and re.search(r"^train\s+1$", more.stdout, flags=re.M), more.stdout[-2000:]
    assert not re.search(r"^preprocess\s+\d", more.stdout, flags=re.M) and "params" in more.stdout  # the reason


def test_a_config_key_repeated_on_the_command_line_is_refused(tmp_path):
    config = tiny_config(datasets=["syn_sentiment"], encoders=["average"])
    _refused(tmp_path, config, "--config names 'seeds' more than once", args=("--config", "seeds=[0]", "seeds=[1]"))
