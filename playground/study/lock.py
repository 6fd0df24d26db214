"""One runner per study plan: a lock held in the plan's database that dies with its process.

The runner that starts a plan (``playground study new/resume`` or the window's plan runner)
records itself on the plan's row: its pid, host name, boot id, the start time of its process and,
once the page listens, its address. Another runner is refused while that process lives, with a
message naming its pid and address. The lock needs no unlocking to die with its process: a lock
whose process is gone (``os.kill(pid, 0)`` fails), whose pid now belongs to a process started at
another time, or that was taken on another boot or host, is stale and taken over. (SQLite's WAL
mode, which the database uses, only works for processes on one machine, so a lock taken on
another host cannot belong to a live runner of this file.)

:func:`plan_status` says where a plan is, truthfully: ``running`` only while a live runner holds
it.
"""

from __future__ import annotations

import contextlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import sqlite_utils

from playground import errors
from playground.clock import SystemClock
from playground.storage import study_rows

#: Where a plan is: ``running`` (a live runner holds it), ``stopped`` (it began and its runner
#: stopped or died: ``study resume`` goes on), ``not started`` or ``done``.
PlanState = Literal["running", "stopped", "not started", "done"]
#: What a plan's conversation is doing, as its step records it.
StepPhase = Literal["pending", "talking", "reviewing", "done"]


class PlanBusy(errors.PlaygroundError):
    """Another live runner holds the plan (the message names its pid and address)."""


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except OSError:
        return None


def _started(pid: int) -> str | None:
    """When process ``pid`` started, in clock ticks since boot (``/proc``; None elsewhere)."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: count after its end.
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def me() -> dict[str, Any]:
    """This process as a plan's runner (:data:`study_rows.RUNNER_COLUMNS`), not listening yet."""
    pid = os.getpid()
    return {
        "pid": pid,
        "host": socket.gethostname(),
        "boot": _read("/proc/sys/kernel/random/boot_id"),
        "started": _started(pid),
        "address": None,
        "since": SystemClock().now_iso(),
    }


def alive(runner: dict[str, Any]) -> bool:
    """Whether the process recorded as a plan's runner is still running (on this machine)."""
    here = me()
    if runner["host"] != here["host"] or runner["boot"] != here["boot"]:
        return False
    try:
        os.kill(int(runner["pid"]), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's live process
    except (OSError, ValueError, OverflowError):
        return False
    started = _started(int(runner["pid"]))
    return started is None or runner["started"] is None or started == runner["started"]


def describe(plan_id: str, runner: dict[str, Any]) -> str:
    where = runner["address"] or "not listening yet"
    return (
        f"study plan {plan_id} is already being run by process {runner['pid']} on"
        f" {runner['host']} ({where}, since {str(runner['since'])[:19].replace('T', ' ')});"
        " stop that one first (Ctrl-C, or Stop in its window), then resume the plan"
    )


class RunnerLock:
    """This process's hold on one plan: :meth:`take` it, :meth:`listening` once the page is up,
    :meth:`release` in a ``finally``."""

    def __init__(self, db: sqlite_utils.Database, plan_id: str) -> None:
        self.db, self.plan_id = db, plan_id
        self.me = me()
        self.held = False

    def take(self) -> None:
        """Hold the plan, taking over a stale lock.

        Raises:
            PlanBusy: a live runner holds it.
        """
        other = study_rows.take_runner(self.db, self.plan_id, self.me, alive)
        if other is not None:
            raise PlanBusy(describe(self.plan_id, other))
        self.held = True

    def listening(self, address: str) -> None:
        if self.held:
            study_rows.set_runner_address(
                self.db, self.plan_id, self.me["pid"], self.me["started"], address
            )

    def release(self) -> None:
        if self.held:
            self.held = False
            with contextlib.suppress(Exception):  # a failing database: the lock dies with us
                study_rows.release_runner(self.db, self.plan_id, self.me["pid"], self.me["started"])


@dataclass(frozen=True)
class PlanStatus:
    """Where a plan is, as ``study list`` and the window say it."""

    state: PlanState
    done: int
    of: int
    #: The first unfinished conversation (1-based) and what it is doing, when there is one.
    position: int | None
    phase: StepPhase | None
    runner: dict[str, Any] | None

    def describe(self) -> str:
        """E.g. ``running (conversation 2 of 3, talking; process 123 at http://…)``."""
        if self.state == "done":
            return "done"
        if self.position is None or self.phase is None or self.phase == "pending":
            where = f"at conversation {self.position or 1} of {self.of}"
        else:
            where = f"conversation {self.position} of {self.of}, {self.phase}"
        if self.state == "running" and self.runner is not None:
            address = self.runner["address"] or "not listening yet"
            return f"running ({where}; process {self.runner['pid']} at {address})"
        return f"{self.state} ({where})"


def plan_status(db: sqlite_utils.Database, plan: dict[str, Any]) -> PlanStatus:
    """Where ``plan`` (a row of :func:`study_rows.plans`) is now."""
    steps = study_rows.plan_steps(db, plan["id"])
    done = sum(s["status"] == "done" for s in steps)
    current = next((s for s in steps if s["status"] != "done"), None)
    runner = study_rows.runner(db, plan["id"])
    if runner is not None and not alive(runner):
        runner = None
    state: PlanState
    if plan["status"] == "done":
        state = "done"
    elif runner is not None:
        state = "running"
    elif any(s["status"] != "pending" for s in steps):
        state = "stopped"
    else:
        state = "not started"
    return PlanStatus(
        state=state,
        done=done,
        of=len(steps),
        position=current["position"] if current is not None else None,
        phase=current["status"] if current is not None else None,
        runner=runner,
    )
