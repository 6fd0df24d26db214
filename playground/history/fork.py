"""Fork: a new live session that continues a saved one from any moment of its replay.

The fork starts with the parent's state at that moment: the same participants (persona
snapshots and proactivity, unless changed), their long-term memories as they stood (edits
included, same ids), every thought in their reservoirs with its latest score, and the transcript so
far. It is recorded as a session of its own with ``parent_id``, ``fork_seq``, ``fork_message`` (the
parent's last message at that moment) and ``fork_messages`` (how many messages it carried over:
its messages 1..N; its own run begins after them). What is carried over keeps the parent's times:
a message its ``posted_at``, a thought when it was formed, an evaluation when it was made (their
events in the fork's log carry those times too). The next step is the trigger for the last
carried-over message.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import sqlite_utils

from playground import domain, events, factory
from playground.domain.simulated_user import HiddenState, UserProfile
from playground.history.recording import Recording
from playground.history.timeline import FORK_BEGINS
from playground.room.participants import SimulatedUser
from playground.room.room import Room
from playground.settings import ProactivitySettings, Settings
from playground.storage.recorder import SessionRecorder
from playground.storm.user import simulator_for


@dataclass
class ForkState:
    """What the parent looked like at the fork moment (folded from its condensed events)."""

    agents: dict[str, tuple[domain.Persona, dict[str, Any]]] = field(default_factory=dict)
    humans: list[str] = field(default_factory=list)
    #: Each agent's turn-taking policy at the fork moment.
    policies: dict[str, domain.Policy] = field(default_factory=dict)
    memories: dict[str, dict[int, domain.MemoryItem]] = field(default_factory=dict)
    thoughts: dict[int, domain.Thought] = field(default_factory=dict)
    evaluations: dict[int, events.ThoughtEvaluated] = field(default_factory=dict)
    messages: list[domain.Message] = field(default_factory=list)
    step: int = 0
    #: Simulated users: their profile and seating options (``speak_probability``).
    simulated: dict[str, tuple[UserProfile, dict[str, Any]]] = field(default_factory=dict)
    #: Their hidden states by the message they were recorded with: (user, state, origin, when).
    hidden: dict[int, tuple[str, HiddenState, str, str]] = field(default_factory=dict)
    #: When each thought was formed in the parent (its ``thought_formed`` event).
    formed_at: dict[int, str] = field(default_factory=dict)


def state_at(recording: Recording, seq: int) -> ForkState:
    """Fold the parent's events up to ``seq`` into the state a fork starts from."""
    st = ForkState()
    for e in recording.rebuild(seq):
        st.step = max(st.step, e.step)
        match e.kind:
            case "participant_joined":
                if e.participant_kind == "ai" and e.persona is not None:
                    st.agents[e.name] = (e.persona, dict(e.proactivity))
                    st.policies[e.name] = e.policy
                elif e.participant_kind == "simulated" and e.profile is not None:
                    st.simulated[e.name] = (e.profile, dict(e.proactivity))
                elif e.name not in st.humans:
                    st.humans.append(e.name)
            case "participant_left":
                st.agents.pop(e.name, None)
                st.simulated.pop(e.name, None)
            case "hidden_state_recorded":
                st.hidden[e.message_id] = (e.participant, e.state, e.origin, e.at)
            case "policy_changed":
                if e.name in st.agents:
                    st.policies[e.name] = e.policy
            case "proactivity_changed":
                if e.name in st.agents:
                    st.agents[e.name] = (st.agents[e.name][0], dict(e.proactivity))
            case "memory_changed":
                mems = st.memories.setdefault(e.agent, {})
                if e.change == "deleted":
                    mems.pop(e.memory.id, None)
                else:
                    mems[e.memory.id] = e.memory
            case "thought_formed":
                st.thoughts[e.thought.id] = e.thought
                st.formed_at.setdefault(e.thought.id, e.at)
            case "thought_evaluated":
                tid = e.evaluation.thought_id
                st.evaluations[tid] = e
                if tid in st.thoughts:
                    th = st.thoughts[tid]
                    st.thoughts[tid] = th.model_copy(
                        update={
                            "score": e.evaluation.score,
                            "saliency": th.saliency if e.saliency is None else e.saliency,
                        }
                    )
            case "thought_expressed":
                if e.thought_id in st.thoughts:
                    st.thoughts[e.thought_id] = st.thoughts[e.thought_id].model_copy(
                        update={"expressed_in": e.message_id}
                    )
            case "thought_deleted":
                # Its latest evaluation stays (read only for thoughts present): an undo needs it.
                st.thoughts.pop(e.thought_id, None)
            case "thought_restored":
                st.thoughts[e.thought.id] = e.thought
            case "message_posted":
                st.messages.append(e.message)
    # A simulated user's hidden state is recorded just after its message: a fork at that message
    # takes the state along (it belongs to the message, not to what came after it).
    if st.messages and recording.seqs:
        i = bisect.bisect_right(recording.seqs, seq)
        ahead = recording.seqs[min(i + 8, len(recording.seqs) - 1)]
        for e in recording.events_between(seq, ahead):
            if e.kind == "hidden_state_recorded" and e.message_id <= st.messages[-1].id:
                st.hidden.setdefault(e.message_id, (e.participant, e.state, e.origin, e.at))
            elif e.kind in ("message_posted", "trigger_fired"):
                break
    return st


#: What ``playground show`` prints between a fork's carried-over messages and its own.
BEGINS = FORK_BEGINS


class _Pinned:
    """A clock that gives one moment for timestamps (sleeps and monotonic time stay real)."""

    def __init__(self, clock: Any, when: str) -> None:
        self._clock, self._when = clock, when

    def now_iso(self) -> str:
        return self._when

    def monotonic(self) -> float:
        return float(self._clock.monotonic())

    async def sleep(self, seconds: float) -> None:
        await self._clock.sleep(seconds)


@contextmanager
def _as_of(room: Room, when: str | None) -> Iterator[None]:
    """Stamp what the room publishes meanwhile with ``when`` (the parent's time of what is being
    carried over); nothing in the block may await, or another task could be stamped too."""
    if not when:
        yield
        return
    real = room.clock
    room.clock = _Pinned(real, when)
    try:
        yield
    finally:
        room.clock = real


async def fork(
    settings: Settings,
    engine: factory.Engine,
    *,
    recording: Recording,
    seq: int,
    db: sqlite_utils.Database,
    bus: events.EventBus,
    proactivity: ProactivitySettings | None = None,
) -> tuple[Room, SessionRecorder | None]:
    """Start a recorded session that continues ``recording`` from position ``seq``.

    Args:
        proactivity: the same proactivity for every agent; ``None`` keeps each agent's own.
    """
    st = state_at(recording, seq)
    parent = recording.session
    room, recorder = await factory.create_room(
        settings,
        engine,
        db=db,
        personas=[],
        bus=bus,
        condition=domain.condition_of(st.policies.get(n, "inner-thoughts") for n in st.agents)
        if st.agents
        else domain.as_condition(parent.get("condition")),
    )
    last_message = st.messages[-1].id if st.messages else None
    with db.atomic():
        db.execute(
            "UPDATE sessions SET parent_id = ?, fork_seq = ?, fork_message = ? WHERE id = ?",
            [parent["id"], seq, last_message, room.session_id],
        )
    for name, (persona, pro) in st.agents.items():
        agent = await room.add_agent(
            persona,
            proactivity or ProactivitySettings(**pro),
            policy=st.policies.get(name, "inner-thoughts"),
        )
        # Memories as they stood: same ids, so the carried-over thoughts' stimuli still resolve.
        target = st.memories.get(name, {})
        for mid in [m for m in agent.memory.items if m not in target]:
            agent.memory.delete(mid)
        for mid, item in target.items():
            if mid in agent.memory.items:
                if agent.memory.items[mid] != item:
                    await agent.memory.edit(mid, text=item.text, weight=item.weight, kind=item.kind)
            else:
                await agent.memory.put(item)
    for human in st.humans:
        room.add_human(human)
    if st.simulated:
        mind = simulator_for(
            engine,
            seed=settings.engine.seed,
            short_messages=settings.room.simulated_short_messages,
        )
        for name, (profile, seating) in st.simulated.items():
            room.add_simulated_user(
                profile, mind, name=name, speak_probability=seating.get("speak_probability")
            )
    everything = [m for mems in st.memories.values() for m in mems]
    room.reserve_ids(memories=max(everything, default=0))
    # The reservoirs: every thought, with its latest evaluation; "expressed" once its message is in.
    for thought in sorted(st.thoughts.values(), key=lambda t: t.id):
        if thought.agent not in room.participants or thought.agent not in st.agents:
            continue
        agent = room.agent(thought.agent)
        vec = await room.embedder.embed_one(thought.text)
        with _as_of(room, st.formed_at.get(thought.id)):
            agent.reservoir.add(thought.model_copy(update={"expressed_in": None}), vec)
        ev = st.evaluations.get(thought.id)
        if ev is not None:
            with _as_of(room, ev.at):
                room.emit(
                    events.ThoughtEvaluated(
                        agent=thought.agent,
                        evaluation=ev.evaluation,
                        saliency=ev.saliency,
                        retained=ev.retained,
                    )
                )
    room.reserve_ids(thoughts=max(st.thoughts, default=0))
    for m in st.messages:
        room.step = m.step
        said = st.thoughts.get(m.thought_id) if m.thought_id is not None else None
        if m.speaker not in room.participants:
            continue  # someone who left before the fork moment
        with _as_of(room, m.at):  # said when the parent said it (Room.post does not await)
            msg = await room.post(
                m.speaker,
                m.text,
                thought=said,
                interruption=m.interruption,
                origin=m.origin,
                notify=False,
                forced=m.forced,  # a message the user forced stays marked in the fork
            )
            if said is not None and said.agent in st.agents:
                room.agent(said.agent).expressed(said.id, msg.id, m.step)
                room.emit(
                    events.ThoughtExpressed(
                        agent=said.agent, thought_id=said.id, message_id=msg.id, forced=m.forced
                    )
                )
        hidden = st.hidden.get(m.id)
        user = room.participants.get(m.speaker)
        if hidden is not None and isinstance(user, SimulatedUser):
            # A simulated user's hidden state goes with its message into the fork.
            user.states.append(hidden[1])
            with _as_of(room, hidden[3]):
                room.emit(
                    events.HiddenStateRecorded(
                        participant=m.speaker,
                        message_id=msg.id,
                        turn=len(user.states) - 1,
                        state=hidden[1],
                        origin=hidden[2],
                    )
                )
    room.step = st.step
    with db.atomic():
        # Where the fork's own run begins; the copied messages set the session's updated_at back
        # to the parent's times, so it is the fork's time again.
        db.execute(
            "UPDATE sessions SET fork_messages = ?, updated_at = ? WHERE id = ?",
            [len(room.messages), room.clock.now_iso(), room.session_id],
        )
    return room, recorder
