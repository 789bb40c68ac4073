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

.PHONY: openapi dev test install install-sam lint typecheck unit sam-validate sam-build bench bench-lifecycle bench-auth bench-extraction bench-quality bench-retrieval bench-cache bench-mcp clean

$(STAMP): requirements-dev.txt shared/requirements.txt infra/layers/embeddings/requirements.txt infra/layers/mcp/requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
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

unit: install
	$(BIN)/python -m pytest

sam-validate: install-sam
	$(SAM_VENV)/bin/sam validate --lint --region us-east-1

sam-build: install-sam
	PATH="$(PY312_DIR):$$PATH" $(SAM_VENV)/bin/sam build --region us-east-1

# Unzipped size of each built function + its layers against Lambda's 250 MB limit (run after sam-build).
.PHONY: sam-sizes
sam-sizes: install-sam
	$(SAM_VENV)/bin/python infra/layers/sizes.py

# Regenerate infra/openapi/openapi.json from template.yaml, the handlers and the models (a test checks it).
openapi: install
	$(BIN)/python -m openapi.generate

test: lint typecheck unit sam-validate sam-build

# Benchmarks print side-by-side comparisons; they are not part of `make test`.
bench: bench-quality bench-extraction bench-auth bench-retrieval bench-cache bench-lifecycle bench-mcp

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

bench-cache: install
	PYTHONPATH=shared:infra:. $(BIN)/python bench/cache.py

bench-coldstart: install  # cold start per function; compare with the committed baseline
	PYTHONPATH=shared:infra:. $(BIN)/python bench/coldstart.py --before bench/data/coldstart-before.json

clean:
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache
