"""The assistant of a dyadic STORM run: a plain model, or an Inner Thoughts agent in that role.

STORM's agent (STORM paper §2.2; docs/spec.md §2.6) is a general helpful assistant that sees the
dialogue only, or, in profile-aware mode, the user's profile with the uncertainty share masked;
never the user's hidden states. Here it is an ordinary participant of the room:

- **plain** (``--assistant plain``): a *reactive* agent (it answers every message addressed to it;
  in a two-party room every message is addressed to the other) whose reply comes from
  :class:`AssistantCognition`: the helpful-assistant prompt below, with the masked profile in it
  under ``--profile-access``;
- **inner-thoughts** (``--assistant inner-thoughts``): an Inner Thoughts agent whose persona is the
  assistant role (:func:`assistant_persona`); under ``--profile-access`` the masked profile is in
  its long-term memory, so it is retrieved and thought about like any memory.

Either way its messages are held to 30–150 characters (STORM appendix L): the prompt asks for it
and a longer reply is cut at the last word boundary that fits, ending with "…"
(:func:`fit_length`). A reply shorter than 30 characters is kept as it is.
"""

from __future__ import annotations

import dataclasses
import random
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from playground import domain
from playground.cognition.base import (
    Articulation,
    Cognition,
    Context,
    Rating,
    ThoughtDraft,
    without_name,
)
from playground.domain.simulated_user import ASSISTANT_LENGTH

if TYPE_CHECKING:
    from playground.embedding.cache import CachingEmbedder
    from playground.llm.client import ChatClient

#: The assistant's name in the room (a user profile may not use it).
ASSISTANT_NAME = "Assistant"
#: What ``--profile-access`` gives the assistant: ``UserProfile.masked()``.
ProfileView = Mapping[str, Mapping[str, str]]

_ROLE = (
    "You are an assistant helping one person with a task they came to you with. You know only"
    " what they tell you in this chat."
)
_ROLE_WITH_PROFILE = (
    "You are an assistant helping one person with a task they came to you with. Besides this"
    " chat you have been given some facts about them (below); facts missing from it are not"
    " known to anybody."
)
_RULES = (
    "How to answer:\n"
    "- write one short chat message of {lo} to {hi} characters;\n"
    "- be clear, polite and useful;\n"
    "- when you cannot tell what they need, ask one clarifying question;\n"
    "- {grounding};\n"
    "- keep the conversation going naturally.\n"
    "Reply with the message text only: no name prefix, no quotes."
)
_GROUNDING = "rely only on what they have said; do not guess their age, means or tastes"
_GROUNDING_WITH_PROFILE = (
    "use the facts about them to tailor your help and your wording, and still ask about what"
    " they have not settled"
)


def profile_lines(view: ProfileView) -> list[str]:
    """The masked profile as ``section: key: value`` lines, task first (empty sections skipped)."""
    lines: list[str] = []
    for section in ("task", "base", "traits", "context"):
        for key, value in view.get(section, {}).items():
            lines.append(f"{section}: {key.replace('_', ' ')}: {value}")
    return lines


def assistant_messages(ctx: Context, view: ProfileView | None) -> list[dict[str, str]]:
    """The plain assistant's prompt: its role, the masked profile when it has access, the dialogue.

    The dialogue is the room's visible messages only (the hidden states are never in a message).
    """
    lo, hi = ASSISTANT_LENGTH
    if view is None:
        system = f"{_ROLE}\n\n{_RULES.format(lo=lo, hi=hi, grounding=_GROUNDING)}"
    else:
        facts = "\n".join(f"- {line}" for line in profile_lines(view)) or "- (nothing)"
        rules = _RULES.format(lo=lo, hi=hi, grounding=_GROUNDING_WITH_PROFILE)
        system = f"{_ROLE_WITH_PROFILE}\n\nAbout the person:\n{facts}\n\n{rules}"
    chat: list[dict[str, str]] = [{"role": "system", "content": system}]
    for m in ctx.recent:
        role = "assistant" if m.speaker == ctx.agent else "user"
        chat.append({"role": role, "content": m.text})
    if len(chat) == 1 or chat[-1]["role"] != "user":
        chat.append({"role": "user", "content": "(The person is waiting for your answer.)"})
    return chat


def fit_length(text: str, limit: int = ASSISTANT_LENGTH[1]) -> str:
    """``text`` cut to at most ``limit`` characters at the last word boundary, ending with "…".

    A text within the limit is returned unchanged (stripped); one word longer than the limit is
    cut inside it.
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = head.rfind(" ")
    if cut > limit // 2:
        head = head[:cut]
    return head.rstrip(" ,;:-") + "…"


def assistant_persona(view: ProfileView | None) -> domain.Persona:
    """The Inner Thoughts assistant's persona: the helpful-assistant role as facts, and under
    ``--profile-access`` the masked profile as knowledge memories (never its unknown attributes,
    which :meth:`UserProfile.masked` has already left out)."""
    lo, hi = ASSISTANT_LENGTH
    facts = [
        "I am an assistant; a person has come to me for help with a task.",
        "I help them work out what they need and how to get it done.",
        "When their request is unclear I ask one clarifying question.",
        f"I keep each message short: {lo} to {hi} characters.",
        "I stay polite, patient and clear.",
    ]
    memories: list[domain.PersonaMemory] = []
    if view is None:
        facts.append("I know only what the person tells me in this chat.")
    else:
        facts.append("I have been given some facts about the person I am helping.")
        for line in profile_lines(view):
            section, _, rest = line.partition(": ")
            text = f"About the person ({section}): {rest}"
            memories.append(domain.PersonaMemory(kind="knowledge", text=text[:300], weight=1.0))
    return domain.Persona(
        id="storm-assistant",
        name=ASSISTANT_NAME,
        description="A helpful assistant in a one-to-one chat.",
        style="short, clear and friendly",
        facts=facts,
        memories=memories,
    )


@dataclasses.dataclass(eq=False)
class AssistantCognition:
    """The assistant's mind: the room's mind for every stage, with the assistant's own reply.

    ``respond`` (the plain assistant's turn) asks ``client`` with :func:`assistant_messages`, or,
    on the offline engine, composes a reply with :func:`offline_reply`. ``articulate`` (the Inner
    Thoughts assistant) is the inner mind's. Both are held to the length limit by
    :func:`fit_length`.

    Args:
        inner: the mind of the room (interpretation, thoughts, evaluation, articulation).
        client: the assistant model's client; None on the offline engine.
        embedder: MiniLM, for the offline reply.
        view: the masked profile under ``--profile-access``, else None.
        seed: the dialogue's seed (the offline reply's wording).
        cut: cut replies to the length limit (``--reply-limit cut``); else keep them whole.
    """

    inner: Cognition
    _: dataclasses.KW_ONLY
    client: ChatClient | None
    embedder: CachingEmbedder
    view: ProfileView | None
    seed: int
    cut: bool = True
    name: str = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.name = self.inner.name

    async def interpret(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> str:
        return await self.inner.interpret(message, recent, participants)

    async def predict_turn_type(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> domain.TurnType:
        return await self.inner.predict_turn_type(message, recent, participants)

    async def predict_next_speaker(
        self, recent: list[domain.Message], participants: list[str]
    ) -> domain.NextSpeakerPrediction:
        return await self.inner.predict_next_speaker(recent, participants)

    async def respond(self, ctx: Context) -> str:
        """The plain assistant's reply to the dialogue so far.

        Raises:
            LLMError: the server could not be used for the reply.
        """
        if self.client is None:
            return self._fit(await offline_reply(self.embedder, ctx, self.view, self.seed))
        res = await self.client.chat_text(
            "assistant reply", assistant_messages(ctx, self.view), max_tokens=80
        )
        return self._fit(without_name(res.text, ctx.agent))

    async def form_thoughts(
        self, ctx: Context, stimuli: list[domain.Stimulus], *, system1: int, system2: int
    ) -> list[ThoughtDraft]:
        return await self.inner.form_thoughts(ctx, stimuli, system1=system1, system2=system2)

    async def evaluate(
        self, ctx: Context, thoughts: list[domain.Thought], stimuli: list[domain.Stimulus]
    ) -> list[Rating | None]:
        return await self.inner.evaluate(ctx, thoughts, stimuli)

    async def articulate(self, ctx: Context, request: Articulation) -> str:
        text = await self.inner.articulate(ctx, request)
        return self._fit(text)

    def _fit(self, text: str) -> str:
        return fit_length(text) if self.cut else " ".join(text.split())


# -- the offline assistant ------------------------------------------------------------------------

#: What a helpful assistant settles with a person before suggesting: (aspect, what it is about,
#: the question that settles it). The offline assistant asks about them in turn.
ASPECTS: tuple[tuple[str, str, str], ...] = (
    (
        "priorities",
        "what matters most, must-have features, priorities",
        "What matters most to you here?",
    ),
    ("budget", "money, price, cost, budget, spending", "Roughly what budget do you have in mind?"),
    ("timing", "when, deadline, urgency, how soon, time", "How soon do you need this done?"),
    (
        "constraints",
        "limits, restrictions, what to avoid, worries",
        "Is there anything you want to avoid?",
    ),
    (
        "experience",
        "what they tried before, past experience",
        "Have you tried anything for this already?",
    ),
    ("goal", "what they want to achieve and why", "What would a good outcome look like for you?"),
)
_ACKS = ("Thanks, that helps.", "Got it.", "Understood.", "OK, noted.")
#: Cosine of the latest message to an aspect above which it counts as talked about.
ASPECT_COSINE = 0.25


async def offline_reply(
    embedder: CachingEmbedder, ctx: Context, view: ProfileView | None, seed: int
) -> str:
    """A plain assistant's reply without a language model (the offline engine).

    It works through :data:`ASPECTS` as a helpful assistant would: the aspects the person's
    messages touch (MiniLM cosine ≥ :data:`ASPECT_COSINE`) and those it has asked about are
    settled; it acknowledges the latest message, saying its gist back, and asks about the first
    unsettled aspect. Under
    ``--profile-access`` it names a known attribute with its question where one fits the aspect.
    Once everything is settled it proposes a next step. The wording is drawn by seed and turn.
    """
    said_by_user = [m.text for m in ctx.recent if m.speaker != ctx.agent]
    asked = " ".join(m.text for m in ctx.recent if m.speaker == ctx.agent)
    rng = random.Random(f"{seed}:assistant:{len(ctx.recent)}")
    settled: set[str] = {a for a, _, q in ASPECTS if q in asked}
    if said_by_user:
        vecs = await embedder.embed([*said_by_user, *(about for _, about, _ in ASPECTS)])
        users, aspects = vecs[: len(said_by_user)], vecs[len(said_by_user) :]
        sims = users @ aspects.T
        for j, (name, _, _) in enumerate(ASPECTS):
            if float(sims[:, j].max()) >= ASPECT_COSINE:
                settled.add(name)
    task = (view or {}).get("task", {}).get("task", "")
    ack = f"{rng.choice(_ACKS)} {_echo(said_by_user[-1])}" if said_by_user else "Hello!"
    for name, _, question in ASPECTS:
        if name in settled:
            continue
        hint = _known_hint(view, name)
        lead = f"{ack} {hint}" if hint else ack
        return f"{lead} {question}"
    goal = f" for {task.lower()}" if task else ""
    return f"{ack} Then I suggest we shortlist two or three options{goal}. Shall I compare them?"


def _known_hint(view: ProfileView | None, aspect: str) -> str:
    """A known attribute of the masked profile that bears on ``aspect``, said back as a hint."""
    if not view:
        return ""
    words = {
        "budget": ("budget", "price", "cost"),
        "priorities": ("priorit", "feature", "prefer"),
        "timing": ("time", "urgen", "deadline"),
        "constraints": ("constraint", "requirement", "pressure"),
        "experience": ("experience",),
    }.get(aspect, ())
    for section in ("task", "context", "base", "traits"):
        for key, value in view.get(section, {}).items():
            if key != "task" and any(w in key.casefold() for w in words):
                return f"I see your {_words(key)} is {_short(value)}."
    return ""


def _echo(text: str) -> str:
    """The gist of the person's latest message said back: what follows its first colon, if any,
    else its longest sentence, shortened."""
    if ":" in text:
        text = text.split(":", 1)[1]
    clauses = [c.strip(" .!?,;") for c in re.split(r"[.!?;](?:\s|$)", text) if c.strip(" .!?,;")]
    if not clauses:
        return ""
    gist = max(clauses, key=len)
    return f"So: {_short(gist[0].lower() + gist[1:], 60)}."


def _short(value: str, limit: int = 40) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1].rstrip() + "…"


def _words(key: str) -> str:
    return re.sub(r"[_-]+", " ", key).strip()
