"""Failure injection for tests/workflow/test_slurm.py, loaded by Python at start-up when this directory is on PYTHONPATH.

Inside a SLURM job (SLURM_JOB_ID set) whose command line names rule $ATTNEXP_FAIL_ONCE_RULE, the first process
to create $ATTNEXP_FAIL_ONCE_MARKER exits with status 1: that job fails once, its resubmission runs normally.
Nothing in the workflow itself knows about it.
"""

import os
import sys

_rule = os.environ.get("ATTNEXP_FAIL_ONCE_RULE")
_marker = os.environ.get("ATTNEXP_FAIL_ONCE_MARKER")
if _rule and _marker and os.environ.get("SLURM_JOB_ID"):
    with open("/proc/self/cmdline", "rb") as _cmdline:
        _args = _cmdline.read().decode(errors="replace").split("\0")
    if any(f"{_rule}:" in arg or f"rule_{_rule}" in arg for arg in _args):
        try:
            os.close(os.open(_marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            print(f"injected failure: first SLURM job of rule {_rule} (job {os.environ['SLURM_JOB_ID']})", file=sys.stderr)
            sys.stderr.flush()
            os._exit(1)
