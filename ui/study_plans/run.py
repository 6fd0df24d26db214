"""A study plan from the window: saved from the New study plan dialog's options, run (or resumed)
as a task on the window's asyncio loop with the window's engine settings and shared embedding
model, followed while it runs, and stopped cleanly.

The plan is :mod:`playground.study.plan`'s, exactly as ``playground study`` runs it: the window
adds no step of its own, so a plan started here resumes on the command line and the other way
round (with the same engine, and the same address and port for the same links).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from PySide6.QtCore import QObject, Signal

from playground import domain, errors
from playground.clock import SystemClock
from playground.embedding.cache import CachingEmbedder
from playground.rating.user_study import STYLES
from playground.settings import Settings
from playground.storage import study_rows
from playground.study.lock import plan_status
from playground.study.plan import Listen, PlanRunner, create_plan, other_engine
from playground.study.seats import PlanSeatBook
from playground.study.server import StudyServer, is_loopback
from ui.jobs.loop_job import LoopJob

log = logging.getLogger(__name__)

#: Each condition's name as people and researchers read it.
CONDITION_LABELS = {s.key: s.label for s in STYLES}
#: The port the links are served on unless the dialog says otherwise (``playground study``'s).
DEFAULT_PORT = 8765

Phase = Literal["starting", "talking", "review", "moving on", "stopping"]


@dataclass(frozen=True)
class Options:
    """What the New study plan dialog asks for."""

    humans: int
    group: int
    seed: int
    minutes: float
    review_minutes: float
    show_thoughts: bool
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT


def plan_settings(base: Settings, show_thoughts: bool) -> Settings:
    """The window's engine settings (Engine…), with the plan's own show-thoughts condition."""
    settings = base.model_copy(deep=True)
    settings.room.show_thoughts = show_thoughts
    return settings


def create(
    db: Any, db_path: str, library: list[domain.Persona], base: Settings, options: Options
) -> str:
    """Save a new plan (its conversations, conditions, agents and links); its id.

    Raises:
        PlaygroundError: the persona library has too few personas, or the database cannot be
            written (naming the file).
    """
    try:
        return create_plan(
            db,
            library,
            plan_settings(base, options.show_thoughts),
            humans=options.humans,
            group=options.group,
            seed=options.seed,
            minutes=options.minutes,
            now=SystemClock().now_iso(),
        )
    except sqlite3.Error as exc:
        raise errors.PlaygroundError(
            f"the study plan could not be saved in {db_path}: {exc}"
        ) from exc


def engine_mismatch(plan_id: str, saved: dict[str, Any], now: Settings) -> str | None:
    """Why the plan cannot go on with the window's engine (None: it can): its conversations must
    differ only in their condition, so a plan resumes with the engine and model it ran with."""
    was = other_engine(saved, now)
    if was is None:
        return None
    engine, model = was
    ran = f"the {engine} engine" + (f" and {model}" if model else "")
    return (
        f"plan {plan_id} ran with {ran}; choose the same under Engine… to resume it, so that its"
        " conversations differ only in their condition"
    )


@dataclass(frozen=True)
class Person:
    """One invited person as the window shows them."""

    number: int
    link: str
    name: str | None
    online: bool
    #: They have answered this conversation's questions (and, after the last, the final ones);
    #: None while the conversation is on or before they joined.
    answered: bool | None
    #: Pages open on their link now (more than one: the link was opened twice).
    pages: int = 1


@dataclass(frozen=True)
class Live:
    """Where a running plan is now."""

    plan_id: str
    origin: str
    exposed: bool
    phase: Phase
    position: int | None = None
    of: int = 3
    condition: str = ""
    agent: str = ""
    topic: str = ""
    last: bool = False
    #: About how long the conversation goes on (None: not talking).
    seconds_left: float | None = None
    people: tuple[Person, ...] = ()


class PlanRun(LoopJob):
    """One study plan running (or resuming) as a task on the GUI's loop; ``ended`` gives the
    outcome ("finished", "stopped", "error") and the message.

    Args:
        db: the session database.
        db_path: its file, for messages.
        plan_id: the saved plan.
        settings: the engine settings (the window's, with the plan's show-thoughts condition).
        library: the persona library (the window's).
        embedder: returns the window's shared, loaded local embedding model.
        listen: where the page is served.
        review_minutes: the longest wait for everyone's answers after each conversation.
    """

    served = Signal()  # the links are ready

    def __init__(
        self,
        db: Any,
        db_path: str,
        plan_id: str,
        settings: Settings,
        library: list[domain.Persona],
        embedder: Callable[[], Awaitable[CachingEmbedder]],
        *,
        listen: Listen,
        review_minutes: float,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(db, embedder, parent)
        self.db_path, self.plan_id = db_path, plan_id
        self.settings = settings
        self.library = library
        self.listen = listen
        self.review_minutes = review_minutes
        self.runner: PlanRunner | None = None
        self.server: StudyServer | None = None
        self._stopping = False
        self._talk_seen: dict[str, float] = {}  # session id → when the window first saw it on

    def _started(self, task: asyncio.Task[None]) -> None:
        task.add_done_callback(self._cancelled_early)

    def _cancelled_early(self, task: asyncio.Task[None]) -> None:
        """Stopped before it began (the task never ran): nothing was served or started."""
        if self.outcome is None:
            self._end("stopped", f"Study plan {self.plan_id} stopped before it began.")

    def cancel(self) -> None:
        """Stop: the conversation on is saved interrupted, every browser is told, the server
        stops (see :meth:`PlanRunner.run`). A second call waits for the first."""
        if self.task is not None and not self.task.done() and not self._stopping:
            self._stopping = True
            self.task.cancel()

    def _on_links(self, server: StudyServer, _book: PlanSeatBook) -> None:
        self.server = server
        self.served.emit()

    async def _main(self) -> None:
        try:
            engine = await self._engine(self.settings)
            try:
                self.runner = PlanRunner(
                    self.db,
                    self.plan_id,
                    engine,
                    self.library,
                    self.settings,
                    listen=self.listen,
                    review_minutes=self.review_minutes,
                    on_links=self._on_links,
                )
                await self.runner.run()
            finally:
                await engine.close()
            self._end("finished", f"Study plan {self.plan_id} is done: everyone has answered.")
        except asyncio.CancelledError:
            self._end(
                "stopped",
                f"Study plan {self.plan_id} stopped: a conversation cut short is saved as"
                " interrupted and runs again, a review reopens, when you press Resume (with the"
                " same links).",
            )
        except sqlite3.Error as exc:
            self._end(
                "error",
                f"Study plan {self.plan_id} could not be saved in {self.db_path}: {exc}. What was"
                " saved before is kept; Resume goes on from there.",
            )
        except errors.PlaygroundError as exc:
            self._end(
                "error",
                f"Study plan {self.plan_id} stopped: {exc}. It is saved as far as it got;"
                " Resume goes on from there.",
            )
        except Exception as exc:
            # The GUI boundary: an unexpected bug is logged and shown, the window stays usable.
            log.exception("study plan %s failed", self.plan_id)
            self._end(
                "error",
                f"Study plan {self.plan_id} failed unexpectedly: {type(exc).__name__}: {exc}."
                " Resume goes on from where it stopped.",
            )

    def _end(self, outcome: str, message: str) -> None:
        if self.outcome is not None:
            return
        self.outcome, self.message = outcome, message
        self.ended.emit(outcome, message)

    # -- what the window shows --------------------------------------------------------------

    def live(self) -> Live | None:
        """Where the plan is now, read from its runner (no database write; None: not running)."""
        if not self.running:
            return None
        runner, server = self.runner, self.server
        if runner is None or server is None or server.listening is None:
            return Live(self.plan_id, "", False, "stopping" if self._stopping else "starting")
        hub = server.hub
        room = hub.room
        step = hub.review.plan
        assert step is not None, "a plan's hub knows its step"
        named = [s for s in hub.book.seats if s.name is not None and not s.revoked]
        done = room.ended and all(hub.review.finished(s.name or "") for s in named)
        seconds_left = None
        if self._stopping:
            phase: Phase = "stopping"
        elif not room.ended:
            phase = "talking"
            seen = self._talk_seen.setdefault(room.session_id, time.monotonic())
            seconds_left = max(0.0, runner.plan["minutes"] * 60 - (time.monotonic() - seen))
        else:
            phase = "moving on" if named and done else "review"
        people = tuple(
            Person(
                seat.number,
                server.link(seat),
                seat.name,
                hub.online(seat),
                hub.review.finished(seat.name) if room.ended and seat.name else None,
                hub.pages(seat),
            )
            for seat in hub.book.seats
            if not seat.revoked
        )
        condition = next(
            (s["condition"] for s in runner.steps if s["position"] == step.position), ""
        )
        return Live(
            self.plan_id,
            server.listening.origin,
            not is_loopback(server.host),
            phase,
            step.position,
            step.of,
            CONDITION_LABELS.get(condition, condition),
            step.agent,
            step.topic,
            step.final_agents is not None,
            seconds_left,
            people,
        )


def plan_rows(db: Any) -> list[dict[str, Any]]:
    """The database's plans, newest first, each with ``done`` (conversations done), ``of``,
    ``started`` (a conversation has begun), ``conditions`` (in the plan's order) and ``state``
    (where it is, :func:`playground.study.lock.plan_status`: running only while a live runner,
    here or in another process, holds it)."""
    rows = []
    for row in reversed(study_rows.plans(db)):
        steps = study_rows.plan_steps(db, row["id"])
        rows.append(
            {
                **row,
                "done": sum(s["status"] == "done" for s in steps),
                "of": len(steps),
                "started": any(s["status"] != "pending" for s in steps),
                "conditions": [s["condition"] for s in steps],
                "state": plan_status(db, row),
            }
        )
    return rows
