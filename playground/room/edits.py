"""The user's edits to a live room: forcing a thought out, thoughts, memories, proactivity,
turn-taking policy, and a human's private notes and labels.

A part the room holds (:class:`playground.room.room.Room` ``.edits``), kept apart because the
room's own concern is one trigger's turn-taking; these are the changes a person makes by hand.
"""

from __future__ import annotations

import dataclasses

from playground import domain, errors, events
from playground.room.participants import Human
from playground.room.state import RoomState
from playground.settings import ProactivitySettings


class Edits:
    """Edits: force-express, thought delete and restore, memories, proactivity, policy, notes."""

    def __init__(self, room: RoomState) -> None:
        self.room = room

    async def force_express(self, agent_name: str, thought_id: int) -> domain.Message:
        """Make an agent say one of its thoughts now, whatever its score.

        The message is marked ``forced``. If the session ends while the thought is being worded
        (Stop pressed right after the click), nothing is posted.

        Raises:
            SessionEnded: the session has ended, before or while the thought was being worded.
            PlaygroundError: the mind's message was empty or a placeholder (not posted).
            KeyError: no such agent or thought.
        """
        self.room.require_open()
        agent = self.room.agent(agent_name)
        thought = agent.reservoir.get(thought_id)
        self.room.generation += 1
        ctx = dataclasses.replace(
            self.room.context(
                agent, self.room.messages[-1] if self.room.messages else None, "new_message", None
            ),
            forced=True,  # the articulation must say this thought, not the one it would choose
        )
        self.room.set_state(agent.name, "speaking")
        try:
            text = await agent.articulate(ctx, thought)
            if not self.room.usable_utterance(agent.name, text):
                raise errors.PlaygroundError(
                    f"{agent.name} could not word thought #{thought.id}: the model's message"
                    " was empty or a placeholder; nothing was posted"
                )
            msg = await self.room.post(agent.name, text, thought=thought, forced=True)
            agent.expressed(thought.id, msg.id, self.room.step)
            self.room.emit(
                events.ThoughtExpressed(
                    agent=agent.name, thought_id=thought.id, message_id=msg.id, forced=True
                )
            )
        finally:
            self.room.set_state(agent.name, "idle")
        return msg

    def delete_thought(self, agent_name: str, thought_id: int) -> None:
        """Delete a thought from an agent's reservoir.

        Raises:
            SessionEnded: the session has ended.
        """
        self.room.require_open()
        self.room.agent(agent_name).reservoir.delete(thought_id)

    def restore_thought(self, agent_name: str, thought_id: int) -> domain.Thought:
        """Undo the deletion of a thought: it is back in the agent's reservoir, as it was.

        Raises:
            SessionEnded: the session has ended.
            PlaygroundError: the thought was not deleted (or is already back).
        """
        self.room.require_open()
        return self.room.agent(agent_name).reservoir.restore(thought_id)

    async def add_memory(
        self, agent_name: str, kind: domain.MemoryKind, text: str, weight: float = 1.0
    ) -> domain.MemoryItem:
        """Add a long-term memory to an agent.

        Raises:
            SessionEnded: the session has ended.
            PlaygroundError: the text is empty.
        """
        self.room.require_open()
        if not text.strip():
            raise errors.PlaygroundError("a memory needs some text")
        return await self.room.agent(agent_name).memory.add(
            kind, text.strip(), weight=weight, step=self.room.step
        )

    async def edit_memory(
        self,
        agent_name: str,
        memory_id: int,
        *,
        kind: domain.MemoryKind | None = None,
        text: str | None = None,
        weight: float | None = None,
    ) -> domain.MemoryItem:
        """Change a memory's kind, text or weight.

        Raises:
            SessionEnded: the session has ended.
        """
        self.room.require_open()
        return await self.room.agent(agent_name).memory.edit(
            memory_id, kind=kind, text=text, weight=weight
        )

    def delete_memory(self, agent_name: str, memory_id: int) -> None:
        """Delete a memory.

        Raises:
            SessionEnded: the session has ended.
        """
        self.room.require_open()
        self.room.agent(agent_name).memory.delete(memory_id)

    def set_proactivity(self, agent_name: str, proactivity: ProactivitySettings) -> None:
        """Change an agent's proactivity settings.

        Raises:
            SessionEnded: the session has ended.
        """
        self.room.require_open()
        agent = self.room.agent(agent_name)
        agent.proactivity = proactivity
        self.room.emit(
            events.ProactivityChanged(name=agent.name, proactivity=proactivity.model_dump())
        )

    def set_policy(self, agent_name: str, policy: domain.Policy) -> None:
        """Change how an agent takes turns; it applies from the next trigger.

        Raises:
            SessionEnded: the session has ended.
            PlaygroundError: an unknown policy.
        """
        self.room.require_open()
        if policy not in domain.POLICIES:
            raise errors.PlaygroundError(
                f"unknown turn-taking policy {policy!r}; choose one of {', '.join(domain.POLICIES)}"
            )
        agent = self.room.agent(agent_name)
        agent.policy = policy
        self.room.emit(events.PolicyChanged(name=agent.name, policy=policy))
        self.room.follow_seats(f"{agent.name} now takes turns as {policy}")

    def annotate(self, author: str, message_id: int, text: str) -> events.AnnotationAdded:
        """A human's private note: a *reason* on their own message, a *reaction* on anyone else's.

        Notes are recorded and shown only to their author; no agent prompt ever includes them.
        A note is a judgment on what was said, not a change to the conversation: it is taken
        also after the session ended (an answer given just before Stop is not lost).

        Raises:
            PlaygroundError: not a human, no such message, or an empty note.
        """
        if not isinstance(self.room.participants.get(author), Human):
            raise errors.PlaygroundError(
                f"only a human participant can add private notes ({author!r} is not one)"
            )
        if not 1 <= message_id <= len(self.room.messages):
            raise errors.PlaygroundError(f"there is no message #{message_id}")
        if not text.strip():
            raise errors.PlaygroundError("a note needs some text")
        kind = "reason" if self.room.messages[message_id - 1].speaker == author else "reaction"
        event = events.AnnotationAdded(
            message_id=message_id, author=author, note_kind=kind, text=text.strip()
        )
        self.room.emit(event)
        return event

    def record_label(self, author: str, message_id: int, question: str, answer: str) -> None:
        """A one-click answer to an in-the-moment question about a message (taken also after the
        session ended, like :meth:`annotate`).

        Raises:
            PlaygroundError: the author is not a human participant.
        """
        if not isinstance(self.room.participants.get(author), Human):
            raise errors.PlaygroundError(
                f"only a human participant can answer questions ({author!r} is not one)"
            )
        self.room.emit(
            events.LabelRecorded(
                message_id=message_id, author=author, question=question, answer=answer
            )
        )
