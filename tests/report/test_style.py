"""Importing the figure style leaves a user's matplotlib backend alone (a notebook keeps its own)."""

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

UNSET = """
import matplotlib

before = matplotlib.rcParams._get("backend")  # as set, unresolved: reading rcParams["backend"] would resolve it
import attnexp.report.style

after = matplotlib.rcParams._get("backend")
assert after == before, (before, after)
"""
CHOSEN = """
import matplotlib

matplotlib.use("svg")  # the user's backend, then the API's heatmap (which imports the style)
import attnexp.report.heatmap

assert matplotlib.get_backend() == "svg", matplotlib.get_backend()
"""


@pytest.mark.parametrize("script", [UNSET, CHOSEN], ids=["unset", "chosen"])
def test_importing_the_style_does_not_switch_the_backend(script):
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    command = [sys.executable, "-c", script + "print('ok')"]
    out = subprocess.run(command, capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
