"""The shared room: participants, transcript, and one trigger's turn-taking on asyncio.

Every message triggers all other agents concurrently (bounded); a silent step (simulation) or N
seconds of silence (real time) is an ``on_pause`` trigger. Work for a trigger is abandoned when a
newer trigger arrives, so no agent speaks from an outdated state. The room holds state and runs
one step at a time; the loops that drive it (simulation, real time) are in
:mod:`playground.room.loops`, which depends on the room and not the reverse.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import numpy as np

from playground import domain, errors, events
from playground.clock import Clock, SystemClock
from playground.cognition.base import Cognition, Context, placeholder_reason
from playground.embedding.cache import CachingEmbedder
from playground.inner_thoughts import participation
from playground.inner_thoughts.agent import Agent, TriggerWork
from playground.inner_thoughts.memory import Pool
from playground.room import simulated
from playground.room.edits import RoomEdits
from playground.room.seating import Human, RoomPeople
from playground.settings import Settings

T = TypeVar("T")


async def _none() -> None:
    return None


RECENT = 8
#: The statuses of a session that has ended: nothing is posted or recorded after them.
ENDED = ("finished", "interrupted", "failed")
#: Messages the next-speaker predictor reads (docs/spec.md §1.9.1: the last 5).
PREDICTOR_WINDOW = 5
FATAL = (
    errors.LLMUnreachable,
    errors.LLMAuthError,
    errors.LLMRateLimited,
    errors.LLMServerGone,  # a single call's timeout only skips its agent for the step
    errors.LLMServerError,
    errors.RecordingError,  # the database cannot be written: the run stops, not just one agent
)


class Room(RoomPeople, RoomEdits):
    """Agents (and humans) sharing one conversation.

    Seating participants is in :class:`playground.room.seating.RoomPeople` and the user's edits
    in :class:`playground.room.edits.RoomEdits`; the room itself holds the state, the
    transcript and one trigger's turn-taking.

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
        self.participants: dict[str, Agent | Human | simulated.SimulatedUser] = {}
        self.messages: list[domain.Message] = []
        self.step = 0
        self.generation = 0
        self.status = "created"
        self._seq = itertools.count(1)
        self._memory_ids = itertools.count(1)
        self._thought_ids = itertools.count(1)
        self._understood: dict[int, tuple[str, domain.TurnType]] = {}
        self._turn_types: dict[int, domain.TurnType] = {}
        self._predictions: dict[int, domain.NextSpeakerPrediction] = {}
        self._msg_vec: dict[int, np.ndarray] = {}
        # Embeddings still being computed: a message's vector, the agents' persona memories. They are
        # awaited when retrieval needs them, so the first interpretation overlaps the model's load.
        self._msg_vec_pending: dict[int, asyncio.Future[np.ndarray]] = {}
        self._memories_loading: asyncio.Future[None] | None = None
        self._unprocessed = False
        # An allocation an interrupter took the floor from: the addressee may still answer.
        self._pending: domain.TurnType | None = None
        #: Set when a message is posted or a stop is asked (what the real-time loop waits on).
        self.arrived = asyncio.Event()
        self._sem = asyncio.Semaphore(settings.room.agent_concurrency)
        self._states: dict[str, str] = {}
        self._stopped = False
        self._colors = itertools.count()
        #: When the session ended (the SessionFinished event's time), or "" while it is open.
        self.ended_at = ""
        #: Why nobody has spoken since the last message (the end reason after silent steps).
        self.silence = participation.SilentRun()

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
        for counter, past in ((self._memory_ids, memories), (self._thought_ids, thoughts)):
            while past and next(counter) < past:
                pass

    def record_usage(self, usage: domain.Usage) -> None:
        self.emit(events.UsageRecorded(usage=usage))

    @property
    def states(self) -> dict[str, str]:
        """Each participant's live state (idle, thinking, wants_to_speak, speaking)."""
        return dict(self._states)

    def _set_state(self, name: str, state: str) -> None:
        if self._states.get(name) != state:
            self._states[name] = state
            self.emit(events.ParticipantStateChanged(name=name, state=state))  # type: ignore[arg-type]

    # -- the session's start and its embeddings --------------------------------------------------

    def start(
        self,
        *,
        engine: str,
        model: str,
        condition: str = "inner-thoughts",
        logprobs_supported: bool | None = None,
        experiment_id: str | None = None,
        draw: int | None = None,
    ) -> None:
        self.status = "running"
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

    async def embeddings_ready(self) -> None:
        """Wait for the embeddings still being computed: messages' and deferred persona memories'.

        Raises:
            PlaygroundError: an embedding failed (e.g. a remote embedding server is unreachable).
        """
        # Shielded: a cancelled step (a newer trigger) must not cancel the embedding itself.
        if self._memories_loading is not None:
            await asyncio.shield(self._memories_loading)
            self._memories_loading = None
        while self._msg_vec_pending:
            mid, pending = next(iter(self._msg_vec_pending.items()))
            vec = await asyncio.shield(pending)
            self._msg_vec[mid] = vec
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
        self.silence = participation.SilentRun()  # someone spoke: a new silent run may start
        # Embedded in the background (the model may still be loading); retrieval awaits it.
        self._msg_vec_pending[msg.id] = asyncio.ensure_future(self.embedder.embed_one(text))
        p.last_spoke = self.step
        p.turns += 1
        if participation.relation(self._pending, speaker) == "allocated-self":
            self._pending = None  # the addressee has answered
        self._unprocessed = True
        self.emit(events.MessagePosted(message=msg))
        if notify:
            self.arrived.set()
        return msg

    async def post_human_message(self, name: str, text: str) -> domain.Message:
        """A human speaks: any work on older triggers becomes stale.

        Raises:
            SessionEnded: the session has ended.
            PlaygroundError: ``name`` has not joined as a human.
        """
        self.require_open()
        if not isinstance(self.participants.get(name), Human):
            raise errors.PlaygroundError(f"{name!r} has not joined as a human participant")
        self.generation += 1
        return await self.post(name, text)

    # -- understanding an utterance (once per message, shared by all agents) ----------------------

    async def _understand(self, msg: domain.Message) -> tuple[str, domain.TurnType]:
        """Interpretation and turn type (what Inner Thoughts agents need), once per message."""
        if msg.id not in self._understood:
            names = list(self.participants)
            recent = self.messages[max(0, msg.id - RECENT) : msg.id - 1]
            interp, turn = await asyncio.gather(
                self.cognition.interpret(msg, recent, names), self._turn_type(msg)
            )
            if msg.id not in self._understood:
                self._understood[msg.id] = (interp, turn)
                await self.embedder.embed_one(interp)
                self.emit(
                    events.MessageInterpreted(
                        interpretation=domain.Interpretation(
                            message_id=msg.id, text=interp, origin=self.cognition.name
                        )
                    )
                )
        return self._understood[msg.id]

    async def _turn_type(self, msg: domain.Message) -> domain.TurnType:
        """Open, or allocated to a named participant (Inner Thoughts and reactive agents need it)."""
        if msg.id not in self._turn_types:
            names = list(self.participants)
            recent = self.messages[max(0, msg.id - RECENT) : msg.id - 1]
            dyad = simulated.dyad_turn(msg, names) if self.simulated_users else None
            turn = dyad or await self.cognition.predict_turn_type(msg, recent, names)
            if msg.id not in self._turn_types:
                self._turn_types[msg.id] = turn
                self.emit(events.TurnTypePredicted(turn_type=turn))
        return self._turn_types[msg.id]

    async def _predict(self, msg: domain.Message) -> domain.NextSpeakerPrediction:
        """The next-speaker baseline's prediction after ``msg``: from the last 5 messages and the
        participants' names only (docs/spec.md §1.9.1), once per message."""
        if msg.id not in self._predictions:
            recent = self.messages[max(0, msg.id - PREDICTOR_WINDOW) : msg.id]
            self._predictions[msg.id] = await self.cognition.predict_next_speaker(
                recent, list(self.participants)
            )
        return self._predictions[msg.id]

    def _next_speaker_turn(
        self,
        trigger: domain.TriggerKind,
        latest: domain.Message,
        prediction: domain.NextSpeakerPrediction | None,
    ) -> tuple[str | None, float | None, str]:
        """Which next-speaker agent gets the turn (see :func:`participation.next_speaker_turn`)."""
        return participation.next_speaker_turn(
            trigger=trigger,
            latest_speaker=latest.speaker,
            prediction=prediction,
            movers=[a.name for a in self.agents if a.policy == "next-speaker"],
            participants=list(self.participants),
            rng=random.Random(f"{self.seed}:{self.step}:anyone"),
        )

    def _message_pool(self) -> Pool:
        if not self.messages:
            return Pool.empty()
        return Pool(
            refs=[m.ref for m in self.messages],
            texts=[f"{m.speaker}: {m.text}" for m in self.messages],
            vectors=np.stack([self._msg_vec[m.id] for m in self.messages]),
            weights=np.ones(len(self.messages), np.float32),
            taus=np.array([m.step for m in self.messages], np.int64),
        )

    def _context(
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

    # -- one trigger -----------------------------------------------------------------------------

    async def _bounded(
        self,
        stage: Callable[[Agent, TriggerWork], Awaitable[T]],
        pairs: list[tuple[Agent, TriggerWork]],
    ) -> list[T | None]:
        """Run one stage for several agents concurrently; an agent whose mind fails sits this trigger out."""

        async def one(agent: Agent, work: TriggerWork) -> T:
            async with self._sem:
                # The coroutine is made only once the agent's turn comes: nothing is left un-awaited
                # when a newer trigger cancels the stage.
                return await stage(agent, work)

        results = await asyncio.gather(*(one(a, w) for a, w in pairs), return_exceptions=True)
        out: list[T | None] = []
        for (agent, _), r in zip(pairs, results, strict=True):
            if isinstance(r, asyncio.CancelledError):
                raise r
            if isinstance(r, FATAL):
                raise r
            if isinstance(r, errors.PlaygroundError):
                self.emit(
                    events.ErrorOccurred(
                        where=f"{agent.name}", message=str(r), error_type=type(r).__name__
                    )
                )
                out.append(None)
            elif isinstance(r, BaseException):
                raise r
            else:
                out.append(r)
        return out

    async def step_once(self, *, silent_steps: int = 0) -> domain.Message | None:
        """Process one trigger: a new message if one arrived since the last trigger, else a pause.

        Returns the message an agent posted, or None when everyone stayed silent.
        """
        self.step += 1
        self.generation += 1
        gen = self.generation
        latest = self.messages[-1] if self.messages else None
        trigger: domain.TriggerKind = "new_message" if self._unprocessed else "pause"
        self._unprocessed = False
        self.emit(
            events.TriggerFired(
                trigger=trigger, message_id=latest.id if latest else None, generation=gen
            )
        )
        if latest is None:
            return None
        listeners = [
            a for a in self.agents if not (trigger == "new_message" and a.name == latest.speaker)
        ]
        # Simulated users listen too (they answer when addressed): see playground.room.simulated.
        users = [
            u
            for u in self.simulated_users
            if not (trigger == "new_message" and u.name == latest.speaker)
        ]
        thinkers = [a for a in listeners if a.policy == "inner-thoughts"]
        predicting = any(a.policy == "next-speaker" for a in self.agents)
        try:
            for name in [*(a.name for a in listeners), *(u.name for u in users)]:
                self._set_state(name, "thinking")
            # Inner Thoughts agents need the interpretation and the turn type; reactive agents
            # and simulated users the turn type (who is addressed); next-speaker agents only the
            # prediction.
            if thinkers:
                understanding = self._understand(latest)
            elif users or any(a.policy == "reactive" for a in listeners):
                understanding = self._turn_type_only(latest)
            else:
                understanding = self._open_turn(latest)
            understood, prediction = await asyncio.gather(
                understanding,
                self._predict_safely(latest)
                if predicting and trigger == "new_message"
                else _none(),
            )
            await self.embeddings_ready()  # no await from here to the pool: it holds every message
            if trigger == "pause" or understood[1].kind == "allocated":
                self._pending = None  # silence opens the floor; a newer allocation replaces it
            turn = participation.floor_turn(trigger, understood[1], self._pending)
            decided: dict[str, tuple[Agent, TriggerWork, domain.Decision]] = {}
            if thinkers:
                for a, w, d in await self._think(
                    thinkers, latest, trigger, understood, turn, silent_steps
                ):
                    decided[a.name] = (a, w, d)
            if predicting:
                chosen, prob, rule = self._next_speaker_turn(trigger, latest, prediction)
                if prediction is not None or trigger == "pause":
                    shown = prediction or self._predictions.get(latest.id)
                    if shown is not None:
                        self.emit(
                            events.NextSpeakerPredicted(prediction=shown, chosen=chosen, rule=rule)
                        )
            else:
                chosen, prob, rule = None, None, ""
            for a in listeners:
                if a.policy == "inner-thoughts":
                    continue
                ctx = self._context(a, latest, trigger, ("", turn), silent_steps)
                d = participation.baseline(
                    agent=a.name,
                    policy=a.policy,
                    step=self.step,
                    trigger=trigger,
                    turn_type=turn,
                    chosen=chosen,
                    probability=prob if a.policy == "next-speaker" else None,
                    rule=rule,
                    speaker=latest.speaker if trigger == "new_message" else "",
                )
                decided[a.name] = (a, TriggerWork(ctx), d)
            decisions = [decided[a.name] for a in listeners if a.name in decided]
            said = latest.speaker if trigger == "new_message" else ""
            wishes = [
                simulated.decide(
                    u,
                    step=self.step,
                    trigger=trigger,
                    turn=turn,
                    speaker=said,
                    rng=random.Random(f"{self.seed}:{self.step}:{u.name}:speak"),
                )
                for u in users
            ]
            winner = participation.arbitrate(
                [d for _, _, d in decisions if d.action == "speak"]
                + [d for d in wishes if d.action == "speak"],
                random.Random(f"{self.seed}:{self.step}:floor"),
                prediction_first=self.settings.room.mixed_floor == "prediction-first",
            )
            for d in [*(d for _, _, d in decisions), *wishes]:
                settled = participation.outcome(d, winner, turn)
                self.silence.note(settled)
                self.emit(events.DecisionMade(decision=settled))
                self._set_state(d.agent, "wants_to_speak" if d is winner else "idle")
            if winner is None or gen != self.generation:
                return None
            if winner.policy == "simulated":
                by = said if winner.turn_type == "allocated-self" else None
                return await self._simulated_speaks(winner.agent, by, gen)
            agent = self.agent(winner.agent)
            work = decided[agent.name][1]
            thought = (
                agent.reservoir.get(winner.thought_id or 0)
                if winner.policy == "inner-thoughts"
                else None
            )
            self._set_state(agent.name, "speaking")
            if thought is not None:
                text = await agent.articulate(work.ctx, thought)
            else:
                text = await agent.respond(work.ctx)
            if self.settings.room.pace == "typing":
                await self.clock.sleep(
                    len(text) / self.settings.room.typing_cps
                )  # as long as typing it would take
            if gen != self.generation:
                return None  # a newer trigger arrived while articulating: this answer is stale
            if not self._usable_utterance(agent.name, text):
                return None  # nothing worth posting: the agent stays silent for this step
            msg = await self.post(
                agent.name,
                text,
                thought=thought,
                interruption=winner.turn_type == "allocated-other",
                notify=False,
            )
            if winner.turn_type == "allocated-other":
                self._pending = turn  # the interrupted addressee may still answer next
            if thought is not None:
                agent.expressed(thought.id, msg.id, self.step)
                self.emit(
                    events.ThoughtExpressed(
                        agent=agent.name, thought_id=thought.id, message_id=msg.id
                    )
                )
            else:
                agent.last_spoke = self.step
            self.arrived.set()
            return msg
        finally:
            for name in [*(a.name for a in listeners), *(u.name for u in users)]:
                if name in self.participants:
                    self._set_state(name, "idle")

    def _usable_utterance(self, agent: str, text: str) -> bool:
        """False (published as ThoughtRefused, counted for the silent run) when the mind's
        utterance says nothing: empty, ``...``, a slot copied from the prompt. A short message
        ("Yes!") is a fine chat message."""
        why = placeholder_reason(text, short_ok=True)
        if why is None:
            return True
        self.silence.unspoken += 1
        self.emit(events.ThoughtRefused(agent=agent, text=text, reason=why, stage="utterance"))
        return False

    async def _simulated_speaks(
        self, name: str, addressed_by: str | None, gen: int
    ) -> domain.Message | None:
        """A simulated user won the floor: its simulator words the turn (a failing model makes it
        sit the trigger out, reported, unless the server cannot be used at all)."""
        user = self.participants[name]
        assert isinstance(user, simulated.SimulatedUser)
        self._set_state(name, "speaking")
        try:
            msg = await simulated.speak(self, user, addressed_by=addressed_by, generation=gen)
        except (*FATAL, errors.SessionEnded):
            raise
        except errors.PlaygroundError as exc:
            simulated.report_failure(self, user, exc)
            return None
        if msg is not None:
            self.arrived.set()
        return msg

    async def _think(
        self,
        thinkers: list[Agent],
        latest: domain.Message,
        trigger: domain.TriggerKind,
        understood: tuple[str, domain.TurnType],
        turn: domain.TurnType,
        silent_steps: int,
    ) -> list[tuple[Agent, TriggerWork, domain.Decision]]:
        """The Inner Thoughts stages for one trigger: retrieval, thought formation, evaluation,
        and each agent's decision (Algorithm 1), before the floor is arbitrated."""
        u = self._msg_vec[latest.id]
        u_interp = self.embedder.cached(understood[0])
        pool = self._message_pool()
        works = [
            TriggerWork(self._context(a, latest, trigger, (understood[0], turn), silent_steps))
            for a in thinkers
        ]
        for a, w in zip(thinkers, works, strict=True):
            a.retrieve(w, pool, u, u_interp)
        # An agent whose thought formation failed still re-scores its retained thoughts.
        active = list(zip(thinkers, works, strict=True))
        formed = await self._bounded(Agent.form, active)
        self.silence.failed += sum(1 for f in formed if f is None)
        for a, w in active:
            a.adopt(w, self._thought_ids)
            self.silence.refused += len(w.refused)
        ratings = await self._bounded(Agent.evaluate, active)
        decisions: list[tuple[Agent, TriggerWork, domain.Decision]] = []
        for (a, w), r in zip(active, ratings, strict=True):
            if r is None:
                self.silence.failed += 1
                decisions.append(
                    (
                        a,
                        w,
                        domain.Decision(
                            agent=a.name,
                            step=self.step,
                            trigger=trigger,
                            action="silent",
                            reason="could not evaluate its thoughts (see error)",
                        ),
                    )
                )
                continue
            a.score(w, r)
            decisions.append((a, w, a.decide(w)))
        return decisions

    async def _turn_type_only(self, msg: domain.Message) -> tuple[str, domain.TurnType]:
        return "", await self._turn_type(msg)

    async def _open_turn(self, msg: domain.Message) -> tuple[str, domain.TurnType]:
        """No Inner Thoughts or reactive listener: nobody needs the turn type, so none is asked for."""
        return "", domain.TurnType(message_id=msg.id, kind="open", origin="not predicted")

    async def _predict_safely(self, msg: domain.Message) -> domain.NextSpeakerPrediction | None:
        """The prediction, or None (reported) when the predictor's answer could not be used."""
        try:
            return await self._predict(msg)
        except FATAL:
            raise
        except errors.PlaygroundError as exc:
            self.emit(
                events.ErrorOccurred(
                    where="next-speaker predictor", message=str(exc), error_type=type(exc).__name__
                )
            )
            return None

    # -- the end of a run (the loops that drive the room are in playground.room.loops) ----------------

    def finish(self, status: str, reason: str) -> None:
        if self.status in ENDED:
            return
        self.status = status
        ended = self._stamp(events.SessionFinished(status=status, reason=reason))  # type: ignore[arg-type]
        self.ended_at = ended.at  # what a refusal names ("interrupted at 11:39:26")
        self.bus.publish(ended)

    def stop(self) -> None:
        """Ask the running loop to end; the next run starts afresh."""
        self._stopped = True
        self.arrived.set()

    @property
    def stop_requested(self) -> bool:
        """True once :meth:`stop` was asked and no loop has started since."""
        return self._stopped

    def rearm(self) -> None:
        """Forget a stop asked of an earlier loop (a simulation handing over to real time)."""
        self._stopped = False
