"""Running ``playground`` commands in the test process, and what a refused command must look like."""

from __future__ import annotations

import io

from playground import cli


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
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "Traceback" not in err
    return lines[0]
