"""A judge model's turn-pair analysis of a STORM dialogue (STORM paper §3.2 and appendix M;
docs/spec.md §2.7).

For every pair of consecutive user turns i → i+1 the judge reads the two user messages, the
assistant's reply to each, and what the assistant never saw: the user's inner thoughts, satisfaction
score and its explanation at turn i+1. It labels the change of the user's satisfaction and of the
clarity of the user's own goal as Improve, Not Change or Decrease. The clarity labels give
**Clarify** (:func:`playground.storm.metrics.clarify_score`). The user's own clarity rating is not
shown to the judge: Clarify must not be the self-rated figure in disguise.

The answer is a JSON schema; labels are read whatever their case and spacing ("not_change",
" IMPROVED "). An answer that still cannot be read after the client's one corrective retry skips
that pair: it is reported (``on_skip``, and a warning in the log), never invented.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

import sqlite_utils
from pydantic import BaseModel, field_validator

from playground import errors
from playground.clock import SystemClock
from playground.domain.simulated_user import Change, TurnJudgement
from playground.llm.client import ChatClient
from playground.storm.dialogues import DialogueTurn, load_dialogue, load_judgements

log = logging.getLogger(__name__)
_CLOCK = SystemClock()
Label = Literal["Improve", "Not Change", "Decrease"]
#: The judge's labels, as read case- and spacing-blind, with the inflections models like to use.
_LABELS: dict[str, Label] = {
    "improve": "Improve", "improved": "Improve", "improves": "Improve",
    "improvement": "Improve",
    "not change": "Not Change", "not changed": "Not Change", "no change": "Not Change",
    "unchanged": "Not Change", "notchange": "Not Change",
    "decrease": "Decrease", "decreased": "Decrease", "decreases": "Decrease",
}  # fmt: skip
_STORED: dict[Label, Change] = {
    "Improve": "improve",
    "Not Change": "not change",
    "Decrease": "decrease",
}
#: One label's shape in the answer: each field described, no value a model could copy.
_CHANGE_SHAPE = (
    '{"change": <"Improve", "Not Change" or "Decrease">,'
    ' "explanation": <one or two sentences: what changed, or what is still vague>}'
)
SYSTEM = (
    "You review conversations between a user and an assistant, two consecutive user turns at a"
    " time. Besides the visible messages you are shown what the assistant never saw: the user's"
    " private inner thoughts and satisfaction at the later turn. Compare the later turn with the"
    " earlier one and give two labels, each one of Improve, Not Change or Decrease.\n"
    "- satisfaction: did the assistant's reply leave the user more satisfied, as satisfied, or"
    " less satisfied? Ground it in the satisfaction score and the user's own explanation.\n"
    "- clarity: can the user now state what they want (the goal, preferences, constraints, how"
    " they will judge the result) more clearly, as clearly, or less clearly than at the earlier"
    " turn? Ground it in the later message and the inner thoughts; say what became clearer or"
    " what is still vague.\n"
    f'Answer with the JSON object only: {{"satisfaction": {_CHANGE_SHAPE}, "clarity":'
    f" {_CHANGE_SHAPE}}}."
)


def normalise_label(value: object) -> str:
    """A label as the schema spells it, whatever its case, spacing or separators.

    Unknown text is returned as it came, so that validation names it.
    """
    if not isinstance(value, str):
        return str(value)
    key = re.sub(r"[\s_\-]+", " ", value).strip(" .!\"'").lower()
    return _LABELS.get(key, value)


class ChangeAnswer(BaseModel):
    """One label with the judge's reason."""

    change: Label
    explanation: str

    @field_validator("change", mode="before")
    @classmethod
    def _tolerant(cls, value: object) -> str:
        return normalise_label(value)


class PairAnswer(BaseModel):
    """The judge's answer for one turn pair."""

    satisfaction: ChangeAnswer
    clarity: ChangeAnswer


def _reply(replies: Sequence[str]) -> str:
    return "\n".join(r.strip() for r in replies if r.strip()) or "(no reply)"


def pair_messages(before: DialogueTurn, after: DialogueTurn) -> list[dict[str, str]]:
    """The judge's prompt for the pair ``before`` → ``after``."""
    h = after.state
    score = (
        "none given (the user's answer had no readable score)"
        if h.satisfaction_missing
        else f"{h.satisfaction:.2f} (0 = not at all, 1 = fully satisfied)"
    )
    i, j = before.turn, after.turn
    text = "\n".join(
        [
            f"Turn {i} -> Turn {j}",
            "",
            f"User message (turn {i}): {before.message}",
            f"Assistant reply (turn {i}): {_reply(before.replies)}",
            f"User message (turn {j}): {after.message}",
            f"Assistant reply (turn {j}): {_reply(after.replies)}",
            "",
            f"User's private inner thoughts (turn {j}): {h.inner_thoughts or '(none given)'}",
            f"User's private satisfaction (turn {j}): {score}",
            f"User's explanation of it: {h.satisfaction_explanation or '(none given)'}",
        ]
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


def _judgement(pair: int, answer: PairAnswer) -> TurnJudgement:
    return TurnJudgement(
        pair=pair,
        clarity_change=_STORED[answer.clarity.change],
        satisfaction_change=_STORED[answer.satisfaction.change],
        explanation=f"Satisfaction: {answer.satisfaction.explanation.strip()}"
        f"\nClarity: {answer.clarity.explanation.strip()}",
    )


async def judge_dialogue(
    client: ChatClient,
    turns: Sequence[DialogueTurn],
    *,
    pairs: Iterable[int] | None = None,
    on_skip: Callable[[int, str], None] | None = None,
) -> list[TurnJudgement]:
    """Judge each consecutive pair of user turns (``pair`` i is turn i → i+1).

    The pairs are asked concurrently (the client limits how many calls are in flight).

    Args:
        client: the judge model.
        turns: the user's turns in order (see :func:`playground.storm.dialogues.load_dialogue`).
        pairs: only these pairs (default: all, 0 … len(turns) − 2).
        on_skip: called with the pair and the reason when an answer could not be read even after
            the client's retry; that pair is left out of the result.

    Returns:
        The judgements that could be read, by pair.

    Raises:
        LLMError: the server cannot be used (unreachable, key refused, kept failing...).
    """
    wanted = sorted(set(range(len(turns) - 1) if pairs is None else pairs))
    bad = [p for p in wanted if not 0 <= p < len(turns) - 1]
    if bad:
        raise ValueError(f"no turn pair {bad[0]} in a dialogue of {len(turns)} turns")

    async def one(p: int) -> TurnJudgement | None:
        try:
            res = await client.chat_json(
                f"turn-pair analysis {p}", pair_messages(turns[p], turns[p + 1]), PairAnswer,
                max_tokens=600,
            )  # fmt: skip
        except errors.LLMOutputError as exc:
            log.warning("judge: turn pair %d → %d skipped: %s", p, p + 1, exc)
            if on_skip is not None:
                on_skip(p, str(exc))
            return None
        return _judgement(p, res.parsed)

    found = await asyncio.gather(*(one(p) for p in wanted))
    return [j for j in found if j is not None]


def store_judgements(
    db: sqlite_utils.Database,
    session_id: str,
    judge: str,
    judgements: Sequence[TurnJudgement],
    *,
    replace_all: bool = False,
) -> None:
    """Write judgements to ``storm_judgements`` (a pair judged again replaces its row).

    Args:
        replace_all: first delete every row of this judge for the session (``--force``).
    """
    now = _CLOCK.now_iso()
    with db.atomic():
        if replace_all:
            db.execute(
                "DELETE FROM storm_judgements WHERE session_id = ? AND judge = ?",
                [session_id, judge],
            )
        for j in judgements:
            db.execute(
                "INSERT OR REPLACE INTO storm_judgements (session_id, judge, pair, clarity_change,"
                " satisfaction_change, explanation, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [session_id, judge, j.pair, j.clarity_change, j.satisfaction_change,
                 j.explanation, now],
            )  # fmt: skip


def judge_name(client: ChatClient) -> str:
    """How a judge is named in ``storm_judgements``: ``judge:<model>``."""
    return f"judge:{client.model}"


async def judge_session(
    db: sqlite_utils.Database,
    session_id: str,
    client: ChatClient,
    *,
    judge: str | None = None,
    force: bool = False,
    on_skip: Callable[[int, str], None] | None = None,
) -> list[TurnJudgement]:
    """Judge a session's STORM dialogue and store the result in ``storm_judgements``.

    Idempotent: the pairs this judge has already labelled are not asked again (a session fully
    judged costs no call), unless ``force``, which judges every pair again and replaces this
    judge's rows once the new answers are in. Pairs skipped on an unreadable answer are asked
    again by the next call.

    Args:
        db: the session database (written).
        session_id: the full session id.
        client: the judge model.
        judge: the name stored (default ``judge:<model>``).
        force: judge every pair again.
        on_skip: see :func:`judge_dialogue`.

    Returns:
        Every stored judgement of this judge for the session, by pair.

    Raises:
        SessionNotFound: no such session.
        PlaygroundError: the session has no simulated user (or several, none a dyadic run's).
        LLMError: the server cannot be used.
    """
    name = judge or judge_name(client)
    dialogue = load_dialogue(db, session_id)
    expected = range(len(dialogue.turns) - 1)
    done = {j.pair for j in load_judgements(db, session_id, name)}
    todo = list(expected) if force else [p for p in expected if p not in done]
    if todo:
        new = await judge_dialogue(client, dialogue.turns, pairs=todo, on_skip=on_skip)
        store_judgements(db, session_id, name, new, replace_all=force)
    return load_judgements(db, session_id, name)
