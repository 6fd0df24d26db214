"""Reading a simulated user's answer: the JSON object, the paper's tagged text, or neither.

The model is asked for JSON (:class:`playground.storm.prompts.UserAnswerOut`). When the server
ignores the schema or the JSON is broken, the answer is read as the paper's tagged text
(appendix L.6/L.8) plus the tags we add for the fields the paper has no tag for::

    [INNER_THOUGHTS] I'm not sure about the options yet [/INNER_THOUGHTS]
    [SATISFACTION] 0.7 - the suggestions help but I need more [/SATISFACTION]
    [CLARITY] 0.4 - I know I want a phone, not which one [/CLARITY]
    [EMOTION] hopeful [/EMOTION]
    [INTENT] comparing [/INTENT]
    Could you tell me more about the features?

Every scored tag also has the paper's one-bracket form (``[SATISFACTION: 0.7 - why]``,
``[CLARITY: 0.4 - why]``, ``[EMOTION: hopeful]``, ``[INTENT: comparing]``). The message is what
is left once the tags are taken out. Anything else falls back: the whole text is the message.

Fallbacks, field by field:
- satisfaction: a score missing, unreadable or outside 0–1 is stored as the placeholder 0.5,
  flagged ``satisfaction_missing`` (appendix L.8); no metric counts it;
- clarity: the previous turn's clarity, else the start value the caller gives (the simulators
  take it from the profile's uncertainty: :func:`start_clarity`); the explanation says so
  (:data:`~playground.domain.simulated_user.CLARITY_NOT_RATED`), and no metric counts it;
- emotion and intent: the keyword maps (appendix L.2–L.5), source ``keywords``;
- the message is cut to 100 characters at a word boundary (:func:`cut_message`).
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass
from typing import Any

from playground import errors
from playground.domain.simulated_user import (
    CLARITY_CARRIED,
    CLARITY_START,
    MISSING_SATISFACTION,
    USER_LENGTH,
    HiddenState,
    StateFormat,
    UserTurn,
)
from playground.storm import keywords

#: Clarity when nothing else is known: "I know roughly what I want" (the scale's middle).
DEFAULT_START_CLARITY = 0.5

_SCORE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?![\d.])\s*(?:[-–—:,;]\s*)?(.*)$", re.S)
_TAGS = ("INNER_THOUGHTS", "SATISFACTION", "CLARITY", "EMOTION", "INTENT")


def _tag_patterns(tag: str) -> tuple[re.Pattern[str], ...]:
    name = tag.replace("_", r"[_ ]")
    paired = re.compile(rf"\[\s*{name}\s*\](.*?)\[\s*/\s*{name}\s*\]", re.S | re.I)
    inline = re.compile(rf"\[\s*{name}\s*:\s*(.*?)\]", re.S | re.I)
    # Never closed (a model that forgot the closing tag): the tag's line is its value, so private
    # text is never posted as part of the message.
    unclosed = re.compile(rf"\[\s*{name}\s*\]([^\n\[]*)", re.I)
    return paired, inline, unclosed


_PATTERNS = {tag: _tag_patterns(tag) for tag in _TAGS}
# A tag left open at the end of a cut-off answer ("[INNER_THOUGHTS] I wonder"): dropped.
_OPEN_TAG = re.compile(r"\[\s*/?\s*(?:" + "|".join(t.replace("_", "[_ ]") for t in _TAGS) + r")\b[^\]]*\]?", re.I)  # fmt: skip


def start_clarity(uncertainty: int) -> float:
    """The clarity a simulated user starts from when no turn has rated it yet.

    ``0.8 − 0.6 × uncertainty/100``: 0.80 at 0 %, 0.56 at 40 %, 0.44 at 60 %, 0.32 at 80 %. A user
    who knows every attribute of their profile is fairly clear about what they want (not fully:
    the conversation is where details settle); each unknown share takes clarity down with it.
    """
    return round(0.8 - 0.6 * max(0, min(uncertainty, 100)) / 100, 4)


def cut_message(text: str, limit: int = USER_LENGTH[1]) -> str:
    """``text`` shortened to at most ``limit`` characters, at a word boundary when there is one.

    Args:
        text: the message.
        limit: the longest message kept (the user's maximum, 100, by default).
    """
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    cut = head.rfind(" ")
    out = head[:cut] if cut >= limit // 2 else text[:limit]
    return out.rstrip(" ,;:-–—")


def read_score(raw: Any) -> tuple[float | None, str]:
    """A score 0–1 and its explanation from ``"0.7 - why"`` (or a number); None when the score
    is missing, not a number, or outside 0–1 (``"1.7"``, ``"abc"``, ``""``)."""
    if isinstance(raw, bool):
        return None, ""
    if isinstance(raw, (int, float)):
        value = float(raw)
        return (value, "") if 0.0 <= value <= 1.0 else (None, "")
    if not isinstance(raw, str):
        return None, ""
    m = _SCORE.match(raw.strip())
    if not m:
        return None, raw.strip()
    value = float(m.group(1))
    why = m.group(2).strip()
    return (value, why) if 0.0 <= value <= 1.0 else (None, why)


@dataclass
class _Fields:
    message: str = ""
    inner: str = ""
    satisfaction: float | None = None
    satisfaction_why: str = ""
    clarity: float | None = None
    clarity_why: str = ""
    emotion: str = ""
    intent: str = ""


def _from_json(data: dict[str, Any]) -> _Fields:
    f = _Fields()
    f.message = str(data.get("message") or "").strip()
    f.inner = str(data.get("inner_thoughts") or "").strip()
    for name in ("satisfaction", "clarity"):
        block = data.get(name)
        if isinstance(block, dict):
            score, why = read_score(block.get("score"))
            why = str(block.get("explanation") or why or "").strip()
        else:
            score, why = read_score(block)
        setattr(f, name, score)
        setattr(f, f"{name}_why", why)
    f.emotion = str(data.get("emotion") or "").strip()
    f.intent = str(data.get("intent") or "").strip()
    return f


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in ``text`` (bare, in a code fence, or inside prose), if there is one
    with a ``message``."""
    candidates = [text.strip()]
    candidates += re.findall(r"```(?:json)?\s*(.*?)```", text, flags=re.S)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for cand in candidates:
        try:
            data = json.loads(cand)
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("message"), str):
            return data
    return None


def _looks_like_json(text: str) -> bool:
    """An answer that opens like a JSON object (after an optional code fence), or names a field
    of the answer's schema in JSON form."""
    head = re.sub(r"^\s*```(?:json)?\s*", "", text)
    return head.lstrip().startswith("{") or bool(re.search(r'"(message|inner_thoughts)"\s*:', text))


def _salvage_json(text: str) -> _Fields | None:
    """A broken JSON answer (cut off, a stray comma): the ``message`` string, if it is whole."""
    if "{" not in text or '"message"' not in text:
        return None
    m = re.search(r'"message"\s*:\s*"((?:[^"\\]|\\.)*)"', text, re.S)
    if not m:
        return None
    try:
        message = json.loads(f'"{m.group(1)}"')
    except ValueError:
        return None
    inner = re.search(r'"inner_thoughts"\s*:\s*"((?:[^"\\]|\\.)*)"', text, re.S)
    f = _Fields(message=str(message).strip())
    if inner:
        with contextlib.suppress(ValueError):
            f.inner = str(json.loads(f'"{inner.group(1)}"')).strip()
    return f


def _from_tags(text: str) -> _Fields | None:
    f = _Fields()
    found = False
    rest = text
    for tag, patterns in _PATTERNS.items():
        value: str | None = None
        for pattern in patterns:
            m = pattern.search(rest)
            if m:
                value = m.group(1).strip()
                rest = rest[: m.start()] + " " + rest[m.end() :]
                break
        if value is None:
            continue
        found = True
        if tag == "INNER_THOUGHTS":
            f.inner = value
        elif tag == "SATISFACTION":
            f.satisfaction, f.satisfaction_why = read_score(value)
        elif tag == "CLARITY":
            f.clarity, f.clarity_why = read_score(value)
        elif tag == "EMOTION":
            f.emotion = value
        else:
            f.intent = value
    if not found:
        return None
    f.message = _OPEN_TAG.sub(" ", rest).strip()
    return f


def parse_user_answer(
    text: str,
    *,
    previous_clarity: float | None = None,
    start: float = DEFAULT_START_CLARITY,
) -> UserTurn:
    """A simulated user's turn from a model's answer: JSON, the tagged text, or the bare message.

    Args:
        text: the model's answer as received.
        previous_clarity: the user's clarity at its previous turn (carried over when this answer
            gives none).
        start: the clarity to use when there is no previous turn either.

    Returns:
        The visible message (cut to 100 characters) and the hidden state; ``state.format`` says
        how it was read (``json``, ``tagged`` or ``fallback``).

    Raises:
        LLMOutputError: there is no usable message at all (an empty answer, or only tags).
    """
    fmt: StateFormat
    data = _json_object(text)
    if data is not None:
        fields, fmt = _from_json(data), "json"
    else:
        tagged = _from_tags(text)
        if tagged is not None:
            fields, fmt = tagged, "tagged"
        else:
            salvaged = _salvage_json(text)
            if salvaged is None and _looks_like_json(text):
                # A JSON answer that cannot be read (cut inside its message, say) is never
                # posted as it is: the raw braces and keys would become the user's message.
                raise errors.LLMOutputError(
                    "the simulated user's answer is JSON that cannot be read and has no whole"
                    f" message; it began: {text[:80]!r}"
                )
            fields, fmt = salvaged or _Fields(message=text.strip()), "fallback"
    message = cut_message(fields.message.strip().strip('"').strip())
    if not message:
        raise errors.LLMOutputError(
            f"the simulated user's answer has no message to post (read as {fmt}); it began:"
            f" {text[:80]!r}"
        )
    return UserTurn(text=message, state=_state(fields, fmt, message, previous_clarity, start))


def _state(
    f: _Fields, fmt: StateFormat, message: str, previous: float | None, start: float
) -> HiddenState:
    missing = f.satisfaction is None
    if f.clarity is not None:
        clarity, clarity_why = f.clarity, f.clarity_why
    elif previous is not None:
        clarity = previous
        clarity_why = CLARITY_CARRIED
    else:
        clarity = start
        clarity_why = CLARITY_START
    return HiddenState(
        inner_thoughts=f.inner,
        satisfaction=MISSING_SATISFACTION if missing else float(f.satisfaction or 0.0),
        satisfaction_explanation=f.satisfaction_why,
        satisfaction_missing=missing,
        clarity=clarity,
        clarity_explanation=clarity_why,
        emotion=(f.emotion or keywords.infer_emotion(message, f.inner)).lower(),
        intent=(f.intent or keywords.infer_intent(message, f.inner)).lower(),
        emotion_source="model" if f.emotion else "keywords",
        intent_source="model" if f.intent else "keywords",
        format=fmt,
    )
