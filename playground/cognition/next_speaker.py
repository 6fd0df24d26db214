"""Next-speaker prediction, the paper's baseline: a name, or ``anyone`` (docs/spec.md §1.9.1).

After a message, a predictor reads the last (up to) 5 messages and the participants' names and
says who speaks next. The labels follow the paper's "speaker name or *anyone*" scheme: a
participant's name when the turn is handed to them, ``anyone`` (:data:`domain.ANYONE`) when it is
open for whoever self-selects.

Two predictors share that contract:

* :func:`predict_with_llm` asks a chat model and reads its probabilities from the answer token's
  logprobs when the server gives them (method ``logprobs``), else puts probability 1 on the parsed
  answer (method ``parsed``);
* :func:`playground.cognition.offline.next_speaker.predict_offline` is the offline engine's
  deterministic heuristic (method ``offline-heuristic``): names, adjacency pairs, recency and
  open questions.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, create_model

from playground import domain
from playground.llm.responses import TokenLogprob

if TYPE_CHECKING:  # the offline predictor runs without importing the openai SDK
    from playground.llm.client import ChatClient

#: The paper's prediction window: the last five utterances.
WINDOW = 5
#: Room for ``{"next_speaker": "<a long name>"}`` and the whitespace some servers add.
MAX_TOKENS = 40
LABEL = "next speaker"

_ANSWER_KEY = re.compile(r'"next_speaker"\s*:\s*"')
_NOT_NAME = " \t\r\n\"'@,.:;!?{}"


def labels(participants: Sequence[str]) -> list[str]:
    """The labels offered: each participant's name once (first spelling wins), then ``anyone``."""
    seen: set[str] = set()
    out: list[str] = []
    for p in participants:
        key = p.casefold()
        if p and key not in seen and key != domain.ANYONE:
            seen.add(key)
            out.append(p)
    return [*out, domain.ANYONE]


def resolve(answer: str, offered: Sequence[str]) -> str:
    """The label an answer names: case-insensitive, a leading ``@`` and quotes ignored.

    An answer that names no label (a stranger, "nobody", an empty string) counts as ``anyone``:
    the model did not hand the turn to anyone in the room.
    """
    said = answer.strip().strip("\"'").strip().lstrip("@").strip().casefold()
    return next((label for label in offered if label.casefold() == said), domain.ANYONE)


# -- the LLM predictor ------------------------------------------------------------------------


@functools.lru_cache(maxsize=128)
def answer_schema(offered: tuple[str, ...]) -> type[BaseModel]:
    """The response schema: ``{"next_speaker": <one of the labels>}``.

    The labels go into the JSON schema sent as an ``enum``, so a server that honours strict
    schemas can only answer a label; the answer is still *read* as any string, so a server that
    ignores the schema and answers something else is scored as ``anyone`` rather than failing.
    """
    return create_model(
        "NextSpeakerOut",
        next_speaker=(
            str,
            Field(
                description="The next speaker's name, or 'anyone' when the turn is open.",
                json_schema_extra={"enum": list(offered)},
            ),
        ),
    )


#: The predictor's instructions (stable, first: a server's prompt cache reuses them); the chat
#: and the names asked about follow in the user message.
SYSTEM = (
    "You follow turn-taking in group chats and say who will write next. You are shown the"
    " participants and the last messages, oldest first. If the last message hands the turn to"
    " one participant (asks them something, answers them, calls on them by name), give that"
    " participant's name. If the turn is open and whoever feels like it may take it, give"
    f' "{domain.ANYONE}". Answer in JSON: {{"next_speaker": <one participant\'s name, or'
    f' "{domain.ANYONE}">}}.'
)


def prompt_messages(
    recent: Sequence[domain.Message], participants: Sequence[str]
) -> list[dict[str, str]]:
    """Our prompt: the instructions, then the number of participants and their names, then the
    last 5 messages."""
    offered = labels(participants)
    names = offered[:-1]
    lines = "\n".join(f"- {m.speaker}: {m.text}" for m in recent[-WINDOW:])
    latest = recent[-1].speaker
    choices = ", ".join(f'"{n}"' for n in names)
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": (
                f"A group chat has {len(names)} participants: {', '.join(names)}.\n\n"
                f"Its last messages, oldest first:\n{lines}\n\n"
                f"Who writes the next message after {latest}'s? Answer with one of {choices}"
                f' or "{domain.ANYONE}".'
            ),
        },
    ]


def distribution_from_tokens(
    tokens: Sequence[TokenLogprob], offered: Sequence[str], predicted: str
) -> dict[str, float] | None:
    """The labels' probabilities read from the first token of the answer's value.

    The token sampled there carries the answer actually given, so its probability goes to
    ``predicted`` (the label the whole answer resolved to: a garbage answer's mass goes to
    ``anyone``, as the answer itself does). Each other top alternative goes to the labels it is
    a case-insensitive prefix of (spaces, quotes and ``@`` ignored), split evenly when several
    match ("Al" for Alice and Alan); alternatives that start no label are dropped. The result is
    normalised over the labels.

    Returns:
        Every label with its probability (summing to 1), or None when the tokens hold no answer
        value or no top alternatives for it.
    """
    text = "".join(t.token for t in tokens)
    found = _ANSWER_KEY.search(text)
    if found is None:
        return None
    pos = found.end()
    while pos < len(text) and text[pos] in " @":
        pos += 1
    start = 0
    first: TokenLogprob | None = None
    for tok in tokens:
        end = start + len(tok.token)
        if start <= pos < end:
            first = tok
            break
        start = end
    if first is None or not first.top:
        return None
    mass = dict.fromkeys(offered, 0.0)
    mass[predicted] += math.exp(first.logprob)
    for alt, logprob in first.top:
        if alt == first.token:
            continue  # the sampled token, counted above
        stem = alt.strip(_NOT_NAME).casefold()
        hits = [label for label in offered if stem and label.casefold().startswith(stem)]
        for label in hits:
            mass[label] += math.exp(logprob) / len(hits)
    total = sum(mass.values())
    if not total > 0:
        return None
    return {label: round(p / total, 6) for label, p in mass.items()}


async def predict_with_llm(
    client: ChatClient,
    recent: Sequence[domain.Message],
    participants: Sequence[str],
    *,
    method: str = "auto",
    samples: int = 20,
) -> domain.NextSpeakerPrediction:
    """Ask the model who speaks after ``recent[-1]``: a participant's name or ``anyone``.

    Args:
        client: the chat client (its model name is recorded as the origin).
        recent: the last messages, oldest first; only the last 5 are shown. The prediction is for
            the turn after the last one.
        participants: every name in the room, the latest speaker included.

    Returns:
        The prediction; ``probabilities`` covers every participant and ``anyone``. Method
        ``logprobs`` when the server returned top alternatives for the answer's first token
        (see :func:`distribution_from_tokens`), else ``parsed`` (probability 1 on the answer).
        An answer that is not a label counts as ``anyone``. Where the server gives no logprobs
        (or ``method`` is ``sampled``) the answer is sampled ``samples`` times at temperature 1
        and the empirical distribution over the labels is used (method ``sampled``).

    Raises:
        ValueError: ``recent`` is empty.
        LLMError: the call failed (unreachable, key refused, unreadable answer after a retry...).
    """
    if not recent:
        raise ValueError("a next-speaker prediction needs at least one message")
    from playground.llm import rating  # the openai SDK only for a model's predictions

    offered = labels(participants)
    how = rating.resolve(client, method)
    if how == "sampled":
        got = await client.sample_json(
            LABEL,
            prompt_messages(recent, participants),
            answer_schema(tuple(offered)),
            samples=samples,
            max_tokens=MAX_TOKENS,
        )
        said = [resolve(str(g.next_speaker), offered) for g in got]  # type: ignore[attr-defined]
        if said:
            dist = {label: round(said.count(label) / len(said), 6) for label in offered}
            return domain.NextSpeakerPrediction(
                message_id=recent[-1].id,
                predicted=max(offered, key=lambda label: (dist[label], -offered.index(label))),
                probabilities=dist,
                method="sampled",
                origin=client.model,
            )
    res = await client.chat_json(
        LABEL,
        prompt_messages(recent, participants),
        answer_schema(tuple(offered)),
        logprobs=how == "logprobs",
        max_tokens=MAX_TOKENS,
    )
    predicted = resolve(str(res.parsed.next_speaker), offered)
    found = distribution_from_tokens(res.tokens, offered, predicted) if res.tokens else None
    used: domain.ScoreMethod = "logprobs"
    if found is None:
        found = {label: 1.0 if label == predicted else 0.0 for label in offered}
        used = "parsed"
    return domain.NextSpeakerPrediction(
        message_id=recent[-1].id,
        predicted=predicted,
        probabilities=found,
        method=used,
        origin=client.model,
    )
