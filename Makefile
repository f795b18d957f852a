# Every target creates .venv when it is missing, so a fresh clone needs only `make demo` / `make test`.
# `make demo` installs the package alone (its runtime dependencies); the other targets install the
# test and lint toolchain (`.[test]`) on top.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PKG_STAMP := $(VENV)/.installed-package

.PHONY: venv test lint demo bench schema clean

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

test: $(STAMP)
	$(BIN)/python -m pytest tests

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
