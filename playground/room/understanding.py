"""Understanding an utterance, once per message and shared by every agent: its interpretation
and turn type (what Inner Thoughts agents need; reactive agents and simulated users need the turn
type), and the next-speaker baseline's prediction.

A part the room holds (:class:`playground.room.room.Room` ``.understanding``), owning what it
found: each result is asked of the mind once per message and published once, whichever trigger
asked first.
"""

from __future__ import annotations

import asyncio

from playground import domain, errors, events
from playground.room import simulated
from playground.room.state import FATAL, RECENT, RoomState
from playground.room.timeline import Timeline

#: Messages the next-speaker predictor reads (docs/spec.md §1.9.1: the last 5).
PREDICTOR_WINDOW = 5


class Understanding:
    """The interpretation, turn type and next-speaker prediction of a message, each asked once."""

    def __init__(self, room: RoomState) -> None:
        self.room = room
        self._understood: dict[int, tuple[str, domain.TurnType]] = {}
        self._turn_types: dict[int, domain.TurnType] = {}
        self._predictions: dict[int, domain.NextSpeakerPrediction] = {}

    async def understand(self, msg: domain.Message, tl: Timeline) -> tuple[str, domain.TurnType]:
        """Interpretation and turn type (what Inner Thoughts agents need), once per message."""
        if msg.id not in self._understood:
            names = list(self.room.participants)
            recent = self.room.messages[max(0, msg.id - RECENT) : msg.id - 1]

            async def interpret() -> str:
                with tl.stage("interpretation"):
                    return await self.room.cognition.interpret(msg, recent, names)

            interp, turn = await asyncio.gather(interpret(), self.turn_type(msg, tl))
            if msg.id not in self._understood:
                self._understood[msg.id] = (interp, turn)
                with tl.stage(
                    "embeddings", detail="interpretation", after=tl.ids("interpretation")
                ):
                    await self.room.embedder.embed_one(interp)
                self.room.emit(
                    events.MessageInterpreted(
                        interpretation=domain.Interpretation(
                            message_id=msg.id, text=interp, origin=self.room.cognition.name
                        )
                    )
                )
        return self._understood[msg.id]

    async def turn_type(self, msg: domain.Message, tl: Timeline) -> domain.TurnType:
        """Open, or allocated to a named participant (Inner Thoughts and reactive agents need it)."""
        if msg.id not in self._turn_types:
            names = list(self.room.participants)
            recent = self.room.messages[max(0, msg.id - RECENT) : msg.id - 1]
            dyad = simulated.dyad_turn(msg, names) if self.room.simulated_users else None
            with tl.stage("turn type"):
                turn = dyad or await self.room.cognition.predict_turn_type(msg, recent, names)
            if msg.id not in self._turn_types:
                self._turn_types[msg.id] = turn
                self.room.emit(events.TurnTypePredicted(turn_type=turn))
        return self._turn_types[msg.id]

    async def predict(self, msg: domain.Message) -> domain.NextSpeakerPrediction:
        """The next-speaker baseline's prediction after ``msg``: from the last 5 messages and the
        participants' names only (docs/spec.md §1.9.1), once per message."""
        if msg.id not in self._predictions:
            recent = self.room.messages[max(0, msg.id - PREDICTOR_WINDOW) : msg.id]
            self._predictions[msg.id] = await self.room.cognition.predict_next_speaker(
                recent, list(self.room.participants)
            )
        return self._predictions[msg.id]

    def prediction(self, message_id: int) -> domain.NextSpeakerPrediction | None:
        """The prediction made after this message, if one was asked."""
        return self._predictions.get(message_id)

    async def turn_type_only(
        self, msg: domain.Message, tl: Timeline
    ) -> tuple[str, domain.TurnType]:
        """The turn type only (reactive agents and simulated users: who is addressed)."""
        return "", await self.turn_type(msg, tl)

    async def open_turn(self, msg: domain.Message) -> tuple[str, domain.TurnType]:
        """No Inner Thoughts or reactive listener: nobody needs the turn type, so none is asked for."""
        return "", domain.TurnType(message_id=msg.id, kind="open", origin="not predicted")

    async def predict_safely(
        self, msg: domain.Message, tl: Timeline
    ) -> domain.NextSpeakerPrediction | None:
        """The prediction, or None (reported) when the predictor's answer could not be used."""
        try:
            with tl.stage("prediction"):
                return await self.predict(msg)
        except FATAL:
            raise
        except errors.PlaygroundError as exc:
            self.room.emit(
                events.ErrorOccurred(
                    where="next-speaker predictor", message=str(exc), error_type=type(exc).__name__
                )
            )
            return None
