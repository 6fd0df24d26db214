"""Evaluation: the eight heuristics of docs/spec.md §1.4, each from signals measured on the
conversation.

Signals: MiniLM cosine of the thought to the latest utterance and to the last few (context);
novelty, one minus its highest cosine to anything said so far; the saliency of the stimuli it came
from; whether the latest utterance is an open question; silent steps and pause triggers; the
agent's share of the turns. Turn allocation is *not* a signal: Algorithm 1 already gives the floor
to an addressed agent and holds others to interruptThreshold, so scoring it again here would count
it twice.

The mean heuristic value m ∈ [0, 1] sets the centre 1 + 4m of a discrete Gaussian over the ratings
1–5 (with a small seeded jitter, as a model's sampling would add); the engine turns that
distribution into the expected rating and score exactly as it does with a model's log-probabilities.
"""

from __future__ import annotations

import math

import numpy as np

from playground import domain
from playground.cognition import scoring
from playground.cognition.base import Context, Rating
from playground.cognition.offline.mind import Mind, is_question

CONTEXT = 4
SPREAD = 0.55
JITTER = 0.15

REASONS = {
    "relevance": ("it fits what is being discussed", "it is off the current topic"),
    "information_gap": (
        "it answers or asks something still open",
        "nothing is missing that it would fill",
    ),
    "expected_impact": ("it adds something new to the conversation", "it would change little"),
    "urgency": ("it answers what was just asked, or the chat needs someone now", "it can wait"),
    "coherence": ("it follows on from the last message", "it would break the flow"),
    "originality": ("nobody has said this yet", "it repeats what was already said"),
    "balance": ("I have spoken less than others", "I have already spoken a lot"),
    "dynamics": ("the chat has gone quiet", "the conversation is moving well without me"),
}


def clip(x: float) -> float:
    return max(0.0, min(1.0, x))


def ramp(x: float, lo: float, hi: float) -> float:
    """0 at or below ``lo``, 1 at or above ``hi``, linear between."""
    return clip((x - lo) / (hi - lo))


def heuristics(
    *,
    cos_latest: float | None,
    cos_context: float,
    overlap: float,
    content: float,
    asks: bool,
    echo: int,
    saliency: float,
    question: bool,
    silent_steps: int,
    pause: bool,
    share: float,
    people: int,
) -> dict[str, float]:
    """The eight heuristic values in [0, 1] from measured signals.

    Args:
        cos_latest: cosine of the thought to the latest utterance (None before anyone spoke).
        cos_context: cosine to the mean of the last few utterances.
        overlap: highest cosine to anything said so far.
        content: share of the thought's key phrases that nobody has said yet.
        asks: the thought asks something of the others.
        echo: messages that already mention the thought's main phrase (asking about it again
            opens less each time).
        saliency: saliency of the stimuli it came from.
        question: the latest utterance is someone else's question.
        silent_steps: steps without a message just before this trigger.
        pause: the trigger is a pause.
        share: the agent's share of the messages so far.
        people: participants in the room.
    """
    fit = ramp(cos_latest, 0.1, 0.5) if cos_latest is not None else 0.3
    novelty = ramp(1.0 - overlap, 0.1, 0.5)
    silence = clip(0.25 * silent_steps + (0.25 if pause else 0.0))
    grounded = ramp(saliency, 0.0, 0.5)
    opens = 0.5 / max(1, echo - 1) if asks else 0.0
    return {
        "relevance": clip(
            0.7 * ramp(max(cos_latest or 0.0, cos_context), 0.1, 0.5) + 0.3 * grounded
        ),
        # An open question is filled by a thought that fits it and says something new.
        "information_gap": fit * (0.4 + 0.6 * content) if question else max(content, opens),
        "expected_impact": clip(0.6 * content + 0.2 * grounded + 0.2 * novelty + 0.5 * opens),
        "urgency": clip((0.8 * fit if question else 0.4 * fit) + silence),
        "coherence": fit,
        "originality": novelty * (0.5 + 0.5 * content),
        "balance": clip(0.5 + (1 / max(people, 1) - share) * 3),
        "dynamics": clip(0.3 + silence),
    }


def rating(h: dict[str, float], jitter: float) -> Rating:
    """A rating distribution centred on 1 + 4·mean(h), with the two strongest reasons each way."""
    mu = 1 + 4 * sum(h.values()) / len(h) + jitter
    weights = {r: math.exp(-((r - mu) ** 2) / (2 * SPREAD**2)) for r in scoring.RATINGS}
    dist = scoring.normalise_distribution(weights)
    ranked = sorted(h.items(), key=lambda kv: -kv[1])
    return Rating(
        rating=max(dist, key=lambda r: dist[r]),
        distribution={r: round(p, 6) for r, p in dist.items()},
        reasons_for=[_reason(k, v, True) for k, v in ranked[:2]],
        reasons_against=[_reason(k, v, False) for k, v in ranked[-2:][::-1]],
        method="offline-heuristic",
        heuristics={k: round(v, 3) for k, v in h.items()},
    )


async def evaluate(mind: Mind, ctx: Context, thoughts: list[domain.Thought]) -> list[Rating | None]:
    """One rating per thought, from the measured signals."""
    if not thoughts:
        return []
    mind.see_context(ctx)
    emb = mind.embedder
    vecs = await emb.embed([t.text for t in thoughts])
    said = mind.transcript.messages
    said_vecs = (
        await emb.embed([m.text for m in said])
        if said
        else np.zeros((0, vecs.shape[1]), np.float32)
    )
    latest = ctx.latest
    u = await emb.embed_one(latest.text) if latest else None
    recent = [m.text for m in ctx.recent[-CONTEXT:]]
    context = (await emb.embed(recent)).mean(axis=0) if recent else None
    question = bool(latest and latest.speaker != ctx.agent and is_question(latest.text))
    # Counted from the transcript: what the agent actually said, once per message.
    share = sum(m.speaker == ctx.agent for m in said) / len(said) if said else 0.0
    spoken = " ".join(m.text for m in said).casefold()
    out: list[Rating | None] = []
    for thought, v in zip(thoughts, vecs, strict=True):
        phrases = await mind.topics.phrases(thought.text, 3)
        h = heuristics(
            cos_latest=scoring.cosine(v, u) if u is not None else None,
            cos_context=scoring.cosine(v, context) if context is not None else 0.0,
            overlap=max((float(v @ s) for s in said_vecs), default=0.0),
            content=sum(p.casefold() not in spoken for p in phrases) / len(phrases)
            if phrases
            else 0.0,
            asks=asks(thought.text),
            echo=sum(phrases[0].casefold() in m.text.casefold() for m in said) if phrases else 0,
            saliency=thought.saliency,
            question=question,
            silent_steps=ctx.silent_steps,
            pause=ctx.trigger == "pause",
            share=share,
            people=len(ctx.participants),
        )
        jitter = mind.rng(ctx.agent, ctx.step, thought.id, "jitter").uniform(-JITTER, JITTER)
        out.append(rating(h, jitter))
    return out


def asks(text: str) -> bool:
    """The thought is about asking the others something."""
    body = text.removeprefix("Still on my mind:").strip()
    return body.startswith(("Ask ", "What do the others")) or body.endswith("?")


def _reason(key: str, value: float, positive: bool) -> str:
    label = key.replace("_", " ")
    return f"{label} ({value:.2f}): {REASONS[key][0 if positive else 1]}"
