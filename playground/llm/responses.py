"""Reading a server's raw HTTP answer: what came back must be a chat completion (or embeddings).

The client asks the SDK for the raw response and reads the JSON here, for two reasons:

* **Clear errors.** Anything can stand behind a base URL: a web page, a proxy's error page, a
  server that cuts its answer short. Each of those becomes an :class:`~playground.errors.LLMBadResponse`
  naming the server, what it sent (content type, a few characters) and what was expected, instead
  of an ``AttributeError`` deep inside the SDK.
* **Speed.** The SDK builds typed objects for every logprob token of every answer. Reading the
  plain JSON costs a fraction of that, which matters with 8 agents rating thoughts in parallel.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from playground import errors

SNIPPET = 120


class TokenLogprob:
    """One answer token, its logprob and its top alternatives.

    The alternatives are read from the answer's JSON only when asked for: an evaluation answer
    carries about 50 tokens with 5 alternatives each, and only the rating token's are ever used.
    """

    __slots__ = ("_raw", "_top", "logprob", "token")

    def __init__(
        self,
        token: str,
        logprob: float,
        top: list[tuple[str, float]] | None = None,
        *,
        raw_top: Sequence[Any] = (),
    ) -> None:
        self.token = token
        self.logprob = logprob
        self._top = top
        self._raw = raw_top

    @property
    def top(self) -> list[tuple[str, float]]:
        if self._top is None:
            self._top = [
                (a["token"], float(a.get("logprob") or 0.0))
                for a in self._raw
                if isinstance(a, dict) and isinstance(a.get("token"), str)
            ]
        return self._top

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TokenLogprob):
            return NotImplemented
        return (self.token, self.logprob, self.top) == (other.token, other.logprob, other.top)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"TokenLogprob({self.token!r}, {self.logprob!r}, {self.top!r})"


@dataclass(frozen=True)
class Completion:
    """The parts of a chat completion the app uses."""

    text: str
    tokens: list[TokenLogprob] | None
    prompt_tokens: int
    completion_tokens: int
    #: ``stop``, ``length`` (cut at the token limit), ... or ``""`` when the server gave none.
    finish_reason: str = ""
    #: Every choice's text when several were asked for (``n``), the first included.
    texts: tuple[str, ...] = ()
    #: Every choice's finish reason, in the same order.
    finish_reasons: tuple[str, ...] = ()


def snippet(body: bytes | str, limit: int = SNIPPET) -> str:
    """The first characters of a body, on one line, for an error message."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    text = " ".join(text.split())
    return repr(text[:limit] + ("…" if len(text) > limit else ""))


def _loads(body: bytes) -> Any:
    """orjson (a third of json's time on a 15 kB answer with logprobs); json.loads when orjson
    refuses, since some servers write NaN or -Infinity logprobs, which only json accepts."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)


def read_json(where: str, what: str, content_type: str, body: bytes) -> dict[str, Any]:
    """The JSON object of a successful (2xx) answer.

    Raises:
        LLMBadResponse: the body is empty, not JSON, or not a JSON object.
    """
    kind = content_type.split(";")[0].strip().lower() or "no content type"
    if not body.strip():
        raise errors.LLMBadResponse(f"{where} answered {what} with an empty body ({kind})")
    try:
        data = _loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        looks = "a web page" if b"<html" in body[:2000].lower() else "a body that is not JSON"
        raise errors.LLMBadResponse(
            f"{where} answered {what} with {looks} ({kind}), not an OpenAI-compatible JSON answer: "
            f"{snippet(body)}. Is the base URL the API's (it usually ends in /v1)?"
        ) from exc
    if not isinstance(data, dict):
        raise errors.LLMBadResponse(
            f"{where} answered {what} with JSON that is not an object: {snippet(body)}"
        )
    return data


def _error_text(data: dict[str, Any]) -> str | None:
    err = data.get("error")
    if isinstance(err, dict):
        return str(err.get("message") or err)
    if isinstance(err, str):
        return err
    return None


def read_completion(where: str, what: str, content_type: str, body: bytes) -> Completion:
    """The text, logprobs and token counts of a chat completion body.

    Raises:
        LLMBadResponse: the body is not a chat completion (no ``choices``, no ``message``, an
            error object sent with status 200...).
    """
    data = read_json(where, what, content_type, body)
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        said = _error_text(data)
        detail = f"an error: {said[:200]!r}" if said else f"no choices: {snippet(body)}"
        raise errors.LLMBadResponse(f"{where} answered {what} with {detail}")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise errors.LLMBadResponse(
            f"{where} answered {what} with a choice that has no message: {snippet(body)}"
        )
    text = _content(message)
    usage = data.get("usage")
    if not isinstance(usage, dict):
        usage = {}
    texts, reasons = [text], [_reason(choice)]
    for other in choices[1:]:
        if isinstance(other, dict) and isinstance(other.get("message"), dict):
            texts.append(_content(other["message"]))
            reasons.append(_reason(other))
    return Completion(
        text=text,
        tokens=_tokens(choice.get("logprobs")),
        prompt_tokens=_int(usage.get("prompt_tokens")),
        completion_tokens=_int(usage.get("completion_tokens")),
        finish_reason=reasons[0],
        texts=tuple(texts),
        finish_reasons=tuple(reasons),
    )


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _reason(choice: dict[str, Any]) -> str:
    reason = choice.get("finish_reason")
    return reason if isinstance(reason, str) else ""


def read_embeddings(where: str, content_type: str, body: bytes, count: int) -> list[list[float]]:
    """The vectors of an embeddings body, in input order.

    Raises:
        LLMBadResponse: not an embeddings answer, or not one vector per text.
    """
    data = read_json(where, "embeddings", content_type, body)
    rows = data.get("data")
    if not isinstance(rows, list) or not all(
        isinstance(r, dict) and isinstance(r.get("embedding"), list) for r in rows
    ):
        said = _error_text(data)
        detail = f"an error: {said[:200]!r}" if said else f"no embeddings: {snippet(body)}"
        raise errors.LLMBadResponse(f"{where} answered embeddings with {detail}")
    if len(rows) != count:
        raise errors.LLMBadResponse(f"{where} returned {len(rows)} embeddings for {count} texts")
    rows = sorted(rows, key=lambda r: _int(r.get("index")))
    return [[float(x) for x in r["embedding"]] for r in rows]


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _tokens(logprobs: Any) -> list[TokenLogprob] | None:
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list) or not content:
        return None
    out = []
    for t in content:
        if not isinstance(t, dict) or not isinstance(t.get("token"), str):
            return None  # an odd logprob format reads as none at all, never half
        top = t.get("top_logprobs")
        out.append(
            TokenLogprob(
                t["token"],
                float(t.get("logprob") or 0.0),
                raw_top=top if isinstance(top, list) else (),
            )
        )
    return out
