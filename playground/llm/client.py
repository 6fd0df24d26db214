"""ChatClient: the calls the app makes to an OpenAI-compatible server.

Plain text (stop sequences where the server takes them, a run-on cut where the caller says it
ends, a cut answer asked again, else trimmed to its last sentence), structured answers (a
JSON schema from a pydantic model, a tolerant parser and one corrective retry; see
:mod:`playground.llm.schemas`), samples of one request, logprob extraction and embeddings. The
sending underneath (retries, limits, usage counting, errors that name what went wrong) is
:class:`~playground.llm.transport.Transport`'s.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from playground import clock, errors
from playground.llm import capabilities, responses, schemas
from playground.llm.limits import prompt_key
from playground.llm.responses import TokenLogprob
from playground.llm.schemas import parse_json_reply
from playground.llm.transport import Transport, say_learned

T = TypeVar("T", bound=BaseModel)
_RATING_KEY = re.compile(r'"rating"\s*:\s*"?\s*$')
_RATING_VALUE = re.compile(r"\s*([1-9])(?![0-9])")
#: OpenAI takes at most four stop sequences (more: 400 ``array_above_max_length``).
MAX_STOP = 4


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


class ChatClient(Transport):
    """Chat and embedding calls with capability negotiation, retries, limits, parsing and usage
    counting (the sending side, and the constructor's arguments: :class:`Transport`)."""

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
        stop: Sequence[str] = (),
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
        if stop and p.stop:
            body["stop"] = list(stop[:MAX_STOP])
        if schema is not None:
            key = tuple(sorted((lengths or {}).items()))
            tier = p.structured
            if tier in ("json_schema", "json_schema_loose"):
                body["response_format"] = json.loads(
                    schemas.response_format(schema, key, tier == "json_schema_loose")
                )
            else:
                if tier == "json_object_schema":
                    body["response_format"] = {
                        "type": "json_object",
                        "schema": json.loads(schemas.schema_text(schema, key, False)),
                    }
                elif tier == "json_object":
                    body["response_format"] = {"type": "json_object"}
                body["messages"] = schemas.with_schema_in_prompt(
                    messages, schemas.schema_text(schema, key, True)
                )
        return body

    async def _create(self, label: str, messages: list[dict[str, str]], **ask: Any) -> ChatResult:
        """One chat call; ``ask`` holds :meth:`_body`'s options (the body is built anew for every
        attempt, from the profile as it then stands)."""
        build = functools.partial(self._body, messages, **ask)
        t0 = time.monotonic()
        resp = await self._post("/chat/completions", label, build, key=prompt_key(messages))
        got = responses.read_completion(
            self.where, label, resp.headers.get("content-type", ""), resp.content
        )
        took = time.monotonic() - t0
        clock.meter_call(took)
        self.limiter.answered(label, took, got.completion_tokens)
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
        stop: Sequence[str] = (),
        run_on: Callable[[str], int | None] | None = None,
    ) -> ChatResult:
        """A plain-text answer.

        ``stop`` sequences (at most :data:`MAX_STOP`) end the answer on the server, where the
        profile allows them: a server that refuses them, or a model that meets one before it
        says anything and says something without them, teaches the profile to send none. ``run_on(text)`` tells where an answer
        ran on past its end (into the prompt's scaffolding, say), or None: the text is cut there,
        and such an answer is complete even when the server cut it at the token limit.

        Any other answer cut at the token limit is asked again once with twice the limit; a text
        still cut is trimmed to its last full sentence (``cut`` set) and never posted mid-word.

        Raises:
            LLMUnusableText: the answer is empty, nothing but what ``run_on`` cut off, or cut at
                the token limit with no full sentence to keep (counted as dropped).
        """
        limit = max_tokens
        sends_stop = bool(stop) and self.profile.stop
        res = await self._create(label, messages, max_tokens=limit, stop=stop)
        if sends_stop and not res.text.strip() and res.finish_reason != "length":
            stop = ()
            res = await self._unstopped(label, messages, limit, run_on)
        raw = res.text
        ended = _end_run_on(res, run_on)
        if res.finish_reason == "length" and not ended and retry_cut:
            for c in self._tallies():
                c.cut += 1
            limit *= 2
            res = await self._create(label, messages, max_tokens=limit, stop=stop)
            raw = res.text
            ended = _end_run_on(res, run_on)
        res.text = res.text.strip().strip('"').strip()
        if res.finish_reason == "length" and not ended:
            for c in self._tallies():
                c.cut += 1
            kept = last_full_sentence(res.text)
            if not kept:
                self.dropped(label, "cut at the token limit before its first sentence ended")
                raise errors.LLMUnusableText(
                    f"{self.model} at {self.where} was cut at the token limit ({limit})"
                    f" before finishing a sentence of {label}"
                )
            res.text, res.cut = kept, True
        if not res.text and ended:
            self.dropped(label, "nothing but the prompt's scaffolding")
            raise errors.LLMUnusableText(
                f"{self.model} at {self.where} answered {label} with nothing but the prompt's"
                f" own scaffolding (it began: {raw.strip()[:60]!r})"
            )
        if not res.text:
            raise errors.LLMUnusableText(f"{self.where} returned an empty answer for {label}")
        return res

    async def _unstopped(
        self,
        label: str,
        messages: list[dict[str, str]],
        limit: int,
        run_on: Callable[[str], int | None] | None,
    ) -> ChatResult:
        """The call asked again without stop sequences, after one matched before anything was
        said. When this answer has something to say (a model that opens with a blank line, a
        reasoning model's thinking), stops cost this model its answers: they are never sent
        again. When it has not (the model began with the prompt's scaffolding), they stay."""
        res = await self._create(label, messages, max_tokens=limit)
        end = run_on(res.text) if run_on is not None else None
        said = res.text[:end].strip()
        if said and self.profile.apply("stop", False, capabilities.STOP_SILENCES):
            say_learned(self.where, self.model, capabilities.STOP_SILENCES)
            self._publish()
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
                    say_learned(self.where, self.model, self.profile.learned[-1])
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


def _end_run_on(res: ChatResult, run_on: Callable[[str], int | None] | None) -> bool:
    """Cut ``res.text`` where ``run_on`` says it ran on; whether it did."""
    end = run_on(res.text) if run_on is not None else None
    if end is None:
        return False
    res.text = res.text[:end]
    return True


class _Probe(BaseModel):
    ok: bool
    level: int = Field(ge=1, le=5)
    notes: list[str]


def last_full_sentence(text: str) -> str:
    """``text`` up to the end of its last full sentence (``.``, ``!``, ``?``, or a closing quote
    or bracket after one), or ``""`` when no sentence ended."""
    ends = [m.end() for m in re.finditer(r"[.!?…](?:[\"')\]]*)(?=\s|$)", text)]
    return text[: ends[-1]].strip() if ends else ""
