"""The judge's prompts and answer schemas (our own wording).

The statements are the human rating form's, word for word (:data:`playground.rating.store.
CONVERSATION_METRICS`, shown to raters as "Label — statement"), on the same 1–7 agreement scale.
The judge reads the blind transcript only (:mod:`playground.judging.blind`). Every answer gives
its reason *before* its rating, so the rating is the last thing the model decides, and the rating
is a bare integer: its digit is one token whose logprobs give the score.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, create_model

from playground.rating.store import CONVERSATION_METRICS, LIKERT_MAX, LIKERT_MIN, Item

METRICS: dict[str, Item] = {item.key: item for item in CONVERSATION_METRICS}

SYSTEM = (
    "You are an independent rater of recorded group conversations. You read one conversation,"
    " shown as its messages in order, each with the name of who said it, and you say how much you"
    f" agree with statements about it on a scale from {LIKERT_MIN} (strongly disagree) to"
    f" {LIKERT_MAX} (strongly agree); {(LIKERT_MIN + LIKERT_MAX) // 2} means neither agree nor"
    " disagree. Judge only from the messages shown. Use the whole scale: keep 1 and 7 for"
    " conversations where the statement is clearly false or clearly true. For each statement"
    " first give a short reason (one or two sentences that point at something in the"
    " conversation), then the rating as a single whole number. Answer with the JSON object only."
)

PAIR_SYSTEM = (
    "You compare two recorded group conversations, A and B, each shown as its messages in order"
    " with the name of who said each one. Decide which of the two felt more natural: closer to how"
    " people really talk with each other, with turns taken at sensible moments. Judge only from"
    " the messages shown; which one is shown first says nothing about which is better. Give a"
    " short reason (one or two sentences, with an example from the conversations) first, then"
    " your choice, A or B. Answer with the JSON object only:"
    ' {"reason": <one or two sentences, with an example from the conversations>,'
    ' "choice": <"A" or "B">}.'
)

#: What the reply shapes show for the reason and the rating: a description, never a sample value.
REASON_SLOT = "<one or two sentences that point at something in the conversation>"
RATING_SLOT = f"<a whole number from {LIKERT_MIN} to {LIKERT_MAX}>"

SCALE = (
    f"{LIKERT_MIN} = strongly disagree, {(LIKERT_MIN + LIKERT_MAX) // 2} = neither agree nor"
    f" disagree, {LIKERT_MAX} = strongly agree"
)


class MetricAnswer(BaseModel):
    """The judge's answer for one statement."""

    reason: str
    rating: int = Field(ge=LIKERT_MIN, le=LIKERT_MAX)


class PairAnswer(BaseModel):
    """The judge's choice between two conversations."""

    reason: str
    choice: Literal["A", "B"]


@functools.lru_cache(maxsize=128)
def metrics_answer(keys: tuple[str, ...]) -> type[BaseModel]:
    """The answer schema for several statements at once: ``{key: MetricAnswer, …}`` in order.

    Raises:
        KeyError: a key is not one of the conversation metrics.
    """
    fields = {METRICS[k].key: (MetricAnswer, ...) for k in keys}
    model: type[BaseModel] = create_model("MetricsAnswer", **fields)  # type: ignore[call-overload]
    return model


def _statement(item: Item) -> str:
    return f"{item.label} — {item.statement}"


def _about(transcript: str, question: str) -> list[dict[str, str]]:
    """The rating prompt: the judge's instructions, then the conversation and the question."""
    user = f"The conversation:\n\n{transcript}\n\n{question}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def metric_messages(transcript: str, item: Item) -> list[dict[str, str]]:
    """The prompt for one statement about one conversation."""
    return _about(
        transcript,
        f"Statement: {_statement(item)}\n"
        f"How much do you agree? ({SCALE})\n"
        f'Reply as {{"reason": {REASON_SLOT}, "rating": {RATING_SLOT}}}.',
    )


def all_metrics_messages(transcript: str, items: Sequence[Item]) -> list[dict[str, str]]:
    """The prompt for several statements about one conversation, answered in one reply."""
    listed = "\n".join(f"- {item.key}: {_statement(item)}" for item in items)
    keys = ", ".join(f'"{item.key}"' for item in items)
    return _about(
        transcript,
        f"Statements:\n{listed}\n"
        f"How much do you agree with each one, on its own? ({SCALE})\n"
        f"Reply with one JSON object whose keys are {keys}, in that order, each holding"
        f' {{"reason": {REASON_SLOT}, "rating": {RATING_SLOT}}}.',
    )


def pair_messages(first: str, second: str) -> list[dict[str, str]]:
    """The prompt for a pairwise choice: ``first`` is shown as A, ``second`` as B."""
    user = (
        f"Conversation A:\n\n{first}\n\n"
        f"Conversation B:\n\n{second}\n\n"
        "Which conversation felt more natural?"
    )
    return [{"role": "system", "content": PAIR_SYSTEM}, {"role": "user", "content": user}]
