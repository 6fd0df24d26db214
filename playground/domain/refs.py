"""References to a memory, a message or a thought, as the engine writes them: ``memory:12``.

A stimulus, a thought's sources and the window's links all name what they point at this way.
:func:`ref` writes one and :func:`parse_ref` reads one back, so no caller splits the text by hand.
"""

from __future__ import annotations

from typing import Literal, get_args

RefKind = Literal["memory", "message", "thought"]
REF_KINDS: tuple[RefKind, ...] = get_args(RefKind)


class MalformedRef(ValueError):
    """Text that is not ``kind:id`` with a known kind and a whole number id."""


def ref(kind: RefKind, id: int) -> str:
    """``kind:id``, e.g. ``ref("memory", 12) == "memory:12"``."""
    return f"{kind}:{id}"


def parse_ref(text: str) -> tuple[RefKind, int]:
    """``"memory:12"`` → ``("memory", 12)``.

    Raises:
        MalformedRef: not a reference (an unknown kind, no ``:``, an id that is not a whole number).
    """
    kind, colon, number = text.partition(":")
    if not colon or not (number.isascii() and number.isdigit()):
        raise MalformedRef(
            f"{text!r} is not a reference like memory:12 (a kind, a colon, a whole number)"
        )
    for known in REF_KINDS:
        if kind == known:
            return known, int(number)
    raise MalformedRef(f"{text!r} names no known kind ({', '.join(REF_KINDS)})")


def ref_kind(text: str) -> RefKind | None:
    """The kind of a well-formed reference; None for any other text."""
    try:
        return parse_ref(text)[0]
    except MalformedRef:
        return None


def ref_id(text: str, kind: RefKind) -> int | None:
    """The id of a well-formed reference of this kind; None for another kind or other text."""
    try:
        found, number = parse_ref(text)
    except MalformedRef:
        return None
    return number if found == kind else None
