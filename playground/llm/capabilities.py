"""What one server and model accept, learned once and shared by every call to them.

OpenAI-compatible servers differ in what a chat request may carry. Current OpenAI reasoning
models refuse ``max_tokens``, any ``temperature`` but 1 and ``logprobs``; llama-cpp-python refuses
a ``json_schema`` response format (it takes ``json_object`` with a ``schema``); many local servers
and hosted providers offer JSON mode only, or a JSON schema without numeric and length keywords.

A :class:`ServerProfile` holds what is known for one (base URL, model): the structured-output
tier, the token-limit parameter, and whether temperature, logprobs, ``n``, ``seed`` and ``stop``
may be sent.
It starts optimistic and steps down when a rejection names a field (:func:`adaptation`): the
first call that meets a rejection changes the profile for all, and every call builds its body
from the profile at the moment it is sent, so calls queued behind it never repeat the rejection.

A user can pin any capability (``--pin structured=json_object``); pinned capabilities are never
probed or changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from playground import settings

#: Schema keywords some servers refuse in a JSON schema.
SCHEMA_KEYWORDS = (
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
)
_BOOL = {"yes": True, "no": False}
#: What a whole answer's logprobs cost (:attr:`ServerProfile.logprobs_cost`).
LogprobsCost = Literal["free", "per-token"]
#: Why ``stop`` is no longer sent, as said to the user.
STOP_REFUSED = "server refuses stop sequences: run-on answers are cut by the client alone"
STOP_SILENCES = (
    "the model ends before it answers when given stop sequences: sending none"
    " (run-on answers are cut by the client alone)"
)


@dataclass
class ServerProfile:
    """What a server and model accept (see the module docs)."""

    structured: settings.StructuredTier = "json_schema"
    tokens: settings.TokenParam = "max_tokens"
    temperature: bool = True
    #: None until a probe or an answer tells.
    logprobs: bool | None = None
    n: bool | None = None
    seed: bool = True
    #: Stop sequences: OpenAI's reasoning models refuse them; learned on the first call that
    #: carries them (the probe does not), or from a model that stops before answering with them.
    stop: bool = True
    #: What a whole answer's logprobs cost: nothing extra (``free``: a hosted API computes them
    #: as it decodes), or time for every token (``per-token``: llama-cpp-python scores each
    #: generated token in Python, ~170 ms for SmolLM2 on 2 cores). Where they are free, a
    #: rating is read from the evaluation answer itself (one dependent call less per message);
    #: else from a short final call. None until the client knows where the server is.
    logprobs_cost: LogprobsCost | None = None
    pinned: frozenset[str] = frozenset()
    #: What was learned, in order, as shown to the user.
    learned: list[str] = field(default_factory=list)
    #: Counts the changes: a request built at an older version is sent again as it now stands.
    version: int = 0

    @classmethod
    def with_pins(cls, pins: Mapping[str, str]) -> ServerProfile:
        p = cls(pinned=frozenset(pins))
        for key, value in pins.items():
            if key in ("structured", "tokens", "logprobs_cost"):
                setattr(p, key, value)
            else:
                setattr(p, key, _BOOL[value])
        return p

    def as_dict(self) -> dict[str, Any]:
        return {
            "structured": self.structured,
            "tokens": self.tokens,
            "temperature": self.temperature,
            "logprobs": self.logprobs,
            "n": self.n,
            "seed": self.seed,
            "stop": self.stop,
            "logprobs_cost": self.logprobs_cost,
            "pinned": sorted(self.pinned),
            "learned": list(self.learned),
        }

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), sort_keys=True)

    def summary(self) -> str:
        """One line: ``json_schema · max_tokens · temperature · logprobs · n · seed`` (and
        ``no stop`` where stop sequences are not sent)."""
        return summary_of(self.as_dict())

    def can_change(self, key: str) -> bool:
        return key not in self.pinned

    def apply(self, key: str, value: Any, why: str) -> bool:
        """Set ``key`` to ``value`` unless pinned or already so; True when it changed."""
        if not self.can_change(key) or getattr(self, key) == value:
            return False
        setattr(self, key, value)
        self.learned.append(why)
        self.version += 1
        return True


def server_profile(raw: object) -> dict[str, Any] | None:
    """A stored profile (JSON text, as in ``sessions.server_profile``) as a dict; None for the
    offline engine, an empty value or one that cannot be read."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if not isinstance(raw, str) or not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def summary_of(profile: Mapping[str, Any] | None) -> str:
    """The one-line summary of a stored profile (``as_dict`` form); ``""`` for none."""
    if not profile:
        return ""

    def flag(name: str, label: str) -> str:
        v = profile.get(name)
        return label if v else f"no {label}" if v is False else f"{label}?"

    parts = [
        str(profile.get("structured", "?")),
        str(profile.get("tokens", "?")) if profile.get("tokens") != "none" else "no token limit",
        "temperature" if profile.get("temperature", True) else "default temperature",
        flag("logprobs", "logprobs"),
        flag("n", "n"),
        flag("seed", "seed"),
    ]
    if profile.get("stop") is False:
        parts.append("no stop")
    return " · ".join(parts)


@dataclass(frozen=True)
class Rejection:
    """What a refused request's error says, reduced to the text that names fields."""

    status: int
    text: str  # lower-cased message, param, code and error locations

    @classmethod
    def of(cls, status: int, body: Any) -> Rejection:
        return cls(status, _naming_text(body).lower())

    def names(self, *words: str) -> bool:
        return any(_word(w).search(self.text) for w in words)


def _word(w: str) -> re.Pattern[str]:
    return re.compile(r"(?<![a-z_])" + re.escape(w.lower()) + r"(?![a-z_])")


def _naming_text(body: Any) -> str:
    """The parts of an error body that say what was wrong: messages, ``param``, ``code``, ``type``
    and pydantic's ``loc``; never echoed ``input`` values (they can repeat our whole request)."""
    if isinstance(body, (bytes, bytearray)):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        text = body
        try:
            body = json.loads(text)
        except ValueError:
            return text[:2000]
    out: list[str] = []

    def walk(node: Any, depth: int = 0) -> None:
        if depth > 6:
            return
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("input", "ctx", "url"):
                    continue
                if k == "loc" and isinstance(v, list):
                    out.append(".".join(str(x) for x in v))
                elif isinstance(v, str):
                    out.append(_strip_inputs(v))
                else:
                    walk(v, depth + 1)
        elif isinstance(node, list):
            for v in node:
                walk(v, depth + 1)
        elif isinstance(node, str):
            out.append(_strip_inputs(node))

    walk(body)
    return " | ".join(out)[:4000]


def _strip_inputs(text: str) -> str:
    """A pydantic error list printed as text (llama-cpp-python's 500s) without its ``'input':``
    values, which echo the request."""
    return re.sub(r"'input':\s*(\{.*?\}|'[^']*'|\"[^\"]*\"|[^,}]*)", "", text)


def adaptation(
    profile: ServerProfile, sent: Mapping[str, Any], rejection: Rejection
) -> tuple[str, Any, str] | None:
    """What to change in ``profile`` after ``rejection`` of a request with body ``sent``:
    ``(capability, new value, why)``, or None when the rejection names nothing we can leave out.

    Only fields the request carried are considered, so a rejection is never blamed on something
    that was not sent. Calls that were sent before an earlier adaptation find the profile already
    changed: the caller re-sends them with the current profile without changing it again.
    """
    if rejection.status not in (400, 404, 415, 422, 500, 501):
        return None
    r = rejection
    fmt = sent.get("response_format")
    if isinstance(fmt, Mapping) and r.names(
        "response_format", "json_schema", "json_object", "structured output", "schema"
    ):
        kind = fmt.get("type")
        tier = profile.structured
        if (
            kind == "json_schema"
            and any(r.names(k) for k in SCHEMA_KEYWORDS)
            and (tier == "json_schema")
        ):
            return (
                "structured",
                "json_schema_loose",
                "server refuses schema keywords such as "
                "minimum/maxItems: using a JSON schema without them",
            )
        if kind == "json_schema":
            return (
                "structured",
                "json_object_schema",
                "server has no json_schema: using JSON "
                "mode with the schema attached and in the prompt",
            )
        if kind == "json_object" and "schema" in fmt:
            return (
                "structured",
                "json_object",
                "server refuses a schema in JSON mode: using "
                "JSON mode with the schema in the prompt",
            )
        if kind == "json_object":
            return (
                "structured",
                "text",
                "server has no JSON mode: asking for JSON in the prompt and reading it leniently",
            )
    if "max_tokens" in sent and r.names("max_tokens") and profile.tokens == "max_tokens":
        return (
            "tokens",
            "max_completion_tokens",
            "server refuses max_tokens: sending max_completion_tokens",
        )
    if "max_completion_tokens" in sent and r.names("max_completion_tokens"):
        return ("tokens", "none", "server refuses max_completion_tokens: sending no token limit")
    if "temperature" in sent and r.names("temperature"):
        return ("temperature", False, "server takes only its default temperature: sending none")
    if ("logprobs" in sent or "top_logprobs" in sent) and r.names("logprobs", "top_logprobs"):
        return ("logprobs", False, "server refuses logprobs: ratings are sampled or parsed")
    if "seed" in sent and r.names("seed"):
        return ("seed", False, "server refuses seed: runs cannot be reproduced on it")
    if "stop" in sent and r.names("stop", "stop_sequences", "stopsequences"):
        return ("stop", False, STOP_REFUSED)
    if "n" in sent and (
        r.names("'n'", '"n"', "body.n") or re.search(r"(?:^|\|)\s*n\s*(?:\||$)", r.text)
    ):
        return ("n", False, "server refuses n: samples are asked for one by one")
    return None
