# Conifer — the two commands a new machine needs: `make demo` and `make test`.
# MPI=openmpi (default) or MPI=mpich selects the MPI a build targets; each gets its own
# target directory (target/openmpi, target/mpich) so both can exist side by side.

MPI ?= openmpi
MPIS := openmpi mpich
RANKS ?= 4
TARGET_DIR = target/$(1)
CARGO_FOR = CONIFER_MPI=$(1) CARGO_TARGET_DIR=$(call TARGET_DIR,$(1)) cargo
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1

.PHONY: setup build demo test test-one stress-test lint bench spec spec-check clean install \
	uninstall python install-python uninstall-python wheel test-python

setup:
	@scripts/setup.sh --real-apps

build: setup
	$(call CARGO_FOR,$(MPI)) build --release

demo: build
	@scripts/demo.sh $(MPI) $(RANKS)

test: setup lint spec-check
	@for mpi in $(MPIS); do $(MAKE) --no-print-directory test-one MPI=$$mpi || exit 1; done
	$(MAKE) --no-print-directory test-python

# make stress-test [TESTS="cargo nextest arguments"]: `make test` (or, with TESTS, that subset
# under each MPI) while CPU hogs keep the load at twice the cores; reports the elapsed time
# and load averages (scripts/stress-test.sh: STRESS_HOGS, STRESS_MPIS, STRESS_TIMEOUT).
stress-test:
	@scripts/stress-test.sh $(TESTS)

# conifer-static (LLVM) does not depend on the MPI a build targets and its tests build and run
# their programs under both MPIs, so only the openmpi round tests it; both rounds build it, since
# the tree-mode tests of conifer-cli compile the test apps with `conifer cc/fc`.
STATIC_EXCLUDE = $(if $(filter openmpi,$(MPI)),,--exclude conifer-static)

test-one:
	@echo "== building and testing with $(MPI)"
	$(call CARGO_FOR,$(MPI)) build --release --workspace
	$(call CARGO_FOR,$(MPI)) nextest run --release --workspace --no-fail-fast $(STATIC_EXCLUDE)
	$(call CARGO_FOR,$(MPI)) test --release --doc -p conifer-format -p conifer-write -p conifer-trace

# import-cycles.py fails on a circle of `use`s between the files of a crate, except the known
# ones listed in tools/import-cycles.allow (crates not yet split into layers); crate-layers.py
# on a crate dependency the architecture forbids (a reader on the write side, say).
lint:
	python3 tools/test_import_cycles.py
	python3 tools/import-cycles.py --allow tools/import-cycles.allow
	python3 tools/test_crate_layers.py
	python3 tools/crate-layers.py
	cargo fmt --all -- --check
	$(call CARGO_FOR,openmpi) clippy --release --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(call CARGO_FOR,openmpi) doc --release --no-deps --workspace

# make bench [MPI=openmpi|mpich|all] [QUICK=1] [ONLY=words]: writes bench/results.md and
# bench/results.json (ONLY: just the suites whose title contains the words, into bench/partial).
BENCH_MPIS = $(if $(filter all,$(MPI)),$(MPIS),$(MPI))
bench: setup
	@for mpi in $(BENCH_MPIS); do $(call CARGO_FOR,$$mpi) build --release || exit 1; done
	$(call CARGO_FOR,openmpi) run --release -q -p conifer-bench -- $(if $(QUICK),--quick) \
	  $(if $(ONLY),--only "$(ONLY)") $(foreach m,$(BENCH_MPIS),--mpi $(m)) --out bench$(if $(ONLY),/partial)

# The normalized MPI function table is committed; `spec` regenerates it from pympistandard
# and `spec-check` fails when the committed one differs from what the generator derives.
spec: setup
	python3 tools/gen-mpi-table.py crates/conifer-spec/mpi-functions.json

spec-check: setup
	@mkdir -p target
	@python3 tools/gen-mpi-table.py target/mpi-functions.check.json 2>/dev/null
	@cmp -s target/mpi-functions.check.json crates/conifer-spec/mpi-functions.json || \
	  { echo "crates/conifer-spec/mpi-functions.json is stale: run 'make spec' and commit it"; exit 1; }

# make install [PREFIX=/usr/local]: builds Conifer for every MPI installed here and installs
# one `conifer` plus a preload library per MPI (scripts/install.sh); make uninstall removes it.
PREFIX ?= /usr/local
install:
	@for mpi in $(MPIS); do \
	  if command -v mpicc.$$mpi >/dev/null; then $(MAKE) --no-print-directory build MPI=$$mpi || exit 1; fi; \
	done
	@scripts/install.sh $(PREFIX)
	@$(MAKE) --no-print-directory install-python

uninstall:
	@scripts/install.sh $(PREFIX) --uninstall
	@$(MAKE) --no-print-directory uninstall-python

clean:
	cargo clean
	rm -rf target

# The `conifer` Python package (crates/conifer-python: PyO3 over the read side, one abi3
# extension for every CPython >= 3.9), importable from target/python:
# PYTHONPATH=target/python python3 -c 'import conifer'. PYTHON: the interpreter it is for (the
# python3 on PATH by default); one without numpy or pandas is told what to install.
PYTHON ?= python3
PY_LACKS = $(PYTHON) -c 'import numpy, pandas' 2>/dev/null || \
  echo "note: $$($(PYTHON) -c 'import sys; print(sys.executable)' 2>/dev/null || echo $(PYTHON)) lacks numpy or pandas, which conifer needs: $(PYTHON) -m pip install numpy pandas (or PYTHON=/usr/bin/python3)"
python:
	$(call CARGO_FOR,openmpi) build --release -p conifer-python
	rm -rf target/python && mkdir -p target/python/conifer
	cp crates/conifer-python/python/conifer/*.py target/python/conifer/
	cp $(call TARGET_DIR,openmpi)/release/lib_conifer.so target/python/conifer/_conifer.abi3.so
	@$(PY_LACKS)

# The package into the system Python's site-packages (part of `make install`).
PY_SITE = $$($(PYTHON) -c 'import site; print(site.getsitepackages()[0])')
install-python: python
	rm -rf "$(PY_SITE)/conifer" && cp -r target/python/conifer "$(PY_SITE)/"

uninstall-python:
	rm -rf "$(PY_SITE)/conifer"

# A wheel (target/wheels) built by maturin from crates/conifer-python/pyproject.toml.
# Its dependencies (numpy, pandas) are declared, so `pip install` brings them.
wheel:
	@$(PYTHON) -m maturin --version >/dev/null 2>&1 || \
	  { echo "$(PYTHON) has no maturin: $(PYTHON) -m pip install 'maturin>=1.5,<2'"; exit 1; }
	cd crates/conifer-python && CARGO_TARGET_DIR=$(CURDIR)/$(call TARGET_DIR,openmpi) \
	  $(PYTHON) -m maturin build --release -i $(PYTHON) --out ../../target/wheels
	@$(PY_LACKS)

# The Python package's tests (pytest, against `conifer stats`/`matrix`/`waits` of real traced
# runs), under PYTHON when it has numpy, pandas and pytest, else Debian's python3 (setup.sh).
TEST_PYTHON = $$(for p in $(PYTHON) /usr/bin/python3; do \
  $$p -c 'import numpy, pandas, pytest' 2>/dev/null && { echo $$p; break; }; done)
test-python: python
	$(call CARGO_FOR,openmpi) build --release --workspace
	@py=$(TEST_PYTHON); test -n "$$py" || { echo "no Python with numpy, pandas and pytest: run make setup"; exit 1; }; \
	  echo "== Python tests with $$py"; \
	  CONIFER=$(CURDIR)/$(call TARGET_DIR,openmpi)/release/conifer PYTHONPATH=$(CURDIR)/target/python \
	  $$py -m pytest -q crates/conifer-python/tests
