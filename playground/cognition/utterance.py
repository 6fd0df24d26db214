"""Where a model's chat message ends: pure functions over the text of an utterance.

A small model asked for its next chat message often writes the message and then runs on into
the prompt's own layout: a blank line and "What's your next message?", a transcript line
``[message:12] Bob: ...``, another participant's turn ``Bob: ...``, "Conversation so far:".
The message ended where that scaffolding starts (:func:`scaffolding_start`); what follows is
not the agent's to say. A model may also echo the instruction before its message ("You decided
to say this thought out loud: ..."): :func:`without_echo` takes that off.

The phrases come from the utterance prompts (:data:`prompts.UTTERANCE_SCAFFOLDING`); the
client's stop sequences (:data:`prompts.UTTERANCE_STOPS`) end most run-ons on the server
already, these functions end the rest (a server that refuses ``stop``, a run-on the four stops
do not name).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from playground.cognition import prompts

#: A run-on asks for the next message in words of its own ("What's your next message?").
_NEXT_MESSAGE = (
    r"(?:what(?:'|’)?s|what\s+is|write|here(?:'|’)?s|here\s+is)"
    r"\s+your\s+next\s+(?:chat\s+)?message"
)
#: The variants a model writes for the prompts' words ("You're in a casual group chat", "You
#: decide to say this thought out loud").
_VARIANTS = {
    "you are": r"you(?:\s+a|['’])re",
    "it is": r"it(?:\s+i|['’])s",
    "you decided": r"you(?:['’]ve|\s+have)?\s+decide[ds]?",
}


def _loose(phrase: str) -> str:
    """``phrase`` as a pattern: any run of spaces for a space, a variant for its words."""
    words = phrase.split(" ")
    out: list[str] = []
    i = 0
    while i < len(words):
        pair = " ".join(words[i : i + 2]).lower()
        if pair in _VARIANTS:
            out.append(_VARIANTS[pair])
            i += 2
        else:
            out.append(re.escape(words[i]))
            i += 1
    return r"\s+".join(out)


_PHRASE = re.compile(
    "|".join([*(_loose(p) for p in prompts.UTTERANCE_SCAFFOLDING), _NEXT_MESSAGE]), re.I
)
#: Scaffolding wherever it appears: the blank line between the prompt's sections, a transcript
#: line's id, a chat template's special tokens, a role line of a chat transcript.
_ANYWHERE = re.compile(
    r"\n[ \t]*\n|\[message:|<\|[a-z_]+\|>|\n[ \t]*(?:user|assistant|system)[ \t]*:", re.I
)
#: What may come before a prompt phrase for it to start the scaffolding: the start of a line or
#: the end of a sentence (so "what about you:" in a message is not "About you:" of a persona).
_BOUNDARY = ("\n", ".", "!", "?", "…", ":", '"', "'", ")", "]")
#: An echo of the prompt: a phrase at the very start and a colon, then the message on the same
#: line (or nothing at all). Without the colon the phrase starts the scaffolding there and then.
_ECHO = re.compile(rf"\A\s*(?:{_PHRASE.pattern})(?:(?<=:)|[ \t]*:)[ \t]*(?=\S|\Z)", re.I)


def scaffolding_start(text: str, *, names: Sequence[str] = ()) -> int | None:
    """Where ``text`` runs on past its message into the prompt's scaffolding, or None.

    Scaffolding is a blank line, a transcript line (``[message:``), a chat template's special
    token, a line that starts with a participant's name (any of ``names``) or a chat role and a
    colon, or one of the prompts' phrases: anywhere in a line after the first, at the start or
    after a sentence in the first (where "Ben, it is your turn to speak!" is a message). An echo
    of the instruction at the very start (:func:`without_echo` removes it) is not searched.

    Args:
        text: the model's answer as it came.
        names: the participants of the conversation, the speaker included.

    Returns:
        The index where the scaffolding starts (0 when the answer is nothing but scaffolding),
        or None when the answer does not run on.
    """
    echo = _ECHO.match(text)
    start = echo.end() if echo else len(text) - len(text.lstrip())
    found = [m.start() for m in _ANYWHERE.finditer(text, start)]
    turn = _turn_line([n for n in names if n.strip()])
    if turn is not None:
        found += [m.start() for m in turn.finditer(text, start)]
    persona = _persona_line([n for n in names if n.strip()])
    if persona is not None:  # the persona block's "You are Hiro." at a sentence's start
        for m in persona.finditer(text, start):
            before = text[start : m.start()].rstrip(" \t")
            if not before or before.endswith(_BOUNDARY):
                found.append(m.start())
                break
    for m in _PHRASE.finditer(text, start):
        line = text.rfind("\n", start, m.start())
        if line != -1:  # on a later line than the message's first: that line is scaffolding
            found.append(line)
            break
        before = text[start : m.start()].rstrip(" \t")
        if not before or before.endswith(_BOUNDARY):
            found.append(m.start())
            break
    return min(found) if found else None


def cut_at_scaffolding(text: str, *, names: Sequence[str] = ()) -> str:
    """``text`` up to where it runs into the prompt's scaffolding (:func:`scaffolding_start`),
    without trailing space; the whole text, stripped, when it does not."""
    end = scaffolding_start(text, names=names)
    return (text if end is None else text[:end]).strip()


def without_echo(text: str) -> str:
    """``text`` without an echo of the instruction before the message ("You decided to say this
    thought out loud: ...", "Write your next chat message: ...")."""
    return _ECHO.sub("", text, count=1).strip()


def _persona_line(names: Sequence[str]) -> re.Pattern[str] | None:
    """The persona block's first words, "You are <participant>." (a weak model recites its
    instructions: SmolLM2-135M on llama.cpp's server answered "You are Hiro. A 26-year-old
    bicycle courier in Osaka …")."""
    if not names:
        return None
    alternatives = "|".join(re.escape(n.strip()) for n in names)
    return re.compile(rf"{_VARIANTS['you are']}\s+(?:{alternatives})\s*[.!]", re.I)


def _turn_line(names: Sequence[str]) -> re.Pattern[str] | None:
    """A line that starts another turn: a participant's name (bold or with @ as well) and a
    colon."""
    if not names:
        return None
    alternatives = "|".join(re.escape(n.strip()) for n in names)
    return re.compile(rf"\n[ \t]*[*_]*@?(?:{alternatives})[*_]*[ \t]*:", re.I)
