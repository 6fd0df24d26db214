"""EngineBridge: re-emits engine events as Qt signals so widgets never see the event bus."""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

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
    presence_changed = Signal(str, bool)  # a remote human, whether their browser is connected
    trigger_fired = Signal(object)  # events.TriggerFired
    message_posted = Signal(object)  # domain.Message
    message_interpreted = Signal(object)  # domain.Interpretation
    turn_type_predicted = Signal(object)  # domain.TurnType
    next_speaker_predicted = Signal(object)  # events.NextSpeakerPredicted
    policy_changed = Signal(str, str)  # name, policy
    condition_changed = Signal(object)  # events.ConditionChanged (the session's new condition)
    proactivity_changed = Signal(str, object)  # name, proactivity settings (dict)
    memories_retrieved = Signal(str, object, int)  # agent, list[domain.Stimulus], step
    memory_changed = Signal(
        str, str, object
    )  # agent, "added"|"edited"|"deleted", domain.MemoryItem
    # A thought's events go out whole: the thoughts pane folds them into its ThoughtLedger.
    thought_formed = Signal(object)  # events.ThoughtFormed
    thought_evaluated = Signal(object)  # events.ThoughtEvaluated (with the new saliency)
    thought_refused = Signal(object)  # events.ThoughtRefused (a placeholder, never evaluated)
    thought_expressed = Signal(object)  # events.ThoughtExpressed
    thought_deleted = Signal(object)  # events.ThoughtDeleted
    thought_restored = Signal(object)  # events.ThoughtRestored (an undone deletion)
    decision_made = Signal(object)  # domain.Decision
    usage_recorded = Signal(object)  # domain.Usage
    error_occurred = Signal(str, str)  # where, message
    annotation_added = Signal(object)  # events.AnnotationAdded
    hidden_state_recorded = Signal(object)  # events.HiddenStateRecorded (a simulated user's)
    trigger_timed = Signal(object)  # events.TriggerTimed (where a trigger's time went)

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

    def dispatch(self, e: events.Event) -> None:
        self.any_event.emit(e)
        match e:
            case events.SessionStarted():
                self.session_started.emit(e)
            case events.SessionFinished():
                self.session_finished.emit(e.status, e.reason)
            case events.ParticipantJoined():
                self.participant_joined.emit(e)
            case events.ParticipantLeft():
                self.participant_left.emit(e.name)
            case events.ParticipantStateChanged():
                self.state_changed.emit(e.name, e.state)
            case events.PresenceChanged():
                self.presence_changed.emit(e.name, e.online)
            case events.TriggerFired():
                self.trigger_fired.emit(e)
            case events.MessagePosted():
                self.message_posted.emit(e.message)
            case events.MessageInterpreted():
                self.message_interpreted.emit(e.interpretation)
            case events.TurnTypePredicted():
                self.turn_type_predicted.emit(e.turn_type)
            case events.NextSpeakerPredicted():
                self.next_speaker_predicted.emit(e)
            case events.PolicyChanged():
                self.policy_changed.emit(e.name, e.policy)
            case events.ConditionChanged():
                self.condition_changed.emit(e)
            case events.ProactivityChanged():
                self.proactivity_changed.emit(e.name, e.proactivity)
            case events.MemoriesRetrieved():
                self.memories_retrieved.emit(e.agent, e.stimuli, e.step)
            case events.MemoryChanged():
                self.memory_changed.emit(e.agent, e.change, e.memory)
            case events.ThoughtFormed():
                self.thought_formed.emit(e)
            case events.ThoughtEvaluated():
                self.thought_evaluated.emit(e)
            case events.ThoughtRefused():
                self.thought_refused.emit(e)
            case events.ThoughtExpressed():
                self.thought_expressed.emit(e)
            case events.ThoughtDeleted():
                self.thought_deleted.emit(e)
            case events.ThoughtRestored():
                self.thought_restored.emit(e)
            case events.DecisionMade():
                self.decision_made.emit(e.decision)
            case events.UsageRecorded():
                self.usage_recorded.emit(e.usage)
            case events.ErrorOccurred():
                self.error_occurred.emit(e.where, e.message)
            case events.AnnotationAdded():
                self.annotation_added.emit(e)
            case events.HiddenStateRecorded():
                self.hidden_state_recorded.emit(e)
            case events.TriggerTimed():
                self.trigger_timed.emit(e)
            case events.LabelRecorded():
                pass  # a participant's answer: saved by the recorder, nothing on screen changes
            case events.MessageEmbedded():
                pass  # a message's vector: kept by the recorder, nothing on screen changes
            case _:
                assert_never(e)
