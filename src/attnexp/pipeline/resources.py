"""What a job asks a scheduler for: its runtime and peak memory from one versioned table (workflow/resources.tsv),
with headroom, a floor, growth on each retry and one site-wide runtime scale (config `runtime_scale`).

The table has one row per rule x dataset x model (the `encoder` or `hf_model` wildcard) and the job's
cost at one thread: `runtime_s` (CPU seconds: its wall time on an idle core) and `mem_mib` (peak RSS), with its
`source`: `measured` (a job log's `job usage` line), `predicted` (benchmarks/paper_grid_cost.py) or `estimate`
(scaled by hand from those).
`rule` is a rule's name or a pattern (`synthesize_*`); `dataset` a name, `synthetic` (any generated dataset) or `*`
(any other: users' datasets); `model` a name or `*`. A job takes the most specific row of its rule (dataset
before model), then its rule's `*` row.
benchmarks/paper_grid_cost.py `--write-resources` regenerates it; import-light, read while the workflow parses.
"""

import csv
import fnmatch
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

ANY, SYNTHETIC = "*", "synthetic"
COLUMNS = ("rule", "dataset", "model", "runtime_s", "mem_mib", "source", "note")
SOURCES = ("measured", "predicted", "estimate")
MODEL_WILDCARDS = ("encoder", "hf_model")  # the wildcard whose value tells a rule's jobs' costs apart, where one does

RUNTIME_HEADROOM = 2.0  # x the table's seconds: prediction error, a busy node, Snakemake's own start on the node
MEMORY_HEADROOM = 1.5  # x the table's peak RSS
RUNTIME_FLOOR_MIN = 10  # minutes: no request below (start-up and imports alone take a while on a shared filesystem)
MEMORY_FLOOR_MB = 1000  # MB: Python, torch and pandas imported
MB_PER_MIB = 1.048576


@dataclass(frozen=True)
class Cost:
    """One row of the table: what one job of `rule` on `dataset` with `model` costs at one thread."""

    rule: str
    dataset: str
    model: str
    runtime_s: float
    mem_mib: float
    source: str
    note: str = ""


@dataclass(frozen=True)
class Request:
    """A scheduler request: Snakemake's `runtime` (minutes) and `mem_mb` (MB)."""

    runtime: int
    mem_mb: int


def request(cost: Cost, attempt: int = 1, runtime_scale: float = 1.0) -> Request:
    """Headroom x the cost (runtime also x `runtime_scale`), at least the floor, x `attempt` (1, 2, ... on retries)."""
    minutes = max(RUNTIME_FLOOR_MIN, RUNTIME_HEADROOM * runtime_scale * cost.runtime_s / 60)
    megabytes = max(MEMORY_FLOOR_MB, MEMORY_HEADROOM * cost.mem_mib * MB_PER_MIB)
    return Request(runtime=math.ceil(minutes) * attempt, mem_mb=math.ceil(megabytes) * attempt)


def job_resources(table: "ResourceTable", runtime_scale: float = 1.0) -> dict:
    """Every rule's `resources:`: `runtime` and `mem_mb` as functions of (wildcards, attempt, rulename), the request
    of the job's row in `table` (generated datasets read their `synthetic` rows)."""

    def job_request(wildcards, attempt: int, rulename: str) -> Request:
        return request(table.job_cost(table.rule_named(rulename), dict(wildcards.items())), attempt, runtime_scale)

    return {
        "runtime": lambda wildcards, attempt, rulename: job_request(wildcards, attempt, rulename).runtime,
        "mem_mb": lambda wildcards, attempt, rulename: job_request(wildcards, attempt, rulename).mem_mb,
    }


# The critical path first (issue 38): what each kind of job makes ready, as (rule, variant) -> the rules (and W&P
# variants) that wait for it, along the long chains of the DAG. A job's priority is the CPU seconds of the longest
# chain it starts (its own row plus its followers', recursively), so Snakemake starts the IMDB W&P base run, whose
# adversary and diagnostic MLP follow, before short jobs that nothing waits for.
FOLLOWERS: dict[tuple[str, str | None], tuple[tuple[str, str | None], ...]] = {
    ("train", None): (("analyze", None),),
    ("train_transformer", None): (("az_analyse", None), ("analyze", None)),
    ("wp_train", "base"): (("wp_adversary", None), ("wp_jw_adversary", None)),
    ("wp_adversary", None): (("wp_train", "mlp_adv"),),
    ("hf_model", None): (("hf_analyze", None), ("hf_az", None)),
}


def chain_seconds(table: "ResourceTable", rule: str, wildcards: Mapping[str, str]) -> float:
    """CPU seconds of the longest chain a job starts: its own cost and its followers' (FOLLOWERS), recursively."""
    variant = wildcards.get("variant") if (rule, wildcards.get("variant")) in FOLLOWERS else None
    own = table.job_cost(rule, wildcards).runtime_s
    followers = FOLLOWERS.get((rule, variant), ())
    return own + max(
        (chain_seconds(table, follower, {**wildcards, "variant": kind} if kind else wildcards) for follower, kind in followers),
        default=0.0,
    )


def job_priority(table: "ResourceTable"):
    """A rule's `priority:` (a function of the job): its critical-path seconds, rounded (higher runs first)."""

    def priority(wildcards, attempt: int, rulename: str) -> int:
        return int(round(chain_seconds(table, table.rule_named(rulename), dict(wildcards.items()))))

    return priority


class ResourceTable:
    """The rows of workflow/resources.tsv, looked up per job."""

    def __init__(self, costs: Iterable[Cost], header: str = "") -> None:
        self.rows = {(c.rule, c.dataset, c.model): c for c in costs}
        self.header = header

    @classmethod
    def read(cls, path: str | Path) -> "ResourceTable":
        lines = Path(path).read_text().splitlines()
        header = "\n".join(line for line in lines if line.startswith("#"))
        records = csv.DictReader((line for line in lines if line and not line.startswith("#")), delimiter="\t")
        costs = [
            Cost(**{**r, "runtime_s": float(r["runtime_s"]), "mem_mib": float(r["mem_mib"]), "note": r.get("note") or ""})
            for r in records
        ]
        bad = [c for c in costs if c.source not in SOURCES]
        if bad:
            raise ValueError(f"{path}: source must be one of {SOURCES}: {bad[0]}")
        return cls(costs, header)

    def write(self, path: str | Path) -> None:
        """The table as TSV after its header comment, rows sorted by rule, dataset, model (atomic)."""
        path = Path(path)
        lines = [self.header] if self.header else []
        lines.append("\t".join(COLUMNS))
        for key in sorted(self.rows):
            values = asdict(self.rows[key])
            values["runtime_s"], values["mem_mib"] = f"{values['runtime_s']:.0f}", f"{values['mem_mib']:.0f}"
            lines.append("\t".join(str(values[c]) for c in COLUMNS))
        partial = path.with_name(path.name + ".partial")
        partial.write_text("\n".join(lines) + "\n")
        partial.replace(path)

    def cost(self, rule: str, dataset: str | None = None, model: str | None = None, synthetic: bool = False) -> Cost:
        """The row of one job: its dataset's (else `synthetic` for generated data, else `*`), its model's
        (else `*`); the rule's `*` row when its dataset has none."""
        datasets = [d for d in (dataset, SYNTHETIC if synthetic else None, ANY) if d]
        patterns = sorted({r for r, _, _ in self.rows if r != rule and fnmatch.fnmatchcase(rule, r)}, key=len, reverse=True)
        for name in [rule, *patterns]:
            for data in datasets:
                for kind in (model, ANY):
                    if kind and (name, data, kind) in self.rows:
                        return self.rows[(name, data, kind)]
        raise KeyError(f"workflow/resources.tsv has no row for rule {rule!r} (add one with dataset and model '*')")

    def rule_named(self, rulename: str) -> str:
        """The table's name for a rule of the workflow: used as a module with `use rule * from attnexp as attnexp_*`,
        every rule carries a prefix, so a name the table lacks is looked up without its leading `<prefix>_` parts."""
        known = {rule for rule, _, _ in self.rows}
        parts = rulename.split("_")
        return next(("_".join(parts[i:]) for i in range(len(parts)) if "_".join(parts[i:]) in known), rulename)

    def job_cost(self, rule: str, wildcards: Mapping[str, str]) -> Cost:
        """The row of the job of `rule` with these wildcards (a generated dataset reads the `synthetic` rows)."""
        from attnexp.datasets import DATASETS  # here: the workflow reads this module while it parses

        dataset = wildcards.get("dataset")
        model = next((wildcards[w] for w in MODEL_WILDCARDS if w in wildcards), None)
        spec = DATASETS.get(dataset)  # None for a config's `user_datasets` entry, which is never generated
        synthetic = spec is not None and spec.synthetic is not None
        return self.cost(rule, dataset, model, synthetic)

    def merged(self, costs: Iterable[Cost]) -> "ResourceTable":
        """This table with `costs` replacing the rows of the same key; a measured row is never replaced by a
        predicted or estimated one."""
        rows = dict(self.rows)
        for c in costs:
            key = (c.rule, c.dataset, c.model)
            if key in rows and rows[key].source == "measured" and c.source != "measured":
                continue
            rows[key] = c
        return ResourceTable(rows.values(), self.header)


USAGE = re.compile(
    r"job usage: wall (?P<wall>[\d.]+) s, cpu (?P<cpu>[\d.]+) s, max rss (?P<rss>[\d.]+) MiB"
    r", rule (?P<rule>\w+), wildcards (?P<wildcards>\{.*\})$"
)


@dataclass(frozen=True)
class JobUsage:
    """One finished job's `job usage` line (attnexp.runlog): its costs, rule and wildcards."""

    log: str
    rule: str
    wildcards: dict
    wall_s: float
    cpu_s: float
    rss_mib: float


def job_usages(log_dir: str | Path) -> list[JobUsage]:
    """Every job log under `log_dir` (a workflow's logs/) that ends with a `job usage` line naming its rule and
    wildcards (attnexp.runlog), i.e. finished."""
    usages = []
    for path in sorted(Path(log_dir).rglob("*.log")):
        lines = path.read_text(errors="replace").splitlines()
        usage = USAGE.search(lines[-1]) if lines else None
        if usage:
            wall, cpu, rss = (float(usage[k]) for k in ("wall", "cpu", "rss"))
            usages.append(JobUsage(str(path), usage["rule"], json.loads(usage["wildcards"]), wall, cpu, rss))
    return usages


def dry_run_jobs(output: str) -> list[dict]:
    """Each job of a `snakemake -n --quiet host` listing that has a log (every rule but targets such as `all`): its
    rule, wildcards, log and requested runtime (minutes) and mem_mb."""
    jobs = []
    for rule, body in re.findall(r"^(?:local)?rule (\w+):\n((?:    .*\n)+)", output, flags=re.M):
        fields = dict(re.findall(r"^    (\w+): (.*)$", body, flags=re.M))
        if "log" not in fields:
            continue
        resources = dict(item.split("=", 1) for item in fields["resources"].split(", "))
        wildcards = dict(item.split("=", 1) for item in fields["wildcards"].split(", ")) if "wildcards" in fields else {}
        jobs.append(
            {
                "rule": rule,
                "wildcards": wildcards,
                "log": fields["log"],
                "runtime": int(resources["runtime"]),
                "mem_mb": int(resources["mem_mb"]),
            }
        )
    return jobs
