"""Measure SLURM's cost on the tiny grid: cluster bring-up, then the same config run locally and through sbatch.

    PYTHONPATH=$PWD/src .venv/bin/python benchmarks/slurm_vs_local.py [--repeats N]

Needs root and the Debian packages (slurmctld slurmd slurm-client munge); starts and stops its own cluster.
"""

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "slurm"))
import harness  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="runs of each kind (fresh work directory each)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="slurm-bench-") as tmp:
        root = Path(tmp)
        with harness.slurm_cluster(root / "pids") as bring_up:
            print(f"bring-up (munged + slurmctld + slurmd + smoke job): {bring_up:.1f} s", flush=True)
            times = {"local": [], "slurm": []}
            for repeat in range(args.repeats):
                for kind, run in (("local", harness.run_local), ("slurm", harness.run_slurm)):
                    workdir = harness.make_workdir(root / f"{kind}{repeat}", harness.tiny_config())
                    result, seconds = run(workdir)
                    if result.returncode != 0:
                        sys.exit(f"{kind} run failed:\n{result.stderr[-4000:]}")
                    jobs = result.stderr.count("has been submitted with SLURM jobid")
                    print(
                        f"{kind:5s} run {repeat + 1}: {seconds:6.1f} s" + (f" ({jobs} sbatch jobs)" if kind == "slurm" else ""),
                        flush=True,
                    )
                    times[kind].append(seconds)
    for kind, values in times.items():
        print(f"{kind:5s}: median {statistics.median(values):.1f} s over {len(values)} run(s)")


if __name__ == "__main__":
    main()
