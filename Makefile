# Two commands for a newcomer: `make run` (dashboard) and `make test` (whole suite); `make federated` runs the
# federated demonstration (federated/).
# Both create .venv on first use and install the pinned requirements into it.
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501
PYTEST_ARGS ?=
# The suite runs on every core (pytest-xdist), with one worker more than the cores so that a core is not idle while a
# federated test waits for its processes (tests/conftest.py, EXTRA_WORKERS); conftest.py groups the tests so that a
# module's expensive set-up and the browser tests' server run once. `make test TEST_WORKERS=0` runs it in one process.
TEST_WORKERS ?= auto
# Bytecode of every Python source of the checkout (__pycache__, ignored by git), written by `make test`, `make run`
# and `make federated` before their processes start: where PYTHONDONTWRITEBYTECODE is set, as on this project's CI
# machines, Python would otherwise compile dpcore and capefed again in every process they start (a ServerApp, a
# site's worker, a command: 0.05-0.3 CPU s each, several hundred in the suite); it still reads a cache that exists,
# and compiles a source changed since (it checks each file's time).
COMPILE := $(BIN)/python -m compileall -q -j 0 app.py dpcore pages federated/capefed tests benchmarks tools

.PHONY: run test check lint bench chromium clean federated

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.runtime-installed: requirements.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev-installed: requirements-dev.txt $(VENV)/.runtime-installed
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# One BLAS thread in the dashboard too: its runs go to worker processes (dpcore.workers), one core each, and a run
# in the dashboard's own process then gives the same numbers as in a worker.
run: $(VENV)/.runtime-installed
	$(COMPILE)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m streamlit run app.py --server.port $(PORT) \
	  --browser.gatherUsageStats false

# The browser test drives Debian's chromium; install it when missing (tests run as root in CI).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO="sudo -n"; fi; \
	  echo "installing Debian's chromium for the browser test"; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }

# The suite's command (test and check), in this environment: one BLAS thread per process (on a small shared machine,
# OpenBLAS threads waiting for a busy core made a 784 x 784 eigensolve 100x slower: benchmarks/bench_pca.py), and
# PYTHONDONTWRITEBYTECODE empty (Python ignores an empty value): pytest keeps its assert-rewritten test modules in
# __pycache__ only where bytecode may be written, and with the variable set every worker rewrote all of them on every
# run (collecting took 13.7 CPU s a worker, 5.5 with them kept).
PYTEST := OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest \
  -n $(TEST_WORKERS) --dist loadgroup
test: $(VENV)/.dev-installed chromium
	$(COMPILE)
	$(PYTEST) $(PYTEST_ARGS)

# The developer's quick loop: every test but the ones that start real processes or a browser (the markers below: a
# Flower federation, pip installs, Streamlit in chromium), which take about 60 % of the whole suite's CPU. Not a
# substitute for `make test`, which CI runs: docs/README.md ("Development") has both suites' times.
QUICK_MARKERS := not browser and not federated and not install
check: $(VENV)/.dev-installed
	$(COMPILE)
	$(PYTEST) -m "$(QUICK_MARKERS)" $(PYTEST_ARGS)

# ruff, then the layout check: imports strictly downward between dpcore's layers, no import cycles, module and
# function sizes (tools/check_layout.py; tests/test_layout.py runs the same check in `make test`).
lint: $(VENV)/.dev-installed
	$(BIN)/ruff check dpcore pages tests benchmarks tools federated app.py
	$(BIN)/python tools/check_layout.py

# A SuperLink, a helper and three sites as separate processes on 127.0.0.1 (Flower), a capePCA and a capeAGN
# round, the message log and the result beside the in-process run; everything is stopped at the end.
# NOISE=helper-free: the sites make the zero-sum noise by a secure sum (NOISE takes the noise variants whose table entry
# says federated=True, listed by `python -m capefed.ops.launch --help`; another is refused on one line before anything
# starts); DROP=east: that site's process is killed after the noise was set up (the round completes with the
# survivors and shows the audit of what was released).
NOISE ?= helper
DROP ?=
federated: $(VENV)/.runtime-installed
	$(COMPILE)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 PYTHONPATH=$(CURDIR):$(CURDIR)/federated \
	  $(BIN)/python -m capefed.ops.launch --workdir federated-run --noise $(NOISE) $(if $(DROP),--drop $(DROP))

# bench_pages.py drives chromium with Playwright (a test requirement): the benchmarks need the dev set too.
bench: $(VENV)/.dev-installed chromium
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV) .pytest_cache federated-run
