"""Simulated users: the two minds that answer for one (a model, or offline), and which to use.

Both are :class:`~playground.cognition.user.UserSimulator` s: they turn a private profile and a
:class:`~playground.cognition.user.UserView` into a
:class:`~playground.domain.simulated_user.UserTurn`, a message of 20–100 characters and the
hidden state behind it. :func:`simulator_for` picks the one for an engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from playground import errors
from playground.cognition.user import UserSimulator, UserView
from playground.domain.simulated_user import USER_LENGTH, UserProfile, UserTurn
from playground.storm import parse, prompts
from playground.storm.offline_user import offline_turn

if TYPE_CHECKING:
    from playground.embedding.cache import CachingEmbedder
    from playground.factory import Engine
    from playground.llm.client import ChatClient

#: What to do with a message shorter than 20 characters (fidelity note in the README): keep it
#: as it is (people do write "ok thanks"), or ask the model once more and keep the longer one.
ShortMessages = Literal["keep", "retry"]


def parse_user_answer(
    text: str, *, previous_clarity: float | None = None, start: float = parse.DEFAULT_START_CLARITY
) -> UserTurn:
    """A turn read from a model's answer (JSON, the paper's tagged text, or the bare message);
    see :func:`playground.storm.parse.parse_user_answer`.

    Raises:
        LLMOutputError: there is no usable message at all.
    """
    return parse.parse_user_answer(text, previous_clarity=previous_clarity, start=start)


class LLMUserSimulator:
    """A simulated user answered by a chat model through the structured JSON schema, read
    tolerantly (:mod:`playground.storm.parse`).

    Args:
        client: the chat client.
        short_messages: ``keep`` a message under 20 characters, or ``retry`` once.
        max_tokens: the answer's token budget.
    """

    def __init__(
        self, client: ChatClient, *, short_messages: ShortMessages = "keep", max_tokens: int = 400
    ) -> None:
        self.client = client
        self.origin = client.model
        self.short_messages = short_messages
        self.max_tokens = max_tokens

    async def turn(self, profile: UserProfile, view: UserView) -> UserTurn:
        """Ask the model for the user's next message and hidden state.

        Raises:
            LLMOutputError: the answer has no usable message.
            LLMError: the server could not be used.
        """
        msgs = prompts.user_messages(
            profile, view.me, view.messages, view.previous, view.addressed_by
        )
        previous = view.previous[-1].clarity if view.previous else None
        start = parse.start_clarity(profile.uncertainty)
        turn = await self._ask(msgs, previous, start)
        if self.short_messages == "retry" and len(turn.text) < USER_LENGTH[0]:
            again = [
                *msgs,
                {"role": "assistant", "content": turn.text},
                {"role": "user", "content": prompts.retry_short(len(turn.text))},
            ]
            try:
                second = await self._ask(again, previous, start)
            except errors.LLMOutputError:
                return turn
            if len(second.text) > len(turn.text):
                return second
        return turn

    async def _ask(
        self, msgs: list[dict[str, str]], previous: float | None, start: float
    ) -> UserTurn:
        res = await self.client.chat_json(
            "simulated user",
            msgs,
            prompts.UserAnswerOut,
            max_tokens=self.max_tokens,
            lenient=True,
        )
        return parse.parse_user_answer(res.text, previous_clarity=previous, start=start)


class OfflineUserSimulator:
    """A simulated user without a model: real MiniLM embeddings, seeded templates.

    Deterministic by ``seed``, the user and its turn. Clarity rises when the latest reply is
    close (cosine) to one of the user's needs, more slowly at higher uncertainty and difficulty;
    satisfaction follows how relevant the reply was; each message reveals the next need (known
    attributes only), vaguer at higher difficulty. See :mod:`playground.storm.offline_user`.

    Args:
        embedder: the cached MiniLM embedder the room uses.
        seed: the session seed.
    """

    origin = "offline engine"

    def __init__(self, embedder: CachingEmbedder, seed: int = 0) -> None:
        self.embedder = embedder
        self.seed = seed

    async def turn(self, profile: UserProfile, view: UserView) -> UserTurn:
        """The user's next message and hidden state (format ``offline``)."""
        return await offline_turn(
            self.embedder,
            self.seed,
            profile,
            me=view.me,
            messages=view.messages,
            previous=view.previous,
            addressed_by=view.addressed_by,
        )


def simulator_for(engine: Engine, *, seed: int = 0, short_messages: str = "keep") -> UserSimulator:
    """The simulated-user mind for an engine: the model behind its client, else the offline one.

    Args:
        engine: the room's engine (its client, or its embedder for the offline simulator).
        seed: the session seed (the offline simulator's draws depend on it).
        short_messages: ``keep`` or ``retry`` a model's message under 20 characters (the room
            setting ``simulated_short_messages``).

    Raises:
        SettingsError: an unknown ``short_messages``.
    """
    if engine.client is None:
        return OfflineUserSimulator(engine.embedder, seed)
    if short_messages not in ("keep", "retry"):
        raise errors.SettingsError(
            f"simulated_short_messages: {short_messages!r} is not 'keep' or 'retry'"
        )
    return LLMUserSimulator(engine.client, short_messages=short_messages)  # type: ignore[arg-type]
