"""The Cognition protocol: what an agent asks of a mind, in the spec's vocabulary."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from playground import domain


@dataclass(frozen=True)
class Context:
    """What an agent knows about the conversation at a trigger."""

    agent: str
    persona: domain.Persona | None
    participants: list[str]
    recent: list[domain.Message]
    latest: domain.Message | None
    trigger: domain.TriggerKind
    step: int
    interpretation: str = ""
    turn_type: domain.TurnType | None = None
    own_turns: int = 0
    total_turns: int = 0
    silent_steps: int = 0
    #: The user clicked the thought to be said: articulation must say that thought.
    forced: bool = False


@dataclass(frozen=True)
class ThoughtDraft:
    text: str
    system: int
    stimuli: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Articulation:
    """What an agent asks its mind to say aloud: a thought, what inspired it, and the tone."""

    thought: domain.Thought
    #: The memories, messages and thoughts the thought came from.
    stimuli: list[domain.Stimulus] = field(default_factory=list)
    #: Restyle the utterance assertively (the proactiveTone setting).
    proactive_tone: bool = field(default=False, kw_only=True)


@dataclass(frozen=True)
class Rating:
    """One evaluation as the mind returns it; the engine adds the silence factor and score."""

    rating: int
    distribution: dict[int, float]
    reasons_for: list[str]
    reasons_against: list[str]
    method: domain.ScoreMethod
    heuristics: dict[str, float] = field(default_factory=dict)
    #: How many sampled ratings the distribution was estimated from (the sampled method).
    samples: int | None = None


def without_name(text: str, agent: str) -> str:
    """A model's utterance without the ``Name:`` prefix it sometimes writes before it, and
    without the articulation prompt's own words when a small model echoes them first
    (SmolLM2: "You decided to say this thought out loud: What's the best...")."""
    prefix = f"{agent}:"
    text = text[len(prefix) :].strip() if text.startswith(prefix) else text
    return _ECHO.sub("", text, count=1).strip() or text


_ECHO = re.compile(
    r"^\s*you\s+decide(?:d)?\s+to\s+say\s+this\s+thought[\s-]+out[\s-]+loud\s*:\s*", re.I
)


# -- unusable texts ---------------------------------------------------------------------------

#: What the reply shapes of our prompts show where the model writes something of its own: a
#: description between angle brackets, never a sample value (a small model copies a sample,
#: ``"..."`` included, as its answer). The prompt modules build their shapes from these, so a
#: text that is one of them was copied from a prompt: :func:`placeholder_reason` refuses it.
SLOT_THOUGHT = "the thought, in your own words"
SLOT_STIMULI = "the ids it came from, without the brackets"
SLOT_SYSTEM = "1 or 2"
SLOT_INTERPRETATION = "one sentence, in your own words"
SLOT_NEXT_SPEAKER = 'a participant\'s name, or "anyone"'
SLOT_REASON_FOR = "the strongest reason to say it now"
SLOT_REASON_AGAINST = "the strongest reason not to say it now"
SLOT_NEXT_REASON = "the next strongest"
SLOT_RATING = "a whole number from 1 to 5"
SLOT_THOUGHT_ID = "the number in brackets before the thought"
PROMPT_SLOTS: frozenset[str] = frozenset(
    {
        SLOT_THOUGHT,
        SLOT_STIMULI,
        SLOT_SYSTEM,
        SLOT_INTERPRETATION,
        SLOT_NEXT_SPEAKER,
        SLOT_REASON_FOR,
        SLOT_REASON_AGAINST,
        SLOT_NEXT_REASON,
        SLOT_RATING,
        SLOT_THOUGHT_ID,
    }
)

#: Words models write in place of content (case, quotes and surrounding punctuation ignored).
PLACEHOLDER_WORDS: frozenset[str] = frozenset(
    {
        "n/a", "na", "n.a", "none", "null", "nil", "undefined", "tbd",
        "todo", "placeholder", "text", "string", "str", "thought", "thoughts", "your thought",
        "my thought", "the thought", "thought text", "your thought here", "thought here",
        "insert thought here", "message", "your message", "your message here", "message text",
        "example", "sample", "lorem ipsum", "etc", "xxx", "blah", "blah blah",
    }
)  # fmt: skip


def _core(text: str) -> str:
    """``text`` as compared with the known placeholders: casefolded, spaces collapsed, without
    the quotes, brackets and punctuation around it."""
    return " ".join(text.strip().strip(_EDGES + "<>{}[]").casefold().split())


_BRACKETED = re.compile(r"^\s*(<[^<>]*>|\{[^{}]*\}|\[[^\[\]]*\])\s*$")
_EDGES = " \t\r\n\"'`“”‘’.,;:!?…-–—*_()"


_SLOT_CORES = frozenset(_core(s) for s in PROMPT_SLOTS)


def _letters(text: str) -> int:
    return sum(1 for c in text if c.isalpha())


def placeholder_reason(text: str, *, short_ok: bool = False) -> str | None:
    """Why ``text`` is no usable thought (or utterance), or None when it is one.

    A text is refused when it is:

    * empty or whitespace;
    * punctuation only, an ellipsis included (``...``, ``…``, ``-``): nothing that is a letter
      or a digit;
    * one of the words models write instead of content (:data:`PLACEHOLDER_WORDS`: ``N/A``,
      ``text``, ``your thought``...), quotes and surrounding punctuation ignored;
    * a slot between angle brackets (``<thought>``; also ``{text}`` or ``[thought]``): a
      template copied from a prompt;
    * the description of a field that our prompts show in a reply shape
      (:data:`PROMPT_SLOTS`), with or without its brackets;
    * too short to mean anything (unless ``short_ok``): fewer than 3 letters in all, or a single
      word of fewer than 6 letters ("Yes.", "Hmm", "ok!"). Two short words ("I agree", "Go on")
      pass, and so does one long word ("Absolutely", or a sentence in a script written without
      spaces).

    Args:
        text: a thought's or an utterance's text as the mind returned it.
        short_ok: an utterance may be short ("Yes!" is a fine chat message): only the other
            rules apply.

    Returns:
        A short reason, e.g. ``"a placeholder ('...')"``, or None.
    """
    stripped = text.strip()
    if not stripped:
        return "empty"
    shown = stripped if len(stripped) <= 40 else stripped[:39] + "…"
    if not any(c.isalnum() for c in stripped):
        return f"a placeholder ({shown!r}): punctuation only"
    if _BRACKETED.match(stripped):
        return f"a template slot copied from the prompt ({shown!r})"
    core = _core(stripped)
    if core in PLACEHOLDER_WORDS:
        return f"a placeholder ({shown!r})"
    if core in _SLOT_CORES:
        return f"the prompt's description of the field, copied ({shown!r})"
    if short_ok:
        return None
    letters = _letters(stripped)
    words = [w for w in stripped.split() if any(c.isalpha() for c in w)]
    if letters < 3 or (len(words) < 2 and letters < 6):
        return f"too short to mean anything ({shown!r})"
    return None


class Cognition(Protocol):
    """Interpretation, turn-type prediction, thought formation, evaluation, articulation."""

    name: str
    """Shown with every output: 'offline engine' or the model name."""

    async def interpret(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> str:
        """One sentence: what the speaker said in context and what they may be thinking."""
        ...

    async def predict_turn_type(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> domain.TurnType:
        """Open to anyone, or allocated to a named participant."""
        ...

    async def predict_next_speaker(
        self, recent: list[domain.Message], participants: list[str]
    ) -> domain.NextSpeakerPrediction:
        """Next-speaker baseline: who speaks after ``recent[-1]`` (a name or ``anyone``), read
        from the last 5 messages and the names only."""
        ...

    async def respond(self, ctx: Context) -> str:
        """Baseline turn: an utterance from the static persona and the conversation, no thoughts."""
        ...

    async def form_thoughts(
        self, ctx: Context, stimuli: list[domain.Stimulus], *, system1: int, system2: int
    ) -> list[ThoughtDraft]:
        """System-1 thoughts from the last utterances and System-2 thoughts from the stimuli."""
        ...

    async def evaluate(
        self, ctx: Context, thoughts: list[domain.Thought], stimuli: list[domain.Stimulus]
    ) -> list[Rating | None]:
        """One rating per thought, in order; None for a thought the mind failed to rate (not scored this time)."""
        ...

    async def articulate(self, ctx: Context, request: Articulation) -> str:
        """The request's thought as an utterance in character (restyled assertively when
        ``request.proactive_tone``)."""
        ...
