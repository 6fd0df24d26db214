"""Thoughts pane: the selected participant's inner thoughts as live, sortable bubbles.

Each bubble shows the thought's id (black badge), saliency (white badge), motivation score (red
badge), System 1/2, a "retained" tag when its latest evaluation re-scored an older thought, the
thought text and the stimuli it came from. Expressed thoughts are tinted and link to the message
that said them. Clicking a bubble asks the engine to make the agent say it now, right-clicking
explains the evaluation, and the ✕ button asks to delete it. The pane never changes the engine:
it emits ``force_express_requested`` / ``delete_requested`` / ``message_focus_requested``.

Bubbles are updated in place; only a change that moves a bubble in the current sort order moves
its widget, so sessions with hundreds of thoughts stay cheap. Each participant gets a page of
bubbles the first time they are selected, which is then kept up to date: switching participants
does not rebuild anything and keeps each page's scroll position.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QStackedWidget, QVBoxLayout

from playground import domain, events
from playground.domain.refs import ref_id
from playground.history.ledger import ThoughtLedger
from ui.bridge import EngineBridge
from ui.panes.decisions.evaluation_popup import EvaluationPopup
from ui.panes.hidden_state.hidden_state_pane import HiddenStatePane
from ui.panes.participants.participant_pane import ParticipantPane
from ui.panes.thoughts.thought_bubble import NONE_PLACEHOLDER, STYLE, ThoughtBubble
from ui.panes.thoughts.thought_page import AgentPage, width_needed
from ui.panes.thoughts.thought_stimuli import ThoughtStimuli
from ui.panes.thoughts.thoughts_header import ThoughtsHeader
from ui.selection import SelectedParticipant
from ui.widgets.deferred import Deferred
from ui.widgets.placeholder import placeholder_label


class ThoughtsPane(ParticipantPane):
    """The right-hand pane: the selected participant's inner thoughts, live.

    The pane keeps no state of its own about thoughts: it applies each thought event to a
    :class:`ThoughtLedger` (:attr:`ledger`), the engine's one fold of thoughts (a replay hands it
    one folded from the log, :meth:`load_thoughts`), and renders what the ledger answers: every
    thought, its evaluations, whether it was retained, its score and the step it was scored at,
    which message said it, and the order by score. It shows the selected participant only. Call
    :meth:`reset` when a new session starts.

    Args:
        bridge: Source of engine events.
        selection: Which participant to follow; also used to focus stimuli across panes.
        parent: Optional parent widget.

    Attributes:
        header: The title, the count and the sort (:class:`ThoughtsHeader`).
        sort_combo: "Newest first" or "Highest score" (the header's).
        stimuli: What the bubbles' stimuli say, and which one has the focus.
    """

    force_express_requested = Signal(str, int)  # agent, thought id
    delete_requested = Signal(str, int)  # agent, thought id
    message_focus_requested = Signal(int)  # message id

    def _setup(self, bridge: EngineBridge, selection: SelectedParticipant) -> None:
        # Everything the pane knows, per agent.
        self.ledger = ThoughtLedger()
        self.stimuli = ThoughtStimuli(selection, self)
        self._released: list[tuple[object, ...]] = []  # see _forget
        # What is on screen (and, from the base, whose: ``_agent``).
        self._pages: dict[str, AgentPage] = {}
        self._fill = Deferred(self._fill_pages, self)
        #: Bubbles offer ✕ (not in a replay or an ended session: see :meth:`set_live`).
        self.deletable = True
        self._stepped = False  # a trigger fired during a rebuild (see _on_step)
        self._needed: int | None = None  # see minimumSizeHint

        # The title has the pane's whole width (elided, with a tooltip, when narrow); the count
        # and the sort share the line below.
        self.header = ThoughtsHeader(self)
        self.sort_combo = self.header.sort_combo
        self.sort_combo.currentIndexChanged.connect(self._on_sort_changed)

        header = QHBoxLayout()
        header.addWidget(self.header.count, 1)
        header.addWidget(self.sort_combo)

        self._stack = QStackedWidget(self)
        self._stack.setStyleSheet(STYLE)
        self._none_page = placeholder_label(NONE_PLACEHOLDER)
        self._none_page.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self._stack.addWidget(self._none_page)
        #: A simulated user's page: its hidden states instead of thoughts (docs/spec.md §2.5).
        self.hidden = HiddenStatePane(bridge, self)
        self._stack.addWidget(self.hidden)
        bridge.hidden_state_recorded.connect(self._on_hidden_state)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addWidget(self.header.title)
        layout.addLayout(header)
        layout.addWidget(self._stack, 1)

        bridge.participant_joined.connect(self._on_participant_joined)
        bridge.policy_changed.connect(self._on_policy_changed)
        bridge.memories_retrieved.connect(self.stimuli.retrieved)
        bridge.memory_changed.connect(self.stimuli.memory_changed)
        bridge.message_posted.connect(self.stimuli.posted)
        bridge.thought_formed.connect(self._on_thought_formed)
        bridge.thought_evaluated.connect(self._on_thought_evaluated)
        bridge.thought_expressed.connect(self._on_thought_expressed)
        bridge.thought_deleted.connect(self._on_thought_deleted)
        bridge.thought_restored.connect(self._on_thought_restored)
        bridge.trigger_fired.connect(self._on_step)

    def minimumSizeHint(self) -> QSize:
        """At least as wide as a bubble with its ✕ and "scored at step N" beside the scroll bar
        (:func:`~ui.panes.thoughts.thought_page.width_needed`): narrower, a page would clip them."""
        hint = super().minimumSizeHint()
        if self._needed is None:
            m = self.layout().contentsMargins()  # type: ignore[union-attr]
            self._needed = width_needed(self._stack) + m.left() + m.right()
        return QSize(max(hint.width(), self._needed), hint.height())

    # -- public --------------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget every thought, evaluation, page and popup (a new session starts)."""
        self._close_popups()
        self._fill.cancel()
        self._stack.setCurrentWidget(self._none_page)
        for page in self._pages.values():
            self._stack.removeWidget(page)
            page.deleteLater()
        self._pages.clear()
        self._forget()
        self.hidden.reset()
        self._released.clear()
        self.stimuli.pinned_ref = ""
        self.stimuli.focus_ref = ""
        self._agent = ""
        self._show_agent(self._selection.name)

    def begin_rebuild(self) -> None:
        """Forget the data but keep the bubbles: the events that follow describe a whole new
        state (a replay jumping to another moment), and :meth:`end_rebuild` then drops the
        bubbles of thoughts that no longer exist. Bubbles of thoughts that still exist are
        updated in place, so a jump costs what changed, not what is shown."""
        self._close_popups()
        self._forget()
        self.hidden.begin_rebuild()
        self._rebuilding = True

    def _close_popups(self) -> None:
        # Popups are the pane's own children (a search of the whole tree of bubbles would take
        # a millisecond per replay jump).
        for popup in self.findChildren(
            EvaluationPopup, options=Qt.FindChildOption.FindDirectChildrenOnly
        ):
            popup.close()

    def _forget(self) -> None:
        # Fresh collections. The old ones (a whole moment's thoughts: thousands of objects in a
        # long replay) are let go with the deferred fill, not in the middle of a jump.
        self._released.append((self.ledger, *self.stimuli.forget()))
        del self._released[:-4]  # a long scrub, with no fill in between
        self.ledger = ThoughtLedger()
        self.header.forget()

    def load_thoughts(self, ledger: ThoughtLedger) -> None:
        """During a rebuild, take every participant's thoughts at the new moment in one go (the
        pane keeps the ledger and folds the thought events into it from then on)."""
        self.ledger = ledger

    def load_messages(self, messages: list[domain.Message]) -> None:
        """During a rebuild, take the messages up to the new moment in one go (the texts that
        stimulus tooltips quote), instead of one ``message_posted`` each."""
        self.stimuli.load_messages(messages)
        self.hidden.load_messages(messages)

    def end_rebuild(self) -> None:
        """Show the rebuilt state: on the page in view, the bubbles that can be seen at once
        now and the others a moment later (:data:`ui.widgets.deferred.FILL_DELAY_MS`); hidden pages
        entirely then."""
        self._rebuilding = False
        self.hidden.end_rebuild()
        if self.hidden.is_simulated(self._agent) != (self._stack.currentWidget() is self.hidden):
            self._show_agent(self._agent)  # the moment shown has (or lost) this simulated user
        current = self._stack.currentWidget()
        for page in self._pages.values():
            page.place(page.top(), in_view=page is current)
        self._fill.schedule()
        self._update_header()
        if self._stepped:  # the moment shown is another step: its stimuli are others
            self._stepped = False
            self.stimuli.clear()

    def set_live(self, live: bool) -> None:
        """A live session (True) or one that cannot change any more, an ended one or a replay
        (False): only a live session's thoughts can be deleted, so only there bubbles offer ✕."""
        if live == self.deletable:
            return
        self.deletable = live
        for page in self._pages.values():
            page.set_deletable(live)

    def _on_step(self, _event: object = None) -> None:
        """A new step (trigger): a stimulus pinned or hovered at the last one is not one of
        this step's, so its highlight goes (in every pane)."""
        if self._rebuilding:  # the selection is silent during a rebuild: at its end
            self._stepped = True
            return
        self.stimuli.clear()

    def _fill_pages(self) -> None:
        for page in self._pages.values():
            page.fill()
        self._released.clear()

    def reserve(self) -> bool:
        """Make one bubble of the page in view ahead of need (see :meth:`AgentPage.reserve`);
        True once it has them all."""
        page = self._pages.get(self._agent)
        return page is None or page.reserve()

    def settle(self) -> None:
        """Finish any work put off after a replay jump (the bubbles out of view)."""
        self._fill.flush()

    def bubbles(self) -> list[ThoughtBubble]:
        """The bubbles on screen, in display order."""
        self.settle()
        page = self._pages.get(self._agent)
        return [page.bubbles[tid] for tid in page.order] if page is not None else []

    def bubble(self, thought_id: int) -> ThoughtBubble | None:
        """The selected participant's bubble for ``thought_id``, if shown."""
        self.settle()
        page = self._pages.get(self._agent)
        return page.bubbles.get(thought_id) if page is not None else None

    # -- bridge events -------------------------------------------------------------------------

    def _on_participant_joined(self, e: events.ParticipantJoined) -> None:
        self.header.joined(e)
        if e.name == self._agent and not self._rebuilding:
            self._update_header()

    def _on_policy_changed(self, name: str, policy: str) -> None:
        self.header.policy_changed(name, policy)
        if name == self._agent and not self._rebuilding:
            self._update_header()

    def _on_thought_formed(self, e: events.ThoughtFormed) -> None:
        self.ledger.apply([e])
        self._show_thought(e.thought)

    def _show_thought(self, thought: domain.Thought) -> None:
        """A thought the ledger has now (formed, or restored): its bubble, if its page exists."""
        agent = thought.agent
        if self._rebuilding:
            return
        self.settle()
        page = self._pages.get(agent)
        if page is None:
            return
        bubble = page.bubbles.get(thought.id)
        if bubble is None:
            bubble = page.add(thought)
            if agent == self._agent and ref_id(self.stimuli.focus_ref, "thought") == thought.id:
                page.highlight(thought.id, scroll=False)
        else:
            page.refresh(thought.id)
            page.reposition(thought.id)
        if agent == self._agent:
            self._update_header()

    def _on_thought_evaluated(self, e: events.ThoughtEvaluated) -> None:
        agent, tid = e.agent, e.evaluation.thought_id
        latest = self.ledger.latest_scored_step(agent)
        self.ledger.apply([e])
        if self._rebuilding:
            return
        self.settle()
        page = self._pages.get(agent)
        if page is not None and tid in page.bubbles:
            page.refresh(tid)  # a re-scored thought also has a new saliency
            if page.by_score and self.ledger.latest_scored_step(agent) != latest:
                page.reorder()  # the scores of earlier steps are no longer current
            else:
                page.reposition(tid)

    def _on_thought_expressed(self, e: events.ThoughtExpressed) -> None:
        self.ledger.apply([e])
        self.settle()
        page = self._pages.get(e.agent)
        if page is not None:
            page.refresh(e.thought_id)
        if e.agent == self._agent:
            self._update_header()

    def _on_thought_deleted(self, e: events.ThoughtDeleted) -> None:
        agent, tid = e.agent, e.thought_id
        latest = self.ledger.latest_scored_step(agent)
        self.ledger.apply([e])  # the ledger keeps what it had aside, for an undo
        self.settle()
        page = self._pages.get(agent)
        if page is not None:
            page.remove(tid)
            if page.by_score and self.ledger.latest_scored_step(agent) != latest:
                page.reorder()
        if agent == self._agent:
            self._update_header()

    def _on_thought_restored(self, e: events.ThoughtRestored) -> None:
        """An undone deletion: the bubble is back, with the evaluations it had."""
        self.ledger.apply([e])
        self._show_thought(e.thought)

    # -- selection -----------------------------------------------------------------------------

    def _show_agent(self, name: str) -> None:
        """Show ``name``'s page, building it on the first visit."""
        self.settle()
        self._agent = name
        self.stimuli.unpin()
        by_score = self.header.by_score
        self.hidden.show_participant(name)
        if not name:
            self._stack.setCurrentWidget(self._none_page)
        elif self.hidden.is_simulated(name):
            self._stack.setCurrentWidget(self.hidden)
        else:
            page = self._pages.get(name)
            if page is None:
                page = self._new_page(name)
                page.build(by_score)
                self._pages[name] = page
                self._stack.addWidget(page)
            else:
                page.resort(by_score)
            self._stack.setCurrentWidget(page)
            page.highlight(ref_id(self.stimuli.focus_ref, "thought"), scroll=True)
        self._update_header()

    def _new_page(self, name: str) -> AgentPage:
        """``name``'s page, its bubbles' requests connected to the pane's."""
        page = AgentPage(
            name,
            lambda: self.ledger,
            popup_parent=self,
            deletable=self.deletable,
        )
        page.force_requested.connect(self.force_express_requested.emit)
        page.delete_requested.connect(self.delete_requested.emit)
        page.message_clicked.connect(self.message_focus_requested.emit)
        page.stimulus_hovered.connect(self._on_stimulus_hovered)
        page.stimulus_clicked.connect(self._on_stimulus_clicked)
        return page

    def _on_sort_changed(self) -> None:
        self.settle()
        page = self._pages.get(self._agent)
        if page is not None:  # the other pages re-sort when shown again
            page.resort(self.header.by_score)

    def _on_stimulus_focused(self, ref: str) -> None:
        self.stimuli.focus_ref = ref
        self.settle()
        page = self._pages.get(self._agent)
        if page is not None:
            page.highlight(ref_id(ref, "thought"), scroll=self.stimuli.scroll_on_focus)

    def _on_hidden_state(self, e: events.HiddenStateRecorded) -> None:
        """A simulated user's first state can precede its page: show the page then."""
        if e.participant == self._agent and not self._rebuilding:
            if self._stack.currentWidget() is not self.hidden:
                self._show_agent(self._agent)
            else:
                self._update_header()

    def _update_header(self) -> None:
        name = self._agent
        if name and self.hidden.is_simulated(name):
            self.header.show_simulated(name, self.hidden.turns(name))
        else:
            self.header.show_thoughts(
                name, self.ledger.thoughts.get(name, {}), self._pages.get(name)
            )

    # -- user actions --------------------------------------------------------------------------

    def _on_stimulus_hovered(self, ref: str) -> None:
        self.stimuli.hovered(self._agent, ref, self.ledger.thoughts.get(self._agent, {}))

    def _on_stimulus_clicked(self, ref: str) -> None:
        self.stimuli.clicked(ref)

    def _describe_ref(self, ref: str) -> str:
        """What ``ref`` says in the selected participant's bubbles (their tooltip)."""
        return self.stimuli.describe(self._agent, ref, self.ledger.thoughts.get(self._agent, {}))
