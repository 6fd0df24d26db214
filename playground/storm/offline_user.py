"""The offline engine's simulated user: real MiniLM embeddings, a small state model, templates.

One turn, given the profile, the visible conversation and the user's earlier hidden states:

- **needs**: the task's requirements and its *known* attributes (``budget: under $500``), in the
  profile's order; the success criteria count too when judging a reply, but are never said.
- **relevance** ``r``: the highest cosine between a reply (a message by someone else since the
  user last spoke; the best of them when there are several) and any need or success criterion; ``s = clip((r − 0.15) /
  0.4, 0, 1)`` (MiniLM puts unrelated sentences near 0.1 and a reply on the point above 0.5).
- **clarity** ``c``: starts at :func:`playground.storm.parse.start_clarity` (from the
  uncertainty); a relevant reply moves it toward a ceiling ``1 − 0.5 p`` by ``rate × s`` of
  the gap, ``rate = 0.3 × (1 − 0.5 p) × (1.2 − 0.1 d)`` (``p`` the unknown share, ``d`` the
  difficulty level 1–5); a reply with ``s = 0`` lowers it by 0.03.
- **satisfaction**: halfway from the last value to ``0.2 + 0.7 s``, plus a seeded jitter of at
  most ±0.02; 0.5 before any reply.
- **the message**: the need the user last spoke about, repeated more plainly when the replies
  missed it (cosine to it below 0.35; a complaint only when the user was addressed); asked
  twice without an answer, the user lets it go and brings up the next need; else, after an
  answer, the next need; once every need was answered, a closing message. The profile words its
  needs vaguer at higher difficulty; the templates add hedges with the content difficulty (1–2
  plain, 3 hedged, 4–5 only the need's first clause, hesitant). Messages keep to 20–100
  characters.
- **inner thoughts** say what it noticed; emotion and intent are read from its own text with the
  paper's keyword maps (source ``keywords``). The state's format is ``offline``.
"""

from __future__ import annotations

import random
import re

import numpy as np

from playground.domain.simulated_user import USER_LENGTH, HiddenState, UserProfile, UserTurn
from playground.embedding.cache import CachingEmbedder
from playground.storm import keywords, parse

#: Task attributes the offline user says as needs, and those it keeps to itself (they describe it).
SAID_ATTRIBUTES = frozenset({"budget", "nice_to_have", "deal_breaker", "payment_method"})
DESCRIBING_ATTRIBUTES = frozenset({"knowledge", "urgency", "priorities", "budget_flexibility"})
#: Cosine to a need at which a reply counts as answering it.
ADDRESSED = 0.35

_OPEN = {
    1: ["Hi, I want to {task}. First: {need}.", "Hello. I need help to {task}. {need}."],
    3: ["Hi, I'm trying to {task}, I think. {need}", "Hey, so, {task}... {need}"],
    5: ["hey. {task} kind of thing? {need}", "um, {task}... {need}"],
}
_NEED = {
    1: ["Next: {need}.", "Also important: {need}.", "What matters to me: {need}."],
    3: ["Something like: {need}, I guess.", "Maybe {need}? Not sure.", "Also, {need}, I think."],
    5: ["{need}... or so?", "hmm, {need} maybe", "and {need}? idk"],
}
_AGAIN = {
    1: ["That's not what I asked. I mean: {need}.", "Let me be clear: {need}."],
    3: ["Hmm, not quite. I meant {need}, sort of.", "No, more like {need}?"],
    5: ["no... {need}?", "not that. {need} i think"],
}
_BACK = {
    1: ["Back to my question: {need}.", "Anyone know about {need}?"],
    3: ["Um, back to {need}, maybe?", "Still wondering about {need}, sort of."],
}
#: Asked twice without an answer: the user lets it go and brings up something else.
_MOVE_ON = {
    1: ["Never mind that. Another thing: {need}.", "Let's leave that. {need}?"],
    3: ["Okay, never mind. Maybe {need}?", "Forget that, I guess. {need}?"],
    5: ["whatever. {need}?", "ok nvm. {need} maybe"],
}
_CLOSE = [
    "Thanks, that covers what I needed.",
    "Great, thank you, I think that's all.",
    "Okay, thanks for the help, I'm done here.",
]
_THINK_HIT = [
    "They answered about {need}, which is what I asked. Pretty good; I'm leaning towards one.",
    "Good, {need} was covered. I'm pleased; now I can weigh the options.",
    "{need}: covered. Hope this works; I want to know more.",
]
_THINK_DONE = [
    "That covers {need} too. Got what I came for; time to wrap up.",
    "Good, {need} as well. That's all I needed, I'm satisfied with this.",
]
_THINK_MISS = [
    "That reply had nothing on {need}. So annoying, they're not getting it.",
    "They missed {need}. I'm not sure they understand, this is confusing.",
]
_THINK_OPEN = [
    "I want to {task}, but I'm not sure yet where to start.",
    "I need information to {task}; fingers crossed this helps.",
]
_THINK_UNSURE = " I still don't know my {unknown}."


def _level(d: int) -> int:
    return 1 if d <= 2 else 3 if d == 3 else 5


def _plain(text: str) -> str:
    text = text.strip().rstrip(".")
    first = text.split(" ", 1)[0]
    return text if len(first) > 1 and first.isupper() else text[:1].lower() + text[1:]


def _vague(text: str, level: int) -> str:
    """A need as the user words it. The profile's own wording is already vaguer at higher
    difficulty; at the vaguest level only its first clause is said (words are never dropped from
    inside a clause, which would leave broken phrases)."""
    text = _plain(text)
    if level >= 5:
        text = text.split(",", 1)[0].split(";", 1)[0].strip()
    return text


def needs_of(profile: UserProfile) -> list[str]:
    """What the user can say it needs: requirements, then known task attributes."""
    out = [] if "task.requirements" in profile.unknown else [_plain(r) for r in profile.task.requirements]  # fmt: skip
    # Of the task attributes, the ones a user states as a need (knowledge, urgency or ranked
    # priorities describe the user; the prompt of the LLM user carries them all).
    out += [
        f"{k.replace('_', ' ')}: {v}"
        for k, v in profile.known("task").items()
        if k in SAID_ATTRIBUTES or k not in DESCRIBING_ATTRIBUTES
    ]
    return out or [_plain(profile.task.task)]


def _criteria(profile: UserProfile) -> list[str]:
    return [] if "task.success_criteria" in profile.unknown else [_plain(c) for c in profile.task.success_criteria]  # fmt: skip


def _fit(text: str, rng: random.Random, pad: list[str]) -> str:
    """Keep to the user's length limits: cut at a word boundary, pad a short one."""
    text = " ".join(text.split())
    while len(text) < USER_LENGTH[0]:
        end = "" if text[-1:] in ".?!" else "."
        text = f"{text}{end} {rng.choice(pad)}"
    return parse.cut_message(text)


async def offline_turn(
    embedder: CachingEmbedder,
    seed: int,
    profile: UserProfile,
    *,
    me: str,
    messages: list[tuple[str, str]],
    previous: list[HiddenState],
    addressed_by: str | None = None,
) -> UserTurn:
    """One turn of the offline simulated user (see the module docstring for the rules)."""
    turn = len(previous)
    rng = random.Random(f"{seed}:{profile.id}:{me}:{turn}:user")
    needs = needs_of(profile)
    targets = needs + _criteria(profile)
    p = profile.uncertainty / 100
    level = _level(profile.difficulty.content)
    task = _plain(profile.task.task)

    mine = [i for i, (who, _) in enumerate(messages) if who == me]
    last_mine = mine[-1] if mine else -1
    replies = [t for who, t in messages[last_mine + 1 :] if who != me]
    reply = replies[-1] if replies else None  # replaced below by the most relevant one
    prev = previous[-1] if previous else None
    c0 = prev.clarity if prev else parse.start_clarity(profile.uncertainty)
    s0 = prev.satisfaction if prev else 0.5

    # Which need the user spoke about last: its last message's nearest need.
    current = -1
    hit = False
    relevance = 0.0
    texts = [*targets, *([messages[last_mine][1]] if last_mine >= 0 else []), *replies]
    vecs = await embedder.embed(texts)
    tv = vecs[: len(targets)]
    if last_mine >= 0:
        current = int(np.argmax(tv[: len(needs)] @ vecs[len(targets)]))
    if replies:
        cos = vecs[len(texts) - len(replies) :] @ tv.T  # replies × targets
        best = int(np.argmax(cos.max(axis=1)))
        reply = replies[best]
        relevance = float(cos[best].max())
        hit = current >= 0 and float(cos[:, current].max()) >= ADDRESSED

    s = float(np.clip((relevance - 0.15) / 0.4, 0.0, 1.0)) if reply is not None else 0.0
    cap = 1.0 - 0.5 * p
    rate = 0.3 * (1 - 0.5 * p) * (1.2 - 0.1 * profile.difficulty.level)
    shown = f"{round(relevance, 2) + 0.0:.2f}"  # + 0.0: a cosine just below zero reads 0.00
    if reply is None:
        clarity = c0
        clarity_why = "nothing said to me yet"
    elif s > 0:
        clarity = c0 + rate * s * max(0.0, cap - c0)
        near = "touched" if s >= 0.5 else "came near"
        clarity_why = f"the reply {near} what I need (cos {shown})"
    else:
        clarity = max(0.0, c0 - 0.03)
        clarity_why = f"the reply was off my needs (cos {shown}); muddled"
    if reply is None:
        satisfaction = s0
        sat_why = "nothing to judge yet"
    else:
        target = 0.2 + 0.7 * s
        satisfaction = s0 + 0.5 * (target - s0) + rng.uniform(-0.02, 0.02)
        sat_why = "the reply was on point" if s >= 0.5 else "the reply helped a little" if s > 0 else "the reply did not help"  # fmt: skip

    pad = ["Can you help?", "Any ideas?", "What do you think?"]
    if last_mine < 0:
        need = needs[0]
        text = rng.choice(_OPEN[level]).format(task=task, need=_vague(need, level))
        think = rng.choice(_THINK_OPEN).format(task=task)
    elif hit and current + 1 >= len(needs):
        need = needs[current]
        text = rng.choice(_CLOSE)
        think = rng.choice(_THINK_DONE).format(need=_vague(need, 1))
    elif hit:
        need = needs[current + 1]
        text = rng.choice(_NEED[level]).format(need=_vague(need, level))
        think = rng.choice(_THINK_HIT).format(need=_vague(needs[current], 1))
    else:
        need = needs[max(current, 0)]
        # Said again, one step plainer than before: the user tries to be understood.
        plainer = 1 if level <= 3 else 3
        said = _AGAIN if addressed_by else _BACK
        key = _vague(need, 5)  # its first clause: in every wording of it
        asked = [messages[i][1] for i in mine[-2:]]
        if len(asked) == 2 and all(key in t for t in asked) and len(needs) > 1:
            # said twice already and still not answered: let it go, move on
            need = needs[(max(current, 0) + 1) % len(needs)]
            text = rng.choice(_MOVE_ON[level]).format(need=_vague(need, level))
        else:
            text = rng.choice(said[plainer]).format(need=_vague(need, plainer))
        think = rng.choice(_THINK_MISS).format(need=_vague(need, 1)) if reply else rng.choice(_THINK_OPEN).format(task=task)  # fmt: skip
    if profile.unknown and rng.random() < 0.5:
        think += _THINK_UNSURE.format(unknown=profile.unknown[rng.randrange(len(profile.unknown))].split(".", 1)[-1].replace("_", " "))  # fmt: skip
    text = _fit(text, rng, pad)
    if level < 5:  # a careful writer starts sentences with a capital; the vaguest does not
        text = re.sub(r"([.?!] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    state = HiddenState(
        inner_thoughts=think,
        satisfaction=round(float(np.clip(satisfaction, 0.0, 1.0)), 2),
        satisfaction_explanation=sat_why,
        clarity=round(float(np.clip(clarity, 0.0, 1.0)), 2),
        clarity_explanation=clarity_why,
        emotion=keywords.infer_emotion(text, think),
        intent=keywords.infer_intent(text, think),
        emotion_source="keywords",
        intent_source="keywords",
        format="offline",
    )
    return UserTurn(text=text, state=state)
