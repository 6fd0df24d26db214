"""The offline engine's next-speaker prediction: a fixed, deterministic rule (docs/spec.md §1.9.1).

The labels and the window of 5 messages are those of :mod:`playground.cognition.next_speaker`,
which also holds the LLM predictor; this one reads names, adjacency pairs, recency and open
questions (method ``offline-heuristic``), with no language model and no dice.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from playground import domain
from playground.cognition.next_speaker import WINDOW, labels
from playground.cognition.offline.forming import addressee
from playground.cognition.offline.mind import NAME, is_question, named_in

# Logits of the heuristic (see predict_offline).
_NAMED = 2.0
_ADDRESSED = 1.5
_PARTNER = 1.0
_RECENT = 0.5
_LATEST_SPEAKER = -1.5
_ANYONE = 2.0
_OPEN_QUESTION = 1.0
_ANYONE_IF_ADDRESSED = -3.0
_ANYONE_IF_NAMED = -1.0


def offline_logits(
    recent: Sequence[domain.Message], participants: Sequence[str]
) -> dict[str, float]:
    """The heuristic's score per label before the softmax (see :func:`predict_offline`)."""
    offered = labels(participants)
    names = offered[:-1]
    window = list(recent[-WINDOW:])
    latest = window[-1]
    speaker = latest.speaker.casefold()
    named = set(named_in(latest.text, names, but=latest.speaker))
    addressed = addressee(latest, names)
    earlier = {m.speaker.casefold() for m in window[:-1]}
    partner = next(
        (m.speaker.casefold() for m in reversed(window[:-1]) if m.speaker.casefold() != speaker),
        None,
    )
    logits: dict[str, float] = {}
    for name in names:
        key = name.casefold()
        if key == speaker:
            logits[name] = _LATEST_SPEAKER
            continue
        score = 0.0
        if key in earlier:
            score += _RECENT
        if key == partner:
            score += _PARTNER
        if name in named:
            score += _NAMED
        if name == addressed:
            score += _ADDRESSED
        logits[name] = score
    anyone = _ANYONE
    if addressed is not None:
        anyone += _ANYONE_IF_ADDRESSED
    elif named:
        anyone += _ANYONE_IF_NAMED
    elif is_question(latest.text):
        anyone += _OPEN_QUESTION
    logits[domain.ANYONE] = anyone
    return logits


def predict_offline(
    recent: Sequence[domain.Message], participants: Sequence[str]
) -> domain.NextSpeakerPrediction:
    """The offline engine's next-speaker prediction: a fixed, deterministic rule (no LLM, no dice).

    Each label gets a score from the latest message and the window of the last 5 messages;
    a softmax turns the scores into probabilities, and the prediction is the most probable label
    (ties go to the earlier participant in ``participants``, ``anyone`` last):

    * a participant other than the latest speaker starts at 0 and gets
      +2.0 when the latest message names them (:func:`named_in`),
      +1.5 more when it hands them the turn (named at its start, with ``@``, or with a question:
      the offline engine's own turn-type rule, :func:`addressee`),
      +1.0 when they are the one the latest speaker was answering (the previous other speaker:
      adjacency pairs tend to come back),
      +0.5 when they spoke earlier in the window;
    * the latest speaker gets -1.5 (they may go on, but rarely do);
    * ``anyone`` gets 2.0, +1.0 after a question that names nobody (a question to the group),
      -3.0 when the message hands the turn to someone, -1.0 when it only names someone.

    So a plain statement or a question to the group predicts ``anyone``, and a message that
    calls on someone predicts them, which is the paper's labelling of turn allocation.

    Args:
        recent: the last messages, oldest first; the prediction is for the turn after the last.
        participants: every name in the room, the latest speaker included.

    Returns:
        The prediction, method ``offline-heuristic``, origin ``offline engine``.

    Raises:
        ValueError: ``recent`` is empty.
    """
    if not recent:
        raise ValueError("a next-speaker prediction needs at least one message")
    logits = offline_logits(recent, participants)
    top = max(logits.values())
    weights = {label: math.exp(score - top) for label, score in logits.items()}
    total = sum(weights.values())
    probabilities = {label: round(w / total, 6) for label, w in weights.items()}
    order = list(logits)
    predicted = max(order, key=lambda label: (logits[label], -order.index(label)))
    return domain.NextSpeakerPrediction(
        message_id=recent[-1].id,
        predicted=predicted,
        probabilities=probabilities,
        method="offline-heuristic",
        origin=NAME,
    )
