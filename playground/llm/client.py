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
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx2
import openai
from pydantic import BaseModel, ValidationError

from playground import domain, errors
from playground.llm import responses
from playground.llm.responses import TokenLogprob
from playground.settings import LLMSettings

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
_RATING_KEY = re.compile(r'"rating"\s*:\s*"?\s*$')
_RATING_VALUE = re.compile(r"\s*([1-5])(?![0-9])")


@dataclass
class ChatResult:
    text: str
    parsed: Any = None
    tokens: list[TokenLogprob] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def rating_alternatives(self) -> list[list[tuple[str, float]]]:
        """Top alternatives of each ``"rating": N`` value token, in the order they appear."""
        found: list[list[tuple[str, float]]] = []
        text = ""
        for tok in self.tokens or []:
            lead = tok.token[: len(tok.token) - len(tok.token.lstrip())]
            if _RATING_VALUE.match(tok.token) and _RATING_KEY.search((text + lead)[-40:]):
                found.append(tok.top or [(tok.token, tok.logprob)])
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


@functools.lru_cache(maxsize=256)
def _response_format(model: type[BaseModel], lengths: tuple[tuple[str, int], ...]) -> str:
    """The ``response_format`` for ``model`` as JSON text, built once per schema and lengths."""
    schema = exact_lengths(strict_schema(model), dict(lengths))
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": model.__name__, "schema": schema, "strict": True},
    }
    return json.dumps(fmt)


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
    """Parse a model's JSON answer, tolerating code fences and prose around it.

    Raises:
        ValueError: when no candidate parses and validates; the message says why.
    """
    candidates = [text.strip()]
    candidates += re.findall(r"```(?:json)?\s*(.*?)```", text, flags=re.S)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    last_error = "no JSON object found"
    for cand in candidates:
        try:
            return schema.model_validate(json.loads(cand))
        except (json.JSONDecodeError, ValidationError) as exc:
            last_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    raise ValueError(last_error)


@dataclass
class _Counts:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    retries: int = 0
    rate_limit_waits: int = 0
    rate_limit_seconds: float = 0.0
    by_label: dict[str, int] = field(default_factory=dict)

    def usage(self) -> domain.Usage:
        return domain.Usage(
            calls=self.calls,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            embedding_calls=self.embedding_calls,
            retries=self.retries,
            rate_limit_waits=self.rate_limit_waits,
            rate_limit_seconds=round(self.rate_limit_seconds, 3),
        )


@dataclass
class _Scope:
    counts: _Counts
    on_usage: Callable[[domain.Usage], None]


#: The usage scope of the task making a call (see :meth:`ChatClient.usage_scope`).
_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("usage_scope", default=None)


class ChatClient:
    """Chat and embedding calls with retries, limits, parsing and usage counting.

    Args:
        client: an ``openai.AsyncOpenAI`` built with ``max_retries=0`` (retries happen here, visibly).
        settings: model, timeout, retries, concurrency.
        on_usage: called with the running totals after every successful call.
        sleep: injected for back-off, so tests need not wait.
    """

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        settings: LLMSettings,
        *,
        on_usage: Callable[[domain.Usage], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._client = client
        self.settings = settings
        self.model = settings.model
        self._sem = asyncio.Semaphore(settings.concurrency)
        self._sleep = sleep
        self.on_usage = on_usage
        self.counts = _Counts()
        self.schema_supported = True
        self.logprobs_supported: bool | None = None

    @property
    def usage(self) -> domain.Usage:
        return self.counts.usage()

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
        if self.on_usage:
            self.on_usage(self.usage)
        scope = _SCOPE.get()
        if scope is not None:
            scope.on_usage(scope.counts.usage())

    @property
    def retries(self) -> int:
        return self.counts.retries

    @property
    def where(self) -> str:
        from playground.urls import redact  # credentials in the URL are sent, never shown

        return redact(str(self._client.base_url)).rstrip("/")

    async def close(self) -> None:
        await self._client.close()

    async def _with_retries(self, what: str, call: Callable[[], Awaitable[Any]]) -> Any:
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            delay = self.settings.retry_base_delay * (2**attempt)
            try:
                async with self._sem:
                    return await call()
            except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
                raise errors.LLMAuthError(
                    f"{self.where} refused the API key ({exc.status_code}) during {what}: check OPENAI_API_KEY or the key you entered"
                ) from exc
            except openai.RateLimitError as exc:
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
                if last:
                    raise errors.LLMTimeout(
                        f"{self.where} did not answer {what} within {self.settings.timeout:g} s ({attempts} attempts)"
                    ) from exc
            except openai.APIConnectionError as exc:
                if last:
                    raise errors.LLMUnreachable(
                        f"cannot reach {self.where} for {what}: {exc.__cause__ or exc}"
                    ) from exc
            except openai.NotFoundError as exc:
                raise errors.LLMServerError(
                    f"{self.where} answered 404 for {what}: is the model name {self.model!r} right? ({_short(exc)})"
                ) from exc
            except openai.APIStatusError as exc:
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
            log.info("retrying %s in %.2f s (attempt %d of %d)", what, delay, attempt + 2, attempts)
            self._publish()  # a retry shows while it waits, not only after
            await self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _count(self, p: int, c: int, label: str) -> None:
        for t in self._tallies():
            t.calls += 1
            t.prompt_tokens += p
            t.completion_tokens += c
            t.by_label[label] = t.by_label.get(label, 0) + 1
        self._publish()

    async def _post(self, path: str, what: str, body: dict[str, Any]) -> httpx2.Response:
        """POST ``body`` through the SDK (auth, headers, status errors) and return the raw answer.

        The body is sent as it is and the answer is read by :mod:`playground.llm.responses`: the
        SDK's typed request transform and response objects are skipped (see that module).
        """

        async def call() -> httpx2.Response:
            return await self._client.post(
                path,
                cast_to=httpx2.Response,
                body=body,
                options={"timeout": self.settings.timeout},
            )

        resp: httpx2.Response = await self._with_retries(what, call)
        return resp

    async def _create(
        self, label: str, messages: list[dict[str, str]], **kwargs: Any
    ) -> ChatResult:
        body = {
            "model": self.model,
            "messages": messages,
            "temperature": self.settings.temperature,
            **kwargs,
        }
        resp = await self._post("/chat/completions", label, body)
        got = responses.read_completion(
            self.where, label, resp.headers.get("content-type", ""), resp.content
        )
        self._count(got.prompt_tokens, got.completion_tokens, label)
        return ChatResult(
            text=got.text,
            tokens=got.tokens,
            prompt_tokens=got.prompt_tokens,
            completion_tokens=got.completion_tokens,
        )

    async def probe(self) -> bool:
        """One cheap call (max_tokens=1, logprobs, top_logprobs=5): does this server return logprobs?

        Raises:
            LLMError: when the server cannot be used at all (unreachable, key refused...).
        """
        res = await self._create(
            "probe",
            [{"role": "user", "content": "Say OK."}],
            max_tokens=1,
            logprobs=True,
            top_logprobs=5,
        )
        self.logprobs_supported = bool(res.tokens and res.tokens[0].top)
        return self.logprobs_supported

    async def chat_text(
        self, label: str, messages: list[dict[str, str]], *, max_tokens: int = 200
    ) -> ChatResult:
        res = await self._create(label, messages, max_tokens=max_tokens)
        res.text = res.text.strip().strip('"').strip()
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
    ) -> ChatResult:
        """A structured call: ``result.parsed`` is a validated ``schema`` instance.

        With ``lenient`` an answer that does not parse is returned as it is (``parsed`` None, no
        retry), for a caller that reads other formats itself (the simulated user's tagged text).

        Uses a JSON-schema ``response_format``; if the server rejects it (400) we stop sending it.
        ``lengths`` states exact array lengths in the schema sent (``minItems`` = ``maxItems``
        for every array property of that name); the answer is still read leniently.
        If the answer does not parse, the model is asked once more with the parse error.

        Raises:
            LLMOutputError: the answer still does not parse after the retry.
        """
        kwargs: dict[str, Any] = {"max_tokens": max_tokens}
        if logprobs and self.logprobs_supported is not False:
            kwargs.update(logprobs=True, top_logprobs=5)
        msgs = list(messages)
        for attempt in range(2):
            fmt = json.loads(_response_format(schema, tuple(sorted((lengths or {}).items()))))
            try:
                res = await self._create(
                    label,
                    msgs,
                    **kwargs,
                    **({"response_format": fmt} if self.schema_supported else {}),
                )
            except errors.LLMServerError as exc:
                if self.schema_supported and "400" in str(exc):
                    log.warning(
                        "server rejected response_format; falling back to prompt-only JSON: %s", exc
                    )
                    self.schema_supported = False
                    res = await self._create(label, msgs, **kwargs)
                else:
                    raise
            try:
                res.parsed = parse_json_reply(res.text, schema)
                return res
            except ValueError as exc:
                if lenient:
                    return res
                if attempt == 1:
                    raise errors.LLMOutputError(
                        f"{self.model} at {self.where} gave an answer to {label} that is not valid {schema.__name__} JSON "
                        f"even after a retry ({exc}); it began: {res.text[:80]!r}"
                    ) from exc
                msgs = [
                    *messages,
                    {"role": "assistant", "content": res.text[:2000]},
                    {
                        "role": "user",
                        "content": f"That answer could not be read ({exc}). Reply again with only the JSON object, no other text.",
                    },
                ]
        raise AssertionError("unreachable")  # pragma: no cover

    async def embed(self, texts: Sequence[str], *, model: str) -> list[list[float]]:
        resp = await self._post("/embeddings", "embeddings", {"model": model, "input": list(texts)})
        vectors = responses.read_embeddings(
            self.where, resp.headers.get("content-type", ""), resp.content, len(texts)
        )
        for t in self._tallies():
            t.embedding_calls += 1
        self._publish()
        return vectors


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
