"""A study plan: several conversations for the same group of people, conditions counter-balanced.

As the Inner Thoughts paper's user study ran (§7): each conversation has one AI agent under one
proactivity condition, in counter-balanced order; after each conversation everyone reviews it and
rates the agent; at the end everyone says which agent had which style and which one they liked
best.

A plan is saved before anything starts (its conditions, agents, topics and invite links), and each
conversation is an ordinary session linked to its step, so a plan can be resumed with the same
links: a conversation interrupted while people were talking is run again as a new session (the
interrupted one stays saved, marked interrupted); one interrupted during its review reopens its
review, with the answers already given.

Counter-balancing: the three conditions are run in one of their six orders, chosen by the group's
number (group 0 gets the first order, group 5 the last, group 6 the first again), so six groups
see every order once. Which persona plays which condition is drawn at random per group (seeded).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlite_utils

from playground import domain, errors, events, factory
from playground.factory import Engine
from playground.rating.user_study import STYLES, TOPICS
from playground.room import loops
from playground.room.room import Room
from playground.settings import Settings
from playground.storage import library as saved_sessions
from playground.storage import study_rows
from playground.study import names
from playground.study.hub import StudyHub
from playground.study.lock import RunnerLock
from playground.study.reopen import reopen_for_review
from playground.study.review import PlanStep
from playground.study.seats import PlanSeatBook
from playground.study.server import StudyServer

log = logging.getLogger(__name__)

#: The six orders of the three conditions; a group's number picks one.
ORDERS: tuple[tuple[int, ...], ...] = tuple(itertools.permutations(range(len(STYLES))))
#: How often the runner looks whether everyone has answered, in seconds.
POLL = 0.25


def assignments(personas: list[domain.Persona], group: int, seed: int) -> list[dict[str, Any]]:
    """The plan's conversations: position, condition (the group's order), persona, topic.

    Raises:
        PlaygroundError: fewer personas than conditions.
    """
    if len(personas) < len(STYLES):
        raise errors.PlaygroundError(
            f"a study plan needs {len(STYLES)} personas (one agent per condition);"
            f" the library has {len(personas)}"
        )
    rng = random.Random(f"{seed}:{group}:study-plan")
    cast = rng.sample(personas, len(STYLES))
    order = ORDERS[group % len(ORDERS)]
    return [
        {
            "position": i + 1,
            "condition": STYLES[c].key,
            "persona": cast[i].name,
            "topic": TOPICS[i % len(TOPICS)],
        }
        for i, c in enumerate(order)
    ]


def create_plan(
    db: sqlite_utils.Database,
    personas: list[domain.Persona],
    settings: Settings,
    *,
    humans: int,
    group: int,
    seed: int,
    minutes: float,
    now: str,
) -> str:
    """Save a new plan (steps and one invite token per person); its id."""
    plan_id = f"plan-{now[:10].replace('-', '')}-{secrets.token_hex(3)}"
    steps = assignments(personas, group, seed)
    plan = {
        "id": plan_id,
        "created_at": now,
        "humans": humans,
        "grp": group,
        "seed": seed,
        "minutes": minutes,
        "show_thoughts": int(settings.room.show_thoughts),
        "settings": settings.snapshot(),
    }
    study_rows.create_plan(db, plan, steps, PlanSeatBook.new_tokens(humans))
    return plan_id


def other_engine(saved: dict[str, Any], now: Settings) -> tuple[str, str] | None:
    """The (engine, model) a plan ran with (model "" for the offline engine) when ``now`` is
    another: its conversations must differ only in their condition, so a plan resumes with the
    engine and model it ran with. None when ``now`` is the same."""
    ran = saved["engine"]["engine"], saved["llm"]["model"]
    was = (ran[0], ran[1] if ran[0] != "offline" else "")
    is_ = (now.engine.engine, now.llm.model if now.engine.engine != "offline" else "")
    return None if was == is_ else was


@dataclass
class Listen:
    """Where the plan's page is served."""

    host: str = "127.0.0.1"
    port: int = 8765
    certificate: str | None = None
    key: str | None = None


class PlanRunner:
    """Runs a saved plan from its first unfinished conversation to its end."""

    def __init__(
        self,
        db: sqlite_utils.Database,
        plan_id: str,
        engine: Engine,
        personas: list[domain.Persona],
        settings: Settings,
        *,
        listen: Listen,
        review_minutes: float,
        on_links: Callable[[StudyServer, PlanSeatBook], None],
        on_progress: Callable[[str], None] | None = None,
    ) -> None:
        plan = study_rows.plan(db, plan_id)
        if plan is None:
            raise errors.PlaygroundError(f"no study plan {plan_id!r} in this database")
        self.db, self.plan_id, self.plan = db, plan_id, plan
        self.engine = engine
        self.library = {p.name: p for p in personas}
        self.settings = settings
        self.listen = listen
        self.review_seconds = review_minutes * 60
        self.on_links = on_links
        self.on_progress = on_progress
        self.lock = RunnerLock(db, plan_id)
        #: The people the researcher has been told joined (once per run of the plan).
        self.joined: set[str] = set()
        self.book = PlanSeatBook(db, plan_id)
        self.server: StudyServer | None = None
        self.room: Room | None = None
        self.steps = study_rows.plan_steps(db, plan_id)
        missing = [s["persona"] for s in self.steps if s["persona"] not in self.library]
        if missing:
            raise errors.PlaygroundError(
                f"plan {plan_id}: no persona called {', '.join(missing)} in the library"
            )

    # -- the plan ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Run every conversation not done yet, then the end-of-study questions.

        Raises:
            PlanBusy: another live runner holds the plan (nothing is started or changed).
            RecordingError: the database cannot be written (the plan stops; what was saved stays).
            PlaygroundError: the server cannot listen (nothing is left behind: no conversation is
                started and the plan's steps are as they were).
        """
        self.lock.take()
        over = False
        try:
            for step in self.steps:
                if step["status"] == "done":
                    continue
                hub = await self._open(step)
                watch = asyncio.create_task(self._watch(step, hub))
                try:
                    if step["status"] != "reviewing":
                        await self._talk(step, hub)
                    await self._review(step, hub)
                finally:
                    watch.cancel()
            if self.plan["status"] != "done":
                study_rows.finish_plan(self.db, self.plan_id)
                self._progress(f"Study plan {self.plan_id} is done.")
            over = True
        finally:
            if self.server is not None and not over:
                await self.server.pause()  # first: the pages hear "paused", not "ended"
            if self.room is not None and self.room.status == "running":
                self.room.finish("interrupted", "the researcher stopped the study")
            self.lock.release()
            if self.server is not None and over:
                await self.server.stop("The study is over. Thank you for taking part.")

    def _step(self, step: dict[str, Any]) -> PlanStep:
        last = step is self.steps[-1]
        held = self.steps[: self.steps.index(step) + 1]
        return PlanStep(
            plan_id=self.plan_id,
            position=step["position"],
            of=len(self.steps),
            topic=step["topic"],
            agent=step["agent"],
            final_agents=tuple(s["agent"] for s in self.steps) if last else None,
            # A person joining is checked against the agents they have met or will be asked
            # about (this conversation's and the earlier ones'), not later ones: a later agent
            # whose name clashes with a person's is shown under another name (see _agent_name).
            agents=tuple(s["agent"] for s in held),
        )

    async def _open(self, step: dict[str, Any]) -> StudyHub:
        """The step's room and hub: a new session, or (a review that was cut short) its own.

        A first start whose server cannot listen leaves nothing behind: the new session is
        deleted and the step is put back as it was."""
        before = step["status"], step["session_id"]
        if step["status"] == "reviewing" and step["session_id"]:
            room = await self._reopen(step["session_id"])
        else:
            room = await self._new_room(step)
        self.room = room
        hub = StudyHub(room, self.book, self._step(step))
        if self.server is None:
            server = StudyServer(
                hub,
                host=self.listen.host,
                port=self.listen.port,
                certificate=self.listen.certificate,
                key=self.listen.key,
            )
            try:
                listening = await server.start()
            except BaseException:
                self._undo(step, room, before)
                raise
            self.server = server
            self.lock.listening(listening.origin)
            self.on_links(self.server, self.book)
        else:
            self.server.switch(hub)
        self._progress(
            f"Conversation {step['position']} of {len(self.steps)}"
            f" ({step['agent']}, {step['condition']}):"
            f" {'reviewing' if room.ended else 'talking'}."
        )
        return hub

    def _undo(self, step: dict[str, Any], room: Room, before: tuple[str, str | None]) -> None:
        """Forget a conversation that never began (its page could not be served)."""
        self.room = None
        if room.session_id == before[1]:
            return  # a review reopened: its session stays as it was
        if room.status == "running":
            room.finish("interrupted", "the study page could not be served")
        study_rows.restore_step(self.db, self.plan_id, step["position"], *before)
        saved_sessions.delete_session(self.db, room.session_id)

    async def _new_room(self, step: dict[str, Any]) -> Room:
        settings = self.settings.model_copy(deep=True)
        settings.preset = step["condition"]
        settings.room.pace = "typing"
        settings.room.show_thoughts = bool(self.plan["show_thoughts"])
        room, _ = factory.open_room(
            settings, self.engine, db=self.db, bus=events.EventBus(), condition="inner-thoughts"
        )
        study_rows.set_step(self.db, self.plan_id, step["position"], "talking", room.session_id)
        try:
            shown = self._agent_name(step)
            persona = self.library[step["persona"]]
            if shown != persona.name:
                persona = persona.model_copy(update={"name": shown})
            await factory.add_agents(room, settings, [persona])
            for seat in self.book.seats:
                if seat.name is None or seat.revoked:
                    continue
                if seat.name in room.participants:  # a plan saved before names were checked
                    log.warning("%s shares the agent's name: not seated", seat.name)
                    continue
                room.add_human(seat.name, remote=True)
        except BaseException:
            room.finish("interrupted", "the conversation could not be set up")
            raise
        return room

    def _agent_name(self, step: dict[str, Any]) -> str:
        """The name the step's agent is shown under: its persona's, unless that is (or looks
        like) the name of a person in the plan or of an earlier conversation's agent; then the
        first name of :data:`names.AGENT_NAMES` that clashes with none (recorded on the step)."""
        people = [s.name for s in self.book.seats if s.name is not None]
        earlier = [s["agent"] for s in self.steps[: self.steps.index(step)]]
        shown = names.free_name(step["persona"], [*people, *earlier])
        if shown != step["agent"]:
            study_rows.name_step_agent(self.db, self.plan_id, step["position"], shown)
            step["agent"] = shown
        if shown != step["persona"]:
            self._progress(
                f"Conversation {step['position']}'s agent {step['persona']} is shown as {shown}:"
                f" someone in the plan is called {step['persona']}, or a name like it."
            )
        return shown

    async def _reopen(self, session_id: str) -> Room:
        return reopen_for_review(self.db, session_id, self.engine, self.settings)

    async def _talk(self, step: dict[str, Any], hub: StudyHub) -> None:
        """The conversation, for the plan's minutes; then it is over for everyone."""
        await loops.run_for(hub.room, self.plan["minutes"] * 60)
        study_rows.set_step(self.db, self.plan_id, step["position"], "reviewing")

    async def _review(self, step: dict[str, Any], hub: StudyHub) -> None:
        """Wait until everyone has answered (or the review time is up)."""
        deadline = asyncio.get_running_loop().time() + self.review_seconds
        while asyncio.get_running_loop().time() < deadline:
            people = [s.name for s in self.book.seats if s.name is not None and not s.revoked]
            if people and all(hub.review.finished(name) for name in people):
                break
            await asyncio.sleep(POLL)
        study_rows.set_step(self.db, self.plan_id, step["position"], "done")
        step["status"] = "done"

    def _progress(self, line: str) -> None:
        if self.on_progress is not None:
            self.on_progress(line)

    async def _watch(self, step: dict[str, Any], hub: StudyHub) -> None:
        """Tell the researcher who joined, the phase and who has answered, as they change."""
        joined = self.joined
        answered: set[str] = set()
        talking = not hub.room.ended
        while True:
            people = [s.name for s in self.book.seats if s.name is not None and not s.revoked]
            for name in people:
                if name not in joined:
                    joined.add(name)
                    self._progress(f"{name} joined ({len(joined)} of {self.plan['humans']}).")
            if talking and hub.room.ended:
                talking = False
                self._progress(
                    f"Conversation {step['position']} of {len(self.steps)}: reviewing"
                    + (" and final questions" if step is self.steps[-1] else "")
                    + "."
                )
            for name in people:
                if name not in answered and hub.review.finished(name):
                    answered.add(name)
                    self._progress(
                        f"{name} answered ({len(answered)} of {len(people)} in,"
                        f" conversation {step['position']} of {len(self.steps)})."
                    )
            await asyncio.sleep(POLL)
