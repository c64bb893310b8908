# The two commands in README.md:  `make book`  and  `make test`.
# Each creates the virtual environment .venv (if missing) from requirements.txt and installs
# flt_lib into it in editable mode, so both work on a fresh machine with Python >= 3.10.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Parallel test workers and notebook kernels. --dist loadfile keeps each notebook's cells on
# one worker. One torch thread per kernel (FLT_THREADS): the book's tensors are small, and two
# kernels with two threads each on two cores fight (README, "Budgets").
CORES   := $(shell nproc 2>/dev/null || echo 2)
WORKERS ?= $(CORES)
JOBS    ?= $(CORES)
export FLT_THREADS ?= 1
export OMP_NUM_THREADS ?= $(FLT_THREADS)
export OPENBLAS_NUM_THREADS ?= $(FLT_THREADS)
# One id per `make` run: tags _build/executions.jsonl, so a test can prove that `make test`
# executed no notebook twice.
ifndef FLT_RUN_ID
export FLT_RUN_ID := $(shell date +%Y%m%d%H%M%S)-$(shell echo $$$$)
endif
PYTEST  := $(PY) -m pytest -p flt_lib._nbval_cache

.PHONY: book test unit notebooks bench stamp strip student clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

## Build the website into _build/html (strict: warnings are errors). Notebooks that the
## execution cache lacks run first, $(JOBS) at a time; then Sphinx reads them from the cache.
book: $(STAMP)
	$(PY) -m flt_lib._build book --jobs $(JOBS)

## Run every test, executing each notebook once. Stage 1: unit and consistency tests, and nbval
## on every notebook (which fills the execution cache). Stage 2 (marker `book`): the strict build
## from that cache, the proof that nothing ran twice, determinism and the Colab-like run.
## pytest's exit code 5 ("no tests ran") is a failure.
test: $(STAMP)
	@$(PYTEST) -n $(WORKERS) --dist loadfile --nbval-lax --nbval-current-env -m "not book" tests chapters; \
	rc1=$$?; \
	$(PYTEST) -n $(WORKERS) --dist loadfile -m book tests; \
	rc2=$$?; \
	for rc in $$rc1 $$rc2; do if [ $$rc -eq 5 ]; then echo "pytest ran no tests: failing"; exit 1; fi; done; \
	if [ $$rc1 -ne 0 ]; then exit $$rc1; fi; exit $$rc2

## Fast loop while writing: unit tests only (under 30 s). One torch thread: with two threads on
## two busy cores, small ops wait on each other (a 60 x 2 log_softmax took 3 ms instead of 2 us).
unit: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -m "not slow and not book" tests

## nbval over the notebooks only (fills the execution cache as a side effect).
notebooks: $(STAMP)
	$(PYTEST) -n $(WORKERS) --dist loadfile --nbval-lax --nbval-current-env chapters

## Benchmark table (printed and written to _build/bench.md): import cost, every notebook's run
## time alone against its budget, and the kernels of chapters 4-5. Timing is never asserted.
bench: $(STAMP)
	$(PY) -m flt_lib._bench

## Re-stamp every notebook's setup cell from _config.yml and flt_lib.__version__.
stamp: $(STAMP)
	$(PY) -m flt_lib._notebook stamp

## Remove outputs from every notebook (notebooks are committed without outputs).
strip: $(STAMP)
	$(PY) -m flt_lib._notebook strip

## Student edition: a copy of chapters/ without exercise solutions, in _build/student.
student: $(STAMP)
	$(PY) -m flt_lib._notebook student _build/student

clean:
	rm -rf _build .pytest_cache .hypothesis
