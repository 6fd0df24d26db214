"""Progress of long commands on standard error, the one way every command shows it.

On a terminal, a rich bar with a row per task (count, elapsed time, time left); written to a
file or a pipe (a log), one plain line each time a task's count changes; nothing with
``--no-progress``. Standard output is left to the command's results, so ``--format json`` and
the like stay machine-readable. ``experiment`` and ``storm`` (conversations per condition),
``features`` (texts embedded, sessions computed), ``judge`` (sessions and pairs) and ``import``
(conversations) use it.
"""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from playground.terminal_text import unguarded


def add_flag(p: argparse.ArgumentParser) -> None:
    """The ``--no-progress`` flag."""
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


class ProgressBar:
    """Counts of named tasks, shown on ``err`` as long as the ``with`` block runs.

    Args:
        err: standard error (a terminal gets the bar, anything else lines).
        enabled: False for ``--no-progress``: nothing is shown.
    """

    def __init__(self, err: TextIO, *, enabled: bool) -> None:
        self.enabled = enabled
        self._err = unguarded(err)  # the bar's own redrawing codes; its labels are ours
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
        self._shown: dict[str, int] = {}
        #: A log file: one line per step instead of a bar.
        self.lines = enabled and not _is_terminal(err)

    def __enter__(self) -> ProgressBar:
        if self.enabled and not self.lines:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("{task.description:<16}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[extra]}", markup=False),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=self._err),
                refresh_per_second=4,
            )
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def advance(self, task: str, done: int, total: int, extra: str = "") -> None:
        """Task ``task`` has reached ``done`` of ``total``; ``extra`` says more (failures...).

        In a log, a line ``[done/total] task; extra`` when ``done`` changed."""
        if self.lines:
            if self._shown.get(task) != done:
                self._shown[task] = done
                self.line(f"[{done}/{total}] {task}" + (f"; {extra}" if extra else ""))
            return
        self.bar(task, done, total, extra)

    def bar(self, task: str, done: int, total: int, extra: str = "") -> None:
        """Set the terminal bar's row ``task`` only (nothing in a log)."""
        if self._progress is None:
            return
        if task not in self._tasks:
            self._tasks[task] = self._progress.add_task(task, total=total, extra=extra)
        self._progress.update(self._tasks[task], completed=done, total=total, extra=extra)

    def line(self, text: str) -> None:
        """Write ``text`` as one line of the log (nothing on a terminal or when disabled)."""
        if self.lines:
            print(text, file=self._err, flush=True)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
