"""ChatClient: the one place that talks to an OpenAI-compatible server.

It adds what the raw client leaves to us: JSON-schema response formats from pydantic models with a
tolerant parser and one corrective retry, retries with back-off on 429/5xx/timeouts, a concurrency
limit, logprob extraction, usage counting and errors that name what went wrong. The API key is
never logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import json
import logging
import re
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx2
import openai
from pydantic import BaseModel, Field, ValidationError

from playground import domain, errors
from playground.llm import responses
from playground.llm.capabilities import SCHEMA_KEYWORDS, Rejection, ServerProfile, adaptation
from playground.llm.limits import AdaptiveLimit
from playground.llm.responses import TokenLogprob
from playground.settings import LLMSettings
from playground.terminal_text import visible
from playground.urls import is_local

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
_RATING_KEY = re.compile(r'"rating"\s*:\s*"?\s*$')
_RATING_VALUE = re.compile(r"\s*([1-9])(?![0-9])")


@dataclass
class ChatResult:
    text: str
    parsed: Any = None
    tokens: list[TokenLogprob] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
    #: Every choice's text (several with ``n``), the first included.
    texts: list[str] = field(default_factory=list)
    finish_reasons: list[str] = field(default_factory=list)
    #: The text was cut at the token limit and trimmed to its last full sentence.
    cut: bool = False

    def rating_alternatives(self) -> list[list[tuple[str, float]]]:
        """Top alternatives of each ``"rating": N`` value token, in the order they appear."""
        found: list[list[tuple[str, float]]] = []
        text = ""
        for tok in self.tokens or []:
            lead = tok.token[: len(tok.token) - len(tok.token.lstrip())]
            if _RATING_VALUE.match(tok.token) and _RATING_KEY.search((text + lead)[-40:]):
                top = list(tok.top)
                if tok.token not in {t for t, _ in top}:
                    # The digit written (a grammar can force one that is not among the top
                    # alternatives): its own logprob is known, so it counts too.
                    top.append((tok.token, tok.logprob))
                found.append(top)
            text += tok.token
        return found


def _connect_failure(exc: BaseException) -> OSError | None:
    """The connection error behind a "timeout", if that is what it was.

    openai's aiohttp transport reports a refused connection or an unknown host as a connect
    *timeout*; the error chain still holds the operating system's error, which is not a timeout.
    """
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and not isinstance(e, TimeoutError):
            return e
        e = e.__cause__ or e.__context__
    return None


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the strict form OpenAI expects (all properties required, no extras)."""

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: fix(v) for k, v in node.items() if k not in ("default", "title")}
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
                node["required"] = list(node["properties"])
            return node
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    return fix(model.model_json_schema())


#: Longest string a schema allows, in characters, where the model states no other bound: a
#: grammar-constrained string that never closes is cut here instead of at the token limit
#: (SmolLM2-135M on llama.cpp ran strings on until max_tokens). Validation does not enforce it.
MAX_STRING = 240
#: Most items of an array whose length the schema does not state otherwise (the same reason).
MAX_ITEMS = 6


def bounded_schema(
    model: type[BaseModel],
    lengths: Mapping[str, int],
    *,
    loose: bool = False,
    enums: bool = False,
) -> dict[str, Any]:
    """The strict schema with exact array lengths and bounded strings; ``loose`` leaves out the
    numeric and length keywords some servers refuse (the answer is still validated here);
    ``enums`` states a small integer range as an enum as well (see below)."""
    schema = exact_lengths(strict_schema(model), dict(lengths))

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: walk(v) for k, v in node.items()}
            low, high = node.get("minimum"), node.get("maximum")
            if (
                enums
                and node.get("type") == "integer"
                and isinstance(low, int)
                and isinstance(high, int)
                and 0 <= high - low <= 10
            ):
                # llama-cpp-python's grammar for a JSON-mode schema enforces an enum but not
                # minimum and maximum: SmolLM2 then writes "rating": 86. The enum says the same.
                node["enum"] = list(range(low, high + 1))
            if loose:
                for k in SCHEMA_KEYWORDS:
                    node.pop(k, None)
            elif node.get("type") == "string" and "maxLength" not in node and "enum" not in node:
                node["maxLength"] = MAX_STRING
            elif node.get("type") == "array" and "maxItems" not in node:
                node["maxItems"] = MAX_ITEMS
            return node
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=256)
def _response_format(
    model: type[BaseModel], lengths: tuple[tuple[str, int], ...], loose: bool = False
) -> str:
    """The ``response_format`` for ``model`` as JSON text, built once per schema and lengths."""
    schema = bounded_schema(model, dict(lengths), loose=loose)
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": model.__name__, "schema": schema, "strict": True},
    }
    return json.dumps(fmt)


@functools.lru_cache(maxsize=256)
def _schema_text(
    model: type[BaseModel], lengths: tuple[tuple[str, int], ...], loose: bool = True
) -> str:
    """The schema as compact JSON, for JSON mode and for the prompt."""
    schema = bounded_schema(model, dict(lengths), loose=loose, enums=True)
    return json.dumps(schema, separators=(",", ":"))


def exact_lengths(schema: dict[str, Any], lengths: Mapping[str, int]) -> dict[str, Any]:
    """``schema`` with ``minItems`` = ``maxItems`` = n on every array property named in
    ``lengths`` (nested definitions included): the model is told how many items to give."""

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                for name, n in lengths.items():
                    prop = props.get(name)
                    if isinstance(prop, dict) and prop.get("type") == "array":
                        prop["minItems"] = prop["maxItems"] = n
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)  # strict_schema builds a fresh dict each call
    return schema


def parse_json_reply(text: str, schema: type[T]) -> T:
    """Parse a model's JSON answer, tolerating what real models write around it: code fences,
    prose before and after, trailing commas, and single values wrapped in a list.

    Raises:
        ValueError: when no candidate parses and validates; the message says why (for a value
            out of range, which field and what was wrong).
    """
    candidates = [text.strip()]
    candidates += re.findall(r"```(?:json|JSON)?\s*(.*?)```", text, flags=re.S)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    last_error = "no JSON object found"
    seen: set[str] = set()
    for cand in candidates:
        for variant in (cand, _TRAILING_COMMA.sub(r"\1", cand)):
            if not variant or variant in seen:
                continue
            seen.add(variant)
            try:
                # strict=False: a raw line break inside a string (small models write them) is read.
                data = json.loads(variant, strict=False)
            except json.JSONDecodeError as exc:
                last_error = f"not JSON ({exc.msg} at character {exc.pos})"
                continue
            if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
                data = data[0]
            try:
                return schema.model_validate(data)
            except ValidationError as exc:
                last_error = validation_text(exc)
    raise ValueError(last_error)


_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def validation_text(exc: ValidationError) -> str:
    """``thoughts.0.system: Input should be less than or equal to 2 (got 3)``, for a repair prompt
    and the reason a dropped answer is recorded with."""
    parts = []
    for err in exc.errors()[:4]:
        where = ".".join(str(x) for x in err.get("loc", ())) or "answer"
        got = err.get("input")
        shown = f" (got {json.dumps(got)[:40]})" if isinstance(got, (int, float, str)) else ""
        parts.append(f"{where}: {err.get('msg', 'invalid')}{shown}")
    return "; ".join(parts) or "invalid"


@dataclass
class _Counts:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    retries: int = 0
    rate_limit_waits: int = 0
    rate_limit_seconds: float = 0.0
    dropped: int = 0
    cut: int = 0
    by_label: dict[str, int] = field(default_factory=dict)

    def usage(self, profile: str = "") -> domain.Usage:
        return domain.Usage(
            calls=self.calls,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            embedding_calls=self.embedding_calls,
            retries=self.retries,
            rate_limit_waits=self.rate_limit_waits,
            rate_limit_seconds=round(self.rate_limit_seconds, 3),
            dropped=self.dropped,
            cut=self.cut,
            server_profile=profile,
        )


@dataclass
class _Scope:
    counts: _Counts
    on_usage: Callable[[domain.Usage], None]


#: The usage scope of the task making a call (see :meth:`ChatClient.usage_scope`).
_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("usage_scope", default=None)

#: One profile per (server, model, pins) in this process: every client of the same server learns
#: once (an experiment's conversations, a judge run, the window's sessions).
_PROFILES: dict[tuple[str, str, tuple[tuple[str, str], ...]], ServerProfile] = {}


def profile_for(where: str, model: str, pins: Mapping[str, str] | None = None) -> ServerProfile:
    key = (where, model, tuple(sorted((pins or {}).items())))
    if key not in _PROFILES:
        _PROFILES[key] = ServerProfile.with_pins(pins or {})
    return _PROFILES[key]


def _say_learned(where: str, model: str, why: str) -> None:
    """What the client learned about a server, once, on stderr (never a secret: the URL is
    redacted and the model name is the user's)."""
    print(visible(f"{where} ({model}): {why}"), file=sys.stderr, flush=True)


class ChatClient:
    """Chat and embedding calls with capability negotiation, retries, limits, parsing and usage
    counting.

    Args:
        client: an ``openai.AsyncOpenAI`` built with ``max_retries=0`` (retries happen here, visibly).
        settings: model, timeout, retries, concurrency, pinned capabilities.
        seed: sent as each request's ``seed`` where the server accepts it (None: never).
        on_usage: called with the running totals after every successful call.
        sleep: injected for back-off, so tests need not wait.
    """

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        settings: LLMSettings,
        *,
        seed: int | None = None,
        on_usage: Callable[[domain.Usage], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._client = client
        self.settings = settings
        self.model = settings.model
        self.seed = seed
        self.profile = profile_for(self.where, self.model, settings.pins)
        local = is_local(str(client.base_url))
        self.limiter = AdaptiveLimit(
            2 if local else settings.concurrency,
            settings.concurrency,
            adaptive=settings.adaptive_concurrency,
        )
        self._sleep = sleep
        self.on_usage = on_usage
        self.counts = _Counts()
        self._last_answer = 0.0  # monotonic time of the server's last answer of any kind

    # -- what the rest of the app reads -----------------------------------------------------

    @property
    def logprobs_supported(self) -> bool | None:
        return self.profile.logprobs

    @logprobs_supported.setter
    def logprobs_supported(self, value: bool | None) -> None:
        if self.profile.can_change("logprobs"):
            self.profile.logprobs = value

    @property
    def usage(self) -> domain.Usage:
        return self.counts.usage(self.profile.to_json())

    @contextlib.contextmanager
    def usage_scope(self, on_usage: Callable[[domain.Usage], None]) -> Iterator[None]:
        """Count the calls made by the current task (and the tasks it starts) apart as well.

        Several conversations can share one client (one HTTP connection pool, one concurrency
        limit) and still each record their own calls, tokens and retries: ``on_usage`` gets the
        scope's running totals after each of its calls, as ``on_usage`` of the client does for all.
        """
        token = _SCOPE.set(_Scope(_Counts(), on_usage))
        try:
            yield
        finally:
            _SCOPE.reset(token)

    def _tallies(self) -> list[_Counts]:
        scope = _SCOPE.get()
        return [self.counts] if scope is None else [self.counts, scope.counts]

    def _publish(self) -> None:
        profile = self.profile.to_json()
        if self.on_usage:
            self.on_usage(self.counts.usage(profile))
        scope = _SCOPE.get()
        if scope is not None:
            scope.on_usage(scope.counts.usage(profile))

    def dropped(self, what: str, why: str) -> None:
        """Count an answer the caller could not use and left out (a thought, a rating...)."""
        log.info("dropped %s: %s", what, why)
        for c in self._tallies():
            c.dropped += 1
        self._publish()

    @property
    def retries(self) -> int:
        return self.counts.retries

    @property
    def where(self) -> str:
        from playground.urls import redact  # credentials in the URL are sent, never shown

        return redact(str(self._client.base_url)).rstrip("/")

    async def close(self) -> None:
        await self._client.close()

    # -- sending ----------------------------------------------------------------------------

    def _timeout_flags(self) -> str:
        return (
            f"raise --timeout (now {self.settings.call_timeout():g} s) or lower --llm-concurrency"
            f" (now {self.limiter.limit} in flight)"
        )

    async def _with_retries(
        self,
        what: str,
        call: Callable[[], Awaitable[Any]],
        *,
        adapt: Callable[[Any], bool] | None = None,
    ) -> Any:
        """Run ``call`` with retries on transient failures.

        ``adapt(exc)`` is asked first about a refused request (4xx/5xx): True means the request
        was changed to leave out what the server refused (or a sibling call already did) and is
        sent again at once, neither counted as a retry nor waited for.
        """
        attempts = self.settings.max_retries + 1
        attempt = 0
        adaptations = 0
        started = time.monotonic()
        while True:
            last = attempt == attempts - 1
            delay = self.settings.retry_base_delay * (2**attempt)
            try:
                async with self.limiter.slot():
                    result = await call()
                    self._last_answer = time.monotonic()
                    return result
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise errors.LLMAuthError(
                    f"{self.where} refused the API key ({exc.status_code}) during {what}: check OPENAI_API_KEY or the key you entered"
                ) from exc
            except openai.RateLimitError as exc:
                self._last_answer = time.monotonic()
                if last:
                    raise errors.LLMRateLimited(
                        f"{self.where} kept answering 429 (rate limited) during {what} after {attempts} attempts"
                    ) from exc
                retry_after = _retry_after(exc)
                if retry_after is not None:
                    delay = min(max(delay, retry_after), 60.0)
                for c in self._tallies():
                    c.rate_limit_waits += 1
                    c.rate_limit_seconds += delay
            except openai.APITimeoutError as exc:
                refused = _connect_failure(exc)
                if refused is not None and last:
                    raise errors.LLMUnreachable(
                        f"cannot reach {self.where} for {what}: {refused}"
                    ) from exc
                if refused is None:
                    self.limiter.overloaded()
                if last:
                    quiet = time.monotonic() - max(self._last_answer, 0.0)
                    gone = self._last_answer == 0.0 or quiet > 2 * self.settings.call_timeout()
                    gone = gone and self._last_answer < started
                    kind = errors.LLMServerGone if gone else errors.LLMTimeout
                    said = (
                        "and has answered nothing since"
                        if gone
                        else "while it still answers other calls"
                    )
                    raise kind(
                        f"{self.where} did not answer {what} within {self.settings.call_timeout():g} s"
                        f" ({attempts} attempts) {said}: {self._timeout_flags()}"
                    ) from exc
            except openai.APIConnectionError as exc:
                if last:
                    raise errors.LLMUnreachable(
                        f"cannot reach {self.where} for {what}: {exc.__cause__ or exc}"
                    ) from exc
            except openai.APIStatusError as exc:
                self._last_answer = time.monotonic()
                if adapt is not None and adaptations < 8 and adapt(exc):
                    adaptations += 1
                    continue
                if isinstance(exc, openai.NotFoundError):
                    raise errors.LLMServerError(
                        f"{self.where} answered 404 for {what}: is the model name {self.model!r} right? ({_short(exc)})"
                    ) from exc
                if exc.status_code < 500:
                    raise errors.LLMServerError(
                        f"{self.where} rejected {what} ({exc.status_code}): {_short(exc)}"
                    ) from exc
                if last:
                    raise errors.LLMServerError(
                        f"{self.where} failed {what} with {exc.status_code} after {attempts} attempts: {_short(exc)}"
                    ) from exc
            for c in self._tallies():
                c.retries += 1
            attempt += 1
            log.info("retrying %s in %.2f s (attempt %d of %d)", what, delay, attempt + 1, attempts)
            self._publish()  # a retry shows while it waits, not only after
            await self._sleep(delay)

    def _count(self, p: int, c: int, label: str) -> None:
        for t in self._tallies():
            t.calls += 1
            t.prompt_tokens += p
            t.completion_tokens += c
            t.by_label[label] = t.by_label.get(label, 0) + 1
        self._publish()

    def _learn(self, sent: Mapping[str, Any], version: int, exc: openai.APIStatusError) -> bool:
        """Adapt the profile to a refused request; True when the request should be sent again.

        Single flight: the first refusal decides for every call. A call that was built before
        the profile changed (it was in flight, or sent by a sibling at the same moment) is sent
        again as the profile now stands, without deciding anything itself.
        """
        rejection = Rejection.of(exc.status_code, exc.body if exc.body is not None else exc.message)
        change = adaptation(self.profile, sent, rejection)
        if change is not None:
            key, value, why = change
            if self.profile.apply(key, value, why):
                _say_learned(self.where, self.model, why)
                self._publish()
                return True
        return self.profile.version != version

    async def _post(
        self,
        path: str,
        what: str,
        body: dict[str, Any] | Callable[[], dict[str, Any]],
    ) -> httpx2.Response:
        """POST a body through the SDK (auth, headers, status errors) and return the raw answer.

        ``body`` may be a function: it is called for every attempt, after a slot is free, so a
        request built from the server profile carries what was learned while it waited.
        The answer is read by :mod:`playground.llm.responses`: the SDK's typed request transform
        and response objects are skipped (see that module).
        """
        sent: dict[str, Any] = {}
        version = 0

        async def call() -> httpx2.Response:
            nonlocal sent, version
            version = self.profile.version
            sent = body() if callable(body) else body
            return await self._client.post(
                path,
                cast_to=httpx2.Response,
                body=sent,
                options={"timeout": self.settings.call_timeout()},
            )

        resp: httpx2.Response = await self._with_retries(
            what,
            call,
            adapt=(lambda exc: self._learn(sent, version, exc)) if callable(body) else None,
        )
        return resp

    def _body(
        self,
        messages: list[dict[str, str]],
        *,
        max_tokens: int,
        schema: type[BaseModel] | None = None,
        lengths: Mapping[str, int] | None = None,
        logprobs: bool = False,
        n: int = 1,
        temperature: float | None = None,
        seed_offset: int = 0,
        top_logprobs: int = 5,
    ) -> dict[str, Any]:
        """The request for the server as the profile now stands."""
        p = self.profile
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if p.temperature:
            body["temperature"] = self.settings.temperature if temperature is None else temperature
        if p.tokens != "none":
            body[p.tokens] = max_tokens
        if self.seed is not None and p.seed:
            body["seed"] = self.seed + seed_offset
        if logprobs and p.logprobs is not False:
            body["logprobs"] = True
            body["top_logprobs"] = top_logprobs
        if n > 1 and p.n is not False:
            body["n"] = n
        if schema is not None:
            key = tuple(sorted((lengths or {}).items()))
            tier = p.structured
            if tier in ("json_schema", "json_schema_loose"):
                body["response_format"] = json.loads(
                    _response_format(schema, key, tier == "json_schema_loose")
                )
            else:
                if tier == "json_object_schema":
                    body["response_format"] = {
                        "type": "json_object",
                        "schema": json.loads(_schema_text(schema, key, False)),
                    }
                elif tier == "json_object":
                    body["response_format"] = {"type": "json_object"}
                body["messages"] = _with_schema_in_prompt(messages, _schema_text(schema, key, True))
        return body

    async def _create(self, label: str, messages: list[dict[str, str]], **ask: Any) -> ChatResult:
        """One chat call; ``ask`` holds :meth:`_body`'s options (the body is built anew for every
        attempt, from the profile as it then stands)."""
        build = functools.partial(self._body, messages, **ask)
        t0 = time.monotonic()
        resp = await self._post("/chat/completions", label, build)
        got = responses.read_completion(
            self.where, label, resp.headers.get("content-type", ""), resp.content
        )
        self.limiter.answered(label, time.monotonic() - t0, got.completion_tokens)
        self._count(got.prompt_tokens, got.completion_tokens, label)
        if ask.get("logprobs") and self.profile.logprobs is None:
            self.logprobs_supported = bool(got.tokens and got.tokens[0].top)
        return ChatResult(
            text=got.text,
            tokens=got.tokens,
            prompt_tokens=got.prompt_tokens,
            completion_tokens=got.completion_tokens,
            finish_reason=got.finish_reason,
            texts=list(got.texts or (got.text,)),
            finish_reasons=list(got.finish_reasons or (got.finish_reason,)),
        )

    async def probe(self) -> bool:
        """Learn what the server accepts with one cheap request carrying everything the app may
        send (a JSON schema with numeric and length keywords, the token limit, temperature,
        logprobs, ``n``, ``seed``): each refusal changes the profile and the request is sent
        again without it. Returns whether the server gives logprobs.

        Raises:
            LLMError: when the server cannot be used at all (unreachable, key refused...).
        """
        res = await self._create(
            "probe",
            [{"role": "user", "content": 'Reply with the JSON object {"ok": true}.'}],
            max_tokens=1,
            schema=_Probe,
            lengths={"notes": 0},
            logprobs=True,
            n=2 if self.profile.n is not False else 1,
        )
        if self.profile.logprobs is None or self.profile.can_change("logprobs"):
            self.logprobs_supported = bool(res.tokens and res.tokens[0].top)
        if self.profile.can_change("n") and self.profile.n is not False:
            self.profile.n = len(res.texts) >= 2
        self._publish()
        return bool(self.profile.logprobs)

    # -- the calls the app makes ------------------------------------------------------------

    async def chat_text(
        self,
        label: str,
        messages: list[dict[str, str]],
        *,
        max_tokens: int = 200,
        retry_cut: bool = True,
    ) -> ChatResult:
        """A plain-text answer. One cut at the token limit is asked again with twice the limit;
        a text still cut is trimmed to its last full sentence (``cut`` set) and never posted
        mid-word.

        Raises:
            LLMOutputError: the answer is empty, or cut with no full sentence to keep.
        """
        res = await self._create(label, messages, max_tokens=max_tokens)
        if res.finish_reason == "length" and retry_cut:
            for c in self._tallies():
                c.cut += 1
            res = await self._create(label, messages, max_tokens=max_tokens * 2)
        res.text = res.text.strip().strip('"').strip()
        if res.finish_reason == "length":
            for c in self._tallies():
                c.cut += 1
            kept = last_full_sentence(res.text)
            if not kept:
                self.dropped(label, "cut at the token limit before its first sentence ended")
                raise errors.LLMOutputError(
                    f"{self.model} at {self.where} was cut at the token limit ({max_tokens * 2})"
                    f" before finishing a sentence of {label}"
                )
            res.text, res.cut = kept, True
        if not res.text:
            raise errors.LLMOutputError(f"{self.where} returned an empty answer for {label}")
        return res

    async def chat_json(
        self,
        label: str,
        messages: list[dict[str, str]],
        schema: type[T],
        *,
        logprobs: bool = False,
        max_tokens: int = 800,
        lengths: Mapping[str, int] | None = None,
        lenient: bool = False,
        n: int = 1,
        temperature: float | None = None,
        top_logprobs: int = 5,
    ) -> ChatResult:
        """A structured call: ``result.parsed`` is a validated ``schema`` instance.

        The schema travels the way the server takes it (see :mod:`playground.llm.capabilities`).
        ``lengths`` states exact array lengths in the schema sent (``minItems`` = ``maxItems``
        for every array property of that name); the answer is still read leniently.
        An answer cut at the token limit is asked again once with twice the limit; an answer that
        does not parse or validate gets one repair request quoting what was wrong.

        With ``lenient`` an answer that does not parse is returned as it is (``parsed`` None, no
        retry), for a caller that reads other formats itself (the simulated user's tagged text);
        an answer cut at the token limit is never returned that way.

        Raises:
            LLMOutputError: the answer still does not parse after the repair (counted as dropped).
        """
        msgs = list(messages)
        limit = max_tokens
        grown = False
        repaired = False
        while True:
            res = await self._create(
                label,
                msgs,
                max_tokens=limit,
                schema=schema,
                lengths=lengths,
                logprobs=logprobs,
                n=n,
                temperature=temperature,
                top_logprobs=top_logprobs,
            )
            cut = res.finish_reason == "length"
            try:
                res.parsed = parse_json_reply(res.text, schema)
                return res
            except ValueError as exc:
                problem = str(exc)
            if cut:
                for c in self._tallies():
                    c.cut += 1
                if not grown:
                    grown, limit = True, limit * 2
                    continue
                problem = f"cut at the token limit ({limit}): {problem}"
            elif lenient:
                return res
            if repaired or cut:
                self.dropped(label, problem)
                raise errors.LLMOutputError(
                    f"{self.model} at {self.where} gave an answer to {label} that is not valid {schema.__name__} JSON "
                    f"even after a retry ({problem}); it began: {res.text[:80]!r}"
                )
            repaired = True
            msgs = [
                *messages,
                {"role": "assistant", "content": res.text[:2000]},
                {
                    "role": "user",
                    "content": f"That answer could not be read ({problem}). Reply again with only the JSON object, no other text.",
                },
            ]

    async def sample_texts(
        self,
        label: str,
        messages: list[dict[str, str]],
        *,
        samples: int,
        max_tokens: int,
        schema: type[BaseModel] | None = None,
    ) -> list[str]:
        """``samples`` answers to the same request at temperature 1 (the server's own where it
        takes no temperature): in one request with ``n`` where the server takes it, else as
        concurrent requests, each with its own seed. A sample that failed is left out."""
        if self.profile.n:
            res = await self._create(
                label, messages, max_tokens=max_tokens, schema=schema, n=samples, temperature=1.0
            )
            texts = list(res.texts)
            if len(texts) < samples and self.profile.can_change("n"):
                # The server took n but answered once: it ignores n. Ask one by one from now on.
                if self.profile.apply("n", False, "server ignores n: samples are asked one by one"):
                    _say_learned(self.where, self.model, self.profile.learned[-1])
                texts += await self._samples(
                    label, messages, schema, samples - len(texts), max_tokens
                )
            return texts
        return await self._samples(label, messages, schema, samples, max_tokens)

    async def sample_json(
        self,
        label: str,
        messages: list[dict[str, str]],
        schema: type[T],
        *,
        samples: int,
        max_tokens: int,
    ) -> list[T]:
        """:meth:`sample_texts` of a structured request, each read as ``schema``; answers that
        do not parse are left out (counted as dropped)."""
        texts = await self.sample_texts(
            label, messages, samples=samples, max_tokens=max_tokens, schema=schema
        )
        out: list[T] = []
        for text in texts:
            try:
                out.append(parse_json_reply(text, schema))
            except ValueError as exc:
                self.dropped(f"{label} sample", str(exc))
        return out

    async def _samples(
        self,
        label: str,
        messages: list[dict[str, str]],
        schema: type[BaseModel] | None,
        k: int,
        max_tokens: int,
    ) -> list[str]:
        results = await asyncio.gather(
            *(
                self._create(
                    label,
                    messages,
                    max_tokens=max_tokens,
                    schema=schema,
                    temperature=1.0,
                    seed_offset=1 + i,
                )
                for i in range(k)
            ),
            return_exceptions=True,
        )
        texts: list[str] = []
        for r in results:
            if isinstance(r, errors.LLMOutputError | errors.LLMTimeout) and not isinstance(
                r, errors.LLMServerGone
            ):
                continue
            if isinstance(r, BaseException):
                raise r
            texts.append(r.text)
        return texts

    async def embed(self, texts: Sequence[str], *, model: str) -> list[list[float]]:
        resp = await self._post("/embeddings", "embeddings", {"model": model, "input": list(texts)})
        vectors = responses.read_embeddings(
            self.where, resp.headers.get("content-type", ""), resp.content, len(texts)
        )
        for t in self._tallies():
            t.embedding_calls += 1
        self._publish()
        return vectors


class _Probe(BaseModel):
    ok: bool
    level: int = Field(ge=1, le=5)
    notes: list[str]


def _with_schema_in_prompt(
    messages: list[dict[str, str]], schema_text: str
) -> list[dict[str, str]]:
    """The messages with the JSON schema stated at the end of the last user message: what comes
    before it (persona, instructions, the conversation) stays a prefix a server can cache."""
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        if out[i].get("role") == "user":
            out[i] = {
                **out[i],
                "content": f"{out[i]['content']}\n\nAnswer with one JSON object, nothing else,"
                f" that follows this JSON schema:\n{schema_text}",
            }
            return out
    return [
        *out,
        {
            "role": "user",
            "content": f"Answer with one JSON object that follows this JSON schema:\n{schema_text}",
        },
    ]


def last_full_sentence(text: str) -> str:
    """``text`` up to the end of its last full sentence (``.``, ``!``, ``?``, or a closing quote
    or bracket after one), or ``""`` when no sentence ended."""
    ends = [m.end() for m in re.finditer(r"[.!?…](?:[\"')\]]*)(?=\s|$)", text)]
    return text[: ends[-1]].strip() if ends else ""


def _retry_after(exc: openai.APIStatusError) -> float | None:
    try:
        value = exc.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None


def _short(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, str):  # not JSON: a proxy's or a web server's error page
        return responses.snippet(body)
    if isinstance(body, dict):
        msg = (
            body.get("message") or (body.get("error") or {}).get("message")
            if isinstance(body.get("error"), dict)
            else body.get("message")
        )
        if msg:
            return str(msg)[:200]
    return str(exc)[:200]
