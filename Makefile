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

# The rehearsal of the paper path runs in its own working directory (its resources/ and results/).
REHEARSAL_DIR ?= .rehearsal

.PHONY: run test test-workflow check rehearse report lint clean-results

run: $(INSTALLED)
	$(BIN)/snakemake --cores $(CORES) $(SNAKEMAKE_ARGS)

# The whole suite, in two stages: the fast tier first (a unit failure stops it within minutes),
# then the tests that run the workflow in a subprocess, on SLURM included.
test: check test-workflow

# Its 20 slowest tests are listed at the end: CI's time goes mostly to this tier.
test-workflow: $(INSTALLED)
	$(BIN)/python -m pytest -m "workflow or slurm" --durations=20 $(PYTEST_ARGS)

# The developer loop's fast tier: lint, unit and library tests; no workflow run in a subprocess.
check: $(INSTALLED)
	$(BIN)/ruff check src tests
	$(BIN)/python -m pytest -m "not workflow and not slurm" $(PYTEST_ARGS)

# The paper configuration with every budget cut and every grid cut to its distinct code paths, on
# generated files in the real formats (config/rehearsal.yaml): every paper rule, on this machine.
# Its longest chain (fixtures, Tiny ImageNet, ResNet50's training, then its Fisher passes: ~8 of its
# ~20 minutes on 2 cores) goes first, or it starts last and the run waits for it.
rehearse: $(INSTALLED)
	$(BIN)/snakemake rehearse --cores $(CORES) --directory $(REHEARSAL_DIR) \
		--configfile config/paper.yaml config/rehearsal.yaml \
		--prioritize george_thesis_ch3_fisher_quality $(SNAKEMAKE_ARGS)

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
