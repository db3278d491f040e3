# Positional encoding in Transformers: the two commands a fresh machine needs
# are `make book` and `make test`; both set up .venv on first use.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HTML   := _build/html/index.html
# the book's build code and the maintainer tools are run from their folders, never installed
TOOLS  := PYTHONPATH=tools:book_build

.PHONY: book book-strict check lint test screenshots lab bench pdf exercises clean help

help:
	@echo "make book   build the HTML book into _build/html"
	@echo "make check  the fast tier after every change (ruff, unit tests; no browser, no notebook run; < 2 min)"
	@echo "make test   run the whole suite (make check, strict book build, browser, JupyterLab, wheel, exercises)"
	@echo "make screenshots  the browser tests of the book, with a full-page screenshot of every page in every mode"
	@echo "make lab    open JupyterLab on 127.0.0.1"
	@echo "make pdf    the whole book as one PDF (_build/html/_downloads/), offered in every page's download menu"
	@echo "make bench  time posenc, the explorers and the book's math typesetting against their baselines"
	@echo "make exercises  regenerate exercises/ from solutions/ (refuses to overwrite your answers; FORCE=1 to override)"
	@echo "make clean  remove the build and caches (keeps .venv)"

$(STAMP): requirements.txt constraints.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . --builder html
	@echo
	@echo "The book is at file://$(CURDIR)/$(HTML)"

# The strict build used by the tests: warnings are errors, keep going to list them all.
book-strict: $(STAMP)
	$(BIN)/jupyter-book build . --builder html -W -n --keep-going

lint: $(STAMP)
	$(BIN)/ruff check .

# The fast tier: every test not marked slow (tests/conftest.py): no browser, no notebook execution, no build;
# two workers (104 s, measured; one worker took about 2.5 min).
check: lint
	$(BIN)/python -m pytest tests -m "not slow" -p no:randomly -q -n 2

# The full suite. The strict build (tests/test_book.py) executes chapters/, appendix/ and solutions/ with errors
# raised; nbval executes only what the build does not: exercises/ (unanswered, they must run without error),
# but for the one tests/test_browser_lab.py runs in JupyterLab. Every notebook is executed once.
# Two workers (conftest.py hands out the files, longest first; --dist loadgroup: the browser tests' dark half is a
# unit of its own, run beside the other half).
# POSENC_NO_EXTENDED=1: numpy without extended precision, as on Windows and macOS arm64 (np.longdouble is
# float64 in every process that imports posenc, notebook kernels included): the documented bounds must hold there.
test: export POSENC_NO_EXTENDED = 1
test: lint
	$(BIN)/python -m pytest tests exercises --nbval-lax -p no:randomly -n 2 --dist loadgroup

# The browser tests of the built book (the strict build, if it is not current), taking a full-page screenshot of
# every page in every mode (and of every explorer) into _build/screenshots/book/: to look at. make test takes none.
screenshots: export POSENC_SCREENSHOTS = 1
screenshots: $(STAMP)
	$(BIN)/python -m pytest tests/test_browser_book.py -p no:randomly -q

# The whole book as one PDF: the single-page build printed by Chromium (book_build/book_pdf.py). The HTML book
# first: the PDF is offered in its pages' download menus.
pdf: book
	$(BIN)/jupyter-book build . --builder singlehtml
	$(TOOLS) $(BIN)/python -m book_pdf

lab: $(STAMP)
	$(BIN)/jupyter lab --ip=127.0.0.1 --no-browser $(if $(filter 0,$(shell id -u)),--allow-root,)

exercises: $(STAMP)
	$(TOOLS) $(BIN)/python -m make_exercises $(if $(FORCE),--force,)

bench: book
	$(TOOLS) $(BIN)/python -m benchmarks

clean:
	rm -rf _build .pytest_cache .hypothesis
	find . -name __pycache__ -not -path "./$(VENV)/*" -prune -exec rm -rf {} +
