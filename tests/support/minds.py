"""What the LLM mind is asked in tests of its utterances: one small chat and a thought."""

from __future__ import annotations

from playground import domain
from playground.cognition.base import Articulation, Context


def chat_context() -> Context:
    """Ana's turn after Ben asked the group (Ana, Ben, Chloe) about their plans."""
    msg = domain.Message(id=1, speaker="Ben", text="Anyone got plans for tonight?", step=0, at="")
    return Context(
        agent="Ana",
        persona=None,
        participants=["Ana", "Ben", "Chloe"],
        recent=[msg],
        latest=msg,
        trigger="new_message",
        step=1,
    )


def articulation(text: str) -> Articulation:
    """Ana's System-1 thought ``text``, to be said."""
    return Articulation(
        domain.Thought(id=2, agent="Ana", text=text, system=1, created_step=1, last_access=1)
    )
