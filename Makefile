# The two commands of the README. Each builds the environment first (once; again when
# pyproject.toml changes), then runs the workflow or the tests.
PYTHON ?= python3
VENV ?= .venv
CORES ?= all
SNAKEMAKE_ARGS ?=
PYTEST_ARGS ?=

# Test oracles and benchmark peers for the curvature package, without their declared torchvision
# (see the test extra in pyproject.toml); their imports come with the test extra.
ORACLES := nngeometry==0.4 curvlinops-for-pytorch==3.0.1

BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: run test report lint clean-results

run: $(INSTALLED)
	$(BIN)/snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)

test: $(INSTALLED)
	$(BIN)/ruff check src tests
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Snakemake's own report bundle (figures, captions, provenance) as a zip.
report: $(INSTALLED)
	$(BIN)/snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)
	$(BIN)/snakemake --report report.zip $(SNAKEMAKE_ARGS)

lint: $(INSTALLED)
	$(BIN)/snakemake --lint

$(INSTALLED): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[test]'
	$(BIN)/python -m pip install --quiet --no-deps $(ORACLES)
	touch $@

clean-results:
	rm -rf results/* .snakemake
