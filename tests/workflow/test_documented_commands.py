"""Every command the README, the documentation site (docs/*.md), config/README.md and the config files' headers show
runs through the real command line, as written (issues 23 and 33): found in the documents themselves, so a newly
documented command is covered at once.

Long commands run as their dry run: `snakemake -n`, `make -n`, `pip install --dry-run`, `pytest --collect-only`.
Placeholders a reader replaces (my-paths.yaml, profiles/slurm_mysite, ...) get a stand-in (PLACEHOLDERS); a command
whose tool or data this machine lacks (conda, snakedeploy, the package index, a Hugging Face checkpoint) is skipped
with the reason."""

import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, shared_data_dir
from tests.workflow.helpers import local_env

pytestmark = pytest.mark.slow

DOCUMENTS = (
    "README.md",
    "config/README.md",
    "profiles/README.md",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")),
)
TOOLS = ("snakemake", "make", "pip", "pytest", "snakedeploy", "cd")
INFORMATIONAL = {"-n", "--dry-run", "--list-rules", "--list", "--list-changes", "--unlock", "--lint", "--summary"}
# Commands shown to make the workflow stop and say something: a piece of the command -> what it must say.
FAILS_ON_PURPOSE = {"'datasets=[cnn]' 'data={on_missing: fail}'": "data.user_files.cnn.train"}
INLINE = re.compile(r"`((?:snakemake|make|pip|pytest|snakedeploy)(?: [^`]*)?)`")


@dataclass(frozen=True)
class Shown:
    """One documented command line and where it is shown (block: the fenced block it belongs to, for `cd`)."""

    command: str
    where: str
    block: tuple[str, ...] = ()


def _joined(lines: list[str]) -> list[str]:
    """Lines with trailing-backslash continuations joined."""
    out, pending = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
        else:
            out.append(pending + line)
            pending = ""
    return out


def _uncommented(line: str) -> str:
    """A shell line without its trailing comment, spaces squeezed."""
    return re.sub(r"\s+", " ", re.sub(r"(^|\s)#\s.*$", "", line)).strip()


def _first_word(line: str) -> str:
    return line.strip().split(" ", 1)[0] if line.strip() else ""


def documented_commands() -> list[Shown]:
    """The commands of the documents' shell blocks (lines starting with a tool) and inline code spans."""
    shown: dict[str, Shown] = {}
    for name in DOCUMENTS:
        text = (REPO / name).read_text()
        fence = re.compile(r"^[ \t]*```([a-z]*)\n(.*?)^[ \t]*```", flags=re.S | re.M)  # list items indent theirs
        for language, body in fence.findall(text):
            if language not in ("", "bash", "sh", "console"):
                continue
            lines = [_uncommented(line.removeprefix("$ ")) for line in _joined(body.splitlines())]
            block = tuple(line for line in lines if _first_word(line) in TOOLS)
            for line in block:
                shown.setdefault(line, Shown(line, name, block))
        for match in INLINE.finditer(fence.sub("", text)):  # spans in prose; a block's comments are not commands
            command = match.group(1).strip()
            shown.setdefault(command, Shown(command, name))
    return list(shown.values())


def _header_commands(config: Path) -> list[str]:
    """The commands of a config file's header comment, continuation lines joined."""
    lines = []
    for line in config.read_text().splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:])
    commands = []
    for line in _joined(lines):
        match = re.match(r"^\s+((?:snakemake|make|pip)\b.*)$", line)
        if match:
            commands.append(_uncommented(match.group(1)))
    return commands


def shown_commands() -> list[Shown]:
    """The documents' commands, then those of the config files' headers."""
    found = documented_commands()
    seen = {s.command for s in found}
    for config in sorted((REPO / "config").glob("*.yaml")):
        for command in _header_commands(config):
            if command not in seen:
                seen.add(command)
                found.append(Shown(command, str(config.relative_to(REPO))))
    return found


SHOWN = shown_commands()


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> dict[str, str]:
    """Placeholder -> what the test puts in its place."""
    tmp = tmp_path_factory.mktemp("stand-ins")
    paths_file = tmp / "my-paths.yaml"
    paths_file.write_text(yaml.safe_dump({"data": {"raw_data_dir": "../shared/data"}}))
    own = tmp / "my.yaml"
    shutil.copy2(REPO / "config/config.yaml", own)
    checkpoint = tmp / "my-checkpoint.yaml"
    from tests.hf_fixtures import tiny_checkpoint

    tiny = tiny_checkpoint(tmp / "tiny")
    checkpoint.write_text(yaml.safe_dump({"hf": {"models": {"distilbert_sst2": {"checkpoint": str(tiny)}}}}))
    return {
        "my-paths.yaml": str(paths_file),
        "my-checkpoint.yaml": str(checkpoint),
        "my.yaml": str(own),
        "profiles/slurm_mysite": "profiles/slurm",
        "profiles/slurm_<site>": "profiles/slurm",
    }


def _unredirected(tokens: list[str]) -> list[str]:
    """The command without its output redirection or pipe (`make run > run.log`: the output stays with the test)."""
    cut = next((i for i, t in enumerate(tokens) if t in {">", ">>", "|", "2>&1", "&>"}), len(tokens))
    return tokens[:cut]


def _merged(base: dict, over: dict) -> dict:
    """`over` on `base`, mappings merged key by key (as Snakemake merges a second config file)."""
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _unavailable(tokens: list[str]) -> str | None:
    """Why this machine cannot run the command (None: it can)."""
    if tokens[0] == "snakedeploy" and not shutil.which("snakedeploy"):
        return "snakedeploy is not installed (tests/workflow/test_deploy.py deploys the workflow as a module)"
    if "--sdm" in tokens and "conda" in tokens and not shutil.which("conda"):
        return "conda is not installed"
    if tokens[:2] == ["pip", "install"] and not ({"-r", "-e"} & set(tokens)):
        return "installs from the package index"
    if "config/hf_distilbert_sst2.yaml" in tokens and not any(t.endswith("my-checkpoint.yaml") for t in tokens):
        from attnexp.config import load_config_file, validate_config
        from attnexp.models.hf.checkpoints import checkpoint_problems

        config = _merged(load_config_file(REPO / "config/config.yaml"), load_config_file(REPO / "config/hf_distilbert_sst2.yaml"))
        try:
            problems = checkpoint_problems(validate_config(config))
        except Exception as err:  # noqa: BLE001 - any reason it cannot load is a reason to skip
            problems = [str(err)]
        if problems:
            return f"the Hugging Face checkpoint is not on this machine: {problems[0][:200]}"
    if any(t.startswith("../shared/data") or t == "config/paper.yaml" for t in tokens) and shared_data_dir() is None:
        return "the real datasets (../shared/data) are not available"
    return None


def dry(tokens: list[str]) -> list[str]:
    """The command as run here: its dry run where the real one is long."""
    tool, rest = tokens[0], tokens[1:]
    if tool == "snakemake":
        informational = INFORMATIONAL & set(rest)
        runs = {"--cores", "-c", "--jobs", "-j", "--workflow-profile", "--profile"} & set(rest)
        assert informational or runs, f"{' '.join(tokens)}: a real run needs --cores (Snakemake refuses to start)"
        return [sys.executable, "-m", "snakemake", *([] if INFORMATIONAL & set(rest) else ["-n"]), *rest]
    if tool == "make":
        return ["make", "-n", *rest]
    if tool == "pip":
        extra = ["--dry-run", "--no-index", "--no-build-isolation"] if rest[:1] == ["install"] else []
        return [sys.executable, "-m", "pip", *rest[:1], *extra, *rest[1:]]
    if tool == "pytest":
        return [sys.executable, "-m", "pytest", "--collect-only", "-q", *rest]
    raise AssertionError(f"no way to run {tool!r} here: teach tests/workflow/test_documented_commands.py")


def test_the_documents_show_commands_and_every_kind_is_known():
    commands = [s.command for s in SHOWN]
    assert len(commands) >= 20
    assert "snakemake --cores 8 --configfile config/paper.yaml --config datasets='[sst]'" in commands
    assert "snakemake --cores all hf --configfile config/hf_distilbert_sst2.yaml" in commands
    assert any(c.startswith("snakemake --cores 2 --configfile config/paper.yaml config/paper_e2e.yaml") for c in commands)
    assert {c.split()[0] for c in commands} <= set(TOOLS)


@pytest.mark.parametrize("shown", SHOWN, ids=[f"{s.where}: {s.command[:70]}" for s in SHOWN])
def test_a_documented_command_runs_as_written(shown, stand_ins, tmp_path):
    if shown.command.startswith("cd "):
        pytest.skip("changes the directory for the commands after it in its block")
    text = shown.command
    for placeholder, stand_in in stand_ins.items():
        text = text.replace(placeholder, stand_in)
    parts = [_unredirected(shlex.split(part, comments=True)) for part in re.split(r"\s&&\s", text)]
    cwd = REPO
    for earlier in shown.block[: shown.block.index(shown.command)] if shown.block else ():
        if earlier.startswith("cd "):
            cwd = cwd / shlex.split(earlier, comments=True)[1]
    if not cwd.is_dir():
        pytest.skip(f"runs in {cwd.name}/, which an earlier command of its block creates")
    for tokens in parts:
        reason = _unavailable(tokens)
        if reason:
            pytest.skip(reason)
        assert "<" not in " ".join(tokens), f"an unreplaced placeholder: {tokens} (add it to stand_ins)"
    expected = next((text for part, text in FAILS_ON_PURPOSE.items() if part in shown.command), None)
    for tokens in parts:
        result = subprocess.run(dry(tokens), cwd=cwd, env=local_env(), capture_output=True, text=True, timeout=600)
        said = result.stdout + result.stderr
        assert "Traceback" not in said, said[-3000:]
        if expected:
            assert result.returncode != 0 and expected in said, said[-3000:]
        else:
            assert result.returncode == 0, f"{' '.join(tokens)}\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"


def test_the_documented_release_tag_is_this_version():
    """Issue 33: the deployment command names a real release tag, `v<version>` of pyproject.toml (and CITATION.cff),
    and the package installed beside it is the same release. The tag itself is made when the version is released
    (`git tag -a v<version>`), so a commit that bumps the version can pass before it exists."""
    import tomllib

    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert yaml.safe_load((REPO / "CITATION.cff").read_text())["version"] == version
    deploys = [shlex.split(s.command) for s in SHOWN if s.command.startswith("snakedeploy deploy-workflow")]
    assert deploys, "no snakedeploy command documented"
    for tokens in deploys:
        ref = tokens[tokens.index("--tag") + 1] if "--tag" in tokens else None
        assert ref == f"v{version}", f"{shlex.join(tokens)}: deploy --tag v{version} (pyproject.toml's version)"
    module = (REPO / "docs/module.md").read_text()
    assert f"@v{version}" in module and "--branch main" in module  # the package at the same tag; the newest code


def job_counts(output: str) -> dict[str, int]:
    """Rule -> job count from Snakemake's "Job stats" table."""
    table = output.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, flags=re.M)}


def test_the_one_dataset_command_runs_that_dataset_alone():
    """Issue 23 item 8: `--config datasets='[sst]'` on the paper grid: W&P on SST alone (no IMDB, no 20 News)."""
    if shared_data_dir() is None:
        pytest.skip("the real datasets (../shared/data) are not available")
    command = [sys.executable, "-m", "snakemake", "-n", "--forceall", "--quiet", "host", "--configfile", "config/paper.yaml"]
    result = subprocess.run(
        [*command, "--config", "datasets=[sst]"], cwd=REPO, env=local_env(), capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    named = set(re.findall(r"dataset=(\w+)", result.stdout))
    assert named == {"sst", "syn_agreement"}, named  # A&Z's own agreement task stays
    counts = job_counts(result.stdout)
    paper = yaml.safe_load((REPO / "config/paper.yaml").read_text())
    wp = paper["wp"]
    per_dataset = 2 + len(wp["seeds"]) + len(wp["guides"])  # base, uniform, the seeds, one MLP per guide
    assert counts["wp_train"] == per_dataset and counts["wp_seed_variance"] == 1
    grid = len(paper["encoders"]) * len(paper["attentions"]) * len(paper["seeds"])
    assert counts["train"] == grid


def test_the_results_page_runs_only_what_its_tables_need():
    """Issue 38 §4: config/results_page.yaml's target, the results page, trains W&P's base and uniform runs on SST,
    IMDB and 20 News (Table 2) and no adversary, seed run or diagnostic MLP; J&W on SST alone (random init and
    GloVe 6B 50-d), the A&Z Transformer on its generated agreement task."""
    if shared_data_dir() is None:
        pytest.skip("the real datasets (../shared/data) are not available")
    page = "results/tables/comparison/paper-comparison.md"
    header = _header_commands(REPO / "config/results_page.yaml")
    assert header == [f"snakemake --cores all {page} --configfile config/paper.yaml config/results_page.yaml"]
    command = [sys.executable, "-m", "snakemake", page, "-n", "--forceall", "--quiet", "host"]  # the target first:
    command += ["--configfile", "config/paper.yaml", "config/results_page.yaml"]  # --quiet and --configfile take lists
    result = subprocess.run(command, cwd=REPO, env=local_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    counts = job_counts(result.stdout)
    assert counts["wp_train"] == 3 * 2 and set(re.findall(r"variant=(\w+)", result.stdout)) == {"base", "uniform"}
    assert not {"wp_adversary", "wp_jw_adversary", "wp_seed_variance"} & set(counts)
    assert counts["train"] == 2 * 2 * 3 and counts["analyze"] == counts["train"]  # sst, sst_glove6b50d x lstm, average x 3 seeds
    assert counts["train_transformer"] == counts["az_analyse"] == 1
    assert set(re.findall(r"dataset=(\w+)", result.stdout)) == {"sst", "sst_glove6b50d", "imdb", "20news", "syn_agreement"}
    assert counts["paper_comparison"] == counts["paper_comparison_page"] == 1
