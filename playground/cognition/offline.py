"""The offline engine: the real Inner Thoughts algorithm with no language model and no network.

Retrieval and saliency use the real embeddings. Thoughts are formed from the retrieved memories and
recent utterances with plain templates; the eight heuristics are rated from measurable signals
(similarity to the latest utterance and the context, novelty against what was said, questions and
addressing, own share of turns, silence); utterances come from templates. Everything it produces
is labelled "offline engine". Deterministic for a given seed: every random choice comes from a
generator keyed by seed, agent, step and purpose.
"""

from __future__ import annotations

import math
import random
import re

import numpy as np

from playground import domain, participation, scoring
from playground.cognition.base import Context, Rating, ThoughtDraft
from playground.embedding.cache import CachingEmbedder

NAME = "offline engine"
STOPWORDS = set(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "i'm",
        "if",
        "in",
        "into",
        "is",
        "it",
        "it's",
        "its",
        "itself",
        "just",
        "let's",
        "like",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "really",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "that's",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "what's",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "hey",
        "hi",
        "hello",
        "yes",
        "yeah",
        "ok",
        "okay",
        "oh",
        "well",
        "anyone",
        "everyone",
        "guys",
        "thing",
        "things",
        "lot",
        "get",
        "got",
        "go",
        "going",
        "know",
        "think",
        "want",
        "one",
        "much",
        "many",
        "even",
        "still",
        "always",
        "every",
        "almost",
        "last",
        "next",
        "today",
        "day",
        "week",
        "time",
        "something",
        "anything",
        "nothing",
        "love",
        "actually",
        "maybe",
        "pretty",
        "sure",
        "good",
        "great",
        "nice",
    ]
) | set(
    # words our own templates use, so they never become a "topic"
    [
        "question",
        "earlier",
        "idea",
        "interesting",
        "point",
        "points",
        "thoughts",
        "else",
        "reminds",
        "remind",
        "tell",
        "honestly",
        "hmm",
        "connects",
        "share",
        "bit",
        "quiet",
        "agree",
        "hear",
        "answer",
        "asked",
        "asks",
        "ask",
        "good",
        "funny",
        "mention",
        "back",
        "still",
        "thinking",
        "group",
        "chatting",
        "someone",
        "says",
        "said",
        "saying",
        "others",
        "whatever",
        "exactly",
        "happened",
        "best",
        "first",
        "say",
        "way",
        "straight",
        "kind",
        "sort",
    ]
)
STOPWORDS |= {"worth", "without", "same", "nice", "sounds"}  # filler in our own replies
PREFIX = "Still on my mind:"
GREETING = re.compile(r"^\s*(hey|hi|hello|hiya|morning|good (morning|evening|afternoon))\b", re.I)


def keywords(text: str, n: int = 3, exclude: frozenset[str] = frozenset()) -> list[str]:
    """Content words of ``text`` in order of appearance (longest first among ties), at most ``n``."""
    words = re.findall(r"[A-Za-z][A-Za-z'-]+", text)
    seen: dict[str, int] = {}
    shown: dict[str, str] = {}
    for i, w in enumerate(words):
        lw = w.lower().strip("'")
        if "'" in lw:
            continue
        if lw not in STOPWORDS and lw not in exclude and len(lw) > 2 and lw not in seen:
            seen[lw] = i
            # Keep names' capitals ("Yorkshire"), but not a capital that only starts the sentence.
            shown[lw] = w if i > 0 else lw
    ranked = sorted(seen, key=lambda w: (-len(w) if len(w) > 6 else 0, seen[w]))
    return [shown[w] for w in ranked[:n]]


def topic(text: str, names: frozenset[str] = frozenset()) -> str:
    """One or two content words naming what ``text`` is about (``names`` excluded)."""
    kw = keywords(text, 2, names)
    return " and ".join(kw) if kw else "that"


def is_question(text: str) -> bool:
    return "?" in text


def _cut(text: str, limit: int) -> str:
    words = text.strip().rstrip(".!").split()
    return " ".join(words[:limit])


def _you_form(fact: str) -> str:
    """'I surf every morning.' → 'I surf every morning' (end punctuation dropped for use in a sentence)."""
    return _cut(fact, 24)


def _clip(x: float) -> float:
    return max(0.0, min(1.0, x))


class OfflineCognition:
    """Inner Thoughts without a language model. See the module docstring."""

    name = NAME

    def __init__(self, embedder: CachingEmbedder, *, seed: int = 0) -> None:
        self._embedder = embedder
        self._seed = seed
        self._people: frozenset[str] = frozenset()  # everyone seen so far: never a "topic"

    def _names(self, participants: list[str]) -> None:
        self._people = self._people | {p.casefold() for p in participants}

    def _topic(self, text: str) -> str:
        return topic(text, self._people)

    def _rng(self, *key: object) -> random.Random:
        return random.Random(":".join(str(k) for k in (self._seed, *key)))

    # -- understanding ---------------------------------------------------------------------------

    async def interpret(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> str:
        self._names(participants)
        addressee = _addressee(message, participants)
        about = self._topic(message.text)
        if GREETING.match(message.text) and len(message.text.split()) <= 4:
            return f"{message.speaker} greets the group and hopes someone will start chatting."
        if is_question(message.text):
            if addressee:
                return (
                    f"{message.speaker} asks {addressee} about {about} and waits for their answer."
                )
            return f"{message.speaker} asks the group about {about} and wants to hear from others."
        if (
            recent
            and recent[-1].speaker != message.speaker
            and (prev := self._topic(recent[-1].text)) != "that"
        ):
            return f"{message.speaker} reacts to {recent[-1].speaker}'s point about {prev} by talking about {about}."
        return f"{message.speaker} shares something about {about} and may want others to react."

    async def predict_turn_type(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> domain.TurnType:
        addressee = _addressee(message, participants)
        if addressee:
            return domain.TurnType(
                message_id=message.id, kind="allocated", addressee=addressee, origin=NAME
            )
        return domain.TurnType(message_id=message.id, kind="open", origin=NAME)

    # -- thought formation -----------------------------------------------------------------------

    async def form_thoughts(
        self, ctx: Context, stimuli: list[domain.Stimulus], *, system1: int, system2: int
    ) -> list[ThoughtDraft]:
        rng = self._rng(ctx.agent, ctx.step, "form")
        latest = ctx.latest
        out: list[ThoughtDraft] = []
        for _ in range(system1):
            out.append(self._system1(ctx, rng))
        self._names(ctx.participants)
        # Deliberate thoughts draw first on long-term memory, then on retained thoughts, then on what others said.
        order = {"memory": 0, "thought": 1, "message": 2}
        usable = sorted(
            (
                s
                for s in stimuli
                if not (s.ref.startswith("message:") and s.text.startswith(f"{ctx.agent}:"))
            ),
            key=lambda s: order.get(s.ref.split(":")[0], 3),
        )
        usable = [
            s
            for s in usable
            if not (
                s.ref.startswith("message:") and self._topic(s.text.partition(": ")[2]) == "that"
            )
        ]
        for i in range(system2):
            if i < len(usable):
                out.append(self._system2(ctx, usable[i], rng))
            elif latest:
                out.append(
                    ThoughtDraft(
                        text=rng.choice(
                            [
                                f"What do the others think about {self._topic(latest.text)}?",
                                f"I don't know much about {self._topic(latest.text)}, honestly.",
                            ]
                        ),
                        system=2,
                        stimuli=[latest.ref],
                    )
                )
        return out

    def _system1(self, ctx: Context, rng: random.Random) -> ThoughtDraft:
        m = ctx.latest
        if m is None:
            return ThoughtDraft(text="Nobody has said anything yet.", system=1)
        about = self._topic(m.text)
        if ctx.trigger == "pause":
            options = [
                f"It went quiet after the bit about {about}.",
                "The chat has gone quiet; someone should say something.",
            ]
        elif GREETING.match(m.text):
            options = [
                f"{m.speaker} said hi; I should say hi back.",
                f"Nice to see {m.speaker} here.",
            ]
        elif is_question(m.text):
            options = [
                f"{m.speaker} asked about {about}; I could answer.",
                f"Good question from {m.speaker} about {about}.",
            ]
        else:
            options = [
                f"Interesting point about {about} from {m.speaker}.",
                f"I'd like to hear more about {about}.",
                f"I agree with {m.speaker} on {about}.",
            ]
        return ThoughtDraft(text=rng.choice(options), system=1, stimuli=[m.ref])

    def _system2(self, ctx: Context, st: domain.Stimulus, rng: random.Random) -> ThoughtDraft:
        about = self._topic(ctx.latest.text) if ctx.latest else "this"
        kind = st.ref.split(":")[0]
        if kind == "thought":
            core = st.text.removeprefix(PREFIX).strip()
            text = f"{PREFIX} {_cut(core, 10)}"
        elif kind == "message":
            speaker, _, said = st.text.partition(": ")
            text = f"Ask {speaker} to tell more about {self._topic(said)}."
        else:
            fact = _you_form(st.text)
            text = rng.choice(
                [
                    f"I could share that {fact}."
                    if fact.startswith("I ")
                    else f"I could share: {fact}.",
                    f"{about[:1].upper()}{about[1:]} reminds me: {fact}.",
                ]
            )
        refs = [st.ref] + ([ctx.latest.ref] if ctx.latest and kind != "message" else [])
        return ThoughtDraft(text=text, system=2, stimuli=refs)

    # -- evaluation ------------------------------------------------------------------------------

    async def evaluate(
        self, ctx: Context, thoughts: list[domain.Thought], stimuli: list[domain.Stimulus]
    ) -> list[Rating | None]:
        if not thoughts:
            return []
        vecs = await self._embedder.embed([t.text for t in thoughts])
        said = [m for m in ctx.recent]
        said_vecs = (
            await self._embedder.embed([m.text for m in said])
            if said
            else np.zeros((0, vecs.shape[1]), np.float32)
        )
        u = (
            said_vecs[-1]
            if ctx.latest is not None and said and said[-1].id == ctx.latest.id
            else None
        )
        context_vec = said_vecs[-4:].mean(axis=0) if len(said_vecs) else None
        rel = participation.relation(ctx.turn_type, ctx.agent)
        question = bool(ctx.latest and is_question(ctx.latest.text))
        n = max(1, len([p for p in ctx.participants]))
        share = ctx.own_turns / ctx.total_turns if ctx.total_turns else 0.0
        out: list[Rating | None] = []
        for thought, v in zip(thoughts, vecs, strict=True):
            cos_u = scoring.cosine(v, u) if u is not None else 0.0
            cos_ctx = scoring.cosine(v, context_vec) if context_vec is not None else 0.0
            overlap = max((float(v @ sv) for sv in said_vecs), default=0.0)
            h = {
                "relevance": _clip(
                    (max(cos_u, cos_ctx) - 0.05) / 0.45 + (0.2 if thought.saliency > 0.3 else 0.0)
                ),
                "information_gap": _clip(
                    (0.75 if question else 0.35)
                    + (0.25 if question and cos_u > 0.3 else 0.0)
                    + (0.15 if thought.system == 2 else 0.0)
                ),
                "expected_impact": _clip(IMPACT[_source(thought)] + 0.5 * (1 - overlap)),
                "urgency": {
                    "allocated-self": 1.0,
                    "allocated-other": 0.1,
                    "open": 0.45 + (0.2 if question else 0.0),
                }[rel],
                "coherence": _clip((cos_u - 0.05) / 0.4) if u is not None else 0.3,
                "originality": _clip((0.9 - overlap) / 0.5),
                "balance": _clip(0.6 + (1 / n - share) * 3),
                "dynamics": _clip(
                    0.4 + 0.2 * ctx.silent_steps + (0.15 if ctx.trigger == "pause" else 0.0)
                ),
            }
            m = sum(h.values()) / len(h)
            mu = (
                1
                + 4 * m
                + self._rng(ctx.agent, ctx.step, thought.id, "jitter").uniform(-0.15, 0.15)
            )
            weights = {r: math.exp(-((r - mu) ** 2) / (2 * 0.55**2)) for r in scoring.RATINGS}
            dist = scoring.normalise_distribution(weights)
            ranked = sorted(h.items(), key=lambda kv: -kv[1])
            out.append(
                Rating(
                    rating=max(dist, key=lambda r: dist[r]),
                    distribution={r: round(p, 6) for r, p in dist.items()},
                    reasons_for=[_reason(k, val, ctx, True) for k, val in ranked[:2]],
                    reasons_against=[_reason(k, val, ctx, False) for k, val in ranked[-2:][::-1]],
                    method="offline-heuristic",
                    heuristics={k: round(val, 3) for k, val in h.items()},
                )
            )
        return out

    # -- articulation ----------------------------------------------------------------------------

    async def articulate(
        self,
        ctx: Context,
        thought: domain.Thought,
        stimuli: list[domain.Stimulus],
        *,
        proactive_tone: bool,
    ) -> str:
        rng = self._rng(ctx.agent, ctx.step, thought.id, "say")
        m = ctx.latest
        others = [p for p in ctx.participants if p != ctx.agent]
        memories = [s for s in stimuli if s.ref.startswith("memory:")]
        messages = [
            s
            for s in stimuli
            if s.ref.startswith("message:") and not s.text.startswith(f"{ctx.agent}:")
        ]
        if thought.system == 2 and memories:
            fact = _you_form(memories[0].text)
            follow = rng.choice(
                [
                    f"What about you, {rng.choice(others)}?" if others else "What about you all?",
                    f"Does anyone else care about {self._topic(memories[0].text)}?",
                    "",
                ]
            )
            opener = rng.choice(
                [
                    "That reminds me:",
                    "Funny you mention it.",
                    "Oh, same here in a way.",
                    "For what it's worth,",
                ]
            )
            text = f"{opener} {fact}. {follow}".strip()
        elif (
            thought.system == 2
            and messages
            and self._topic(messages[0].text.partition(": ")[2]) != "that"
        ):
            speaker, _, said = messages[0].text.partition(": ")
            text = rng.choice(
                [
                    f"{speaker}, tell me more about {self._topic(said)}?",
                    f"Going back to what you said about {self._topic(said)}, {speaker}: how did that go?",
                ]
            )
        elif m is None:
            text = "Hi everyone!"
        elif GREETING.match(m.text) and m.speaker != ctx.agent:
            text = rng.choice(
                [
                    f"Hi {m.speaker}! How's everyone doing?",
                    f"Hey {m.speaker}, good to see you here.",
                ]
            )
        elif ctx.trigger == "pause" or m.speaker == ctx.agent:
            text = rng.choice(
                [
                    "So, what's everyone up to this week?",
                    f"Anyone else have thoughts on {self._topic(m.text)}?",
                ]
            )
        elif is_question(m.text):
            text = rng.choice(
                [
                    f"Good question, {m.speaker}. I'm not sure about {self._topic(m.text)} myself. Anyone?",
                    f"Hmm, {self._topic(m.text)}? I'd like to hear what the others say first.",
                ]
            )
        else:
            text = rng.choice(
                [
                    f"That sounds great, {m.speaker}. Tell us more about {self._topic(m.text)}?",
                    f"Oh nice, {m.speaker}!",
                    f"I agree with you on {self._topic(m.text)}, {m.speaker}.",
                ]
            )
        if proactive_tone:
            text = rng.choice(["Honestly, ", "I'll jump in here: ", "Let me say this: "]) + text
        return text


IMPACT = {"system1": 0.25, "memory": 0.55, "thought": 0.45, "message": 0.3, "none": 0.2}


def _source(thought: domain.Thought) -> str:
    """What a thought mainly came from, for expected impact: a memory adds more than an echo."""
    if thought.system == 1:
        return "system1"
    kinds = [r.split(":")[0] for r in thought.stimuli]
    for k in ("memory", "thought", "message"):
        if k in kinds:
            return k
    return "none"


def _addressee(message: domain.Message, participants: list[str]) -> str | None:
    """A participant the message hands the turn to: named with a question, at the start, or with @."""
    text = message.text
    best: tuple[int, str] | None = None
    for name in participants:
        if name == message.speaker:
            continue
        for hit in re.finditer(rf"(?<![\w@])@?{re.escape(name)}\b", text, flags=re.I):
            direct = (
                text[hit.start() - 1 : hit.start()] == "@"
                or hit.start() == 0
                or "?" in text[hit.start() :]
                or text.strip().endswith("?")
            )
            if direct and (best is None or hit.start() > best[0]):
                best = (hit.start(), name)
    return best[1] if best else None


REASONS = {
    "relevance": ("it fits what is being discussed", "it is off the current topic"),
    "information_gap": (
        "it answers or asks something still open",
        "nothing is missing that it would fill",
    ),
    "expected_impact": ("it adds something new to the conversation", "it would change little"),
    "urgency": ("the turn is mine right now", "someone else has the turn"),
    "coherence": ("it follows on from the last message", "it would break the flow"),
    "originality": ("nobody has said this yet", "it repeats what was already said"),
    "balance": ("I have spoken less than others", "I have already spoken a lot"),
    "dynamics": ("the chat has gone quiet", "the conversation is moving well without me"),
}


def _reason(key: str, value: float, ctx: Context, positive: bool) -> str:
    label = key.replace("_", " ")
    return f"{label} ({value:.2f}): {REASONS[key][0 if positive else 1]}"
