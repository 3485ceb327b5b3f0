"""The embedded default grid from an empty `results/`: wall and CPU time of the whole run, and where the CPU went.

    python benchmarks/default_grid.py [--cores 2] [--keep] [-- extra snakemake arguments]

Copies the tracked files of this checkout into a temporary directory (so your own `results/` is untouched), compiles
its package to bytecode, runs `snakemake --cores N` there and prints:
- the run's wall time, user and system CPU (Snakemake and every job), and the load average before and after;
- per stage (`logs/<stage>/`): jobs, and the CPU seconds spent inside the jobs (each job log ends with its
  `job usage` line, written by `attnexp.runlog`); the rest of the run's CPU is job start-up (Python imports) and
  Snakemake itself;
- the ten most expensive jobs.

The figure for the default grid in README.md and docs/performance.md comes from this script. A measurement, not a
test: run it on a quiet machine, nothing else busy, and report the load average beside the result.
"""

import argparse
import collections
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
USAGE = re.compile(r"job usage: wall ([\d.]+) s, cpu ([\d.]+) s")


def copy_checkout(target: Path) -> Path:
    """The tracked (and untracked, not ignored) files of this checkout under `target`, with ../shared beside it."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    repo = target / "repo"
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    shared = REPO.parent / "shared"
    if shared.exists():
        (target / "shared").symlink_to(shared.resolve())
    return repo


def job_usage(logs: Path) -> list[tuple[str, float, float]]:
    """(log path relative to logs/, wall s, cpu s) of every job log with a usage line."""
    rows = []
    for log in sorted(logs.rglob("*.log")):
        found = USAGE.search(log.read_text(errors="replace"))
        if found:
            rows.append((str(log.relative_to(logs)), float(found.group(1)), float(found.group(2))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the temporary copy and print its path")
    parser.add_argument("snakemake_args", nargs="*", help="extra arguments for snakemake (after --)")
    args = parser.parse_args()

    target = Path(tempfile.mkdtemp(prefix="default-grid-"))
    repo = copy_checkout(target)
    env = {**os.environ, "PYTHONPATH": str(repo / "src")}  # the copy's package, also for an editable install
    # bytecode compiled once, as an installed package has it (PYTHONDONTWRITEBYTECODE would make every job compile)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(repo / "src")], check=True)
    snakemake = Path(sys.executable).with_name("snakemake")
    command = [str(snakemake), "--cores", str(args.cores), *args.snakemake_args]
    print(f"running {' '.join(command)} in {repo}", flush=True)
    load_before = os.getloadavg()
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(command, cwd=repo, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"snakemake failed ({done.returncode}); its last lines:\n{done.stderr[-3000:]}")
    user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime

    rows = job_usage(repo / "logs")
    stages = collections.defaultdict(lambda: [0, 0.0])
    for name, _, cpu in rows:
        stages[name.split("/")[0]][0] += 1
        stages[name.split("/")[0]][1] += cpu
    inside = sum(cpu for _, _, cpu in rows)
    print(f"\nwall {wall:.0f} s, CPU {user:.0f} s user + {system:.0f} s system, {len(rows)} jobs, --cores {args.cores}")
    print(f"load average before {load_before[0]:.2f} {load_before[1]:.2f}, after {os.getloadavg()[0]:.2f}")
    print(f"\n{'stage':<12} {'jobs':>5} {'CPU s in jobs':>14}")
    for stage, (count, cpu) in sorted(stages.items(), key=lambda item: -item[1][1]):
        print(f"{stage:<12} {count:>5} {cpu:>14.1f}")
    print(f"{'all':<12} {len(rows):>5} {inside:>14.1f}")
    print(f"outside the jobs' own work (start-up imports, Snakemake): {user + system - inside:.0f} CPU s")
    print("\nlargest jobs (CPU s):")
    for name, _, cpu in sorted(rows, key=lambda row: -row[2])[:10]:
        print(f"  {cpu:6.1f}  {name}")
    if args.keep:
        print(f"\nkept: {target}")
    else:
        shutil.rmtree(target, ignore_errors=True)


if __name__ == "__main__":
    main()
