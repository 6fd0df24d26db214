"""``python -m playground``: the command line, stopped quietly by Ctrl-C or SIGTERM at any moment.

Signal handlers are installed before anything else is imported, so Ctrl-C while the modules load
(about half a second) exits with 130 and no traceback, SIGTERM with 143 (128 + the signal). During
``simulate`` the event loop takes the signals over and ends the session ``interrupted``
(:mod:`playground.cli.signals`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType

INTERRUPTED = {128 + signal.SIGINT, 128 + signal.SIGTERM}


def _exit_quietly(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def _leave_now(code: int) -> None:
    """Exit at once with ``code``: no waiting for worker threads (a model still loading in its
    thread cannot be stopped mid-import, and would hold the exit for seconds)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def run() -> None:
    """Run the command line and exit with its code."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _exit_quietly)
    code: int | str | None
    try:
        _import_sqlite_utils_without_pandas()
        from playground.cli.main import main

        code = main()
    except SystemExit as exc:  # a signal outside the event loop, or argparse's --help / usage error
        code = exc.code
    except KeyboardInterrupt:  # Ctrl-C after the event loop put back Python's default handler
        code = 128 + signal.SIGINT
    except BrokenPipeError:  # `playground show ID | head`: the reader left; not an error to report
        code = _pipe_closed()
    if isinstance(code, int) and code in INTERRUPTED:
        _leave_now(code)  # the session (if any) is already marked and the database closed
    try:
        sys.stdout.flush()  # what is still buffered, while a closed pipe can still be caught
    except BrokenPipeError:
        code = _pipe_closed()
    if code == 128 + signal.SIGPIPE:
        _leave_now(code)
    raise SystemExit(code)


def _import_sqlite_utils_without_pandas() -> None:
    """Import sqlite-utils with pandas hidden from it.

    sqlite-utils imports pandas whenever it is installed (about 0.2 s of a command's start), only
    to map ``pandas.Timestamp`` values to TEXT columns, which the command line never writes; the
    DataFrame API loads pandas where it is used. In this process only; pandas stays importable.
    """
    if "sqlite_utils" in sys.modules or "pandas" in sys.modules:
        return
    sys.modules["pandas"] = None  # type: ignore[assignment]  # makes `import pandas` raise
    try:
        import sqlite_utils  # noqa: F401
    finally:
        del sys.modules["pandas"]


def _pipe_closed() -> int:
    """Standard output's reader has gone: drop what is left (as ``cat`` killed by SIGPIPE would)."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    run()
