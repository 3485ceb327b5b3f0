"""The installed package carries what it reads at run time: the config schema (attnexp/config.schema.yaml), the
published values and the report's stylesheet are package data, so validation, `default_settings()` and the report
work after a non-editable install, away from the checkout."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE_DATA = ("attnexp/config.schema.yaml", "attnexp/report/published_values.csv", "attnexp/report/report.css")
MINIMAL = {"datasets": ["syn_sentiment"], "encoders": ["lstm"], "attentions": ["tanh"], "seeds": [0]}


def _clean_env() -> dict[str, str]:
    """This environment without PYTHONPATH (the checkout's src/ must not leak in) and without pip's network."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1", "PYTHONDONTWRITEBYTECODE": "1"}


def _elsewhere(tmp_path: Path) -> Path:
    """A new, empty working directory away from the checkout."""
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    return folder


def _run(command: list, cwd: Path, env: dict[str, str] | None = None, timeout: int = 120) -> str:
    """`command` run in `cwd` with `env` (default: the clean environment); its stdout, once it has succeeded."""
    result = subprocess.run(
        command, cwd=cwd, env=_clean_env() if env is None else env, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _venv_with_wheel(venv: Path, wheel: Path, base: str, *options: str) -> Path:
    """A new venv (no pip of its own) made by `base` with `options`, and the wheel installed into it non-editable by
    this environment's pip; returns the venv's python."""
    subprocess.run([base, "-m", "venv", *options, "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--quiet", str(wheel)]
    result = subprocess.run(install, env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return python


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel of this checkout (no dependencies, no build isolation: offline), built from a copy of the sources so
    the checkout gets no build/ or egg-info of its own."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp / "dist"), str(source)]
    result = subprocess.run(command, cwd=tmp, env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    (built,) = (tmp / "dist").glob("attnexp-*.whl")
    return built


def test_the_wheel_carries_the_config_schema(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for name in PACKAGE_DATA:
            assert name in names, name
        assert archive.read("attnexp/config.schema.yaml") == (REPO / "src/attnexp/config.schema.yaml").read_bytes()
    assert not any(name.startswith(("workflow/", "tests/")) for name in names)


def test_default_settings_from_the_unpacked_wheel_away_from_the_checkout(wheel, tmp_path):
    """`default_settings()` needs torch (attnexp.api imports it), so this environment's Python runs it, with the
    unpacked wheel first on the path and the working directory elsewhere: no checkout layout to fall back on."""
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    elsewhere = _elsewhere(tmp_path)
    code = (
        "import attnexp, attnexp.config\n"
        f"assert attnexp.__file__.startswith({str(site)!r}), attnexp.__file__\n"
        f"assert str(attnexp.config.PACKAGED_SCHEMA).startswith({str(site)!r}), attnexp.config.PACKAGED_SCHEMA\n"
        "settings, az_settings = attnexp.default_settings()\n"
        "print(settings.permutations, az_settings.n_examples)\n"
    )
    env = {**_clean_env(), "PYTHONPATH": str(site)}
    stdout = _run([sys.executable, "-c", code], elsewhere, env)
    assert stdout.split() == ["100", "2000"]  # the schema's defaults (analyses.permutations, az.n_examples)


def test_validation_after_pip_install_into_a_fresh_venv(wheel, tmp_path):
    """A real (non-editable) install: the wheel into a new venv that sees only the base interpreter's packages.
    That has no torch, so only the torch-free config check runs there (it needs PyYAML and jsonschema)."""
    base = getattr(sys, "_base_executable", sys.executable)
    probe = subprocess.run([base, "-c", "import yaml, jsonschema"], env=_clean_env(), capture_output=True)
    if probe.returncode:
        pytest.skip(f"the base interpreter {base} has no PyYAML / jsonschema for a --system-site-packages venv")
    venv = tmp_path / "venv"
    python = _venv_with_wheel(venv, wheel, base, "--system-site-packages")
    elsewhere = _elsewhere(tmp_path)
    code = (
        "import sys, attnexp.config as c\n"
        f"assert c.__file__.startswith({str(venv)!r}), c.__file__\n"
        f"config = c.validate_config({MINIMAL!r})\n"
        "assert 'torch' not in sys.modules\n"
        "print(config['analyses']['permutations'], len(c.load_schema()['properties']))\n"
    )
    assert _run([python, "-c", code], elsewhere).split()[0] == "100"


@pytest.mark.slow  # a real command (a whole-grid estimate, a fresh venv, a dry run, the example): not the edit loop
def test_explain_and_default_settings_after_a_non_editable_install_into_a_fresh_venv(wheel, tmp_path):
    """The wheel installed (not editable) into a new venv; its dependencies (torch, ...) come from this
    environment's site-packages as a plain path entry, so no editable install of the checkout is seen. From another
    directory, `default_settings()` reads the packaged schema and `explain()` runs (the README's example script,
    copied there: it trains two tiny models, explains a sentence with each and draws the heat maps)."""
    import site
    import sysconfig

    venv = tmp_path / "venv"
    python = _venv_with_wheel(venv, wheel, sys.executable)
    probe = [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    purelib = Path(subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip())
    ours = {sysconfig.get_paths()["purelib"], *site.getsitepackages()}
    (purelib / "dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")  # paths only: their .pth files unread
    elsewhere = _elsewhere(tmp_path)
    shutil.copy2(REPO / "examples/explain_sentence.py", elsewhere / "example.py")
    code = (
        "import attnexp, attnexp.config\n"
        f"assert attnexp.__file__.startswith({str(venv)!r}), attnexp.__file__\n"
        f"assert str(attnexp.config.PACKAGED_SCHEMA).startswith({str(venv)!r})\n"
        "settings, az = attnexp.default_settings()\n"
        "print(settings.permutations, az.n_examples)\n"
    )
    assert _run([python, "-c", code], elsewhere, timeout=300).split() == ["100", "2000"]
    example = [str(python), "example.py", "--out", str(elsewhere / "out"), "--permutations", "5", "--adversary-steps", "5"]
    assert _run(example, elsewhere, timeout=300).count("Kendall tau (p): attn_grad") == 2
    assert (elsewhere / "out/lstm-tanh.png").stat().st_size > 5000
