# The two commands in README.md:  `make book`  and  `make test`.
# Each creates the virtual environment .venv (if missing) from requirements.txt and installs
# flt_lib into it in editable mode, so both work on a fresh machine with Python >= 3.10.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Parallel test workers. --dist loadfile keeps each notebook's cells on one worker.
WORKERS ?= 2

.PHONY: book test unit notebooks stamp strip student clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps -e .
	touch $(STAMP)

## Build the website into _build/html (strict: warnings are errors).
book: $(STAMP)
	$(VENV)/bin/jupyter-book build --all -W -n --keep-going .

## Run every test: unit tests, consistency checks, nbval on every notebook, the strict build,
## and the Colab-like fresh-environment run. pytest's exit code 5 ("no tests ran") is a failure.
test: $(STAMP)
	@$(PY) -m pytest -n $(WORKERS) --dist loadfile --nbval-lax --nbval-current-env tests chapters; \
	rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest ran no tests: failing"; exit 1; fi; exit $$rc

## Fast loop while writing: unit tests only (under 30 s). One torch thread: with two threads on
## two busy cores, small ops wait on each other (a 60 x 2 log_softmax took 3 ms instead of 2 us).
unit: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -m "not slow" tests

## nbval over the notebooks only.
notebooks: $(STAMP)
	$(PY) -m pytest -n $(WORKERS) --dist loadfile --nbval-lax --nbval-current-env chapters

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
