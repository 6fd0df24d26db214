#!/usr/bin/env bash
# Create .venv and install the pinned requirements when missing or changed. Sourced by ./run and ./test.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-$(command -v python3.11 || command -v python3)}"
stamp="$("$PY" -c 'import hashlib,sys; print(hashlib.sha256(b"".join(open(f,"rb").read() for f in sys.argv[1:])).hexdigest())' \
  "$ROOT/requirements.txt" "$ROOT/pyproject.toml")"
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.installed" 2>/dev/null)" != "$stamp" ]; then
  echo "Setting up $VENV (first run takes about a minute)…" >&2
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  # torch==2.13.0 is pinned first in requirements.txt so pip never pulls a CUDA build.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/requirements.txt"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -e "$ROOT"
  echo "$stamp" > "$VENV/.installed"
fi
export HF_HUB_OFFLINE=1 HF_HUB_DISABLE_PROGRESS_BARS=1 TOKENIZERS_PARALLELISM=false
