# Two commands do all the set-up: `make run` (the main job) and `make test` (the test suite).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= all

.PHONY: run test venv lint format benchmark report clean

$(BIN)/snakemake: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -e .
	touch $@

venv: $(BIN)/snakemake

run: venv
	$(BIN)/snakemake --cores $(CORES)

report: venv
	$(BIN)/snakemake --cores $(CORES) report

test: venv
	$(BIN)/python -m pytest

lint: venv
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/snakefmt --check Snakefile workflow/rules

format: venv
	$(BIN)/ruff format src tests benchmarks
	$(BIN)/snakefmt Snakefile workflow/rules

clean:
	rm -rf results logs .snakemake
