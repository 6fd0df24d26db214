"""The shared room: participants, transcript, and one trigger's turn-taking on asyncio.

Every message triggers all other agents concurrently (bounded); a silent step (simulation) or N
seconds of silence (real time) is an ``on_pause`` trigger. Work for a trigger is abandoned when a
newer trigger arrives, so no agent speaks from an outdated state. The room holds state and runs
one step at a time; the loops that drive it (simulation, real time) are in
:mod:`playground.room.loops`, which depends on the room and not the reverse.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from playground import domain, errors, events
from playground.events import StageName
from playground.inner_thoughts.agent import Agent, TriggerWork
from playground.room import floor, simulated
from playground.room.edits import Edits
from playground.room.participants import Human, SimulatedUser
from playground.room.seating import Seating
from playground.room.state import FATAL, RoomState
from playground.room.thinking import Decided, Thinking
from playground.room.timeline import Timeline
from playground.room.trigger import Trigger
from playground.room.understanding import Understanding

#: The stages that understand the latest message (what retrieval and the floor wait for).
_UNDERSTANDING: tuple[StageName, ...] = ("interpretation", "turn type", "prediction")
#: (The interpretation's embedding, an "embeddings" stage, is part of understanding too.)
#: The stages the floor waits for: every listener's decision needs its ratings; the turn type
#: and the prediction decide who may speak.
_BEFORE_FLOOR: tuple[StageName, ...] = (
    "turn type",
    "prediction",
    "retrieval",
    "System-2 thoughts",
    "evaluation",
    "re-evaluation",
    "embeddings",
)


async def _none() -> None:
    return None


class Room(RoomState):
    """Agents (and humans) sharing one conversation.

    The room is the shared state (:class:`playground.room.state.RoomState`: the transcript, the
    participants, the session's status, events) and the parts it holds, each owning its own
    state:

    - ``seating`` (:class:`~playground.room.seating.Seating`): participants joining and leaving;
    - ``edits`` (:class:`~playground.room.edits.Edits`): what a person changes by hand;
    - ``understanding`` (:class:`~playground.room.understanding.Understanding`): each message's
      interpretation, turn type and next-speaker prediction, asked once;
    - ``thinking`` (:class:`~playground.room.thinking.Thinking`): each agent's Inner Thoughts
      stages, within the limit of agents thinking at once;
    - ``floor`` (:class:`~playground.room.floor.Floor`): the turn still owed to an addressee.

    The room itself runs one trigger (:meth:`step_once`) as a declared graph of stages. It is
    made with :class:`~playground.room.state.RoomState`'s arguments (cognition, embedder,
    settings, bus, session id, clock). The seating and editing methods are the room's public
    face, kept on it for its callers.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seating = Seating(self)
        self.edits = Edits(self)
        self.understanding = Understanding(self)
        self.thinking = Thinking(self)
        # The parts' public operations, as the room's own (the window, the command line and the
        # study server call them on the room).
        self.add_agent = self.seating.add_agent
        self.add_human = self.seating.add_human
        self.set_presence = self.seating.set_presence
        self.add_simulated_user = self.seating.add_simulated_user
        self.simulated_turn = self.seating.simulated_turn
        self.remove_participant = self.seating.remove_participant
        self.force_express = self.edits.force_express
        self.delete_thought = self.edits.delete_thought
        self.restore_thought = self.edits.restore_thought
        self.add_memory = self.edits.add_memory
        self.edit_memory = self.edits.edit_memory
        self.delete_memory = self.edits.delete_memory
        self.set_proactivity = self.edits.set_proactivity
        self.set_policy = self.edits.set_policy
        self.annotate = self.edits.annotate
        self.record_label = self.edits.record_label

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

    # -- one trigger, stage by stage (the paper's loop) -------------------------------------------

    async def step_once(self, *, silent_steps: int = 0) -> domain.Message | None:
        """Process one trigger: a new message if one arrived since the last trigger, else a pause.

        The paper's loop, stage by stage, each stage waiting only for what it reads:

        ========================  =================================================================
        stage                     waits for
        ========================  =================================================================
        interpretation            the trigger (the latest message and the ones before it)
        turn type                 the trigger (run beside the interpretation)
        prediction                the trigger (the next-speaker baseline's, beside both)
        embeddings                the interpretation (retrieval compares memories with it)
        retrieval                 the interpretation's and the messages' embeddings
        System-1/2 thoughts       the agent's retrieval (each agent on its own)
        evaluation                that thought's formation (each thought on its own, per-thought)
        re-evaluation             the agent's retrieval (a retained thought, already formed)
        decision                  every rating of the agent (Algorithm 1)
        floor                     every listener's decision, the turn type and the prediction
        articulation              the floor (the winner words its thought)
        ========================  =================================================================

        :meth:`playground.room.thinking.Thinking._think` runs the Inner Thoughts part; the
        trigger's timeline records each stage and publishes where the time went
        (:class:`playground.events.TriggerTimed`).

        Returns the message an agent posted, or None when everyone stayed silent.
        """
        t = self._fire(silent_steps)
        if t is None:
            return None
        posted: domain.Message | None = None
        try:
            for name in t.names:
                self.set_state(name, "thinking")
            understood, prediction = await self._understanding(t)
            tl = t.timeline
            with tl.stage(
                "embeddings", detail="messages", after=tl.ids(*_UNDERSTANDING, "embeddings")
            ):
                await (
                    self.embeddings_ready()
                )  # no await from here to the pool: it holds every message
            turn = self._turn_at(t, understood[1])
            decided = await self.thinking.think(t, understood, turn)
            decided.update(self._baselines(t, turn, self._next_speaker(t, prediction)))
            decisions = [decided[a.name] for a in t.listeners if a.name in decided]
            with t.timeline.stage("floor", after=t.timeline.ids(*_BEFORE_FLOOR)):
                winner = self._settle_floor(
                    [d for _, _, d in decisions], self._simulated_wishes(t, turn), turn
                )
            if winner is None or t.generation != self.generation:
                return None
            if winner.policy == "simulated":
                by = t.said if winner.turn_type == "allocated-self" else None
                posted = await self._simulated_speaks(winner.agent, by, t.generation)
                return posted
            agent = self.agent(winner.agent)
            posted = await self._articulate(t, agent, decided[agent.name][1], winner, turn)
            return posted
        finally:
            for name in t.names:
                if name in self.participants:
                    self.set_state(name, "idle")
            if t.generation == self.generation and not self.ended:
                self.emit(t.timeline.event(t.kind, t.latest.id, posted.id if posted else None))

    def _fire(self, silent_steps: int) -> Trigger | None:
        """The trigger: a new message if one was posted since the last step, else a pause
        (published); None when there is no message yet to respond to."""
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
        return Trigger(
            kind=trigger,
            latest=latest,
            generation=gen,
            silent_steps=silent_steps,
            listeners=listeners,
            users=users,
            thinkers=[a for a in listeners if a.policy == "inner-thoughts"],
            predicting=any(a.policy == "next-speaker" for a in self.agents),
            timeline=Timeline(self.clock.monotonic),
        )

    async def _understanding(
        self, t: Trigger
    ) -> tuple[tuple[str, domain.TurnType], domain.NextSpeakerPrediction | None]:
        """Understanding the latest utterance, as much as the listeners need, and the
        next-speaker prediction (both at once)."""
        # Inner Thoughts agents need the interpretation and the turn type; reactive agents
        # and simulated users the turn type (who is addressed); next-speaker agents only the
        # prediction.
        tl = t.timeline
        if t.thinkers:
            understanding = self.understanding.understand(t.latest, tl)
        elif t.users or any(a.policy == "reactive" for a in t.listeners):
            understanding = self.understanding.turn_type_only(t.latest, tl)
        else:
            understanding = self.understanding.open_turn(t.latest)
        return await asyncio.gather(
            understanding,
            self.understanding.predict_safely(t.latest, tl)
            if t.predicting and t.kind == "new_message"
            else _none(),
        )

    def _turn_at(self, t: Trigger, latest: domain.TurnType) -> domain.TurnType:
        """The turn every participant decides against (:func:`floor.floor_turn`)."""
        return self.floor.turn_at(t.kind, latest)

    def _next_speaker(
        self, t: Trigger, prediction: domain.NextSpeakerPrediction | None
    ) -> tuple[str | None, float | None, str]:
        """The next-speaker baseline: the agent its prediction gives the turn, its probability
        and why (the prediction is published with them); nobody without a next-speaker agent."""
        if not t.predicting:
            return None, None, ""
        chosen, prob, rule = self._next_speaker_turn(t.kind, t.latest, prediction)
        if prediction is not None or t.kind == "pause":
            predicted = prediction or self.understanding.prediction(t.latest.id)
            if predicted is not None:
                self.emit(
                    events.NextSpeakerPredicted(prediction=predicted, chosen=chosen, rule=rule)
                )
        return chosen, prob, rule

    def _next_speaker_turn(
        self,
        trigger: domain.TriggerKind,
        latest: domain.Message,
        prediction: domain.NextSpeakerPrediction | None,
    ) -> tuple[str | None, float | None, str]:
        """Which next-speaker agent gets the turn (see :func:`floor.next_speaker_turn`)."""
        return floor.next_speaker_turn(
            trigger=trigger,
            latest_speaker=latest.speaker,
            prediction=prediction,
            movers=[a.name for a in self.agents if a.policy == "next-speaker"],
            participants=list(self.participants),
            rng=random.Random(f"{self.seed}:{self.step}:anyone"),
        )

    def _baselines(
        self, t: Trigger, turn: domain.TurnType, pick: tuple[str | None, float | None, str]
    ) -> Decided:
        """The baseline agents' decisions (reactive, next-speaker): no thoughts, no score."""
        chosen, prob, rule = pick
        decided: Decided = {}
        for a in t.listeners:
            if a.policy == "inner-thoughts":
                continue
            ctx = self.context(a, t.latest, t.kind, ("", turn), t.silent_steps)
            d = floor.baseline(
                agent=a.name,
                policy=a.policy,
                step=self.step,
                trigger=t.kind,
                turn_type=turn,
                chosen=chosen,
                probability=prob if a.policy == "next-speaker" else None,
                rule=rule,
                speaker=t.said,
            )
            decided[a.name] = (a, TriggerWork(ctx), d)
        return decided

    def _simulated_wishes(self, t: Trigger, turn: domain.TurnType) -> list[domain.Decision]:
        """Whether each listening simulated user speaks (:func:`simulated.decide`)."""
        return [
            simulated.decide(
                u,
                step=self.step,
                trigger=t.kind,
                turn=turn,
                speaker=t.said,
                rng=random.Random(f"{self.seed}:{self.step}:{u.name}:speak"),
            )
            for u in t.users
        ]

    def _settle_floor(
        self, decisions: list[domain.Decision], wishes: list[domain.Decision], turn: domain.TurnType
    ) -> domain.Decision | None:
        """Who takes the floor (:func:`floor.arbitrate`); every decision is published as settled
        (:func:`floor.outcome`) and noted for the silent run."""
        winner = floor.arbitrate(
            [d for d in decisions if d.action == "speak"]
            + [d for d in wishes if d.action == "speak"],
            random.Random(f"{self.seed}:{self.step}:floor"),
            prediction_first=self.settings.room.mixed_floor == "prediction-first",
        )
        for d in [*decisions, *wishes]:
            settled = floor.outcome(d, winner, turn)
            self.silence.note(settled)
            self.emit(events.DecisionMade(decision=settled))
            self.set_state(d.agent, "wants_to_speak" if d is winner else "idle")
        return winner

    async def _articulate(
        self,
        t: Trigger,
        agent: Agent,
        work: TriggerWork,
        winner: domain.Decision,
        turn: domain.TurnType,
    ) -> domain.Message | None:
        """Articulation: the agent that won the floor words its thought (an Inner Thoughts agent)
        or its reply (a baseline), then posts it unless a newer trigger made it stale."""
        thought = (
            agent.reservoir.get(winner.thought_id or 0)
            if winner.policy == "inner-thoughts"
            else None
        )
        self.set_state(agent.name, "speaking")
        tl = t.timeline
        try:
            with tl.stage("articulation", agent=agent.name, after=tl.ids("floor")):
                if thought is not None:
                    text = await agent.articulate(work.ctx, thought)
                else:
                    text = await agent.respond(work.ctx)
        except FATAL:
            raise
        except errors.PlaygroundError as exc:
            # An utterance that cannot be used (cut before its first sentence ended, empty,
            # unreadable): the agent stays silent for this step, and the session goes on.
            self.silence.failed += 1
            self.emit(
                events.ErrorOccurred(
                    where=f"{agent.name} articulation",
                    message=str(exc),
                    error_type=type(exc).__name__,
                )
            )
            return None
        if self.settings.room.pace == "typing":
            with tl.stage("typing", agent=agent.name, after=tl.ids("articulation")):
                await self.clock.sleep(
                    len(text) / self.settings.room.typing_cps
                )  # as long as typing it would take
        if t.generation != self.generation:
            return None  # a newer trigger arrived while articulating: this answer is stale
        if not self.usable_utterance(agent.name, text):
            return None  # nothing worth posting: the agent stays silent for this step
        with tl.stage("post", agent=agent.name, after=tl.ids("articulation", "typing")):
            return await self._post_turn(agent, text, thought, winner, turn)

    async def _post_turn(
        self,
        agent: Agent,
        text: str,
        thought: domain.Thought | None,
        winner: domain.Decision,
        turn: domain.TurnType,
    ) -> domain.Message:
        """Post the agent's message; an interruption leaves the turn pending for the addressee."""
        msg = await self.post(
            agent.name,
            text,
            thought=thought,
            interruption=winner.turn_type == "allocated-other",
            notify=False,
        )
        if winner.turn_type == "allocated-other":
            self.floor.interrupted(turn)  # the interrupted addressee may still answer next
        if thought is not None:
            agent.expressed(thought.id, msg.id, self.step)
            self.emit(
                events.ThoughtExpressed(agent=agent.name, thought_id=thought.id, message_id=msg.id)
            )
        else:
            agent.last_spoke = self.step
        self.arrived.set()
        return msg

    async def _simulated_speaks(
        self, name: str, addressed_by: str | None, gen: int
    ) -> domain.Message | None:
        """A simulated user won the floor: its simulator words the turn (a failing model makes it
        sit the trigger out, reported, unless the server cannot be used at all)."""
        user = self.participants[name]
        assert isinstance(user, SimulatedUser)
        self.set_state(name, "speaking")
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
