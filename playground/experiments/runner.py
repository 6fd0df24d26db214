"""The paper's simulation study as a resumable batch: conditions over the same paired draws.

docs/spec.md §1.9.2 (the simulation study): 8 personas, each enriched with 2 facts borrowed
from other personas; per conversation 4 participants drawn at random, a random initiator and one
of 10 icebreakers; 15 turns; 50 conversations per condition. Every condition runs on the **same
draws** (a paired design): draw *i* of every condition has the same participants, initiator,
icebreaker and seed. The draws are stored in ``experiment_draws`` and each session carries its
``draw``, so the pairs can be found.

The experiment id is a hash of the protocol (conditions, sizes, seed, personas, icebreakers,
engine and model): rerunning the same command finds the same experiment and resumes it. Each
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
import hashlib
import json
import os
import random
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlite_utils
from pydantic import BaseModel, ConfigDict, Field

from playground import clock, domain, errors, events
from playground.room import loops
from playground.settings import Settings
from playground.storage.writes import immediate

if TYPE_CHECKING:
    from playground.room.room import Room

_CLOCK = clock.SystemClock()
#: The paper's simulation settings for Inner Thoughts agents (docs/spec.md §1.5, §1.9.2).
PRESET = "simulation"
EVALUATION_MODE = "per-thought"
BORROWED_FACTS = 2


class Protocol(BaseModel):
    """What defines an experiment; its id is a hash of this."""

    model_config = ConfigDict(frozen=True)

    conditions: tuple[domain.Policy, ...] = Field(min_length=1)
    conversations: int = Field(ge=1, le=100_000)
    agents: int = Field(ge=1)
    turns: int = Field(ge=1, le=10_000)
    seed: int
    personas: tuple[domain.Persona, ...]
    icebreakers: tuple[str, ...] = Field(min_length=1)
    engine: str
    model: str
    base_url: str | None = None

    @property
    def experiment_id(self) -> str:
        return protocol_id(self, "x")


def protocol_id(protocol: BaseModel, prefix: str) -> str:
    """An experiment's id: ``prefix`` and a hash of its protocol, so the same protocol (the same
    command) finds the same experiment again."""
    text = json.dumps(protocol.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return prefix + hashlib.sha256(text.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Draw:
    """One conversation of the design, the same for every condition."""

    index: int
    seed: int
    participants: tuple[str, ...]
    initiator: str
    icebreaker: str


def enrich(
    personas: Sequence[domain.Persona], seed: int, k: int = BORROWED_FACTS
) -> list[domain.Persona]:
    """Each persona with ``k`` facts borrowed from the other personas, drawn by seed
    (docs/spec.md §1.9.2).

    Facts already held are never borrowed twice; a persona keeps its own facts first.
    """
    out: list[domain.Persona] = []
    for p in personas:
        rng = random.Random(f"{seed}:enrich:{p.id}")
        mine = set(p.facts)
        pool = sorted({f for q in personas if q.id != p.id for f in q.facts if f not in mine})
        borrowed = rng.sample(pool, min(k, len(pool)))
        facts = [*p.facts, *borrowed][:20]  # a persona holds at most 20 facts
        out.append(p.model_copy(update={"facts": facts}))
    return out


def draws(protocol: Protocol) -> list[Draw]:
    """Every conversation's participants, initiator, icebreaker and seed, from the seed alone."""
    names = [p.name for p in protocol.personas]
    out = []
    for i in range(protocol.conversations):
        rng = random.Random(f"{protocol.seed}:draw:{i}")
        chosen = rng.sample(names, protocol.agents)
        out.append(
            Draw(
                index=i,
                seed=rng.randrange(2**31),
                participants=tuple(sorted(chosen, key=names.index)),
                initiator=rng.choice(chosen),
                icebreaker=rng.choice(protocol.icebreakers),
            )
        )
    return out


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` → (K, N) with 0 ≤ K < N.

    Raises:
        SettingsError: not of that form.
    """
    try:
        k, n = (int(x) for x in text.split("/"))
    except ValueError:
        raise errors.SettingsError(
            f"--shard: {text!r} is not K/N (e.g. 0/4: every 4th conversation starting at 0)"
        ) from None
    if n < 1 or not 0 <= k < n:
        raise errors.SettingsError(f"--shard: {text!r} needs 0 ≤ K < N (K counts from 0)")
    return k, n


@dataclass
class ConditionProgress:
    total: int = 0
    done: int = 0
    failed: int = 0
    skipped: int = 0  # finished by an earlier run


@dataclass
class Progress:
    """What the progress bar shows; the runner updates it in place and calls ``on_progress``."""

    experiment_id: str
    conditions: dict[str, ConditionProgress] = field(default_factory=dict)
    calls: int = 0
    tokens: int = 0
    retries: int = 0
    errors: int = 0
    running: int = 0
    started: float = field(default_factory=time.monotonic)
    last_error: str = ""

    @property
    def finished(self) -> int:
        return sum(c.done + c.failed for c in self.conditions.values())

    @property
    def total(self) -> int:
        return sum(c.total for c in self.conditions.values())


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
        protocol: Protocol,
        settings: Settings,
        engine: Any,
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
        config = self.config()
        conditions = self.conditions()
        with immediate(self.db):
            row = self.db.execute("SELECT name FROM experiments WHERE id = ?", [self.id]).fetchone()
            if row is None:
                self.db.execute(
                    "INSERT INTO experiments (id, name, created_at, config) VALUES (?, ?, ?, ?)",
                    [self.id, self.name, _CLOCK.now_iso(), json.dumps(config, ensure_ascii=False)],
                )
            elif self.name and row[0] != self.name:
                self.db.execute(
                    "UPDATE experiments SET name = ? WHERE id = ?", [self.name, self.id]
                )
            design = self.design()
            for d in design:
                self.db.execute(
                    "INSERT OR IGNORE INTO experiment_draws (experiment_id, draw, seed, participants, initiator, icebreaker)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        self.id,
                        d.index,
                        d.seed,
                        json.dumps(list(d.participants)),
                        d.initiator,
                        d.icebreaker,
                    ],
                )
        k, n = self.shard
        mine = [d for d in design if d.index % n == k]
        self._forget_orphans(k, n)
        runs = {
            (r[0], r[1]): (r[2], r[3], r[4], r[5])
            for r in self.db.execute(
                "SELECT r.draw, r.condition, r.status, s.pid, s.host, s.status"
                " FROM experiment_runs r LEFT JOIN sessions s ON s.id = r.session_id"
                " WHERE r.experiment_id = ?",
                [self.id],
            ).fetchall()
        }
        jobs: list[Job] = []
        for cond in conditions:
            prog = self.progress.conditions.setdefault(cond, ConditionProgress())
            for d in mine:
                prog.total += 1
                status, pid, host, session = runs.get((d.index, cond), (None,) * 4)
                if status == "finished" and session == "finished":
                    prog.done += 1
                    prog.skipped += 1
                elif status == "running" and _alive_elsewhere(pid, host):
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

    def _mark(self, job: Job, status: str, session_id: str | None, error: str | None) -> None:
        with immediate(self.db):
            self.db.execute(
                "INSERT INTO experiment_runs (experiment_id, draw, condition, session_id, status, attempts, error, updated_at)"
                " VALUES (?, ?, ?, ?, ?, 1, ?, ?)"
                " ON CONFLICT (experiment_id, draw, condition) DO UPDATE SET session_id = excluded.session_id,"
                " status = excluded.status, updated_at = excluded.updated_at,"
                " error = COALESCE(excluded.error, experiment_runs.error),"
                " attempts = experiment_runs.attempts + (excluded.status = 'running')",
                [
                    self.id,
                    job.draw.index,
                    job.condition,
                    session_id,
                    status,
                    error,
                    _CLOCK.now_iso(),
                ],
            )

    def _forget_attempt(self, job: Job) -> None:
        """Delete the session of an earlier attempt (its error stays in the run's row), so a rerun
        leaves one session per draw and condition.

        Its status does not matter: a job is redone only when its run row is not ``finished``,
        and a session can have finished while its run row did not (the process died between the
        two writes). Kept, it would count next to the new one.
        """
        row = self.db.execute(
            "SELECT session_id FROM experiment_runs WHERE experiment_id = ? AND draw = ? AND condition = ?",
            [self.id, job.draw.index, job.condition],
        ).fetchone()
        if row and row[0]:
            with immediate(self.db):
                self.db.execute("DELETE FROM sessions WHERE id = ?", [row[0]])

    def _forget_orphans(self, k: int, n: int) -> None:
        """Delete the sessions of this shard's draws that no run row names and that no report may
        count: those that did not finish, and any of a draw this database has run rows for (an
        earlier attempt whose run row has since named another session).

        Only a version that wrote a session before its run row leaves such sessions; sessions
        imported from elsewhere (finished, of draws never run here) are left alone.
        """
        with immediate(self.db):
            self.db.execute(
                "DELETE FROM sessions WHERE experiment_id = :x AND draw % :n = :k"
                " AND id NOT IN (SELECT session_id FROM experiment_runs"
                "  WHERE experiment_id = :x AND session_id IS NOT NULL)"
                " AND (status != 'finished' OR draw IN"
                "  (SELECT draw FROM experiment_runs WHERE experiment_id = :x))",
                {"x": self.id, "n": n, "k": k},
            )

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

    def _open_room(self, attempt: Attempt, settings: Settings, engine: Any, condition: str) -> Room:
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
        engine = dataclasses.replace(self.engine, cognition=_mind_for(self.engine, settings))
        room = self._open_room(attempt, settings, engine, job.condition)
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
            self._forget_attempt(job)
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


def _mind_for(engine: Any, settings: Settings) -> Any:
    """A conversation's own mind over the shared embedder and client (the offline engine keeps
    per-conversation state; the LLM mind is cheap to make)."""
    if engine.client is None:
        from playground.cognition.offline import OfflineCognition

        return OfflineCognition(engine.embedder, seed=settings.engine.seed)
    from playground.cognition.llm import LLMCognition

    return LLMCognition(engine.client, evaluation_mode=EVALUATION_MODE)


def _both(
    a: Callable[[domain.Usage], None], b: Callable[[domain.Usage], None]
) -> Callable[[domain.Usage], None]:
    def call(u: domain.Usage) -> None:
        a(u)
        b(u)

    return call


def _alive_elsewhere(pid: int | None, host: str | None) -> bool:
    """A run left ``running`` by another process that is still alive on this machine."""
    from playground.storage.database import alive

    return bool(pid) and pid != os.getpid() and host == socket.gethostname() and alive(pid or 0)
