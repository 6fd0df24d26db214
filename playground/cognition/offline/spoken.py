"""A thought the user chose, said aloud: the offline engine's articulation of a forced thought.

When the user clicks a thought bubble, the message must say *that* thought. The ordinary
articulation (``replies``) picks a reply from the thought's source and the latest utterance, and
falls back to other families when a reply was already said; a forced thought could so come out
as something else entirely ("I don't know much about weekend, honestly." said as a follow-up
question on another topic). Here the thought's own words are turned from inner voice into speech
by the templates the offline engine forms thoughts with (``forming``): "Ask Ben more about
hiking." becomes "Ben, tell me more about hiking?", "I could share that I grow leeks." becomes
"I grow leeks.", and a thought no template matches is said as it is. A thought cut short at 15
words ("…") is completed from the memory or thought it came from.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from playground import domain
from playground.cognition.base import Context
from playground.cognition.offline.forming import PREFIX
from playground.cognition.offline.mind import Mind
from playground.domain.refs import ref_kind

#: A cut thought is completed from a stimulus only when at least this many characters match.
MIN_COMPLETION = 12
#: Lead-ins tried, in order, when the plain wording was already said in the conversation.
LEADS = ("", "Actually,", "You know,", "Honestly,", "Just saying:")

_Rule = tuple[re.Pattern[str], str]


def _r(pattern: str, say: str) -> _Rule:
    return re.compile(pattern, re.I | re.S), say


#: Inner voice -> speech, for every template of ``forming`` (first match wins); the speech is a
#: :meth:`re.Match.expand` template, ``\1`` the first group.
RULES: tuple[_Rule, ...] = (
    _r(r"^I could share that (I .+?)\.?$", r"\1"),
    _r(r"^I could share: (.+?)\.?$", r"\1"),
    _r(r"^Ask (.+?) more about (.+?)\.?$", r"\1, tell me more about \2?"),
    _r(r"^What do the others think about (.+?)\?$", r"What do you all think about \1?"),
    _r(r"^What do the others think\?$", "What do you all think?"),
    _r(
        r"^I don't know much about (.+?), honestly\.?$",
        r"I don't know much about \1, to be honest.",
    ),
    _r(r"^I wonder what (.+?) meant\.?$", r"\1, I wonder what you meant?"),
    _r(r"^(.+?) said hi; I should say hi back\.?$", r"Hi \1!"),
    _r(r"^Nice to see (.+?) here\.?$", r"Nice to see you here, \1!"),
    _r(r"^(.+?) asked about (.+?); I could answer\.?$", r"\1, about \2: I can answer that!"),
    _r(r"^(.+?) asked something; I could answer\.?$", r"\1, I can answer that!"),
    _r(r"^Good question from (.+?) about (.+?)\.?$", r"Good question about \2, \1!"),
    _r(r"^Good question from (.+?)\.?$", r"Good question, \1!"),
    _r(r"^Interesting point about (.+?) from (.+?)\.?$", r"Interesting point about \1, \2."),
    _r(r"^I agree with (.+?) on (.+?)\.?$", r"I agree with you on \2, \1."),
    _r(r"^(.+?) has a point\.?$", r"You have a point, \1."),
    _r(r"^Nice one from (.+?)\.?$", r"Nice one, \1!"),
    _r(
        r"^The chat has gone quiet; someone should say something\.?$",
        "The chat has gone quiet, so I'll say something!",
    ),
    _r(
        r"^It went quiet after the bit about (.+?)\.?$",
        r"It went quiet after the bit about \1. Anyone?",
    ),
    _r(r"^Nobody has said anything yet\.?$", "Nobody has said anything yet: hi all!"),
)


def completed(text: str, stimuli: Sequence[domain.Stimulus]) -> str:
    """``text`` with a "…" cut (at 15 words) completed from the stimulus it was taken from: the
    longest start of a stimulus's text that ends the cut text."""
    if not text.endswith("…"):
        return text
    head = text[:-1].rstrip()
    for st in stimuli:
        full = (
            " ".join(st.text.split()).partition(": ")[2]
            if ref_kind(st.ref) == "message"
            else st.text
        )
        full = " ".join(full.split())
        for k in range(min(len(head), len(full)), MIN_COMPLETION - 1, -1):
            if head.endswith(full[:k]):
                return head[: len(head) - k] + full
    return head + "."


def inner(text: str, stimuli: Sequence[domain.Stimulus]) -> str:
    """The thought an evolved thought ("Still on my mind: …") carries, completed."""
    text = completed(" ".join(text.split()), stimuli)
    while text.startswith(PREFIX):
        text = completed(text[len(PREFIX) :].strip(), stimuli)
    return text


def spoken(thought_text: str, stimuli: Sequence[domain.Stimulus] = ()) -> str:
    """The thought's words as speech: by the first matching rule, else the thought as it is."""
    text = inner(thought_text, stimuli)
    for pattern, say in RULES:
        if m := pattern.match(text):
            text = m.expand(say)
            break
    text = text.strip()
    if not text.endswith((".", "!", "?", "…")):
        text += "."
    return text[:1].upper() + text[1:]


async def say_thought(
    mind: Mind,
    ctx: Context,
    thought: domain.Thought,
    stimuli: list[domain.Stimulus],
    *,
    assertive_lead: str | None,
) -> str:
    """The forced thought said aloud. A wording already said in the conversation gets a lead-in
    (the first one not said yet); the words of the thought are kept in every wording.

    Args:
        assertive_lead: the proactive tone's lead-in ("I'll say it:"), tried first, or None.
    """
    body = spoken(thought.text, stimuli)
    first = body.split(maxsplit=1)[0].rstrip(",:!?.")
    keep = (
        first == "I" or first.startswith("I'") or first in mind.people or first in ctx.participants
    )
    after_lead = body if keep else body[:1].lower() + body[1:]
    leads = [assertive_lead] if assertive_lead else []
    leads += [lead for lead in LEADS if lead != assertive_lead]
    texts = [f"{lead} {after_lead}" if lead else body for lead in leads]
    repeated = await mind.transcript.repeated(texts, mind.embedder, mind.people)
    chosen = next((t for t, again in zip(texts, repeated, strict=True) if not again), texts[0])
    mind.topics.alias(chosen, mind.topics.source_of(thought.text))
    return chosen
