"""The thoughts of every participant at one moment, folded from the thought events.

A replay that jumps needs, for each participant, every thought that exists at that moment, its
evaluations (oldest first), whether the latest one re-scored a retained thought, its latest
saliency and the message that expressed it. That is the fold of the events ``thought_formed``,
``thought_evaluated``, ``thought_expressed``, ``thought_deleted`` and ``thought_restored`` (an
undone deletion) up to the moment: most of a long session's events.
:class:`playground.history.recording.Recording` keeps ledgers at checkpoints, so a jump folds only
the events since the nearest one.

It is the one fold of thoughts: the live window's thoughts pane folds the same events into a
ledger as they arrive and renders what the ledger answers (:meth:`ThoughtLedger.state`, a thought's
current score and the step it was scored at, the participant's latest scoring step, the order
"score, latest step first"); a replay hands the pane a ledger folded here. Nothing about thoughts
is worked out in the window.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import assert_never

from playground import domain, events

THOUGHT_KINDS = frozenset(
    {
        "thought_formed",
        "thought_evaluated",
        "thought_expressed",
        "thought_deleted",
        "thought_restored",
    }
)

#: What a deleted thought leaves aside for an undo: the thought, its evaluations, whether retained.
Deleted = tuple[domain.Thought, list[domain.Evaluation] | None, bool | None]

#: A thought's place in the order "score, latest step first" (smaller comes first).
ScoreRank = tuple[float, float, int]


def current_score(
    thought: domain.Thought, evaluations: Sequence[domain.Evaluation]
) -> float | None:
    """The thought's score now: its latest evaluation's, else the score it was formed with (None
    before either)."""
    return evaluations[-1].score if evaluations else thought.score


def scored_at(evaluations: Sequence[domain.Evaluation]) -> int | None:
    """The step the thought's current score was given at: its latest evaluation's (None before
    any)."""
    return evaluations[-1].step if evaluations else None


def score_rank(score: float | None, step: int | None, latest: int | None, tid: int) -> ScoreRank:
    """A thought's place when sorted by score: first the thoughts scored at the participant's
    latest evaluation step (``latest``), highest score first; then those last scored at an
    earlier step, by score; then those never scored, newest first.

    Args:
        score: The thought's current score (:func:`current_score`).
        step: The step it was given at (:func:`scored_at`).
        latest: The participant's latest scoring step (:meth:`ThoughtLedger.latest_scored_step`).
        tid: The thought's id (newer first among equals).

    Returns:
        A key: smaller sorts first.
    """
    if score is None:
        return (2.0, 0.0, -tid)
    return (0.0 if step is not None and step == latest else 1.0, -score, -tid)


@dataclass(frozen=True, slots=True)
class ThoughtState:
    """One thought as it stands in the ledger: what a bubble shows.

    Attributes:
        thought: The thought (its latest saliency, and ``expressed_in`` once said).
        evaluations: Its evaluations, oldest first.
        retained: Whether its latest evaluation re-scored it as a retained thought.
        score: Its current score (:func:`current_score`).
        scored_at: The step that score was given at (:func:`scored_at`).
    """

    thought: domain.Thought
    evaluations: tuple[domain.Evaluation, ...]
    retained: bool
    score: float | None
    scored_at: int | None


def updated(thought: domain.Thought, **changes: object) -> domain.Thought:
    """A copy of an already valid thought with some fields changed, without validating it again
    (a long replay makes thousands)."""
    return domain.Thought.model_construct(
        _fields_set=thought.model_fields_set | set(changes), **{**thought.__dict__, **changes}
    )


class ThoughtLedger:
    """Per participant: thoughts by id, their evaluations and whether each was last re-scored as a
    retained thought. Thoughts are replaced, never changed in place, so copies can share them.

    Deleted thoughts are kept aside (``deleted``) with their evaluations, so a ``thought_restored``
    event (the user undid the deletion) brings them back whole."""

    def __init__(self) -> None:
        self.thoughts: dict[str, dict[int, domain.Thought]] = {}
        self.evaluations: dict[str, dict[int, list[domain.Evaluation]]] = {}
        self.retained: dict[str, dict[int, bool]] = {}
        self.deleted: dict[str, dict[int, Deleted]] = {}
        # agent -> the latest step it scored any thought at, worked out when first asked (a
        # deletion or an undo drops the agent's entry: worked out again from what is left).
        self._latest: dict[str, int | None] = {}

    def copy(self) -> ThoughtLedger:
        """An independent copy (evaluation lists are copied: the live panes append to them)."""
        other = ThoughtLedger()
        other.thoughts = {a: dict(d) for a, d in self.thoughts.items()}
        other.evaluations = {
            a: {t: list(evs) for t, evs in d.items()} for a, d in self.evaluations.items()
        }
        other.retained = {a: dict(d) for a, d in self.retained.items()}
        other.deleted = {a: dict(d) for a, d in self.deleted.items()}
        other._latest = dict(self._latest)
        return other

    # -- what the window shows -------------------------------------------------------------------

    def evaluations_of(self, agent: str, tid: int) -> Sequence[domain.Evaluation]:
        """The thought's evaluations, oldest first (empty before any). Read only: the ledger
        extends the list as evaluations arrive."""
        return self.evaluations.get(agent, {}).get(tid, ())

    def is_retained(self, agent: str, tid: int) -> bool:
        """Whether the thought's latest evaluation re-scored it as a retained thought."""
        return self.retained.get(agent, {}).get(tid, False)

    def score(self, agent: str, tid: int) -> float | None:
        """The thought's current score (:func:`current_score`); None for an unknown thought."""
        thought = self.thoughts.get(agent, {}).get(tid)
        evs = self.evaluations_of(agent, tid)
        if thought is None:
            return evs[-1].score if evs else None
        return current_score(thought, evs)

    def scored_at(self, agent: str, tid: int) -> int | None:
        """The step the thought's current score was given at (None before any evaluation)."""
        return scored_at(self.evaluations_of(agent, tid))

    def latest_scored_step(self, agent: str) -> int | None:
        """The latest step at which ``agent`` scored any thought it still has (None before any):
        what sorting by score puts first."""
        if agent not in self._latest:
            steps = [evs[-1].step for evs in self.evaluations.get(agent, {}).values() if evs]
            self._latest[agent] = max(steps, default=None)
        return self._latest[agent]

    def rank(self, agent: str, tid: int) -> ScoreRank:
        """The thought's place in the order "score, latest step first" (:func:`score_rank`)."""
        return score_rank(
            self.score(agent, tid), self.scored_at(agent, tid), self.latest_scored_step(agent), tid
        )

    def state(self, agent: str, tid: int) -> ThoughtState:
        """The thought ``tid`` of ``agent`` as it stands (KeyError for one the ledger lacks)."""
        thought = self.thoughts[agent][tid]
        evs = tuple(self.evaluations_of(agent, tid))
        return ThoughtState(
            thought, evs, self.is_retained(agent, tid), current_score(thought, evs), scored_at(evs)
        )

    def states(self) -> dict[str, list[ThoughtState]]:
        """Every participant's thoughts as they stand, by id (participants without any left out):
        two ledgers that answer the same show the same bubbles."""
        return {
            agent: [self.state(agent, tid) for tid in sorted(thoughts)]
            for agent, thoughts in sorted(self.thoughts.items())
            if thoughts
        }

    def apply(self, folded: Iterable[events.Event]) -> None:
        """Fold thought events, in order; the other kinds change no thought and are passed over
        (each has its case, so a new kind must be placed here before it type-checks)."""
        all_thoughts, all_evaluations, all_retained = (
            self.thoughts,
            self.evaluations,
            self.retained,
        )
        for e in folded:
            match e:
                case events.ThoughtFormed():
                    th = e.thought
                    all_thoughts.setdefault(th.agent, {})[th.id] = th
                case events.ThoughtEvaluated():
                    thoughts = all_thoughts.setdefault(e.agent, {})
                    ev = e.evaluation
                    tid = ev.thought_id
                    all_evaluations.setdefault(e.agent, {}).setdefault(tid, []).append(ev)
                    all_retained.setdefault(e.agent, {})[tid] = e.retained
                    latest = self._latest.get(e.agent)
                    if e.agent in self._latest and (latest is None or ev.step > latest):
                        self._latest[e.agent] = ev.step
                    if (
                        e.saliency is not None
                        and tid in thoughts
                        and thoughts[tid].saliency != e.saliency
                    ):
                        thoughts[tid] = updated(thoughts[tid], saliency=e.saliency)
                case events.ThoughtExpressed():
                    thoughts = all_thoughts.setdefault(e.agent, {})
                    if e.thought_id in thoughts:
                        thoughts[e.thought_id] = updated(
                            thoughts[e.thought_id], expressed_in=e.message_id
                        )
                case events.ThoughtDeleted():
                    agent = e.agent
                    gone = all_thoughts.setdefault(agent, {}).pop(e.thought_id, None)
                    evs = all_evaluations.get(agent, {}).pop(e.thought_id, None)
                    kept = all_retained.get(agent, {}).pop(e.thought_id, None)
                    if gone is not None:
                        self.deleted.setdefault(agent, {})[e.thought_id] = (gone, evs, kept)
                    self._latest.pop(agent, None)  # its evaluations went with it
                case events.ThoughtRestored():  # as the event carries it, its evaluations back
                    agent, th = e.agent, e.thought
                    all_thoughts.setdefault(agent, {})[th.id] = th
                    _, evs, kept = self.deleted.get(agent, {}).pop(th.id, (th, None, None))
                    if evs is not None:
                        all_evaluations.setdefault(agent, {})[th.id] = evs
                    if kept is not None:
                        all_retained.setdefault(agent, {})[th.id] = kept
                    self._latest.pop(agent, None)  # its evaluations are back
                case (
                    events.SessionStarted()
                    | events.ParticipantJoined()
                    | events.ParticipantLeft()
                    | events.MemoryChanged()
                    | events.TriggerFired()
                    | events.MessagePosted()
                    | events.MessageInterpreted()
                    | events.TurnTypePredicted()
                    | events.NextSpeakerPredicted()
                    | events.PolicyChanged()
                    | events.ConditionChanged()
                    | events.MemoriesRetrieved()
                    | events.ThoughtRefused()  # a refused draft never became a thought
                    | events.DecisionMade()
                    | events.ParticipantStateChanged()
                    | events.PresenceChanged()
                    | events.UsageRecorded()
                    | events.ErrorOccurred()
                    | events.AnnotationAdded()
                    | events.LabelRecorded()
                    | events.ProactivityChanged()
                    | events.HiddenStateRecorded()
                    | events.MessageEmbedded()
                    | events.TriggerTimed()
                    | events.SessionFinished()
                ):
                    pass  # not about a thought
                case _:
                    assert_never(e)
