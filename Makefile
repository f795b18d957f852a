# Every target creates .venv when it is missing, so a fresh clone needs only `make demo` / `make test`.
# `make demo` installs the package alone (its runtime dependencies); the other targets install the
# test and lint toolchain (`.[test]`) on top.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PKG_STAMP := $(VENV)/.installed-package

.PHONY: venv test check lint demo bench schema clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP) $(PKG_STAMP)

$(PKG_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q -e .
	touch $(PKG_STAMP)

venv: $(STAMP)

# The suite in parallel (pytest-xdist): JOBS workers, tests handed out one at a time in the
# order tests/scheduling.py sets (slow ones first), a module sharing a module-scoped fixture
# kept on one worker. More workers than the 2 cores: most tests wait on processes (editors,
# browsers, agents, hosts) rather than compute, and 6 kept the suite under 8 minutes here.
JOBS ?= 6
XDIST := -n $(JOBS) --dist loadgroup --no-loadscope-reorder
# `make check`: the edit-test loop (about a minute): lint, the unit tests and the quick e2e
# cases, both host modes; the editors, agents, installs and fault tests are left to `make test`.
CHECK_TESTS := tests/unit tests/e2e/test_smoke.py tests/e2e/test_questions.py \
	tests/e2e/test_claims.py tests/e2e/test_wire_errors.py

# Bytecode is written even where the environment says not to (PYTHONDONTWRITEBYTECODE=1 on
# this workplace's machines): without it every worker rewrites and compiles all 400 test
# modules again (~10 s of CPU each, half the collection) and every askbridge process the
# tests start, hundreds of them, compiles the server's modules afresh (~0.15 s each).
# __pycache__/ is ignored by git.
WRITE_BYTECODE := PYTHONDONTWRITEBYTECODE=

test: $(STAMP)
	$(WRITE_BYTECODE) $(BIN)/python -m pytest $(XDIST) tests

check: lint
	$(WRITE_BYTECODE) $(BIN)/python -m pytest $(XDIST) -m "not slow" $(CHECK_TESTS)

lint: $(STAMP)
	$(BIN)/ruff check server tests benchmarks
	$(BIN)/mypy server/askbridge

# Quitting the demo (Ctrl-C, status 130) is not a failure of `make demo`.
demo: $(PKG_STAMP)
	@if [ -t 0 ]; then $(BIN)/askbridge demo || [ $$? -eq 130 ]; else $(BIN)/askbridge demo --auto; fi

bench: $(STAMP)
	@for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

schema: $(STAMP)
	$(BIN)/askbridge schema --out protocol/schema

clean:
	rm -rf $(VENV) build *.egg-info server/*.egg-info
