"""The thoughts of every participant at one moment, folded from the thought events.

A replay that jumps needs, for each participant, every thought that exists at that moment, its
evaluations (oldest first), whether the latest one re-scored a retained thought, its latest
saliency and the message that expressed it. That is the fold of the events ``thought_formed``,
``thought_evaluated``, ``thought_expressed``, ``thought_deleted`` and ``thought_restored`` (an
undone deletion) up to the moment: most of a long session's events. :class:`playground.history.recording.Recording` keeps ledgers at checkpoints, so a
jump folds only the events since the nearest one.
"""

from __future__ import annotations

from typing import Any

from playground import domain

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

    def apply(self, events: list[Any]) -> None:
        """Fold thought events, in order (other kinds are ignored)."""
        all_thoughts, all_evaluations, all_retained = (
            self.thoughts,
            self.evaluations,
            self.retained,
        )
        for e in events:
            kind = e.kind
            if kind == "thought_formed":
                th = e.thought
                all_thoughts.setdefault(th.agent, {})[th.id] = th
                continue
            if kind not in THOUGHT_KINDS:
                continue
            agent = e.agent
            thoughts = all_thoughts.setdefault(agent, {})
            if kind == "thought_evaluated":
                ev = e.evaluation
                tid = ev.thought_id
                all_evaluations.setdefault(agent, {}).setdefault(tid, []).append(ev)
                all_retained.setdefault(agent, {})[tid] = e.retained
                if (
                    e.saliency is not None
                    and tid in thoughts
                    and thoughts[tid].saliency != e.saliency
                ):
                    thoughts[tid] = updated(thoughts[tid], saliency=e.saliency)
            elif kind == "thought_expressed":
                if e.thought_id in thoughts:
                    thoughts[e.thought_id] = updated(
                        thoughts[e.thought_id], expressed_in=e.message_id
                    )
            elif kind == "thought_deleted":
                gone = thoughts.pop(e.thought_id, None)
                evs = all_evaluations.get(agent, {}).pop(e.thought_id, None)
                kept = all_retained.get(agent, {}).pop(e.thought_id, None)
                if gone is not None:
                    self.deleted.setdefault(agent, {})[e.thought_id] = (gone, evs, kept)
            else:  # thought_restored: the thought as the event carries it, its evaluations back
                th = e.thought
                thoughts[th.id] = th
                _, evs, kept = self.deleted.get(agent, {}).pop(th.id, (th, None, None))
                if evs is not None:
                    all_evaluations.setdefault(agent, {})[th.id] = evs
                if kept is not None:
                    all_retained.setdefault(agent, {})[th.id] = kept
