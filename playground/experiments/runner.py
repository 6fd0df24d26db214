"""Running the paper's simulation study as a resumable batch: every condition over the same draws.

The protocol, its id and its paired draws are :mod:`playground.experiments.protocol`'s. Each
(draw, condition) has a row in ``experiment_runs``: finished ones are skipped, the others
(interrupted, failed, or left ``running`` by a process that is gone) are run again, their earlier
attempt's session deleted and its error kept in the row. ``--shard K/N`` runs the draws ``i``
with ``i % N == K``, all of a draw's conditions together, so a shard holds whole pairs.

Resuming does every job exactly once, wherever a process was killed (:meth:`Runner.prepare`):

- a job's session row and its run row (``running``, naming the session) are written in one
  transaction, so no session of an experiment exists without the run row that owns it;
- a job counts only once its run row says ``finished``, written last (after the session's end
  and, for STORM, the judge). A run row not ``finished``, or ``finished`` over a session that is
  missing or did not finish, is redone, and its session is deleted first even if it finished: the
  process died between the session's end and the run row;
- a session of the experiment that no run row names (left by a version that wrote the two
  apart) is deleted on resume when it did not finish, or when its draw has run rows here (it is
  an earlier attempt of a job this database ran), so no report counts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlite_utils

from playground import domain, errors, events
from playground.experiments import run_rows

# Re-exported: callers know the progress records and the options as the runner's.
from playground.experiments.progress import ConditionProgress as ConditionProgress
from playground.experiments.progress import Progress as Progress
from playground.experiments.progress import RunOptions as RunOptions
from playground.experiments.protocol import Draw, ExperimentProtocol, draws
from playground.room import loops
from playground.settings import Settings
from playground.storage.writes import immediate

if TYPE_CHECKING:
    from playground.factory import Engine
    from playground.room.room import Room

#: The paper's simulation settings for Inner Thoughts agents (docs/spec.md §1.5, §1.9.2).
PRESET = "simulation"
EVALUATION_MODE = "per-thought"


@dataclass(frozen=True)
class Job:
    draw: Draw
    #: A turn-taking policy here; another design's label in a subclass (e.g. STORM runs).
    condition: str


def next_job(pending: list[Job], window: int, took: dict[str, list[float]]) -> Job:
    """Take the job to start next out of ``pending`` (in design order: draw by draw, pairs
    together).

    While more than ``window`` jobs wait, that is the first one. Among the last ``window``, the
    one whose condition has taken longest on average so far (``took``: seconds per finished job,
    by condition) goes first, a condition not measured yet counting as longest, and design order
    among equals. Conditions can differ in length by 2 × (an Inner Thoughts conversation makes
    more calls per turn than a next-speaker one); started last, a long conversation would run
    on alone at the end of the batch while the other slots stand idle. Only the tail is
    reordered, so the pairs of a batch stopped early stay whole but for the last few.
    """
    if len(pending) > window:
        return pending.pop(0)

    def expected(job: Job) -> float:
        seconds = took.get(job.condition)
        return sum(seconds) / len(seconds) if seconds else float("inf")

    best = max(range(len(pending)), key=lambda i: (expected(pending[i]), -i))
    return pending.pop(best)


@dataclass
class Attempt:
    """One job being run: the bus its room reports on and, once it is open, the room."""

    job: Job
    bus: events.EventBus
    room: Room | None = None


class Runner:
    """Runs (or resumes) an experiment into a database.

    Args:
        db: the session database (opened with :func:`playground.storage.open_database`).
        protocol: the experiment.
        settings: engine, model, server and limits; the seed, turns and preset are set per
            conversation from the protocol.
        engine: built once and shared by every conversation (one embedding model, one HTTP
            client pool); each conversation gets its own mind over it.
        concurrency: conversations in flight at once.
        shard: (K, N) to run every N-th draw starting at K.
        name: a label for the experiment.
        on_progress: called after every change of :attr:`progress`.
    """

    #: What a job is called in :attr:`Progress.last_error` (a subclass names its own).
    job_noun = "conversation"
    #: Why the jobs in flight end ``interrupted`` when the run is cancelled.
    stopped_reason = "the experiment was stopped"

    def __init__(
        self,
        db: sqlite_utils.Database,
        protocol: ExperimentProtocol,
        settings: Settings,
        engine: Engine,
        *,
        concurrency: int = 8,
        shard: tuple[int, int] = (0, 1),
        name: str | None = None,
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        if concurrency < 1:
            raise errors.SettingsError(f"--concurrency: must be at least 1 (got {concurrency})")
        self.db = db
        self.protocol = protocol
        self.settings = settings
        self.engine = engine
        self.concurrency = concurrency
        self.shard = shard
        self.name = name
        self.on_progress = on_progress
        self.id = protocol.experiment_id
        self.progress = Progress(self.id)
        self._tasks: list[asyncio.Task[None]] = []
        self._cancelled = False
        self._usage: dict[str, domain.Usage] = {}

    # -- the plan in the database ----------------------------------------------------------------

    def config(self) -> dict[str, Any]:
        """What ``experiments.config`` holds: the protocol and the settings it ran with."""
        return {
            "protocol": self.protocol.model_dump(mode="json"),
            "settings": self.settings.snapshot(),
            "preset": PRESET,
            "evaluation_mode": EVALUATION_MODE,
        }

    def design(self) -> list[Draw]:
        """Every draw of the experiment (a subclass running another design overrides it)."""
        return draws(self.protocol)

    def conditions(self) -> tuple[str, ...]:
        """The conditions every draw runs under, in their order."""
        return self.protocol.conditions

    def prepare(self) -> list[Job]:
        """Store the experiment and its draws (once) and return the jobs this run must do."""
        conditions = self.conditions()
        design = self.design()
        run_rows.store_plan(self.db, self.id, self.name, self.config(), design)
        k, n = self.shard
        mine = [d for d in design if d.index % n == k]
        run_rows.forget_orphans(self.db, self.id, k, n)
        runs = run_rows.run_states(self.db, self.id)
        jobs: list[Job] = []
        for cond in conditions:
            prog = self.progress.conditions.setdefault(cond, ConditionProgress())
            for d in mine:
                prog.total += 1
                status, pid, host, session = runs.get((d.index, cond), (None,) * 4)
                if status == "finished" and session == "finished":
                    prog.done += 1
                    prog.skipped += 1
                elif status == "running" and run_rows.alive_elsewhere(pid, host):
                    raise errors.PlaygroundError(
                        f"experiment {self.id} conversation {d.index} ({cond}) is being run by"
                        f" process {pid} on this machine; wait for it or stop it first"
                    )
                else:
                    jobs.append(Job(d, cond))
        # Pairs together: draw by draw, each draw's conditions one after another.
        jobs.sort(key=lambda j: (j.draw.index, conditions.index(j.condition)))
        return jobs

    # -- running -----------------------------------------------------------------------------

    async def run(self) -> Progress:
        """Run every job not finished yet, ``concurrency`` at a time.

        A conversation that fails is recorded with its error and the batch goes on. Cancelling
        (Ctrl-C, :meth:`cancel`) ends the conversations in flight ``interrupted``; a rerun
        redoes them.

        Raises:
            RecordingError: the database cannot be written: nothing more could be saved.
        """
        jobs = self.prepare()
        self._notify()
        pending = list(jobs)
        took: dict[str, list[float]] = {}
        loop = asyncio.get_running_loop()

        async def worker() -> None:
            while not self._cancelled and pending:
                job = next_job(pending, self.concurrency, took)
                start = loop.time()
                await self._one(job)
                took.setdefault(job.condition, []).append(loop.time() - start)

        self._tasks = [
            asyncio.ensure_future(worker()) for _ in range(min(self.concurrency, len(jobs)))
        ]
        try:
            results = await asyncio.gather(*self._tasks, return_exceptions=True)
        except asyncio.CancelledError:
            for t in self._tasks:
                t.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            raise
        for r in results:
            if isinstance(r, errors.RecordingError):
                raise r
        for r in results:
            if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError):
                raise r
        return self.progress

    def cancel(self) -> None:
        """Stop: no new conversation starts and those in flight end ``interrupted``."""
        self._cancelled = True
        for t in self._tasks:
            t.cancel()

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def _notify(self) -> None:
        if self.on_progress is not None:
            self.on_progress(self.progress)

    def _mark(
        self, job: Job, status: domain.SessionStatus, session_id: str | None, error: str | None
    ) -> None:
        run_rows.mark(self.db, self.id, job.draw.index, job.condition, status, session_id, error)

    def _max_turns(self) -> int:
        """The room's message limit (a subclass that counts turns otherwise overrides it)."""
        return self.protocol.turns

    def _settings_for(self, draw: Draw) -> Settings:
        s = self.settings
        return s.model_copy(
            update={
                "preset": PRESET,
                "engine": s.engine.model_copy(
                    update={"seed": draw.seed, "evaluation_mode": EVALUATION_MODE}
                ),
                "room": s.room.model_copy(update={"max_turns": self._max_turns()}),
            }
        )

    def _usage_of(self, room_id: str) -> Callable[[domain.Usage], None]:
        def seen(u: domain.Usage) -> None:
            before = self._usage.get(room_id, domain.Usage())
            self._usage[room_id] = u
            self.progress.calls += u.calls - before.calls
            self.progress.tokens += (u.prompt_tokens + u.completion_tokens) - (
                before.prompt_tokens + before.completion_tokens
            )
            self.progress.retries += u.retries - before.retries
            self._notify()

        return seen

    def _policy(self, job: Job) -> domain.Policy:
        """The turn-taking policy a job's condition names."""
        return next(c for c in self.protocol.conditions if c == job.condition)

    @contextlib.contextmanager
    def opening(self, attempt: Attempt) -> Iterator[None]:
        """One transaction for the writes that open a job (its session, its run row, a subclass's
        own rows): all or none. When it fails, none was saved, so the attempt has no room to
        finish or name in its run row.

        Raises:
            RecordingError: the database cannot be written.
        """
        from playground.storage.database import database_file

        try:
            with immediate(self.db):
                yield
        except sqlite3.Error as exc:
            attempt.room = None
            raise errors.RecordingError(
                database_file(self.db), str(exc), session_id="", saved_messages=0
            ) from exc
        except BaseException:
            attempt.room = None
            raise

    def _open_room(
        self, attempt: Attempt, settings: Settings, engine: Engine, condition: domain.Condition
    ) -> Room:
        """Open the job's session (usage counted by :meth:`_usage_scope`, not by the room) and
        mark its run ``running``, in one transaction: a process killed in between leaves neither,
        never a session that no run row owns (a rerun would not know to replace it).

        Raises:
            RecordingError: the database cannot be written.
        """
        from playground import factory

        with self.opening(attempt):
            room, _ = factory.open_room(
                settings,
                engine,
                db=self.db,
                bus=attempt.bus,
                condition=condition,
                experiment_id=self.id,
                draw=attempt.job.draw.index,
                track_usage=False,
            )
            attempt.room = room
            self._mark(attempt.job, "running", room.session_id, None)
        return room

    def _usage_scope(self, room: Room) -> contextlib.AbstractContextManager[Any]:
        """Every call made in the job's task, by whichever client, counted in the session's
        usage and in the progress (nothing to count on the offline engine)."""
        client = self.engine.client
        if client is None:
            return contextlib.nullcontext()
        return client.usage_scope(_both(room.record_usage, self._usage_of(room.session_id)))

    async def _conversation(self, attempt: Attempt) -> None:
        """Run one job's conversation to its end (a subclass running another design overrides
        it); it opens the room with :meth:`_open_room`.

        Raises:
            PlaygroundError: the conversation could not be run (the job is recorded failed).
        """
        from playground import factory

        job = attempt.job
        settings = self._settings_for(job.draw)
        mind = factory.make_cognition(settings, self.engine.embedder, self.engine.client)
        engine = dataclasses.replace(self.engine, cognition=mind)
        room = self._open_room(attempt, settings, engine, self._policy(job))
        personas = {p.name: p for p in self.protocol.personas}
        with self._usage_scope(room):
            await factory.add_agents(
                room,
                settings,
                [personas[n] for n in job.draw.participants],
                policies=dict.fromkeys(job.draw.participants, self._policy(job)),
            )
            await loops.run_simulation(
                room, icebreaker=job.draw.icebreaker, initiator=job.draw.initiator
            )

    async def _one(self, job: Job) -> None:
        """Run a job and record how it ended: finished, failed (the batch goes on) or
        interrupted."""
        bus = events.EventBus()
        errors_seen: list[str] = []
        bus.subscribe(
            lambda e: errors_seen.append(e.message) if isinstance(e, events.ErrorOccurred) else None
        )
        attempt = Attempt(job, bus)
        prog = self.progress.conditions[job.condition]
        self.progress.running += 1
        self._notify()
        try:
            run_rows.forget_attempt(self.db, self.id, job.draw.index, job.condition)
            await self._conversation(attempt)
            if attempt.room is not None and attempt.room.status != "finished":
                raise errors.PlaygroundError(f"the {self.job_noun} ended {attempt.room.status}")
            self._mark(job, "finished", attempt.room.session_id if attempt.room else None, None)
            prog.done += 1
        except asyncio.CancelledError:
            if attempt.room is not None:
                attempt.room.finish("interrupted", self.stopped_reason)
                self._mark(job, "interrupted", attempt.room.session_id, self.stopped_reason)
            raise
        except errors.RecordingError:
            raise  # nothing more can be saved: the batch stops (run() raises it)
        except Exception as exc:  # noqa: BLE001 - one conversation's failure never stops the batch
            message = (
                str(exc)
                if isinstance(exc, errors.PlaygroundError)
                else f"{type(exc).__name__}: {exc}"
            )
            room = attempt.room
            if room is not None and room.status == "running":
                room.finish("failed", message)
            self._mark(job, "failed", room.session_id if room else None, message)
            prog.failed += 1
            self.progress.last_error = (
                f"{self.job_noun} {job.draw.index} ({job.condition}): {message}"
            )
        finally:
            self.progress.errors += len(errors_seen)
            self.progress.running -= 1
            self._notify()


def _both(
    a: Callable[[domain.Usage], None], b: Callable[[domain.Usage], None]
) -> Callable[[domain.Usage], None]:
    def call(u: domain.Usage) -> None:
        a(u)
        b(u)

    return call
