"""A judge model rates how well the agents inferred a person's reason for their message (1–5).

For each inference item of a study report (:class:`~playground.report.study_model.InferenceItem`:
a person's message, the agents' interpretation of it, and the reason the person gave themselves)
the judge reads the three and rates how well the interpretation matches the person's own reason,
1 (not at all) to 5 (fully), giving a short reason first. The call is the chat client's
structured call (:meth:`playground.llm.client.ChatClient.chat_json`), as the other judges make
it: an answer that cannot be read gets one corrective retry, and one still unreadable leaves the
item unrated with the reason in ``judge_failed``. Nothing is stored; nothing is invented.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel, Field

from playground import errors
from playground.llm.client import ChatClient
from playground.report.study import ALL, inference_row
from playground.report.study_model import InferenceItem, StudyReport
from playground.workers import run_workers

SCALE_MIN, SCALE_MAX = 1, 5

SYSTEM = (
    "You check how well someone understood why a person said something. You are shown a"
    " message a person wrote in a group chat, how an AI participant interpreted it, and the"
    " reason the person gave themselves, privately, for writing it. Rate how well the"
    f" interpretation matches the person's own reason, from {SCALE_MIN} (not at all: it misses"
    f" or contradicts the reason) to {SCALE_MAX} (fully: it captures the reason). Judge the"
    " meaning, not the wording. First give a short reason (one sentence), then the rating as a"
    " single whole number. Answer with the JSON object only:"
    ' {"reason": <one sentence>, "rating": <a whole number from'
    f" {SCALE_MIN} to {SCALE_MAX}>}}."
)


class InferenceAnswer(BaseModel):
    """The judge's answer for one item."""

    reason: str
    rating: int = Field(ge=SCALE_MIN, le=SCALE_MAX)


def judge_messages(item: InferenceItem) -> list[dict[str, str]]:
    """The judge's prompt for one item."""
    text = "\n".join(
        [
            f"The person's message: {item.message}",
            f"The AI's interpretation of it: {item.interpretation}",
            f"The person's own reason for writing it: {item.reason}",
        ]
    )
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]


async def judge_items(
    client: ChatClient,
    items: Sequence[InferenceItem],
    *,
    concurrency: int = 4,
    on_done: Callable[[InferenceItem], None] | None = None,
) -> list[InferenceItem]:
    """Rate every item; returns them in the same order with ``judge_rating`` and
    ``judge_reason``, or ``judge_failed`` when the answer could not be read.

    Raises:
        LLMError: the server cannot be used (unreachable, key refused, kept failing...).
    """
    out: list[InferenceItem | None] = [None] * len(items)
    queue = iter(enumerate(items))

    async def worker() -> None:
        for n, item in queue:
            label = f"inference of {item.session_id} message {item.message_id}"
            try:
                res = await client.chat_json(
                    label, judge_messages(item), InferenceAnswer, max_tokens=300
                )
            except errors.LLMOutputError as exc:
                done = item.model_copy(update={"judge_failed": str(exc)})
            else:
                answer: InferenceAnswer = res.parsed
                done = item.model_copy(
                    update={"judge_rating": answer.rating, "judge_reason": answer.reason.strip()}
                )
            out[n] = done
            if on_done is not None:
                on_done(done)

    if items:
        await run_workers(worker, min(concurrency, len(items)))
    return [i for i in out if i is not None]


def with_judge(report: StudyReport, items: list[InferenceItem], judge: str) -> StudyReport:
    """``report`` with the judge's ratings of its inference items (``items``: the report's own,
    with their judge fields filled in by :func:`judge_items`)."""
    rows = [
        inference_row(
            row.condition,
            [i for i in items if row.condition in (ALL, i.condition)],
            row.human_messages,
            row.with_reason,
            [x for x in report.inference_left_out if row.condition in (ALL, x.condition)],
        )
        for row in report.inference
    ]
    failures = [
        f"{i.session_id} message {i.message_id} ({i.person}): {i.judge_failed}"
        for i in items
        if i.judge_failed
    ]
    return report.model_copy(
        update={"inference_items": items, "inference": rows, "judge": judge,
                "judge_failures": failures}
    )  # fmt: skip
