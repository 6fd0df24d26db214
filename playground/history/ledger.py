"""The thoughts of every participant at one moment, folded from the thought events.

A replay that jumps needs, for each participant, every thought that exists at that moment, its
evaluations (oldest first), whether the latest one re-scored a retained thought, its latest
saliency and the message that expressed it. That is the fold of the events ``thought_formed``,
``thought_evaluated``, ``thought_expressed``, ``thought_deleted`` and ``thought_restored`` (an
undone deletion) up to the moment: most of a long session's events.
:class:`playground.history.recording.Recording` keeps ledgers at checkpoints, so a jump folds only
the events since the nearest one.
"""

from __future__ import annotations

from collections.abc import Iterable
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

    def copy(self) -> ThoughtLedger:
        """An independent copy (evaluation lists are copied: the live panes append to them)."""
        other = ThoughtLedger()
        other.thoughts = {a: dict(d) for a, d in self.thoughts.items()}
        other.evaluations = {
            a: {t: list(evs) for t, evs in d.items()} for a, d in self.evaluations.items()
        }
        other.retained = {a: dict(d) for a, d in self.retained.items()}
        other.deleted = {a: dict(d) for a, d in self.deleted.items()}
        return other

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
                case events.ThoughtRestored():  # as the event carries it, its evaluations back
                    agent, th = e.agent, e.thought
                    all_thoughts.setdefault(agent, {})[th.id] = th
                    _, evs, kept = self.deleted.get(agent, {}).pop(th.id, (th, None, None))
                    if evs is not None:
                        all_evaluations.setdefault(agent, {})[th.id] = evs
                    if kept is not None:
                        all_retained.setdefault(agent, {})[th.id] = kept
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
