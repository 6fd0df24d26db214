"""EngineBridge: re-emits engine events as Qt signals so widgets never see the event bus."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from playground import events


class EngineBridge(QObject):
    """One Qt signal per event family; every event also goes out on ``event``.

    Events are published on the asyncio loop thread, which under qasync is the GUI thread, so
    the signals are emitted directly.
    """

    any_event = Signal(object)  # not "event": that would shadow QObject.event()
    session_started = Signal(object)  # events.SessionStarted
    session_finished = Signal(str, str)  # status, reason
    participant_joined = Signal(object)  # events.ParticipantJoined
    participant_left = Signal(str)
    state_changed = Signal(str, str)  # name, state
    trigger_fired = Signal(object)  # events.TriggerFired
    message_posted = Signal(object)  # domain.Message
    message_interpreted = Signal(object)  # domain.Interpretation
    turn_type_predicted = Signal(object)  # domain.TurnType
    next_speaker_predicted = Signal(object)  # events.NextSpeakerPredicted
    policy_changed = Signal(str, str)  # name, policy
    proactivity_changed = Signal(str, object)  # name, proactivity settings (dict)
    memories_retrieved = Signal(str, object, int)  # agent, list[domain.Stimulus], step
    memory_changed = Signal(
        str, str, object
    )  # agent, "added"|"edited"|"deleted", domain.MemoryItem
    thought_formed = Signal(object)  # domain.Thought
    thought_evaluated = Signal(str, object, bool)  # agent, domain.Evaluation, retained
    thought_refused = Signal(object)  # events.ThoughtRefused (a placeholder, never evaluated)
    thought_expressed = Signal(str, int, int, bool)  # agent, thought id, message id, forced
    thought_deleted = Signal(str, int)  # agent, thought id
    thought_restored = Signal(str, object)  # agent, domain.Thought (an undone deletion)
    decision_made = Signal(object)  # domain.Decision
    usage_recorded = Signal(object)  # domain.Usage
    error_occurred = Signal(str, str)  # where, message
    annotation_added = Signal(object)  # events.AnnotationAdded
    hidden_state_recorded = Signal(object)  # events.HiddenStateRecorded (a simulated user's)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe: Callable[[], None] | None = None

    def attach(self, bus: events.EventBus) -> None:
        """Follow a (new) session's bus; the previous one is let go."""
        self.detach()
        self._unsubscribe = bus.subscribe(self.dispatch)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def dispatch(self, e: Any) -> None:  # noqa: C901 - one flat match over event kinds
        self.any_event.emit(e)
        match e.kind:
            case "session_started":
                self.session_started.emit(e)
            case "session_finished":
                self.session_finished.emit(e.status, e.reason)
            case "participant_joined":
                self.participant_joined.emit(e)
            case "participant_left":
                self.participant_left.emit(e.name)
            case "participant_state_changed":
                self.state_changed.emit(e.name, e.state)
            case "trigger_fired":
                self.trigger_fired.emit(e)
            case "message_posted":
                self.message_posted.emit(e.message)
            case "message_interpreted":
                self.message_interpreted.emit(e.interpretation)
            case "turn_type_predicted":
                self.turn_type_predicted.emit(e.turn_type)
            case "next_speaker_predicted":
                self.next_speaker_predicted.emit(e)
            case "policy_changed":
                self.policy_changed.emit(e.name, e.policy)
            case "proactivity_changed":
                self.proactivity_changed.emit(e.name, e.proactivity)
            case "memories_retrieved":
                self.memories_retrieved.emit(e.agent, e.stimuli, e.step)
            case "memory_changed":
                self.memory_changed.emit(e.agent, e.change, e.memory)
            case "thought_formed":
                self.thought_formed.emit(e.thought)
            case "thought_evaluated":
                self.thought_evaluated.emit(e.agent, e.evaluation, e.retained)
            case "thought_refused":
                self.thought_refused.emit(e)
            case "thought_expressed":
                self.thought_expressed.emit(e.agent, e.thought_id, e.message_id, e.forced)
            case "thought_deleted":
                self.thought_deleted.emit(e.agent, e.thought_id)
            case "thought_restored":
                self.thought_restored.emit(e.agent, e.thought)
            case "decision_made":
                self.decision_made.emit(e.decision)
            case "usage_recorded":
                self.usage_recorded.emit(e.usage)
            case "error_occurred":
                self.error_occurred.emit(e.where, e.message)
            case "annotation_added":
                self.annotation_added.emit(e)
            case "hidden_state_recorded":
                self.hidden_state_recorded.emit(e)
            case _:
                pass
