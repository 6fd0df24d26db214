"""The LLM-backed mind: prompts and schemas over a :class:`ChatClient`.

A rating's distribution is estimated by one of three methods (``rating_method``): the rating
token's top-5 logprobs, the empirical distribution of sampled ratings (G-Eval's way when a server
gives no logprobs), or the parsed integer alone (probability 1). ``auto`` takes logprobs where the
server gives them, else samples. With ``rating_call="final"`` the reasons come first, without
logprobs, and the distribution is read from a short final call that asks for the rating alone, so
only a few tokens are scored or sampled. Each rating records its method and sample count.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from typing import Literal, TypeVar, get_args

from pydantic import BaseModel

from playground import domain, errors
from playground.cognition import prompts, scoring, utterance
from playground.cognition.base import Articulation, Context, Rating, ThoughtDraft, without_name
from playground.llm import rating
from playground.llm.client import ChatClient, ChatResult
from playground.settings import RatingCall, RatingMethod

#: One call per thought (as the paper), or one call per agent for all its thoughts.
EvaluationMode = Literal["per-thought", "batched"]
EVALUATION_MODES: tuple[EvaluationMode, ...] = get_args(EvaluationMode)
T = TypeVar("T", bound=BaseModel)

# Token limits of each answer (the client asks once more with twice the limit when one is cut).
# They leave room for what the schema asks: a sentence or a name, a reason or two and a rating.
#: One sentence on what a message means.
INTERPRETATION_TOKENS = 120
#: A participant's name, or nobody.
TURN_TYPE_TOKENS = 30
#: One spoken turn (a baseline reply, an articulated thought).
UTTERANCE_TOKENS = 120
#: A few thoughts of under 15 words each, with their stimuli.
THOUGHTS_TOKENS = 500
#: One thought's evaluation: two reasons for, two against, a rating.
EVALUATION_TOKENS = 260
#: Each thought's share of a batched evaluation (its id, reasons and rating).
BATCH_EVALUATION_TOKENS = 220


class LLMCognition:
    """Inner Thoughts stages answered by a chat model.

    Args:
        client: transport to the server.
        evaluation_mode: ``per-thought`` (one call per thought, as the paper; the default) or
            ``batched`` (one call per agent for all its thoughts, cheaper). Thoughts are formed in
            one call per system either way (the agent asks for each system separately).

    Raises:
        SettingsError: an unknown evaluation mode (a typo would otherwise select ``batched``).
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        evaluation_mode: EvaluationMode = "per-thought",
        rating_method: RatingMethod = "auto",
        rating_samples: int = 20,
        rating_call: RatingCall = "auto",
        rating_alternatives: int = 20,
    ) -> None:
        if evaluation_mode not in EVALUATION_MODES:
            raise errors.SettingsError(
                f"evaluation_mode: {evaluation_mode!r} is not one of {', '.join(EVALUATION_MODES)}"
            )
        self.client = client
        self.mode: EvaluationMode = evaluation_mode
        self.name = client.model
        self.rating_method = rating_method
        self.rating_samples = rating_samples
        self.rating_call = rating_call
        self.rating_alternatives = rating_alternatives

    @property
    def evaluates_alone(self) -> bool:
        """True when each thought is rated in a call of its own (per-thought): the room may then
        evaluate a thought as soon as it is formed, before the agent's other thoughts are."""
        return self.mode == "per-thought"

    def _inline(self, method: rating.Method) -> bool:
        """Whether the rating's logprobs are read from the evaluation answer itself (one call)
        rather than a final call: asked (``inline``), or ``auto`` and the server is a hosted
        API, where logprobs cost nothing (the final call would add a dependent round trip)."""
        if method != "logprobs":
            return False
        if self.rating_call == "auto":
            return self.client.profile.logprobs_cost == "free"
        return self.rating_call == "inline"

    def method(self) -> rating.Method:
        """The rating method for the next evaluation, as far as the server allows it."""
        return rating.resolve(self.client, self.rating_method)

    async def _final_distribution(
        self,
        label: str,
        messages: list[dict[str, str]],
        answer: str,
        method: rating.Method,
        subject: str = "your rating of how strongly you want to say it",
    ) -> tuple[dict[int, float], domain.ScoreMethod, int | None] | None:
        return await rating.final_distribution(
            self.client,
            label,
            messages,
            answer,
            method,
            samples=self.rating_samples,
            subject=subject,
            alternatives=self.rating_alternatives,
        )

    async def _usable(
        self, label: str, messages: list[dict[str, str]], schema: type[T], max_tokens: int
    ) -> T | None:
        """The parsed answer, or None when this call gave none that could be used this time
        (counted as dropped); a server that is gone still raises."""
        try:
            res = await self.client.chat_json(label, messages, schema, max_tokens=max_tokens)
        except _UNUSABLE as exc:
            _raise_if_gone(exc)
            return None
        parsed: T = res.parsed
        return parsed

    async def interpret(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> str:
        """One sentence on what the message means; ``""`` when the model's answer could not be
        used (counted as dropped): the agents then think without it, and the turn goes on."""
        answer = await self._usable(
            "interpretation",
            prompts.interpret_messages(message, recent, participants),
            prompts.InterpretationOut,
            INTERPRETATION_TOKENS,
        )
        return "" if answer is None else str(answer.interpretation).strip()

    async def predict_turn_type(
        self, message: domain.Message, recent: list[domain.Message], participants: list[str]
    ) -> domain.TurnType:
        """Allocated to a participant the message hands the turn to, else open; open as well when
        the model's answer could not be used (counted as dropped)."""
        answer = await self._usable(
            "turn type",
            prompts.turn_type_messages(message, recent, participants),
            prompts.TurnTypeOut,
            TURN_TYPE_TOKENS,
        )
        if answer is None:
            return domain.TurnType(message_id=message.id, kind="open", origin=self.name)
        said = str(answer.next_speaker).strip().lstrip("@").strip()
        match = next(
            (p for p in participants if p.casefold() == said.casefold() and p != message.speaker),
            None,
        )
        if match:
            return domain.TurnType(
                message_id=message.id, kind="allocated", addressee=match, origin=self.name
            )
        return domain.TurnType(message_id=message.id, kind="open", origin=self.name)

    async def predict_next_speaker(
        self, recent: list[domain.Message], participants: list[str]
    ) -> domain.NextSpeakerPrediction:
        from playground.cognition import next_speaker

        return await next_speaker.predict_with_llm(
            self.client,
            recent,
            participants,
            method=self.rating_method,
            samples=self.rating_samples,
        )

    async def respond(self, ctx: Context) -> str:
        return await _utterance(self.client, "baseline reply", prompts.response_messages(ctx), ctx)

    async def form_thoughts(
        self, ctx: Context, stimuli: list[domain.Stimulus], *, system1: int, system2: int
    ) -> list[ThoughtDraft]:
        # One request per system (the agent asks for them separately anyway: System-1 thoughts
        # come from the conversation alone, System-2 thoughts from everything retrieved).
        parts = await asyncio.gather(
            self._form(ctx, stimuli, system1, 0, "System-1 thoughts") if system1 else _none(),
            self._form(ctx, stimuli, 0, system2, "System-2 thoughts") if system2 else _none(),
        )
        return [*parts[0], *parts[1]]

    async def _form(
        self, ctx: Context, stimuli: list[domain.Stimulus], s1: int, s2: int, label: str
    ) -> list[ThoughtDraft]:
        res = await self.client.chat_json(
            label,
            prompts.thoughts_messages(ctx, stimuli, system1=s1, system2=s2),
            prompts.ThoughtsOut,
            max_tokens=THOUGHTS_TOKENS,
            lengths={"thoughts": s1 + s2},
        )
        drafts = [
            ThoughtDraft(
                text=t.text.strip(), system=1 if t.system == 1 else 2, stimuli=list(t.stimuli)
            )
            for t in res.parsed.thoughts
        ]
        # Keep the requested mix even if the model returns more.
        ones = [d for d in drafts if d.system == 1][:s1]
        twos = [d for d in drafts if d.system == 2][:s2]
        return ones + twos

    async def evaluate(
        self, ctx: Context, thoughts: list[domain.Thought], stimuli: list[domain.Stimulus]
    ) -> list[Rating | None]:
        if not thoughts:
            return []
        if self.mode == "per-thought":
            results = await asyncio.gather(*(self._evaluate_one(ctx, t) for t in thoughts))
            return list(results)
        ratings = await self._evaluate_batch(ctx, thoughts)
        missing = [t for t, r in zip(thoughts, ratings, strict=True) if r is None]
        if missing:
            # The model skipped some thoughts: ask once more, for just those.
            again = await self._evaluate_batch(ctx, missing)
            retry = dict(zip((t.id for t in missing), again, strict=True))
            ratings = [
                r if r is not None else retry[t.id] for t, r in zip(thoughts, ratings, strict=True)
            ]
        return ratings

    async def _evaluate_batch(
        self, ctx: Context, thoughts: list[domain.Thought]
    ) -> list[Rating | None]:
        method = self.method()
        inline = self._inline(method)
        res = await self.client.chat_json(
            "evaluation",
            prompts.batch_evaluation_messages(ctx, thoughts),
            prompts.EvaluationsOut,
            logprobs=inline,
            max_tokens=BATCH_EVALUATION_TOKENS * len(thoughts),
            lengths={"evaluations": len(thoughts), **prompts.REASON_LENGTHS},
        )
        evals = res.parsed.evaluations
        alternatives = res.rating_alternatives() if inline else []
        asked = [t.id for t in thoughts]
        ids = [e.thought_id for e in evals]
        if set(ids) <= set(asked) and len(set(ids)) == len(ids):
            position = {tid: i for i, tid in enumerate(ids)}  # the model echoed our ids
        else:
            position = {
                tid: i for i, tid in enumerate(asked[: len(evals)])
            }  # ids garbled: trust the order
        out: list[Rating | None] = []
        for t in thoughts:
            i = position.get(t.id)
            if i is None:
                out.append(None)
                continue
            e = evals[i]
            alt = alternatives[i] if len(alternatives) == len(evals) else None
            out.append(_rating(e.rating, e.reasons_for, e.reasons_against, alt))
        if method != "parsed" and not inline:
            # One final call per thought for its distribution, all at once.
            messages = prompts.batch_evaluation_messages(ctx, thoughts)
            finals = await asyncio.gather(
                *(
                    self._final_distribution(
                        "evaluation",
                        messages,
                        res.text,
                        method,
                        f"your rating of thought [{t.id}] (how strongly you want to say it)",
                    )
                    if r is not None
                    else _no_distribution()
                    for t, r in zip(thoughts, out, strict=True)
                )
            )
            out = [
                _with_distribution(r, f) if r is not None else None
                for r, f in zip(out, finals, strict=True)
            ]
        return out

    async def _evaluate_one(self, ctx: Context, thought: domain.Thought) -> Rating:
        method = self.method()
        inline = self._inline(method)
        messages = prompts.evaluation_messages(ctx, thought)
        res: ChatResult = await self.client.chat_json(
            "evaluation",
            messages,
            prompts.EvaluationOut,
            logprobs=inline,
            max_tokens=EVALUATION_TOKENS,
            lengths=prompts.REASON_LENGTHS,
        )
        alts = res.rating_alternatives() if inline else []
        rating = _rating(
            res.parsed.rating,
            res.parsed.reasons_for,
            res.parsed.reasons_against,
            alts[0] if alts else None,
        )
        if method == "parsed" or inline:
            return rating
        return _with_distribution(
            rating, await self._final_distribution("evaluation", messages, res.text, method)
        )

    async def articulate(self, ctx: Context, request: Articulation) -> str:
        thought, stimuli, tone = request.thought, request.stimuli, request.proactive_tone
        return await _utterance(
            self.client,
            "articulation",
            prompts.articulation_messages(ctx, thought, stimuli, proactive_tone=tone),
            ctx,
        )


#: A call that gave no usable answer this time (the server still answers others).
_UNUSABLE = (errors.LLMOutputError, errors.LLMTimeout)


def _raise_if_gone(exc: Exception) -> None:
    if isinstance(exc, errors.LLMServerGone):
        raise exc


async def _none() -> list[ThoughtDraft]:
    return []


async def _no_distribution() -> None:
    return None


def _with_distribution(
    rating: Rating, found: tuple[dict[int, float], domain.ScoreMethod, int | None] | None
) -> Rating:
    """``rating`` with the distribution a final call found (the parsed one when it found none)."""
    if found is None:
        return rating
    dist, method, samples = found
    return dataclasses.replace(
        rating,
        distribution={r: round(p, 6) for r, p in scoring.normalise_distribution(dist).items()},
        method=method,
        samples=samples,
    )


def _rating(
    rating: int,
    reasons_for: list[str],
    reasons_against: list[str],
    alternatives: list[tuple[str, float]] | None,
) -> Rating:
    dist = scoring.distribution_from_logprobs(alternatives) if alternatives else None
    method: domain.ScoreMethod = "logprobs"
    if dist is None:
        dist, method = scoring.point_distribution(rating), "parsed"
    return Rating(
        rating=rating,
        distribution={r: round(p, 6) for r, p in dist.items()},
        reasons_for=list(reasons_for[:2]),
        reasons_against=list(reasons_against[:2]),
        method=method,
    )


async def _utterance(
    client: ChatClient, label: str, messages: list[dict[str, str]], ctx: Context
) -> str:
    """What ``ctx.agent`` says: the answer ended on the server at the utterance stop sequences,
    cut where it runs on into the prompt's scaffolding, without a name prefix or an echo of the
    instruction.

    Raises:
        LLMUnusableText: nothing of the answer can be said (counted as dropped); the agent stays
            silent for the step.
    """
    res = await client.chat_text(
        label,
        messages,
        max_tokens=UTTERANCE_TOKENS,
        stop=prompts.UTTERANCE_STOPS,
        run_on=functools.partial(utterance.scaffolding_start, names=ctx.participants),
    )
    text = utterance.without_echo(without_name(res.text, ctx.agent))
    if not text:
        client.dropped(label, "nothing but an echo of the prompt")
        raise errors.LLMUnusableText(
            f"{client.model} at {client.where} answered {label} for {ctx.agent} with nothing but"
            f" an echo of the prompt ({res.text[:60]!r})"
        )
    return text
