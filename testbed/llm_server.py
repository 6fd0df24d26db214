"""A deterministic, OpenAI-compatible HTTP server for tests and benchmarks.

``FakeLLMServer`` listens on ``127.0.0.1`` (a random free port) and is served
from a daemon thread, so the *real* ``openai.AsyncOpenAI`` client can talk to
it over loopback::

    with FakeLLMServer(latency=0.05) as srv:
        client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        ...

The server knows nothing about the application's prompts.  It fabricates
replies generically:

* ``POST /v1/chat/completions`` - a ``json_schema`` response format yields an
  instance of the requested schema; ``json_object`` yields ``{"text": ...}``;
  otherwise a short sentence built from the last user message.  ``max_tokens``
  of 1 (a capability probe) yields ``"OK"``.  Token logprobs are fabricated
  for the whole content when requested; digit tokens ``1``-``5`` carry a
  proper distribution over the five digits.
* ``POST /v1/embeddings`` - deterministic, unit-length bag-of-words vectors.
* ``GET /v1/models`` - a single ``fake-model``.

Everything is deterministic given ``seed`` and the request.  Failure
injection (``fail_next``), hangs (``hang_next``), an artificial ``latency``,
API-key checking and non-compliant JSON modes are available for testing the
client's error handling.  Only the standard library is used.

``profile`` makes the server refuse what a real server refuses, with that server's
exact status and body (``testbed/server_bodies.json``, see
``docs/server-capabilities.md``); each refusal is recorded in ``srv.rejections``:

* ``"permissive"`` (default) - accepts everything, as above.
* ``"gpt5"`` - OpenAI reasoning models: ``max_tokens`` (use
  ``max_completion_tokens``), a ``temperature`` other than 1, ``logprobs``,
  ``top_logprobs``, ``n`` above 8 and ``stop`` are refused; ``json_object`` needs the
  word "json" in the messages; ``n`` is honoured.
* ``"json-object-only"`` - DeepSeek: ``json_schema`` refused; ``json_object`` needs
  "json" in the messages and follows a JSON schema written in the messages.
* ``"no-schema-keywords"`` - OpenAI strict mode of old: ``json_schema`` refused
  when the schema holds one of :data:`SCHEMA_KEYWORDS`.
* ``"llama-cpp-python"`` - ``json_schema`` answered with its HTTP 500; ``json_object``
  follows its ``schema`` field (or a schema in the messages); unknown fields such as
  ``max_completion_tokens`` and ``n`` ignored; logprobs only with ``top_logprobs``.

With any profile that takes it, ``stop`` is honoured as real servers honour it: the
content ends before the first stop sequence it holds (``finish_reason: "stop"``).

With any profile: ``n_supported`` (``n`` > 1 gives that many different choices),
``cut_next`` (``finish_reason: "length"`` with the content cut off),
``invalid_next`` (out-of-range values) and ``placeholder_next`` (every string
``"..."``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import re
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from socketserver import TCPServer
from typing import Any

__all__ = ["GARBLES", "PROFILES", "SCHEMA_KEYWORDS", "FakeLLMServer", "server_bodies"]

MODEL_ID = "fake-model"
EMBEDDING_DIM = 384

#: Tokenizer for logprobs: every digit is its own token; the concatenation of
#: all tokens is exactly the input (the four alternatives cover every char).
_TOKEN_RE = re.compile(r"\d|[^\W\d]+|\s+|[^\w\s]")
_WORD_RE = re.compile(r"[^\W\d_]+")  # letters only, for building phrases
_EMB_WORD_RE = re.compile(r"\w+")

_FALLBACK_WORDS = ["idea", "thought", "playground", "notion", "picture", "detail", "topic", "point"]
_STOP_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "are",
        "but",
        "not",
        "you",
        "your",
        "with",
        "this",
        "that",
        "from",
        "have",
        "has",
        "was",
        "were",
        "what",
        "when",
        "which",
        "who",
        "will",
        "would",
        "about",
        "into",
        "than",
        "then",
        "them",
        "they",
        "their",
        "there",
        "these",
        "those",
        "its",
        "our",
        "out",
        "all",
        "any",
        "can",
        "please",
    ]
)
_FILLER_TOKENS = [
    " the",
    " a",
    ",",
    ".",
    " and",
    " of",
    " to",
    " is",
    " it",
    " in",
    "\n",
    " that",
    " this",
    " for",
    " on",
    " with",
    " as",
    " was",
    " but",
    " so",
    " be",
    " at",
    " or",
    " by",
]
_DIGITS = "12345"
_DIGIT_TOP_P = 0.6

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("permission_denied", None),
    404: ("invalid_request_error", "not_found"),
    408: ("timeout", None),
    409: ("conflict", None),
    422: ("invalid_request_error", None),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
}

#: Transport-level surprises for ``garble_next``: status, content type, body.
GARBLES: dict[str, tuple[int, str, bytes]] = {
    "html": (
        200,
        "text/html; charset=utf-8",
        b"<!DOCTYPE html><html><head><title>Open WebUI</title></head><body>Sign in</body></html>",
    ),
    "broken_json": (
        200,
        "application/json",
        b'{"id": "chatcmpl-1", "choices": [{"index": 0, "mess',
    ),
    "no_choices": (200, "application/json", b'{"object": "list", "data": []}'),
    "error_200": (
        200,
        "application/json",
        b'{"error": {"message": "model is loading, try again later", "code": 503}}',
    ),
    "empty_content": (200, "application/json", b""),  # built from a real reply instead
    "proxy_502": (
        502,
        "text/html",
        b"<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway"
        b"</h1></center><hr><center>nginx</center></body></html>",
    ),
    "text_plain": (200, "text/plain", b"OK"),
}

_PROBE_CONTENT = "OK"
_MALFORMED_CONTENT = "I think the answer is probably four, but let me know."

#: Server behaviours (``FakeLLMServer(profile=...)``); see the module docs.
PROFILES = ("permissive", "gpt5", "json-object-only", "no-schema-keywords", "llama-cpp-python")

#: JSON-schema keywords the ``"no-schema-keywords"`` profile refuses (as OpenAI's strict mode
#: once did and Groq's still does).
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

#: The request fields llama-cpp-python's server knows (its pydantic model ignores the rest).
_LLAMA_CPP_PYTHON_FIELDS = frozenset(
    [
        "model",
        "messages",
        "functions",
        "function_call",
        "tools",
        "tool_choice",
        "max_tokens",
        "min_tokens",
        "logprobs",
        "top_logprobs",
        "temperature",
        "top_p",
        "min_p",
        "stop",
        "stream",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "seed",
        "response_format",
        "n",
        "user",
        "top_k",
        "repeat_penalty",
        "logit_bias_type",
        "mirostat_mode",
        "mirostat_tau",
        "mirostat_eta",
        "grammar",
    ]
)

_BODIES_PATH = Path(__file__).resolve().parent / "server_bodies.json"


@lru_cache(maxsize=1)
def server_bodies() -> dict[str, dict[str, Any]]:
    """The reference error bodies of real servers (``testbed/server_bodies.json``)."""
    data = json.loads(_BODIES_PATH.read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if not k.startswith("_")}


def reference_body(key: str, **fill: Any) -> tuple[int, Any]:
    """Status and body of reference case ``key``; ``fill`` completes its message template."""
    case = server_bodies()[key]
    body = json.loads(json.dumps(case["body"]))  # a deep copy
    template = case.get("message_template")
    if template is not None and fill:
        message = template.format(**fill)
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            body["error"]["message"] = message
        elif isinstance(body, dict) and isinstance(body.get("error"), str):
            body["error"] = message
        else:
            body = message
    return case["status"], body


def _mentions_json(messages: Any) -> bool:
    """Whether any message's text contains the word "json" (any case), as OpenAI checks."""
    if not isinstance(messages, list):
        return False
    return any(
        "json" in _text_of(m.get("content")).lower() for m in messages if isinstance(m, dict)
    )


def _find_schema(node: Any) -> dict[str, Any] | None:
    """The first JSON-schema-looking object (one with a "properties" object) in ``node``."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            return node
        for value in node.values():
            found = _find_schema(value)
            if found is not None:
                return found
    elif isinstance(node, list):
        for value in node:
            found = _find_schema(value)
            if found is not None:
                return found
    return None


def _schema_in_messages(messages: Any) -> dict[str, Any] | None:
    """A JSON schema written into the messages' text (a json_object client's system prompt)."""
    if not isinstance(messages, list):
        return None
    decoder = json.JSONDecoder()
    for message in messages:
        if not isinstance(message, dict):
            continue
        text = _text_of(message.get("content"))
        i = text.find("{")
        while i != -1:
            try:
                obj, end = decoder.raw_decode(text, i)
            except ValueError:
                i = text.find("{", i + 1)
                continue
            found = _find_schema(obj)
            if found is not None:
                return found
            i = text.find("{", end)
    return None


def _bad_keyword(schema: Any, path: tuple[str, ...] = ()) -> tuple[str, tuple[str, ...]] | None:
    """The first of :data:`SCHEMA_KEYWORDS` in ``schema`` and the path to the object holding
    it, or ``None``."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key in SCHEMA_KEYWORDS and not isinstance(value, (dict, list)):
                return key, path
        for key, value in schema.items():
            if key in ("enum", "const", "default", "examples"):
                continue
            if isinstance(value, dict):
                found = _bad_keyword(value, (*path, key))
            elif isinstance(value, list):
                found = next(
                    (
                        hit
                        for i, item in enumerate(value)
                        if (hit := _bad_keyword(item, (*path, key, str(i)))) is not None
                    ),
                    None,
                )
            else:
                found = None
            if found is not None:
                return found
    return None


def _string_spans(text: str) -> list[tuple[int, int, bool]]:
    """``(open quote, close quote, is a value)`` for every string token of JSON ``text``."""
    spans = []
    i, size = 0, len(text)
    while i < size:
        if text[i] != '"':
            i += 1
            continue
        j = i + 1
        while j < size and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        k = j + 1
        while k < size and text[k] in " \t\r\n":
            k += 1
        spans.append((i, min(j, size), not (k < size and text[k] == ":")))
        i = j + 1
    return spans


def cut_json(content: str) -> str:
    """``content`` (JSON) cut inside the string value nearest its middle, as a token limit
    does."""
    middle = len(content) / 2
    values = [(a, b) for a, b, is_value in _string_spans(content) if is_value and b - a > 2]
    if not values:
        return content[: max(1, len(content) // 2)]
    a, b = min(
        values,
        key=lambda ab: (0 if ab[0] <= middle <= ab[1] else 1, abs((ab[0] + ab[1]) / 2 - middle)),
    )
    cut = a + 1 + (b - a - 1) // 2
    while cut > a + 1 and content[cut - 1] == "\\":  # never between a backslash and its escape
        cut -= 1
    return content[:cut]


def _until_stop(content: str, stop: Any) -> str | None:
    """``content`` before the first of the ``stop`` sequences it holds (a string or a list), or
    None when it holds none."""
    stops = [stop] if isinstance(stop, str) else stop if isinstance(stop, list) else []
    found = [content.find(s) for s in stops if isinstance(s, str) and s and s in content]
    return content[: min(found)] if found else None


def cut_text(content: str) -> str:
    """``content`` (prose) cut in the middle of the word nearest its middle."""
    words = list(re.finditer(r"[^\W\d_]{4,}", content))
    if not words:
        return content[: max(1, len(content) // 2)]
    middle = len(content) / 2
    word = min(words, key=lambda m: abs((m.start() + m.end()) / 2 - middle))
    return content[: word.start() + len(word.group()) // 2]


# --------------------------------------------------------------------------
# Deterministic helpers
# --------------------------------------------------------------------------


def _hash_int(*parts: Any) -> int:
    """Stable integer hash of ``parts`` (sha256; never Python's salted hash)."""
    text = "\x1f".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def _text_of(content: Any) -> str:
    """Text of a message ``content`` (a string or a list of content parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        chunks = []
        for part in content:
            if isinstance(part, str):
                chunks.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                chunks.append(part["text"])
        return " ".join(chunks)
    return str(content)


def _last_user_text(messages: list[Any]) -> str:
    """Text of the last ``user`` message (falling back to the last message)."""
    dict_messages = [m for m in messages if isinstance(m, dict)]
    for message in reversed(dict_messages):
        if message.get("role") == "user":
            return _text_of(message.get("content"))
    return _text_of(dict_messages[-1].get("content")) if dict_messages else ""


def _name_words(name: str) -> list[str]:
    """Split a property name (snake_case or camelCase) into lowercase words."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", name)
    return [w.lower() for w in _WORD_RE.findall(spaced.replace("_", " "))]


def tokenize(content: str) -> list[str]:
    """Split ``content`` into logprob tokens; ``"".join(tokens) == content``."""
    return _TOKEN_RE.findall(content)


def _error_body(status: int, message: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error JSON body for ``status``."""
    err_type, code = _ERROR_TYPES.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    if message is None:
        message = {
            401: "Incorrect API key provided.",
            429: "Rate limit reached for requests. Please try again later.",
        }.get(status, f"Injected error (HTTP {status}).")
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


# --------------------------------------------------------------------------
# JSON-schema instance generation
# --------------------------------------------------------------------------


class _SchemaFaker:
    """Builds a deterministic instance of a JSON schema for one request."""

    MAX_DEPTH = 8

    def __init__(
        self, root: dict[str, Any], prompt: str, seed: int, *, choice: int = 0, mode: str = ""
    ) -> None:
        self.root = root
        self.prompt = prompt
        self.seed = seed
        #: Index of the choice being built (``n`` > 1): choice 0 is the answer of old.
        self.choice = choice
        #: ``""`` (valid), ``"invalid"`` (bounded values out of range) or ``"placeholder"``.
        self.mode = mode
        #: How many values ``"invalid"`` mode has put out of range so far.
        self.invalidated = 0
        words = [w.lower() for w in _WORD_RE.findall(prompt)]
        content_words = [w for w in words if len(w) > 2 and w not in _STOP_WORDS]
        self.words = content_words or words or list(_FALLBACK_WORDS)

    def h(self, path: str) -> int:
        if self.choice:
            return _hash_int(self.seed, self.prompt, path, f"choice={self.choice}")
        return _hash_int(self.seed, self.prompt, path)

    def instance(self, schema: Any) -> Any:
        """An instance of ``schema``; in ``"invalid"`` mode one that breaks it somewhere."""
        value = self.build(schema)
        if self.mode == "invalid" and not self.invalidated and isinstance(value, dict):
            required = self.resolve(schema).get("required")
            missing = next((k for k in required or [] if k in value), None)
            if missing is None and value:
                missing = next(iter(value))
            if missing is not None:  # nothing bounded to break: leave a property out
                value.pop(missing)
                self.invalidated += 1
        return value

    def resolve(self, schema: Any, _seen: int = 0) -> dict[str, Any]:
        """Follow local ``$ref`` pointers and merge ``allOf`` branches."""
        if not isinstance(schema, dict):
            return {}
        if "$ref" in schema:
            if _seen >= 32:  # a cycle of bare references
                return {k: v for k, v in schema.items() if k != "$ref"}
            target = self.resolve(self._pointer(schema["$ref"]), _seen + 1)
            return {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        if isinstance(schema.get("allOf"), list):
            merged: dict[str, Any] = {}
            for sub in schema["allOf"]:
                merged.update(self.resolve(sub, _seen + 1))
            merged.update({k: v for k, v in schema.items() if k != "allOf"})
            return merged
        return schema

    def _pointer(self, ref: str) -> Any:
        if not isinstance(ref, str) or not ref.startswith("#"):
            return {}
        node: Any = self.root
        for raw in ref[1:].split("/"):
            if not raw:
                continue
            key = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict):
                node = node.get(key, {})
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return {}
        return node

    def build(self, schema: Any, path: str = "$", name: str = "", depth: int = 0) -> Any:
        """Return a value valid for ``schema`` at JSON ``path``."""
        schema = self.resolve(schema)
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            options = schema["enum"]
            if self.mode == "invalid":
                self.invalidated += 1
                return next(v for v in ("other", "unknown", "none of these", 0) if v not in options)
            return options[self.h(path + "#enum") % len(options)]
        for key in ("anyOf", "oneOf"):
            options = schema.get(key)
            if isinstance(options, list) and options:
                resolved = [self.resolve(o) for o in options]
                non_null = [o for o in resolved if o.get("type") != "null"]
                if depth >= self.MAX_DEPTH and len(non_null) < len(resolved):
                    return None  # stop recursive structures
                chosen = non_null[0] if non_null else resolved[0]
                base = {k: v for k, v in schema.items() if k != key}
                return self.build({**base, **chosen}, path, name, depth)

        kind = schema.get("type")
        if isinstance(kind, list):
            non_null = [t for t in kind if t != "null"]
            kind = non_null[0] if non_null else "null"
        if kind is None:
            if "properties" in schema:
                kind = "object"
            elif "items" in schema or "prefixItems" in schema:
                kind = "array"
            else:
                kind = "string"

        if kind == "object":
            props = schema.get("properties") or {}
            return {
                key: self.build(sub, f"{path}.{key}", key, depth + 1) for key, sub in props.items()
            }
        if kind == "array":
            return self._array(schema, path, name, depth)
        if kind == "integer":
            return self._integer(schema, path, name)
        if kind == "number":
            bad = self._out_of_range(schema) if self.mode == "invalid" else None
            return float(bad) if bad is not None else self._number(schema, name)
        if kind == "boolean":
            return bool(self.h(path + "#bool") % 2)
        if kind == "null":
            return None
        return self._string(schema, path, name)

    def _array(self, schema: dict[str, Any], path: str, name: str, depth: int) -> list[Any]:
        min_items = schema.get("minItems")
        max_items = schema.get("maxItems")
        if isinstance(min_items, int):
            count = max(min_items, 1) if depth < self.MAX_DEPTH else min_items
        else:
            count = 2 if depth < self.MAX_DEPTH else 0
        if isinstance(max_items, int):
            count = min(count, max_items)
        given = schema.get("prefixItems")
        prefix = given if isinstance(given, list) else []
        items = schema.get("items", {})
        if not isinstance(items, dict):
            items = {}
        out = []
        for i in range(count):
            sub = prefix[i] if i < len(prefix) else items
            out.append(self.build(sub, f"{path}[{i}]", name, depth + 1))
        return out

    def _out_of_range(self, schema: dict[str, Any]) -> int | float | None:
        """A value just outside ``schema``'s bounds (``"invalid"`` mode), or ``None``.

        With both bounds: one below the minimum when the range spans three values or more
        (a 1-5 rating becomes 0), one above the maximum for a two-value range (a 1-2 system
        becomes 3); with one bound, one step past it.
        """
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if isinstance(schema.get("exclusiveMinimum"), (int, float)):
            lo = schema["exclusiveMinimum"] + 1
        if isinstance(schema.get("exclusiveMaximum"), (int, float)):
            hi = schema["exclusiveMaximum"] - 1
        lo = lo if isinstance(lo, (int, float)) and not isinstance(lo, bool) else None
        hi = hi if isinstance(hi, (int, float)) and not isinstance(hi, bool) else None
        if lo is None and hi is None:
            return None
        self.invalidated += 1
        if lo is not None and (hi is None or hi - lo >= 2):
            return math.ceil(lo) - 1
        assert hi is not None  # both None returned above
        return math.floor(hi) + 1

    def _integer(self, schema: dict[str, Any], path: str, name: str) -> int:
        if self.mode == "invalid":
            bad = self._out_of_range(schema)
            if bad is not None:
                return int(bad)
        lo = schema.get("minimum")
        hi = schema.get("maximum")
        if isinstance(schema.get("exclusiveMinimum"), (int, float)) and not isinstance(
            schema["exclusiveMinimum"], bool
        ):
            lo = math.floor(schema["exclusiveMinimum"]) + 1
        if isinstance(schema.get("exclusiveMaximum"), (int, float)) and not isinstance(
            schema["exclusiveMaximum"], bool
        ):
            hi = math.ceil(schema["exclusiveMaximum"]) - 1
        lo = math.ceil(lo) if isinstance(lo, (int, float)) else None
        hi = math.floor(hi) if isinstance(hi, (int, float)) else None
        if lo is None:
            lo = 1 if hi is None else hi - 4
        if hi is None:
            hi = lo + 4
        if "rating" in name.lower():
            r_lo, r_hi = max(lo, 1), min(hi, 5)
            if r_lo <= r_hi:
                lo, hi = r_lo, r_hi
        if hi < lo:
            hi = lo
        if self.choice and "rating" in name.lower():
            # n > 1: every choice a different rating (as far as the range allows), in order.
            base = _hash_int(self.seed, self.prompt, path + "#int")
            return lo + (base + self.choice) % (hi - lo + 1)
        return lo + self.h(path + "#int") % (hi - lo + 1)

    @staticmethod
    def _number(schema: dict[str, Any], name: str) -> float:
        value = 0.5
        lo, hi = schema.get("minimum"), schema.get("maximum")
        if "rating" in name.lower():
            lo = 1 if lo is None else max(lo, 1)
            hi = 5 if hi is None else min(hi, 5)
        if isinstance(lo, (int, float)) and value < lo:
            value = float(lo)
        if isinstance(hi, (int, float)) and value > hi:
            value = float(hi)
        return value

    def _string(self, schema: dict[str, Any], path: str, name: str) -> str:
        if self.mode == "placeholder":
            return "..."
        fmt = schema.get("format")
        if fmt == "date-time":
            return "2024-01-01T00:00:00Z"
        if fmt == "date":
            return "2024-01-01"
        if fmt == "email":
            return "someone@example.com"
        if fmt in ("uri", "url"):
            return "https://example.com/"
        if fmt == "uuid":
            return "00000000-0000-4000-8000-000000000000"
        text = self.phrase(path, name)
        max_len = schema.get("maxLength")
        min_len = schema.get("minLength")
        if isinstance(max_len, int) and len(text) > max_len:
            text = text[:max_len].rstrip() or text[:max_len]
        if isinstance(min_len, int) and len(text) < min_len:
            text = (text + " " + "x" * min_len)[: max(min_len, len(text))]
        return text

    def phrase(self, path: str, name: str) -> str:
        """4-12 words: the property name's words plus words of the prompt."""
        h = self.h(path + "#str")
        count = 4 + h % 9
        head = [w for w in _name_words(name) if w not in ("items", "item")][:2]
        start = (h >> 8) % len(self.words)
        body = [self.words[(start + i) % len(self.words)] for i in range(count - len(head))]
        return " ".join(head + body)


# --------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    """Threaded HTTP server with a generous backlog and no reverse DNS."""

    daemon_threads = True
    request_queue_size = 128
    fake: FakeLLMServer

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), which can stall for
        # seconds on machines without working DNS; skip it.
        TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = port

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: client disconnects (timeouts, shutdown) are expected."""


class _Handler(BaseHTTPRequestHandler):
    """Routes HTTP requests to the owning ``FakeLLMServer``."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server_version = "FakeLLM/1.0"
    sys_version = ""
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default per-request logging."""

    def setup(self) -> None:
        super().setup()
        self.server.fake._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        finally:
            self.server.fake._track(self.connection, False)

    # -- I/O ------------------------------------------------------------

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size_line = self.rfile.readline(65537)
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline(65537)
            return b"".join(chunks)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        """Send ``payload`` as a JSON response (errors from gone clients are ignored)."""
        data = json.dumps(payload).encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def send_raw(self, status: int, body: bytes, content_type: str) -> None:
        """Send ``body`` as it is, with ``content_type`` (bad-server trials)."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    # -- verbs ----------------------------------------------------------

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path == "/v1/models":
            self.send_json(
                200,
                {
                    "object": "list",
                    "data": [{"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "test"}],
                },
            )
        elif path == f"/v1/models/{MODEL_ID}":
            self.send_json(
                200, {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "test"}
            )
        else:
            self.send_json(404, _error_body(404, f"Unknown path: GET {self.path}"))

    def do_POST(self) -> None:
        raw = self._read_body()
        path = self.path.split("?", 1)[0].rstrip("/")
        self.server.fake._handle_post(self, path, raw)

    def _not_found(self) -> None:
        if self.command != "GET":
            self._read_body()
        self.send_json(404, _error_body(404, f"Unknown path: {self.command} {self.path}"))

    do_PUT = do_DELETE = do_PATCH = _not_found


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


class FakeLLMServer:
    """Deterministic OpenAI-compatible server on 127.0.0.1 (see module docs)."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        logprobs: bool = True,
        response_format_mode: str = "honour",
        api_key: str | None = None,
        seed: int = 0,
        profile: str = "permissive",
        n_supported: bool | None = None,
    ) -> None:
        if response_format_mode not in ("honour", "ignore", "malformed_once"):
            raise ValueError(f"unknown response_format_mode: {response_format_mode!r}")
        if profile not in PROFILES:
            raise ValueError(f"unknown profile: {profile!r} (one of {', '.join(PROFILES)})")
        self.latency = latency
        self.logprobs = logprobs
        self.response_format_mode = response_format_mode
        self.api_key = api_key
        self.seed = seed
        #: Which real server to behave like (:data:`PROFILES`).
        self.profile = profile
        #: Whether ``n`` > 1 yields that many choices (default: only for "gpt5", as OpenAI).
        self.n_supported = profile == "gpt5" if n_supported is None else n_supported
        #: Every JSON body POSTed (any path), in arrival order, with a "_path" key.
        self.requests: list[dict[str, Any]] = []
        #: ``(status, case key in server_bodies.json)`` of every capability rejection sent.
        self.rejections: list[tuple[int, str]] = []
        self._lock = threading.Lock()
        #: Chat calls waiting out their latency right now, and the most there ever were at once:
        #: concurrency shown by the server itself, not by a wall clock.
        self.in_flight = 0
        self.max_in_flight = 0
        self._failures: list[tuple[int, float | None]] = []
        self._hangs: list[float] = []
        self._garbles: list[str] = []
        self._cuts: list[str] = []
        self._json_modes: list[str] = []
        self._responder: Callable[[dict[str, Any]], str | None] | None = None
        self._chat_calls = 0
        self._embedding_calls = 0
        self._malformed_done = False
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (only valid after :meth:`start`)."""
        if self._httpd is None:
            raise RuntimeError("FakeLLMServer is not started")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FakeLLMServer:
        """Bind a free port and serve from a daemon thread; returns ``self``."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        httpd.fake = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"FakeLLMServer:{httpd.server_address[1]}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down, drop open connections and join the thread."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()  # wakes any latency / hang sleeps
        httpd.shutdown()
        httpd.server_close()
        with self._lock:
            conns = list(self._connections)
        for conn in conns:  # keep-alive handler threads would otherwise linger
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- test controls ----------------------------------------------------

    def fail_next(self, status: int, count: int = 1, *, retry_after: float | None = None) -> None:
        """Answer the next ``count`` chat/embedding POSTs with HTTP ``status``."""
        with self._lock:
            self._failures.extend([(status, retry_after)] * count)

    def garble_next(self, kind: str, count: int = 1) -> None:
        """Answer the next ``count`` chat/embedding POSTs with a transport-level surprise:
        one of :data:`GARBLES` (a web page, broken JSON, no choices, an error object with status
        200, empty content, a proxy's 502 page, plain text)."""
        if kind not in GARBLES:
            raise ValueError(f"unknown garble: {kind!r}")
        with self._lock:
            self._garbles.extend([kind] * count)

    def hang_next(self, seconds: float, count: int = 1) -> None:
        """Delay the next ``count`` chat/embedding POSTs by ``seconds``."""
        with self._lock:
            self._hangs.extend([seconds] * count)

    def cut_next(self, count: int = 1, kind: str = "auto") -> None:
        """Answer the next ``count`` chat answers with ``finish_reason: "length"`` and the
        content cut off in the middle: JSON inside a string value, prose in the middle of a
        word (``kind``: ``"auto"`` picks by the content, ``"json"`` or ``"text"`` forces one).
        Capability rejections do not count."""
        if kind not in ("auto", "json", "text"):
            raise ValueError(f"unknown cut kind: {kind!r}")
        with self._lock:
            self._cuts.extend([kind] * count)

    def invalid_next(self, count: int = 1) -> None:
        """Answer the next ``count`` JSON answers (response_format json_schema or json_object)
        with schema-shaped but invalid instances: bounded numbers out of range (a 1-5 rating
        0, a 1-2 system 3), enum strings outside the enum; with nothing bounded, a property
        left out."""
        with self._lock:
            self._json_modes.extend(["invalid"] * count)

    def placeholder_next(self, count: int = 1) -> None:
        """Answer the next ``count`` JSON answers with every (non-enum) string ``"..."``."""
        with self._lock:
            self._json_modes.extend(["placeholder"] * count)

    def set_responder(self, fn: Callable[[dict[str, Any]], str | None] | None) -> None:
        """Override chat content: ``fn(body)`` returning a string wins; ``None`` falls through."""
        self._responder = fn

    @property
    def chat_calls(self) -> int:
        """Number of /chat/completions requests received (including failed ones)."""
        with self._lock:
            return self._chat_calls

    @property
    def embedding_calls(self) -> int:
        """Number of /embeddings requests received (including failed ones)."""
        with self._lock:
            return self._embedding_calls

    # -- internals --------------------------------------------------------

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def _handle_post(self, handler: _Handler, path: str, raw: bytes) -> None:
        try:
            body = json.loads(raw.decode("utf-8")) if raw else {}
            bad_json = not isinstance(body, dict)
        except (UnicodeDecodeError, ValueError):
            body, bad_json = {}, True
        record = dict(body) if not bad_json else {"_raw": raw.decode("utf-8", "replace")}
        record["_path"] = path
        is_chat = path == "/v1/chat/completions"
        is_emb = path == "/v1/embeddings"
        with self._lock:
            self.requests.append(record)
            if is_chat:
                self._chat_calls += 1
                call_no = self._chat_calls
            elif is_emb:
                self._embedding_calls += 1
                call_no = self._embedding_calls
            else:
                call_no = 0

        if (
            self.api_key is not None
            and handler.headers.get("Authorization") != f"Bearer {self.api_key}"
        ):
            handler.send_json(401, _error_body(401))
            return
        if not (is_chat or is_emb):
            handler.send_json(404, _error_body(404, f"Unknown path: POST {handler.path}"))
            return

        with self._lock:
            hang = self._hangs.pop(0) if self._hangs else None
            failure = self._failures.pop(0) if self._failures else None
        if hang:
            self._stopping.wait(hang)
        with self._lock:
            garble = self._garbles.pop(0) if self._garbles else None
        if garble is not None and failure is None:
            if garble == "empty_content" and is_chat:
                reply = self._chat(body, call_no)
                reply["choices"][0]["message"]["content"] = ""
                reply["choices"][0].pop("logprobs", None)
                handler.send_json(200, reply)
            else:
                status, ctype, raw_body = GARBLES[garble]
                handler.send_raw(status, raw_body, ctype)
            return
        if failure is not None:
            status, retry_after = failure
            headers = {}
            if retry_after is not None:
                headers["Retry-After"] = f"{retry_after:g}"
            handler.send_json(status, _error_body(status), headers)
            return
        if bad_json:
            handler.send_json(
                400, _error_body(400, "We could not parse the JSON body of your request.")
            )
            return
        if is_chat:
            rejection = self._rejection(body)
            if rejection is not None:
                key, fill = rejection
                status, payload = reference_body(key, **fill)
                with self._lock:
                    self.rejections.append((status, key))
                    record["_refused"] = key  # the request as recorded in ``requests``
                if isinstance(payload, str):
                    handler.send_raw(status, payload.encode("utf-8"), "text/plain; charset=utf-8")
                else:
                    handler.send_json(status, payload)
                return

        if is_emb:
            handler.send_json(200, self._embeddings(body))
            return
        if self.latency > 0:
            with self.waiting():
                self._stopping.wait(self.latency)
        handler.send_json(200, self._chat(body, call_no), {"x-request-id": f"req_{call_no}"})

    @contextlib.contextmanager
    def waiting(self) -> Iterator[None]:
        """Count one chat call as in flight while it waits out the server's latency."""
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1

    # -- embeddings -------------------------------------------------------

    @staticmethod
    def embed(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
        """Unit-length bag-of-words hashing vector for ``text``."""
        vec = [0.0] * dim
        for word in _EMB_WORD_RE.findall(text.lower()):
            digest = hashlib.md5(word.encode("utf-8")).digest()
            for k in range(3):
                idx = int.from_bytes(digest[4 * k : 4 * k + 4], "big") % dim
                vec[idx] += 1.0 if digest[12 + k] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0.0:
            vec[0], norm = 1.0, 1.0
        return [v / norm for v in vec]

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body.get("input", "")
        if not isinstance(inputs, list) or (inputs and isinstance(inputs[0], int)):
            inputs = [inputs]
        texts = [
            i
            if isinstance(i, str)
            else " ".join(str(t) for t in i)
            if isinstance(i, list)
            else str(i)
            for i in inputs
        ]
        dim = body.get("dimensions")
        dim = (
            dim if isinstance(dim, int) and not isinstance(dim, bool) and dim > 0 else EMBEDDING_DIM
        )
        base64_mode = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vec: Any = self.embed(text, dim)
            if base64_mode:  # the openai client asks for this by default and decodes float32
                vec = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode("ascii")
            data.append({"object": "embedding", "index": index, "embedding": vec})
        n = sum(len(t.split()) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", MODEL_ID),
            "usage": {"prompt_tokens": n, "total_tokens": n},
        }

    # -- chat -------------------------------------------------------------

    # -- capabilities -----------------------------------------------------

    def _rejection(self, body: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        """The reference case (and its template values) this profile refuses ``body`` with."""
        profile = self.profile
        if profile == "permissive":
            return None
        fmt: Any = body.get("response_format")
        fmt_type = fmt.get("type") if isinstance(fmt, dict) else None
        messages = body.get("messages")
        if profile == "gpt5":
            if body.get("max_tokens") is not None:
                return "openai_max_tokens_unsupported", {}
            temperature = body.get("temperature")
            if temperature is not None and temperature != 1:
                return "openai_temperature_unsupported_value", {"value": json.dumps(temperature)}
            if body.get("logprobs"):
                return "openai_logprobs_unsupported", {}
            if body.get("top_logprobs") is not None:
                return "openai_top_logprobs_requires_logprobs", {}
            n = body.get("n")
            if isinstance(n, int) and not isinstance(n, bool) and n > 8:
                return "openai_n_above_max", {"value": n}
            if body.get("stop") is not None:
                return "openai_stop_unsupported", {}
        if profile == "json-object-only" and fmt_type == "json_schema":
            return "deepseek_json_schema_unavailable", {}
        if profile == "no-schema-keywords" and fmt_type == "json_schema":
            spec = fmt.get("json_schema") if isinstance(fmt.get("json_schema"), dict) else {}
            found = _bad_keyword(spec.get("schema"))
            if found is not None:
                keyword, path = found
                return "openai_strict_schema_keyword_not_permitted", {
                    "name": spec.get("name", ""),
                    "context": repr(path),
                    "keyword": keyword,
                }
        if profile == "llama-cpp-python" and fmt_type not in (None, "text", "json_object"):
            # pydantic's literal_error, quoting the type as Python prints it
            return "llama_cpp_python_json_schema", {"type": repr(fmt_type)}
        if fmt_type == "json_object" and not _mentions_json(messages):
            if profile in ("gpt5", "no-schema-keywords"):
                return "openai_json_object_needs_word_json", {}
            if profile == "json-object-only":
                return "deepseek_json_object_needs_word_json", {}
        return None

    def _effective(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` as this profile reads it (llama-cpp-python drops fields it does not know,
        ``max_completion_tokens`` among them)."""
        if self.profile == "llama-cpp-python":
            return {k: v for k, v in body.items() if k in _LLAMA_CPP_PYTHON_FIELDS}
        return body

    # -- chat -------------------------------------------------------------

    def _content(self, body: dict[str, Any], choice: int = 0, mode: str = "") -> str:
        given = body.get("messages")
        messages = given if isinstance(given, list) else []
        prompt = _last_user_text(messages)
        responder = self._responder
        if responder is not None:
            custom = responder(body)
            if isinstance(custom, str):
                return custom
        if body.get("max_tokens") == 1 or body.get("max_completion_tokens") == 1:
            return _PROBE_CONTENT
        fmt: Any = body.get("response_format")
        fmt_type = fmt.get("type") if isinstance(fmt, dict) else None
        faker = _SchemaFaker({}, prompt, self.seed, choice=choice, mode=mode)
        schema: dict[str, Any] | None = None
        if fmt_type == "json_schema":
            spec = fmt.get("json_schema") or {}
            schema = (
                spec.get("schema") if isinstance(spec.get("schema"), dict) else {"type": "object"}
            )
        elif fmt_type == "json_object" and self.profile != "permissive":
            # llama-cpp-python's own "schema" field, else a schema the prompt spells out.
            schema = fmt.get("schema") if isinstance(fmt.get("schema"), dict) else None
            if schema is None:
                schema = _schema_in_messages(messages)
        if schema is not None:
            faker.root = schema
            instance = faker.instance(schema)
            if self.response_format_mode == "malformed_once" and choice == 0:
                with self._lock:
                    first, self._malformed_done = not self._malformed_done, True
                if first:
                    return _MALFORMED_CONTENT
            return self._wrap_json(instance)
        sentence = self._sentence(faker)
        if fmt_type == "json_object":
            if mode == "invalid":
                return self._wrap_json({})
            return self._wrap_json({"text": "..." if mode == "placeholder" else sentence})
        return sentence

    def _wrap_json(self, instance: Any) -> str:
        if self.response_format_mode == "ignore":
            return (
                "Sure! Here is what you asked for:\n```json\n"
                + json.dumps(instance, indent=2)
                + "\n```\nHope that helps."
            )
        return json.dumps(instance)

    @staticmethod
    def _sentence(faker: _SchemaFaker) -> str:
        """A 9-14 word sentence using words of the last user message."""
        h = faker.h("#sentence")
        count = 1 + h % 6
        start = (h >> 8) % len(faker.words)
        words = " ".join(faker.words[(start + i) % len(faker.words)] for i in range(count))
        return f"Honestly, the part about {words} sounds great to me."

    @staticmethod
    def _token_logprobs(content: str, top_n: int) -> list[dict[str, Any]]:
        entries = []
        for tok in tokenize(content):
            if tok in _DIGITS:
                d = int(tok)
                weights = {k: 0.5 ** abs(k - d) for k in range(1, 6) if k != d}
                total = sum(weights.values())
                probs = {str(k): (1 - _DIGIT_TOP_P) * w / total for k, w in weights.items()}
                probs[tok] = _DIGIT_TOP_P
                ranked = sorted(probs.items(), key=lambda kv: (-kv[1], kv[0]))
                top = [
                    {"token": t, "logprob": math.log(p), "bytes": list(t.encode())}
                    for t, p in ranked
                ]
                entries.append(
                    {
                        "token": tok,
                        "logprob": math.log(_DIGIT_TOP_P),
                        "bytes": list(tok.encode()),
                        "top_logprobs": top[:top_n],
                    }
                )
            else:
                top = [{"token": tok, "logprob": -0.01, "bytes": list(tok.encode())}]
                fillers = [f for f in _FILLER_TOKENS if f != tok][: max(top_n - 1, 0)]
                top += [
                    {"token": f, "logprob": -6.0 - 0.5 * i, "bytes": list(f.encode())}
                    for i, f in enumerate(fillers)
                ]
                entries.append(
                    {
                        "token": tok,
                        "logprob": -0.01,
                        "bytes": list(tok.encode()),
                        "top_logprobs": top[:top_n],
                    }
                )
        return entries

    def _logprobs_for(self, body: dict[str, Any], content: str) -> dict[str, Any] | None:
        if not (body.get("logprobs") is True and self.logprobs):
            return None
        top_n = body.get("top_logprobs") or 0
        top_n = top_n if isinstance(top_n, int) and top_n > 0 else 0
        if self.profile == "llama-cpp-python":
            if not top_n:  # llama-cpp-python asks llama.cpp for logprobs=top_logprobs: none
                return None
            entries = self._token_logprobs(content, top_n)
            for entry in entries:  # llama-cpp-python fills no bytes
                entry["bytes"] = None
                for alt in entry["top_logprobs"]:
                    alt["bytes"] = None
            return {"content": entries, "refusal": None}
        return {"content": self._token_logprobs(content, top_n), "refusal": None}

    def _chat(self, body: dict[str, Any], call_no: int) -> dict[str, Any]:
        body = self._effective(body)
        fmt = body.get("response_format")
        fmt_type = fmt.get("type") if isinstance(fmt, dict) else None
        n = body.get("n")
        n = n if isinstance(n, int) and not isinstance(n, bool) and n > 1 else 1
        if not self.n_supported:
            n = 1
        with self._lock:
            cut = self._cuts.pop(0) if self._cuts else None
            mode = ""
            if fmt_type in ("json_schema", "json_object") and self._json_modes:
                mode = self._json_modes.pop(0)
        choices = []
        completion_tokens = 0
        for index in range(n):
            content = self._content(body, choice=index, mode=mode)
            finish = "stop"
            if cut is not None:
                as_json = cut == "json" or (cut == "auto" and content.lstrip()[:1] in "{[")
                content = cut_json(content) if as_json else cut_text(content)
                finish = "length"
            stopped = _until_stop(content, body.get("stop"))
            if stopped is not None:  # a stop sequence came before the token limit
                content, finish = stopped, "stop"
            tokens = tokenize(content)
            limit = body.get("max_completion_tokens", body.get("max_tokens"))
            if finish == "length" and isinstance(limit, int) and limit > 0:
                completion_tokens += limit  # a length cut spends the whole budget
            else:
                completion_tokens += len(tokens)
            choices.append(
                {
                    "index": index,
                    "finish_reason": finish,
                    "message": {"role": "assistant", "content": content, "refusal": None},
                    "logprobs": self._logprobs_for(body, content),
                }
            )
        given = body.get("messages")
        messages = given if isinstance(given, list) else []
        prompt_tokens = sum(
            len(_text_of(m.get("content")).split()) for m in messages if isinstance(m, dict)
        )
        return {
            "id": f"chatcmpl-{call_no}",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", MODEL_ID),
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }


def main(argv: list[str] | None = None) -> None:
    """Serve in a process of its own (benchmarks: the server's own work then competes with the
    measured process for the CPU, as a real server would, but not for its interpreter lock).

    Prints the base URL on the first line of stdout, then serves until killed.
    """
    import argparse
    import sys
    import time

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to each call")
    parser.add_argument("--faithful", action="store_true", help="answer as testbed.responders does")
    parser.add_argument(
        "--profile", choices=PROFILES, default="permissive", help="which real server to act as"
    )
    args = parser.parse_args(argv)
    srv = FakeLLMServer(latency=args.latency, profile=args.profile).start()
    if args.faithful:
        from testbed.responders import faithful_responder

        srv.set_responder(faithful_responder)
    print(srv.base_url, flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
