"""The room's state and what every part of it shares: events, the session's status, the
embeddings, the transcript (posting a message), the participants, an agent's view of the
conversation.

:class:`RoomState` is what the room's parts read and change through its methods: seating
(:mod:`playground.room.seating`), the user's edits (:mod:`playground.room.edits`), understanding
an utterance (:mod:`playground.room.understanding`), each agent's Inner Thoughts
(:mod:`playground.room.thinking`) and the floor (:class:`playground.room.floor.Floor`), which
:class:`playground.room.room.Room` holds beside it. A simulated user speaks through it
(:mod:`playground.room.simulated`).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Literal

import numpy as np

from playground import domain, errors, events
from playground.clock import Clock, SystemClock
from playground.cognition.base import Cognition, Context, placeholder_reason
from playground.embedding.cache import CachingEmbedder
from playground.inner_thoughts.agent import Agent
from playground.room.condition import SessionCondition
from playground.room.floor import Floor
from playground.room.participants import Participant, SimulatedUser
from playground.room.silence import SilentRun
from playground.settings import Settings

#: Messages an agent's context shows (and understanding an utterance reads before it).
RECENT = 8
#: The statuses of a session that has ended: nothing is posted or recorded after them.
ENDED: tuple[domain.EndStatus, ...] = ("finished", "interrupted", "failed")
#: Errors that stop the run; any other PlaygroundError only makes one participant sit a step out.
FATAL = (
    errors.LLMUnreachable,
    errors.LLMAuthError,
    errors.LLMRateLimited,
    errors.LLMServerGone,  # a single call's timeout only skips its agent for the step
    errors.LLMServerError,
    errors.RecordingError,  # the database cannot be written: the run stops, not just one agent
)


class RoomState:
    """Agents (and humans) sharing one conversation: the state every part of the room reads.

    Args:
        cognition: the mind every agent uses (offline engine or an LLM).
        embedder: cached embedder for retrieval and saliency.
        settings: room, engine and proactivity settings.
        bus: where every event is published.
        session_id: stamped on every event.
        clock: timestamps and sleeps.
    """

    def __init__(
        self,
        *,
        cognition: Cognition,
        embedder: CachingEmbedder,
        settings: Settings,
        bus: events.EventBus,
        session_id: str,
        clock: Clock | None = None,
    ) -> None:
        self.cognition = cognition
        self.embedder = embedder
        self.settings = settings
        self.bus = bus
        self.session_id = session_id
        self.clock = clock or SystemClock()
        self.seed = settings.engine.seed
        self.participants: dict[str, Participant] = {}
        self.messages: list[domain.Message] = []
        self.step = 0
        self.generation = 0
        self.status: Literal["created"] | domain.SessionStatus = "created"
        self._seq = itertools.count(1)
        self.memory_ids = itertools.count(1)
        self.thought_ids = itertools.count(1)
        self.message_vectors: dict[int, np.ndarray] = {}
        # Embeddings still being computed: a message's vector, the agents' persona memories. They are
        # awaited when retrieval needs them, so the first interpretation overlaps the model's load.
        self._msg_vec_pending: dict[int, asyncio.Future[np.ndarray]] = {}
        self.memories_loading: asyncio.Future[None] | None = None
        self._unprocessed = False
        #: The floor between triggers (an allocation still owed to its addressee).
        self.floor = Floor()
        #: Set when a message is posted or a stop is asked (what the real-time loop waits on).
        self.arrived = asyncio.Event()
        self._states: dict[str, domain.ParticipantState] = {}
        self._stopped = False
        self.stop_reason = "stopped"
        #: When the session ended (the SessionFinished event's time), or "" while it is open.
        self.ended_at = ""
        #: Why nobody has spoken since the last message (the end reason after silent steps).
        self.silence = SilentRun()
        #: The session's condition, following the seats (see :meth:`follow_seats`).
        self.condition_label = SessionCondition()
        #: How many messages there were when people began taking part in real time (the turn
        #: cap does not apply from then on), or None while the room runs as a simulation.
        self.realtime_since: int | None = None

    # -- events ----------------------------------------------------------------------------------

    def emit(self, event: events.BaseEvent) -> None:
        """Stamp an event with session, sequence, step and time, then publish it."""
        self.bus.publish(self._stamp(event))

    def _stamp(self, event: events.BaseEvent) -> events.BaseEvent:
        return event.model_copy(
            update={
                "session_id": self.session_id,
                "seq": next(self._seq),
                "step": self.step,
                "at": self.clock.now_iso(),
            }
        )

    @property
    def ended(self) -> bool:
        """True once the session has finished, been interrupted or failed."""
        return self.status in ENDED

    def require_open(self) -> None:
        """Refuse a change to a session that has ended.

        Raises:
            SessionEnded: the session has ended; the message says how and when.
        """
        if self.ended:
            raise errors.SessionEnded(self.status, self.ended_at)

    def reserve_ids(self, *, memories: int = 0, thoughts: int = 0) -> None:
        """Make the next memory and thought ids greater than these (a fork carries ids over)."""
        for counter, past in ((self.memory_ids, memories), (self.thought_ids, thoughts)):
            while past and next(counter) < past:
                pass

    def record_usage(self, usage: domain.Usage) -> None:
        self.emit(events.UsageRecorded(usage=usage))

    @property
    def states(self) -> dict[str, domain.ParticipantState]:
        """Each participant's live state (idle, thinking, wants_to_speak, speaking)."""
        return dict(self._states)

    def set_state(self, name: str, state: domain.ParticipantState) -> None:
        if self._states.get(name) != state:
            self._states[name] = state
            self.emit(events.ParticipantStateChanged(name=name, state=state))

    # -- the session's start and end ------------------------------------------------------------

    def start(
        self,
        *,
        engine: str,
        model: str,
        condition: domain.Condition = "inner-thoughts",
        logprobs_supported: bool | None = None,
        experiment_id: str | None = None,
        draw: int | None = None,
    ) -> None:
        """Open the session (``running``) and publish how it runs: engine, model, seed, settings."""
        self.status = "running"
        self.condition_label = SessionCondition(condition)
        self.emit(
            events.SessionStarted(
                engine=engine,
                model=model,
                seed=self.seed,
                condition=condition,
                settings=self.settings.snapshot(),
                logprobs_supported=logprobs_supported,
                experiment_id=experiment_id,
                draw=draw,
            )
        )

    def finish(self, status: domain.EndStatus, reason: str) -> None:
        """End the session (finished, interrupted or failed) once; a later end is ignored."""
        if self.status in ENDED:
            return
        self.status = status
        cap, n = self.settings.room.max_turns, len(self.messages)
        if self.realtime_since is not None and n > cap:
            # Said with the ending, so a session longer than its cap is never taken for a fault.
            reason += (
                f" · {n} messages: the turn cap ({cap}) does not apply while a person takes part"
                f" (in real time from message #{self.realtime_since + 1})"
            )
        ended = self._stamp(events.SessionFinished(status=status, reason=reason))
        self.ended_at = ended.at  # what a refusal names ("interrupted at 11:39:26")
        self.bus.publish(ended)

    def stop(self, reason: str = "stopped") -> None:
        """Ask the running loop to end (``reason``: the session's end reason when the loop then
        finishes it); the next run starts afresh."""
        self._stopped = True
        self.stop_reason = reason
        self.arrived.set()

    @property
    def stop_requested(self) -> bool:
        """True once :meth:`stop` was asked and no loop has started since."""
        return self._stopped

    def rearm(self) -> None:
        """Forget a stop asked of an earlier loop (a simulation handing over to real time)."""
        self._stopped = False

    # -- embeddings ----------------------------------------------------------------------------

    async def embeddings_ready(self) -> None:
        """Wait for the embeddings still being computed: messages' and deferred persona memories'.

        Raises:
            PlaygroundError: an embedding failed (e.g. a remote embedding server is unreachable).
        """
        # Shielded: a cancelled step (a newer trigger) must not cancel the embedding itself.
        if self.memories_loading is not None:
            await asyncio.shield(self.memories_loading)
            self.memories_loading = None
        while self._msg_vec_pending:
            mid, pending = next(iter(self._msg_vec_pending.items()))
            vec = await asyncio.shield(pending)
            self.message_vectors[mid] = vec
            self._msg_vec_pending.pop(mid, None)
            if not self.ended:  # kept by the recorder for the conversation's geometry
                raw = np.asarray(vec, dtype="<f4")
                self.emit(
                    events.MessageEmbedded(
                        message_id=mid, model=self.embedder.name, dim=raw.size, vector=raw.tobytes()
                    )
                )

    async def keep_last_vectors(self) -> None:
        """Before a session ends well: wait for the message vectors still being computed, so
        that the recorder keeps every message's vector for the conversation's geometry. A
        failure here only means that vector is not kept (it is embedded again when needed)."""
        try:
            await self.embeddings_ready()
        except errors.PlaygroundError:
            self._msg_vec_pending.clear()

    # -- messages --------------------------------------------------------------------------------

    async def post(
        self,
        speaker: str,
        text: str,
        *,
        thought: domain.Thought | None = None,
        interruption: bool = False,
        origin: str = "",
        notify: bool = True,
        forced: bool = False,
    ) -> domain.Message:
        """Append a message to the transcript and publish it.

        Raises:
            SessionEnded: the session has ended (also when it ended while this message was being
                worded: a reply that was in flight at Stop is dropped).
            PlaygroundError: the speaker is not in the room, or the text is empty.
        """
        self.require_open()
        p = self.participants.get(speaker)
        if p is None:
            raise errors.PlaygroundError(f"{speaker!r} is not in the room")
        text = text.strip()
        if not text:
            raise errors.PlaygroundError("cannot post an empty message")
        msg = domain.Message(
            id=len(self.messages) + 1,
            speaker=speaker,
            text=text,
            step=self.step,
            at=self.clock.now_iso(),
            kind=p.kind,
            thought_id=thought.id if thought else None,
            system=thought.system if thought else None,
            interruption=interruption,
            origin=origin or ("human" if p.kind == "human" else self.cognition.name),
            forced=forced,
        )
        self.messages.append(msg)
        self.silence = SilentRun()  # someone spoke: a new silent run may start
        # Embedded in the background (the model may still be loading); retrieval awaits it.
        self._msg_vec_pending[msg.id] = asyncio.ensure_future(self.embedder.embed_one(text))
        p.last_spoke = self.step
        p.turns += 1
        self.floor.spoke(speaker)  # the addressee may have answered
        self._unprocessed = True
        if msg.id == 1:
            self.follow_seats("the seats when the conversation began")
        self.emit(events.MessagePosted(message=msg))
        if notify:
            self.arrived.set()
        return msg

    # -- participants ----------------------------------------------------------------------------

    @property
    def condition(self) -> domain.Condition:
        """The session's condition: the one policy its agents share, else ``mixed``."""
        return self.condition_label.current

    def follow_seats(self, why: str) -> None:
        """Relabel the session's condition after the seats changed (``why``: what changed them),
        publishing the change if there is one (see :mod:`playground.room.condition`)."""
        change = self.condition_label.follow(
            (a.policy for a in self.agents), begun=bool(self.messages)
        )
        if change is not None:
            self.emit(events.ConditionChanged(old=change[0], new=change[1], why=why))

    @property
    def agents(self) -> list[Agent]:
        return [p for p in self.participants.values() if isinstance(p, Agent)]

    def agent(self, name: str) -> Agent:
        p = self.participants.get(name)
        if not isinstance(p, Agent):
            raise KeyError(f"no AI participant named {name!r}")
        return p

    @property
    def simulated_users(self) -> list[SimulatedUser]:
        return [p for p in self.participants.values() if isinstance(p, SimulatedUser)]

    def context(
        self,
        agent: Agent,
        latest: domain.Message | None,
        trigger: domain.TriggerKind,
        understood: tuple[str, domain.TurnType] | None,
        silent_steps: int = 0,
    ) -> Context:
        return Context(
            agent=agent.name,
            persona=agent.persona,
            participants=list(self.participants),
            recent=self.messages[-RECENT:],
            latest=latest,
            trigger=trigger,
            step=self.step,
            interpretation=understood[0] if understood else "",
            turn_type=understood[1] if understood else None,
            own_turns=agent.turns,
            total_turns=len(self.messages),
            silent_steps=silent_steps,
        )

    def usable_utterance(self, agent: str, text: str) -> bool:
        """False (published as ThoughtRefused, counted for the silent run) when the mind's
        utterance says nothing: empty, ``...``, a slot copied from the prompt. A short message
        ("Yes!") is a fine chat message."""
        why = placeholder_reason(text, short_ok=True)
        if why is None:
            return True
        self.silence.unspoken += 1
        self.emit(events.ThoughtRefused(agent=agent, text=text, reason=why, stage="utterance"))
        return False
