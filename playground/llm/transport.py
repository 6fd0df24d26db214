"""Sending to an OpenAI-compatible server: retries, limits, usage counting and what was learned.

:class:`Transport` is what every call goes through: a concurrency limit that adapts to what the
server sustains, retries with back-off on 429/5xx/timeouts, a request body rebuilt after a refusal
teaches the server profile something (:mod:`playground.llm.capabilities`), usage counting (for the
client and per task, :mod:`playground.llm.usage`) and errors that name what went wrong. The API
key is never logged. :class:`~playground.llm.client.ChatClient` builds the app's calls on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import httpx2
import openai

from playground import domain, errors
from playground.llm import responses
from playground.llm.capabilities import Rejection, ServerProfile, adaptation
from playground.llm.limits import AdaptiveLimit
from playground.llm.usage import SCOPE, Counts, Scope
from playground.settings import LLMSettings
from playground.terminal_text import visible
from playground.urls import is_local

log = logging.getLogger(__name__)


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


#: One profile per (server, model, pins) in this process: every client of the same server learns
#: once (an experiment's conversations, a judge run, the window's sessions).
_PROFILES: dict[tuple[str, str, tuple[tuple[str, str], ...]], ServerProfile] = {}


def profile_for(where: str, model: str, pins: Mapping[str, str] | None = None) -> ServerProfile:
    key = (where, model, tuple(sorted((pins or {}).items())))
    if key not in _PROFILES:
        _PROFILES[key] = ServerProfile.with_pins(pins or {})
    return _PROFILES[key]


def say_learned(where: str, model: str, why: str) -> None:
    """What the client learned about a server, once, as a logged warning: on stderr in the command
    line and the window (never a secret: the URL is redacted and the model name is the user's)."""
    log.warning("%s", visible(f"{where} ({model}): {why}"))


class Transport:
    """The sending side of a client: one server and model, their profile, limits and counts.

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
        if self.profile.logprobs_cost is None:
            # Where the server is tells what its logprobs cost (pin logprobs_cost=free for a
            # local server that computes them as it decodes, e.g. vLLM on a GPU).
            self.profile.logprobs_cost = "per-token" if local else "free"
        self.limiter = AdaptiveLimit(
            2 if local else settings.concurrency,
            settings.concurrency,
            adaptive=settings.adaptive_concurrency,
            affinity=local,
        )
        self._sleep = sleep
        self.on_usage = on_usage
        self.counts = Counts()
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
        token = SCOPE.set(Scope(Counts(), on_usage))
        try:
            yield
        finally:
            SCOPE.reset(token)

    def _tallies(self) -> list[Counts]:
        scope = SCOPE.get()
        return [self.counts] if scope is None else [self.counts, scope.counts]

    def _publish(self) -> None:
        profile = self.profile.to_json()
        if self.on_usage:
            self.on_usage(self.counts.usage(profile))
        scope = SCOPE.get()
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
        key: str = "",
    ) -> Any:
        """Run ``call`` with retries on transient failures.

        ``adapt(exc)`` is asked first about a refused request (4xx/5xx): True means the request
        was changed to leave out what the server refused (or a sibling call already did) and is
        sent again at once, neither counted as a retry nor waited for. ``key``: the request's
        prompt (:func:`~playground.llm.limits.prompt_key`), which orders the calls waiting for a
        slot on a local server.
        """
        attempts = self.settings.max_retries + 1
        attempt = 0
        adaptations = 0
        started = time.monotonic()
        while True:
            last = attempt == attempts - 1
            delay = self.settings.retry_base_delay * (2**attempt)
            try:
                async with self.limiter.slot(key):
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
                say_learned(self.where, self.model, why)
                self._publish()
                return True
        return self.profile.version != version

    async def _post(
        self,
        path: str,
        what: str,
        body: dict[str, Any] | Callable[[], dict[str, Any]],
        key: str = "",
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
            key=key,
        )
        return resp


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
