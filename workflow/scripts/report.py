"""Render the HTML report of this run's tables and figures: `snakemake --report` on the same Snakefile, working
directory and (validated) config, with this rule's inputs as the targets."""

import subprocess
import sys
import tempfile

import yaml

from attnexp.runlog import log_to

with log_to(snakemake.log[0]), tempfile.NamedTemporaryFile("w", suffix=".yaml") as configfile:
    yaml.safe_dump(dict(snakemake.config), configfile)
    configfile.flush()
    command = [sys.executable, "-m", "snakemake", "-s", snakemake.params.snakefile, "--nolock"]
    command += ["--configfile", configfile.name, "--report", snakemake.output[0], *snakemake.input]
    print(" ".join(command), flush=True)
    subprocess.run(command, stdout=sys.stdout, stderr=subprocess.STDOUT, check=True)
