"""Running ``playground`` commands in the test process, and what a refused command must look like."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from playground.cli import main as cli

REPO = Path(__file__).resolve().parents[2]


def run_process(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``python -m playground *argv`` as its own process, from the repository, with no
    ``OPENAI_*`` variable of the caller's environment."""
    return run_python("-m", "playground", *argv, timeout=timeout)


def run_python(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``python *args`` (this interpreter) as its own process, from the repository, with no
    ``OPENAI_*`` variable of the caller's environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    return subprocess.run(
        [sys.executable, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def run_cli(*argv: str) -> tuple[int, str, str]:
    """Run ``playground *argv`` in this process.

    Returns:
        The exit code, what it wrote to stdout and what it wrote to stderr.
    """
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def openai_flags(base_url: str, *, model: str = "fake-model", api_key: str = "k") -> list[str]:
    """The flags that point a command's openai engine at ``base_url`` (the loopback server)."""
    return ["--engine", "openai", "--base-url", base_url, "--api-key", api_key, "--model", model]


def cli_refusal(*argv: str, code: int) -> str:
    """Run ``playground *argv``, which must refuse: exit ``code``, nothing on stdout, and one line
    ``error: …`` on stderr without a traceback.

    Returns:
        That line.
    """
    got, out, err = run_cli(*argv)
    lines = err.strip().splitlines()
    assert got == code, (got, err)
    assert out == "", out
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: "), lines
    assert "Traceback" not in err
    return lines[0]
