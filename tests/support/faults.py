"""Faults for tests: a read-only place, for root too (whom permissions do not stop)."""

from __future__ import annotations

import functools
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@functools.cache
def _can_remount_read_only() -> bool:
    with tempfile.TemporaryDirectory() as d:
        probe = subprocess.run(
            ["unshare", "--mount", "--", "sh", "-c", _REMOUNT + ' && ! touch "$0/probe"', d],
            capture_output=True,
            check=False,
        )
        return probe.returncode == 0


_REMOUNT = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0"'


@contextmanager
def read_only(target: Path) -> Iterator[list[str]]:
    """Make ``target`` (a file or a folder) read-only for a command; yields the command prefix."""
    if os.geteuid() != 0:
        mode = target.stat().st_mode
        target.chmod(0o555 if target.is_dir() else 0o444)
        try:
            yield []
        finally:
            target.chmod(mode)
        return
    if not _can_remount_read_only():
        pytest.skip("running as root without a way to make a read-only place (no unshare/mount)")
    yield ["unshare", "--mount", "--", "sh", "-c", _REMOUNT + ' && exec "$@"', str(target)]
