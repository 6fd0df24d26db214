"""A real OpenAI-compatible server for the tests: llama-cpp-python's, serving SmolLM2-135M-Instruct.

Nobody in this project wrote it: what it accepts, refuses and answers is what a user meets. It
is built once by ``scripts/local-model.sh setup`` into a cache outside the clone (``./test`` runs
that first) and started here on a free port of 127.0.0.1 for the test session.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "local-model.sh"
MODEL_ALIAS = "smollm2-135m"
#: The prompt cache as scripts/local-model.sh sets it. Its size counts only the model's KV state
#: (~23 kB a token); each saved state also holds a copy of the logits, ~0.8 GB at 4096 tokens of
#: context, so the cache is kept to a few states (measured: 9.6 GB resident with the default
#: 2 GiB after a 6-turn session).
CACHE_ARGS = ["--cache", "True", "--cache_size", str(96 << 20)]


class RealServerMissing(RuntimeError):
    """The cached build is not there (``scripts/local-model.sh setup`` was not run)."""


def installation() -> tuple[str, str]:
    """The server's python and the GGUF file, from the cached build."""
    out = subprocess.run(
        ["bash", str(SCRIPT), "path"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PLAYGROUND_NO_BUILD": "1"},
    )
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or len(lines) != 2:
        raise RealServerMissing(
            "the llama-cpp-python server is not built: run scripts/local-model.sh setup"
            f" ({out.stderr.strip()[-300:]})"
        )
    return lines[0], lines[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def llama_cpp_server(
    *,
    n_ctx: int = 4096,
    threads: int | None = None,
    log: Path | None = None,
    cache: bool = True,
    verbose: bool = False,
) -> Iterator[str]:
    """Run the server until the block ends; yields its base URL (``http://127.0.0.1:P/v1``).

    ``cache``: keep earlier prompts' states in memory, as ``scripts/local-model.sh`` does (see
    :data:`CACHE_ARGS`). ``verbose``: the server logs each request's timings, the tokens it
    evaluated after reusing a cached prefix among them (bench/bench_real_server.py reads them)."""
    python, model = installation()
    port = _free_port()
    cmd = [
        python,
        "-m",
        "llama_cpp.server",
        "--model",
        model,
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--verbose",
        str(verbose),
        *(CACHE_ARGS if cache else []),
    ]
    if threads:
        cmd += ["--n_threads", str(threads)]
    sink = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(
        cmd, stdout=sink, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the llama-cpp-python server exited with {proc.returncode}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                    if MODEL_ALIAS in json.loads(r.read())["data"][0]["id"]:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the llama-cpp-python server did not start within 120 s")
            time.sleep(0.25)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if log:
            sink.close()  # type: ignore[union-attr]  # a file when log is given
