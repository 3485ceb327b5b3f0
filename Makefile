# Two commands do all the set-up: `make run` (the main job) and `make test` (the test suite); `make lint` checks style.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= all

.PHONY: run test test-fast venv lint format report docs clean

LINTED := src tests benchmarks workflow/scripts
SNAKEFILES := Snakefile workflow/Snakefile workflow/rules

$(BIN)/snakemake: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

venv: $(BIN)/snakemake

# The rich console (snakemake-logger-plugin-rich): one progress bar per stage (rule) on a terminal; off a terminal
# (make run > log, CI) one line per finished job (attnexp.runconsole, as with a plain `snakemake`). The Snakefile's
# onsuccess/onerror handlers close with a summary.
LOGGER ?= --logger rich

run: venv
	$(BIN)/snakemake --cores $(CORES) $(LOGGER)

report: venv
	$(BIN)/snakemake --cores $(CORES) report

# Two workers (pytest-xdist): whole modules per worker (`--dist loadscope`, so a module's grid fixture runs once), in
# the order tests/conftest.py gives (the longest first). `make test TEST_WORKERS=0` runs them one after another.
TEST_WORKERS ?= 2
XDIST = -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

test: venv
	$(BIN)/python -m pytest $(XDIST)

# The edit loop: unit-level tests only (no end-to-end workflow run, no SLURM cluster, no browser).
test-fast: venv
	$(BIN)/python -m pytest -q $(XDIST) -m "not slow and not slurm"

# The documentation site (mkdocs.yml, docs/) into site/, warnings as errors: a broken link or anchor fails it.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# Fails on any finding: ruff's lint rules and formatting, snakefmt, and Snakemake's own linter (default config).
lint: venv
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/snakefmt --check $(SNAKEFILES)
	$(BIN)/snakemake --lint

format: venv
	$(BIN)/ruff check --fix $(LINTED)
	$(BIN)/ruff format $(LINTED)
	$(BIN)/snakefmt $(SNAKEFILES)

clean:
	rm -rf results logs .snakemake site
