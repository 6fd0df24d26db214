"""The names people join a study with, the names its agents are shown under, and the text people
type (messages, notes, reviews): one set of rules for all of them.

**Names that look alike are the same name.** Two names clash when their *skeletons* are equal:
the name in Unicode NFKC, decomposed (NFD), each character a lookalike of a Latin letter or digit
replaced by that letter (:data:`LOOKALIKES`: the common Cyrillic and Greek letters of Unicode's
confusables list, UTS #39, and a few Latin and digit ones), then case-folded and composed again
(NFC). So ``Fаrіd`` typed with a Cyrillic а and і is the name of an agent called Farid, and
``ANA`` is ``Ana``. Accents stay: ``Zoë`` and ``Zoe`` are different names. (A table of our own
rather than a package: the confusables packages on PyPI check pairs or scripts rather than give
UTS #39's skeleton, and ICU's own needs PyICU compiled against it. The table covers the letters
that look exactly like Latin ones in common fonts, not every lookalike in Unicode.)

**Bidi controls are refused everywhere.** The characters that change the direction of text
(:data:`BIDI_CONTROLS`: embeddings, overrides, isolates and the direction marks) can make a text
show something other than what it holds (``U+202E`` turns ``txt.exe`` round). A name, message,
note or review that holds one is refused with a message naming the character, so the person can
take it out; nothing is stripped silently.

**Agents' names.** A study plan's agent is shown under its persona's name unless that clashes
with a person of the plan or an earlier conversation's agent: then it gets the first name of
:data:`AGENT_NAMES` that clashes with none (:func:`free_name`), and keeps its persona.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from playground import errors

#: The characters that change the direction of text: LRE, RLE, PDF, LRO, RLO (U+202A–U+202E),
#: LRI, RLI, FSI, PDI (U+2066–U+2069), LRM, RLM (U+200E, U+200F) and ALM (U+061C).
BIDI_CONTROLS = frozenset(
    [*map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A)), *"\u200e\u200f\u061c"]
)

#: Lookalikes → the Latin letter or digit they look like (UTS #39's confusables), by case: an
#: upper-case Greek Ν looks like N, a lower-case ν like v.
LOOKALIKES: dict[str, str] = {
    # Cyrillic
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M",
    "О": "O", "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "Ү": "Y", "Ԁ": "D", "Ԛ": "Q", "Ԝ": "W",
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "l", "о": "o",
    "р": "p", "ԛ": "q", "ѕ": "s", "у": "y", "ү": "y", "х": "x", "ԝ": "w",
    # Greek
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "α": "a", "ι": "i", "κ": "k", "ν": "v",
    "ο": "o", "ρ": "p", "υ": "u", "χ": "x", "ϲ": "c", "ϳ": "j",
    # Latin and digits
    "ı": "i", "ȷ": "j", "ℓ": "l", "ſ": "s", "0": "O", "1": "l", "|": "l",
}  # fmt: skip

#: Names a plan's agent is shown under when its persona's name clashes with someone's: none is
#: a default persona's name.
AGENT_NAMES = ("Kai", "Noor", "Remy", "Sol", "Tove", "Yuki", "Zane", "Ilse", "Omar", "Pia")


class TextRefused(errors.PlaygroundError):
    """A name or text that cannot be used; the message says why, for the person who typed it."""


def skeleton(name: str) -> str:
    """What ``name`` looks like: equal skeletons are names a reader cannot tell apart."""
    split = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", name))
    mapped = "".join(LOOKALIKES.get(c, c) for c in split if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", mapped).casefold())


def clash(name: str, taken: Iterable[str]) -> str | None:
    """The first of ``taken`` that ``name`` is, or looks like; None when none."""
    mine = skeleton(name)
    return next((t for t in taken if skeleton(t) == mine), None)


def _character(c: str) -> str:
    return f"U+{ord(c):04X} {unicodedata.name(c, 'a control character')}"


def refuse_bidi(text: str, what: str) -> None:
    """Raises TextRefused when ``text`` holds a bidi control (naming the first)."""
    found = next((c for c in text if c in BIDI_CONTROLS), None)
    if found is not None:
        raise TextRefused(
            f"The {what} holds {_character(found)}, an invisible character that changes the"
            " direction of text: please take it out."
        )


def _lookalikes(name: str) -> str:
    odd = sorted({c for c in unicodedata.normalize("NFKC", name) if c in LOOKALIKES})
    if not odd:
        return ""
    scripts = sorted({unicodedata.name(c, "other").split()[0].capitalize() for c in odd})
    return f" (it is written with {' and '.join(scripts)} {', '.join(odd)})"


def person_name(value: object, taken: Iterable[str], longest: int) -> str:
    """A display name a person typed, cleaned (spaces collapsed).

    Raises:
        TextRefused: empty, too long, a bidi or other control character, or the name (or a
            lookalike) of someone in ``taken``.
    """
    if not isinstance(value, str) or not value.strip():
        raise TextRefused("Please type a name to join with.")
    name = " ".join(value.split())
    if len(name) > longest:
        raise TextRefused(f"A name can have at most {longest} characters.")
    refuse_bidi(name, "name")
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise TextRefused("A name cannot contain control characters.")
    other = clash(name, taken)
    if other is not None and other.casefold() == name.casefold():
        raise TextRefused(f"Someone in this study is already called {name}.")
    if other is not None:
        raise TextRefused(
            f"{name} looks like {other}, the name of someone in this study{_lookalikes(name)}:"
            " please choose a name that looks different."
        )
    return name


def free_name(wanted: str, taken: Iterable[str]) -> str:
    """``wanted`` when it clashes with none of ``taken``, else the first free of
    :data:`AGENT_NAMES` (else ``Agent 2``, ``Agent 3``, …)."""
    taken = list(taken)
    if clash(wanted, taken) is None:
        return wanted
    spare = (*AGENT_NAMES, *(f"Agent {n}" for n in range(2, len(taken) + 3)))
    return next(n for n in spare if clash(n, taken) is None)


def text(value: object, what: str, longest: int) -> str:
    """A message or note a person typed, without the spaces around it.

    Raises:
        TextRefused: not text, empty, longer than ``longest``, or holding a bidi control.
    """
    if not isinstance(value, str) or not value.strip():
        raise TextRefused(f"The {what} is empty.")
    return optional_text(value, what, longest)


def optional_text(value: object, what: str, longest: int) -> str:
    """An answer a person may leave empty (``""`` for none), without the spaces around it.

    Raises:
        TextRefused: not text, longer than ``longest``, or holding a bidi control.
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TextRefused(f"The {what} must be text.")
    if len(value) > longest:
        raise TextRefused(f"The {what} is too long: at most {longest} characters.")
    refuse_bidi(value, what)
    return value.strip()
