"""``playground eval-next-speaker``: score a next-speaker predictor on a corpus of group chats.

The corpus is JSON Lines, one message per line, in conversation order (docs/next-speaker-corpus.md)::

    {"conversation": "c1", "speaker": "Maya", "text": "Anyone up for a hike?", "addressee": "all"}

After every message but a conversation's last, the predictor reads the previous (up to) 5
messages and the conversation's participants, and says who speaks next. Scoring follows the
paper's Table 1 with its "speaker name or *anyone*" labels (Inner Thoughts paper §3.2–3.4;
docs/spec.md §1.9.1):

* the turn-taking type is that of the message just read: **allocated** when it is addressed to
  a participant, **self-selection** when it is addressed to ``all``;
* the gold label is read from the message's addressee alone, as the paper labels each utterance
  from its ``link_to`` annotation ("based on the participant it was addressed to", or *anyone*
  when it is open to all): the **addressee** for an allocated turn, ``anyone`` for a
  self-selection turn. When someone other than the addressee spoke next, the gold is still the
  addressee; the report counts those turns and also gives the allocated accuracy against who
  actually spoke, for comparison.

Accuracy is reported overall, on self-selection and on allocated turns, next to a random guess
(uniform over the labels offered: each participant's name and ``anyone``, computed exactly on
the corpus), an always-``anyone`` guess, and the paper's own figures as labelled reference rows.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from playground import domain, errors
from playground.cognition import next_speaker
from playground.cognition.offline import next_speaker as offline_next_speaker
from playground.experiments.next_speaker_corpus import Item, TurnKind
from playground.workers import run_workers

if TYPE_CHECKING:
    from playground.llm.client import ChatClient

#: Offline predictions run in slices, handing the loop back in between (Ctrl-C stays prompt).
OFFLINE_SLICE = 500

#: The paper's Table 1 (docs/spec.md §1.9.1), measured on the MPC corpus: a reference, not this
#: corpus.
PAPER_ROWS: tuple[tuple[str, float, float | None, float | None], ...] = (
    ("paper: GPT-4o (speaker name)", 0.435, 0.121, 0.697),
    ("paper: fine-tuned GPT-3.5 (name or anyone)", 0.810, 0.853, 0.765),
    ("paper: random guess", 0.127, None, None),
)

# -- scoring -----------------------------------------------------------------------------------


@dataclass
class Tally:
    correct: int = 0
    total: int = 0
    #: Sum over the items of a uniform guess's chance (1 / number of labels offered).
    random: float = 0.0
    anyone: int = 0

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.total if self.total else None

    @property
    def random_accuracy(self) -> float | None:
        return self.random / self.total if self.total else None

    @property
    def anyone_accuracy(self) -> float | None:
        return self.anyone / self.total if self.total else None


@dataclass
class Outcome:
    item: Item
    prediction: domain.NextSpeakerPrediction | None
    #: Why there is no prediction (the model's answer could not be read even after a retry).
    error: str = ""

    @property
    def correct(self) -> bool:
        return self.prediction is not None and self.prediction.predicted == self.item.gold


@dataclass
class Scores:
    overall: Tally = field(default_factory=Tally)
    self_selection: Tally = field(default_factory=Tally)
    allocated: Tally = field(default_factory=Tally)
    methods: Counter[str] = field(default_factory=Counter)
    failures: int = 0
    #: Allocated turns that someone other than the addressee took.
    taken_by_other: int = 0
    #: Allocated turns scored against who actually spoke next instead of the addressee.
    allocated_vs_spoken: Tally = field(default_factory=Tally)

    def by_kind(self, kind: TurnKind) -> Tally:
        return self.self_selection if kind == "self" else self.allocated


def score(outcomes: Sequence[Outcome]) -> Scores:
    """Accuracy overall and per turn type, with the random and always-``anyone`` baselines."""
    s = Scores()
    for o in outcomes:
        it = o.item
        for tally in (s.overall, s.by_kind(it.kind)):
            tally.total += 1
            tally.correct += o.correct
            tally.random += 1 / len(it.labels)
            tally.anyone += it.gold == domain.ANYONE
        if o.prediction is None:
            s.failures += 1
        else:
            s.methods[o.prediction.method] += 1
        if it.kind == "allocated":
            s.taken_by_other += it.next_speaker != it.addressee
            spoken = s.allocated_vs_spoken
            spoken.total += 1
            spoken.correct += o.prediction is not None and o.prediction.predicted == it.next_speaker
            spoken.random += 1 / len(it.labels)
    return s


# -- predicting --------------------------------------------------------------------------------


async def predict_offline(todo: Sequence[Item]) -> list[Outcome]:
    out: list[Outcome] = []
    for start in range(0, len(todo), OFFLINE_SLICE):
        for it in todo[start : start + OFFLINE_SLICE]:
            out.append(
                Outcome(it, offline_next_speaker.predict_offline(it.recent, it.participants))
            )
        await asyncio.sleep(0)
    return out


async def predict_llm(
    client: ChatClient,
    todo: Sequence[Item],
    *,
    workers: int,
    method: str = "auto",
    samples: int = 20,
) -> list[Outcome]:
    """Every item through the model, ``workers`` calls at a time (the client limits them too).

    An answer that cannot be read even after the client's retry is recorded as a failure (scored
    wrong); any other error stops the run.

    Raises:
        LLMError: the server cannot be used (unreachable, key refused, kept failing...).
    """
    results: list[Outcome | None] = [None] * len(todo)
    queue: Iterator[int] = iter(range(len(todo)))

    async def worker() -> None:
        for index in queue:
            it = todo[index]
            try:
                pred = await next_speaker.predict_with_llm(
                    client, it.recent, it.participants, method=method, samples=samples
                )
                results[index] = Outcome(it, pred)
            except errors.LLMOutputError as exc:
                results[index] = Outcome(it, None, str(exc))

    await run_workers(worker, min(workers, len(todo)))
    return [o for o in results if o is not None]


# -- output ------------------------------------------------------------------------------------


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _cell(value: float | None, tally: Tally | None = None, correct: int | None = None) -> str:
    if value is None:
        return "–"
    if tally is not None and correct is not None:
        return f"{value:.3f} ({correct}/{tally.total})"
    return f"{value:.3f}"


def render_table(
    scores: Scores, *, corpus: str, predictor: str, conversations: int, notes: Sequence[str] = ()
) -> str:
    """The result in the layout of the paper's Table 1, with the paper's figures for reference."""
    s = scores
    tallies = (s.overall, s.self_selection, s.allocated)
    ours = [
        ("1", predictor, *(_cell(t.accuracy, t, t.correct) for t in tallies)),
        (
            "2",
            "random guess (uniform over names + anyone)",
            *(_cell(t.random_accuracy) for t in tallies),
        ),
        ("3", "always anyone", *(_cell(t.anyone_accuracy, t, t.anyone) for t in tallies)),
    ]
    paper = [("", label, _cell(o), _cell(se), _cell(a)) for label, o, se, a in PAPER_ROWS]
    header = ("#", "Predictor", "Overall", "Self", "Alloc")
    rows = [header, *ours, *paper]
    w = [max(len(r[i]) for r in rows) for i in range(5)]

    def line(r: Sequence[str]) -> str:
        return f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:>{w[2]}}  {r[3]:>{w[3]}}  {r[4]:>{w[4]}}"

    rule = "-" * len(line(header))
    return "\n".join(
        [
            f"Next-speaker accuracy on {corpus}",
            f"{_count(s.overall.total, 'prediction')} in {_count(conversations, 'conversation')}:"
            f" {s.self_selection.total} self-selection, {s.allocated.total} allocated."
            ' Labels: a participant\'s name, or "anyone".',
            "",
            line(header),
            rule,
            *(line(r) for r in ours),
            rule,
            "The paper's Table 1, measured on the MPC corpus (for reference, not this corpus):",
            *(line(r) for r in paper),
            "",
            *notes,
        ]
    )


def score_notes(scores: Scores) -> list[str]:
    """The notes under the table: what the columns mean, allocated turns taken by someone else,
    where the probabilities came from, and answers that could not be read."""
    s = scores
    notes = [
        "Self: turns after a message addressed to all (gold label: anyone). Alloc: turns after a"
        " message addressed to someone (gold label: the addressee), as the paper labels them.",
    ]
    if s.taken_by_other:
        spoken = s.allocated_vs_spoken
        notes.append(
            f"{s.taken_by_other} of the {s.allocated.total} allocated turns were taken by someone"
            " other than the addressee; scored against who actually spoke next, Alloc would be"
            f" {_cell(spoken.accuracy, spoken, spoken.correct)}."
        )
    methods = ", ".join(f"{m} {n}" for m, n in sorted(s.methods.items()))
    notes.append(f"Probabilities from: {methods or 'none'}.")
    if s.failures:
        notes.append(f"{s.failures} answers could not be read (scored wrong).")
    return notes


def _tally_json(t: Tally) -> dict[str, Any]:
    return {
        "accuracy": t.accuracy,
        "correct": t.correct,
        "total": t.total,
        "random": t.random_accuracy,
        "always_anyone": t.anyone_accuracy,
    }


def to_json(
    scores: Scores,
    outcomes: Sequence[Outcome],
    *,
    corpus: str,
    engine: str,
    model: str,
    conversations: int,
    usage: domain.Usage | None,
) -> dict[str, Any]:
    """The result for scripts: the tallies, baselines, the paper's rows and every prediction."""
    s = scores
    return {
        "corpus": corpus,
        "engine": engine,
        "model": model,
        "conversations": conversations,
        "predictions": s.overall.total,
        "overall": _tally_json(s.overall),
        "self": _tally_json(s.self_selection),
        "allocated": _tally_json(s.allocated),
        "allocated_taken_by_other": s.taken_by_other,
        "allocated_vs_next_speaker": _tally_json(s.allocated_vs_spoken),
        "methods": dict(sorted(s.methods.items())),
        "failures": s.failures,
        "paper": [
            {"model": label.removeprefix("paper: "), "overall": o, "self": se, "allocated": a}
            for label, o, se, a in PAPER_ROWS
        ],
        "usage": usage.model_dump() if usage is not None else None,
        "items": [
            {
                "conversation": o.item.conversation,
                "line": o.item.line,
                "kind": o.item.kind,
                "gold": o.item.gold,
                "next_speaker": o.item.next_speaker,
                "predicted": o.prediction.predicted if o.prediction else None,
                "correct": o.correct,
                "probability_of_gold": (
                    o.prediction.probabilities.get(o.item.gold) if o.prediction else None
                ),
                "method": o.prediction.method if o.prediction else None,
                "error": o.error or None,
            }
            for o in outcomes
        ],
    }
