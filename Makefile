# The two commands in README.md:  `make book`  and  `make test`.
# Each creates the virtual environment .venv (if missing) from requirements.txt and installs
# flt_lib into it in editable mode, so both work on a fresh machine with Python >= 3.10.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# Parallel test workers and notebook kernels. --dist loadfile keeps each notebook's cells on
# one worker. One torch thread per kernel (FLT_THREADS): the book's tensors are small, and two
# kernels with two threads each on two cores fight (MAINTAINING.md, "Budgets").
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
# The book's tooling is the package book/ at the repository root, never installed: it is run
# as `python -m book.<module>` from here, which puts the root on sys.path.
PYTEST  := $(PY) -m pytest -p book.nbval_cache

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
	@$(PY) -m book.build book --jobs $(JOBS)

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

## Fast loop while writing: the library's unit tests, tests/lib (under 30 s). One torch
## thread: with two threads on two busy cores, small ops wait on each other (a 60 x 2
## log_softmax took 3 ms instead of 2 us).
unit: $(STAMP)
	OMP_NUM_THREADS=1 $(PY) -m pytest -q -n $(WORKERS) -m "not slow and not book" tests/lib

## nbval over the notebooks only (fills the execution cache as a side effect).
notebooks: $(STAMP)
	$(PYTEST) -n $(WORKERS) --dist loadfile --nbval-lax --nbval-current-env chapters

## Benchmark table (printed and written to _build/bench.md): import cost, every notebook's run
## time alone against its budget, and the kernels of chapters 4-5. Timing is never asserted.
bench: $(STAMP)
	$(PY) -m book.bench

## Re-stamp every notebook's setup cell from _config.yml and flt_lib.__version__.
stamp: $(STAMP)
	$(PY) -m book.notebook stamp

## Remove outputs from every notebook (notebooks are committed without outputs).
strip: $(STAMP)
	$(PY) -m book.notebook strip

clean:
	rm -rf _build .pytest_cache .hypothesis

# ---- The website and the student edition as readers and teachers meet them (issue 16) --------
.PHONY: student lab browser-test pdf release-check jupyter jupyterlab-test assignments

JB := $(VENV)/bin/jupyter-book
# Executed notebooks whose outputs the student website shows (cells are matched by id and
# source, so an edited cell shows no output rather than a stale one). Override with
# `make student EXECUTED=path` (a jupyter-cache folder or a folder of executed notebooks).
EXECUTED ?= _build/.jupyter_cache

## Student edition: notebooks without solutions in _build/student/book/chapters, and its
## website in _build/student/html. Notebooks are not executed: outputs come from $(EXECUTED)
## when it exists (after `make book`), else the site shows code without outputs.
student: $(STAMP)
	$(PY) -m book.notebook student-book _build/student/book --executed $(EXECUTED)
	@rm -rf _build/student/html _build/student/site
	@# jupyter-book's own message names its output folder, which is moved right after:
	@# its output goes to a log, shown only when the build fails.
	@mkdir -p _build/student
	@$(JB) build -W -n --keep-going --path-output _build/student/site _build/student/book \
	  > _build/student/build.log 2>&1 \
	  || { cat _build/student/build.log; echo "student build failed (log: _build/student/build.log)"; exit 1; }
	@mv _build/student/site/_build/html _build/student/html
	@echo "student edition: notebooks in _build/student/book/chapters, website in _build/student/html"

## Reader notebooks for Colab and JupyterLab, from the execution cache (run `make book` first;
## nothing is executed): _build/jupyter/<chapter>/<section>.ipynb, and the student edition in
## _build/student/jupyter/. Plain Markdown and LaTeX, numbers and links as on the website,
## solutions collapsed (absent for students), setup cell pinned to this commit (book/jupyter.py).
jupyter: $(STAMP)
	$(PY) -m book.jupyter

## Weekly programming assignments from the graded coding exercises (otter-grader):
## _build/assignments/<chapter>/{student,autograder,master}/ and a README for teachers.
## Statements carry the website's equation numbers when `make jupyter` has run.
## ASSIGNMENTS="04_recurrent 05_transformers" builds only those chapters.
ASSIGNMENTS ?=
assignments: $(STAMP)
	$(PY) -m book.assignments $(ASSIGNMENTS)

## Open the reader notebooks (_build/jupyter, as Colab shows them) in JupyterLab (pinned in
## requirements.txt), with .venv's kernel, which imports flt_lib from this checkout. To edit the
## book, open the sources instead: make lab LAB_DIR=chapters. Extra options:
## make lab LAB_ARGS="--no-browser --port=8899" (as root Jupyter also wants --allow-root).
LAB_ARGS ?=
LAB_DIR ?= _build/jupyter
lab: $(STAMP)
	@dir=$(LAB_DIR); if [ ! -d "$$dir" ]; then \
	  echo "no $$dir yet (make book && make jupyter writes it): opening the sources, chapters/"; \
	  dir=chapters; fi; \
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=$$dir \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_ARGS)

## One generated notebook in JupyterLab in headless Chromium: no directive text visible, a
## solution collapsed; screenshots _build/screenshots/jupyterlab-*.png (after make jupyter).
jupyterlab-test: $(STAMP)
	@test -x /usr/bin/chromium || { echo "jupyterlab-test needs Chromium: apt-get install -y chromium"; exit 1; }
	@test -d _build/jupyter || { echo "no generated notebooks: run make book && make jupyter first"; exit 1; }
	@$(PY) -c "import playwright" 2>/dev/null || $(PY) -m pip install --quiet "$(PLAYWRIGHT)"
	FLT_BROWSER_TEST=1 $(PY) -m pytest -q tests/book/test_jupyterlab_browser.py

## The built website in Chromium at 1280 and 390 px (needs `apt-get install -y chromium`;
## installs the pinned playwright into .venv on first use). Screenshots: _build/screenshots/.
PLAYWRIGHT := playwright==1.65.2
browser-test: $(STAMP)
	@test -x /usr/bin/chromium || { echo "browser-test needs Chromium: apt-get install -y chromium"; exit 1; }
	@test -f _build/html/index.html || { echo "no built site: run make book first"; exit 1; }
	@$(PY) -c "import playwright" 2>/dev/null || $(PY) -m pip install --quiet "$(PLAYWRIGHT)"
	@if [ -f _build/latex/book.pdf ]; then cp _build/latex/book.pdf _build/html/book.pdf; fi
	FLT_BROWSER_TEST=1 $(PY) -m pytest -q tests/book/test_site_links.py tests/book/test_site_browser.py
	@if [ -d _build/jupyter ]; then FLT_BROWSER_TEST=1 $(PY) -m pytest -q tests/book/test_jupyterlab_browser.py; \
	  else echo "no _build/jupyter: the JupyterLab check is skipped (make jupyter first)"; fi

## The whole book as a PDF through LaTeX: _build/latex/book.pdf (needs Debian's
## texlive-latex-extra, tex-gyre, latexmk and, for the test, poppler-utils; see README),
## copied into the website (_build/html/book.pdf), whose header links it.
pdf: $(STAMP)
	$(JB) build --builder pdflatex .
	@if [ -d _build/html ]; then cp _build/latex/book.pdf _build/html/book.pdf; fi
	FLT_PDF_TEST=1 $(PY) -m pytest -q tests/book/test_pdf.py

## A release v<version> is consistent: __version__, stamped setup cells and a git tag agree.
release-check: $(STAMP)
	$(PY) -m book.notebook release-check
