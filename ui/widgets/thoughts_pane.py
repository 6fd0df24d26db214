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

import heapq
from operator import attrgetter

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QStackedWidget,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from playground import domain
from playground.history.ledger import ThoughtLedger
from ui.bridge import EngineBridge
from ui.deferred import Deferred
from ui.selection import SelectedParticipant
from ui.widgets.elided_label import ElidedLabel
from ui.widgets.evaluation_popup import EvaluationPopup
from ui.widgets.hidden_state_pane import HiddenStatePane
from ui.widgets.thought_bubble import (
    BASELINE_PLACEHOLDER,
    EMPTY_PLACEHOLDER,
    HUMAN_PLACEHOLDER,
    NONE_PLACEHOLDER,
    POLICY_LABELS,
    SORT_NEWEST,
    SORT_SCORE,
    SORT_SCORE_HELP,
    STYLE,
    SortKey,
    ThoughtBubble,
)
from ui.widgets.thought_page import MAX_BUBBLES, AgentPage, placeholder_label, score_key


def _thought_id(ref: str) -> int | None:
    kind, _, num = ref.partition(":")
    return int(num) if kind == "thought" and num.isdigit() else None


class ThoughtsPane(QWidget):
    """The right-hand pane: the selected participant's inner thoughts, live.

    The pane keeps, per participant, every thought, its evaluations (oldest first), whether the
    latest evaluation re-scored a retained thought, and which message expressed it. It shows the
    selected participant only. Call :meth:`reset` when a new session starts.

    Args:
        bridge: Source of engine events.
        selection: Which participant to follow; also used to focus stimuli across panes.
        parent: Optional parent widget.

    Attributes:
        sort_combo: "Newest first" or "Highest score".
    """

    force_express_requested = Signal(str, int)  # agent, thought id
    delete_requested = Signal(str, int)  # agent, thought id
    message_focus_requested = Signal(int)  # message id

    def __init__(
        self,
        bridge: EngineBridge,
        selection: SelectedParticipant,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._selection = selection
        # Everything the pane knows, per agent.
        self._thoughts: dict[str, dict[int, domain.Thought]] = {}
        self._evaluations: dict[str, dict[int, list[domain.Evaluation]]] = {}
        self._retained: dict[str, dict[int, bool]] = {}
        self._humans: set[str] = set()
        self._policies: dict[str, str] = {}
        self._ref_texts: dict[str, dict[str, str]] = {}  # agent -> memory ref -> text
        self._messages: dict[int, domain.Message] = {}  # by id, for stimulus tooltips
        self._scored_steps: dict[str, int | None] = {}  # agent -> latest step it scored at
        self._released: list[tuple[object, ...]] = []  # see _forget
        # What is on screen.
        self._agent = ""
        self._pages: dict[str, AgentPage] = {}
        self._rebuilding = False
        self._focus_ref = ""
        self._pinned_ref = ""
        self._hover_ref = ""
        self._scroll_on_focus = True
        self._fill = Deferred(self._fill_pages, self)
        #: Bubbles offer ✕ (not in a replay or an ended session: see :meth:`set_live`).
        self.deletable = True
        self._stepped = False  # a trigger fired during a rebuild (see _on_step)

        # The title has the pane's whole width (elided, with a tooltip, when narrow); the count
        # and the sort share the line below.
        self._title = ElidedLabel("", self)
        font = self._title.font()
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self._title.setFont(font)
        self._count = QLabel(self)
        self._count.setStyleSheet("color: #607d8b;")
        self._count.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._count.setWordWrap(True)  # beside the sort menu: wraps rather than being cut
        self.sort_combo = QComboBox(self)
        self.sort_combo.addItems([SORT_NEWEST, SORT_SCORE])
        self.sort_combo.setItemData(0, "Newest thought first", Qt.ItemDataRole.ToolTipRole)
        self.sort_combo.setItemData(1, SORT_SCORE_HELP, Qt.ItemDataRole.ToolTipRole)
        self.sort_combo.setToolTip(f"Order of the thoughts.\n{SORT_NEWEST}; or\n{SORT_SCORE_HELP}")
        self.sort_combo.currentIndexChanged.connect(self._on_sort_changed)

        header = QHBoxLayout()
        header.addWidget(self._count, 1)
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
        layout.addWidget(self._title)
        layout.addLayout(header)
        layout.addWidget(self._stack, 1)

        bridge.participant_joined.connect(self._on_participant_joined)
        bridge.policy_changed.connect(self._on_policy_changed)
        bridge.memories_retrieved.connect(self._on_memories_retrieved)
        bridge.memory_changed.connect(self._on_memory_changed)
        bridge.message_posted.connect(self._on_message_posted)
        bridge.thought_formed.connect(self._on_thought_formed)
        bridge.thought_evaluated.connect(self._on_thought_evaluated)
        bridge.any_event.connect(self._on_event)
        bridge.thought_expressed.connect(self._on_thought_expressed)
        bridge.thought_deleted.connect(self._on_thought_deleted)
        # What a deleted thought had, for an undo: (agent, id) -> (evaluations, retained).
        self._deleted_data: dict[tuple[str, int], tuple[object, object]] = {}
        bridge.thought_restored.connect(self._on_thought_restored)
        bridge.trigger_fired.connect(self._on_step)
        selection.changed.connect(self._show_agent)
        selection.stimulus_focused.connect(self._on_stimulus_focused)

        self._show_agent(selection.name)

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
        self._pinned_ref = ""
        self._focus_ref = ""
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
        self._released.append(
            (self._thoughts, self._evaluations, self._retained, self._ref_texts, self._messages)
        )
        del self._released[:-4]  # a long scrub, with no fill in between
        self._thoughts = {}
        self._evaluations = {}
        self._retained = {}
        self._humans = set()
        self._policies = {}
        self._ref_texts = {}
        self._messages = {}
        self._scored_steps = {}

    def load_thoughts(self, ledger: ThoughtLedger) -> None:
        """During a rebuild, take every participant's thoughts at the new moment in one go (the
        pane keeps the ledger's dictionaries and updates them from then on)."""
        self._thoughts = ledger.thoughts
        self._evaluations = ledger.evaluations
        self._retained = ledger.retained
        self._scored_steps = {}

    def load_messages(self, messages: list[domain.Message]) -> None:
        """During a rebuild, take the messages up to the new moment in one go (the texts that
        stimulus tooltips quote), instead of one ``message_posted`` each."""
        self._messages.update(zip(map(attrgetter("id"), messages), messages, strict=True))
        self.hidden.load_messages(messages)

    def end_rebuild(self) -> None:
        """Show the rebuilt state: on the page in view, the bubbles that can be seen at once
        now and the others a moment later (:data:`ui.deferred.FILL_DELAY_MS`); hidden pages
        entirely then."""
        self._rebuilding = False
        self.hidden.end_rebuild()
        if self.hidden.is_simulated(self._agent) != (self._stack.currentWidget() is self.hidden):
            self._show_agent(self._agent)  # the moment shown has (or lost) this simulated user
        current = self._stack.currentWidget()
        for agent, page in self._pages.items():
            page.place(self._top(agent, page.by_score), self, in_view=page is current)
        self._fill.schedule()
        self._update_header()
        if self._stepped:  # the moment shown is another step: its stimuli are others
            self._stepped = False
            self._clear_focus()

    def set_live(self, live: bool) -> None:
        """A live session (True) or one that cannot change any more, an ended one or a replay
        (False): only a live session's thoughts can be deleted, so only there bubbles offer ✕."""
        if live == self.deletable:
            return
        self.deletable = live
        for page in self._pages.values():
            for bubble in page.content.findChildren(
                ThoughtBubble, options=Qt.FindChildOption.FindDirectChildrenOnly
            ):
                bubble.set_deletable(live)

    def _on_step(self, _event: object = None) -> None:
        """A new step (trigger): a stimulus pinned or hovered at the last one is not one of
        this step's, so its highlight goes (in every pane)."""
        if self._rebuilding:  # the selection is silent during a rebuild: at its end
            self._stepped = True
            return
        self._clear_focus()

    def _clear_focus(self) -> None:
        self._pinned_ref = ""
        self._hover_ref = ""
        if self._focus_ref:
            self._selection.focus_stimulus("")

    def _fill_pages(self) -> None:
        for page in self._pages.values():
            page.fill(self)
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

    def _on_participant_joined(self, e) -> None:  # events.ParticipantJoined
        if e.participant_kind == "human":
            self._humans.add(e.name)
        else:
            self._humans.discard(e.name)
            self._policies[e.name] = getattr(e, "policy", "inner-thoughts")
        if e.name == self._agent and not self._rebuilding:
            self._update_header()

    def _on_policy_changed(self, name: str, policy: str) -> None:
        self._policies[name] = policy
        if name == self._agent and not self._rebuilding:
            self._update_header()

    def _on_memories_retrieved(self, agent: str, stimuli: list, step: int) -> None:
        texts = self._ref_texts.setdefault(agent, {})
        for s in stimuli:
            texts[s.ref] = s.text

    def _on_memory_changed(self, agent: str, change: str, memory: domain.MemoryItem) -> None:
        texts = self._ref_texts.setdefault(agent, {})
        if change == "deleted":
            texts.pop(memory.ref, None)
        else:
            texts[memory.ref] = memory.text

    def _on_message_posted(self, message: domain.Message) -> None:
        self._messages[message.id] = message

    def _on_thought_formed(self, thought: domain.Thought) -> None:
        agent = thought.agent
        self._thoughts.setdefault(agent, {})[thought.id] = thought
        if self._rebuilding:
            return
        self.settle()
        page = self._pages.get(agent)
        if page is None:
            return
        bubble = page.bubbles.get(thought.id)
        if bubble is None:
            bubble = page.add(thought)
            if agent == self._agent and _thought_id(self._focus_ref) == thought.id:
                page.highlight(thought.id, scroll=False)
        else:
            bubble.set_thought(thought)
            page.reposition(thought.id)
        if agent == self._agent:
            self._update_header()

    def _on_thought_evaluated(self, agent: str, ev: domain.Evaluation, retained: bool) -> None:
        self._evaluations_of(agent, ev.thought_id).append(ev)
        self._retained.setdefault(agent, {})[ev.thought_id] = retained
        latest = self.scored_step(agent)
        new_step = latest is None or ev.step > latest
        if new_step:
            self._scored_steps[agent] = ev.step
        if self._rebuilding:
            return
        self.settle()
        page = self._pages.get(agent)
        bubble = page.bubbles.get(ev.thought_id) if page is not None else None
        if page is not None and bubble is not None:
            bubble.set_evaluation(retained)
            if new_step and page.by_score:
                page.reorder()  # the scores of earlier steps are no longer current
            else:
                page.reposition(ev.thought_id)

    def _on_event(self, e: object) -> None:
        """A re-scored thought may have a new saliency: keep its badge current."""
        if getattr(e, "kind", "") != "thought_evaluated" or e.saliency is None:  # type: ignore[attr-defined]
            return
        agent, tid = e.agent, e.evaluation.thought_id  # type: ignore[attr-defined]
        thoughts = self._thoughts.get(agent, {})
        if tid in thoughts and thoughts[tid].saliency != e.saliency:  # type: ignore[attr-defined]
            thoughts[tid] = thoughts[tid].model_copy(update={"saliency": e.saliency})  # type: ignore[attr-defined]
            self.settle()
            page = self._pages.get(agent)
            bubble = page.bubbles.get(tid) if page is not None else None
            if bubble is not None:
                bubble.set_thought(thoughts[tid])

    def _on_thought_expressed(self, agent: str, tid: int, mid: int, forced: bool) -> None:
        thoughts = self._thoughts.get(agent, {})
        if tid not in thoughts:
            return
        thought = thoughts[tid].model_copy(update={"expressed_in": mid})
        thoughts[tid] = thought
        self.settle()
        page = self._pages.get(agent)
        bubble = page.bubbles.get(tid) if page is not None else None
        if bubble is not None:
            bubble.set_thought(thought)
        if agent == self._agent:
            self._update_header()

    def _on_thought_deleted(self, agent: str, tid: int) -> None:
        self._thoughts.get(agent, {}).pop(tid, None)
        evs = self._evaluations.get(agent, {}).pop(tid, None)
        kept = self._retained.get(agent, {}).pop(tid, None)
        self._deleted_data[(agent, tid)] = (evs, kept)  # for an undo (thought_restored)
        latest = self._scored_steps.pop(agent, None)  # worked out again from what is left
        self.settle()
        page = self._pages.get(agent)
        if page is not None:
            page.remove(tid)
            if page.by_score and self.scored_step(agent) != latest:
                page.reorder()
        if agent == self._agent:
            self._update_header()

    def _on_thought_restored(self, agent: str, thought: domain.Thought) -> None:
        """An undone deletion: the bubble is back, with the evaluations it had."""
        evs, kept = self._deleted_data.pop((agent, thought.id), (None, None))
        if isinstance(evs, list):
            self._evaluations.setdefault(agent, {})[thought.id] = evs
        if isinstance(kept, bool):
            self._retained.setdefault(agent, {})[thought.id] = kept
        self._scored_steps.pop(agent, None)  # worked out again, its evaluations back
        self._on_thought_formed(thought)

    def _top(self, agent: str, by_score: bool) -> list[int]:
        """The ids of ``agent``'s first :data:`MAX_BUBBLES` thoughts in the sort, in order."""
        thoughts = self._thoughts.get(agent, {})
        if not by_score:  # newest first (as ``_data_key``); ids come mostly in order: O(n)
            return sorted(thoughts, reverse=True)[:MAX_BUBBLES]
        return heapq.nsmallest(
            MAX_BUBBLES, thoughts, key=lambda t: self._data_key(agent, t, by_score)
        )

    def _data_key(self, agent: str, tid: int, by_score: bool) -> SortKey:
        """A thought's place in the sort, from the data alone (as ``AgentPage.sort_key``)."""
        if by_score:
            evs = self._evaluations.get(agent, {}).get(tid)
            thought = self._thoughts.get(agent, {}).get(tid)
            score = evs[-1].score if evs else (thought.score if thought else None)
            step = evs[-1].step if evs else None
            return score_key(score, step, self.scored_step(agent), tid)
        return (-tid,)

    def scored_step(self, agent: str) -> int | None:
        """The latest step at which ``agent`` scored any thought (None before any)."""
        if agent not in self._scored_steps:
            steps = [evs[-1].step for evs in self._evaluations.get(agent, {}).values() if evs]
            self._scored_steps[agent] = max(steps, default=None)
        return self._scored_steps[agent]

    def _evaluations_of(self, agent: str, tid: int) -> list[domain.Evaluation]:
        return self._evaluations.setdefault(agent, {}).setdefault(tid, [])

    # -- selection -----------------------------------------------------------------------------

    def _show_agent(self, name: str) -> None:
        """Show ``name``'s page, building it on the first visit."""
        self.settle()
        self._agent = name
        self._pinned_ref = ""
        self._hover_ref = ""
        by_score = self.sort_combo.currentText() == SORT_SCORE
        self.hidden.show_participant(name)
        if not name:
            self._stack.setCurrentWidget(self._none_page)
        elif self.hidden.is_simulated(name):
            self._stack.setCurrentWidget(self.hidden)
        else:
            page = self._pages.get(name)
            if page is None:
                page = AgentPage(self, name)
                thoughts = sorted(self._thoughts.get(name, {}).values(), key=lambda t: t.id)
                page.build(thoughts, by_score)
                self._pages[name] = page
                self._stack.addWidget(page)
            else:
                page.resort(by_score)
            self._stack.setCurrentWidget(page)
            page.highlight(_thought_id(self._focus_ref), scroll=True)
        self._update_header()

    def _on_sort_changed(self) -> None:
        self.settle()
        page = self._pages.get(self._agent)
        if page is not None:  # the other pages re-sort when shown again
            page.resort(self.sort_combo.currentText() == SORT_SCORE)

    def _on_stimulus_focused(self, ref: str) -> None:
        self._focus_ref = ref
        self.settle()
        page = self._pages.get(self._agent)
        if page is not None:
            page.highlight(_thought_id(ref), scroll=self._scroll_on_focus)

    def _on_hidden_state(self, e: object) -> None:
        """A simulated user's first state can precede its page: show the page then."""
        if getattr(e, "participant", "") == self._agent and not self._rebuilding:
            if self._stack.currentWidget() is not self.hidden:
                self._show_agent(self._agent)
            else:
                self._update_header()

    def _update_header(self) -> None:
        name = self._agent
        simulated = bool(name) and self.hidden.is_simulated(name)
        self.sort_combo.setVisible(not simulated)
        if simulated:
            self._title.setText(f"Inner state — {name} (simulated user)")
            n = self.hidden.turns(name)
            self._count.setText(f"{n} turn{'' if n == 1 else 's'} · satisfaction and clarity 0–1")
            return
        self._title.setText(f"Inner thoughts — {name}" if name else "Inner thoughts")
        page = self._pages.get(name)
        if page is None:
            self._count.setText("")
            return
        thoughts = self._thoughts.get(name, {})
        n = len(thoughts)
        said = n - list(map(attrgetter("expressed_in"), thoughts.values())).count(None)
        noun = "thought" if n == 1 else "thoughts"
        shown = len(page.bubbles)
        self._count.setText(
            f"{n} {noun}"
            + (f" · {said} said" if said else "")
            + (f" · top {shown} shown" if shown < n else "")
        )
        human = name in self._humans and n == 0
        policy = POLICY_LABELS.get(self._policies.get(name, ""))
        page.placeholder.setText(
            HUMAN_PLACEHOLDER
            if human
            else BASELINE_PLACEHOLDER.format(name, policy)
            if policy and n == 0
            else EMPTY_PLACEHOLDER
        )

    # -- user actions --------------------------------------------------------------------------

    def _force(self, bubble: ThoughtBubble) -> None:
        if not bubble.is_expressed():
            self.force_express_requested.emit(bubble.thought.agent, bubble.thought_id)

    def _delete(self, bubble: ThoughtBubble) -> None:
        self.delete_requested.emit(bubble.thought.agent, bubble.thought_id)

    def _focus_from_here(self, ref: str, *, scroll: bool) -> None:
        self._scroll_on_focus = scroll
        try:
            self._selection.focus_stimulus(ref)
        finally:
            self._scroll_on_focus = True

    def _on_stimulus_hovered(self, ref: str) -> None:
        if ref == self._hover_ref:
            return  # a link's own "left" and the label's leave event both report ""
        self._hover_ref = ref
        if ref:
            # Hovering must not scroll the pane away from under the mouse.
            self._focus_from_here(ref, scroll=False)
            text = self._describe_ref(ref)
            if text:
                QToolTip.showText(QCursor.pos(), text, self)
        else:
            self._focus_from_here(self._pinned_ref, scroll=False)

    def _on_stimulus_clicked(self, ref: str) -> None:
        """A click pins the focus on a stimulus (a second click on it unpins)."""
        self._pinned_ref = "" if self._pinned_ref == ref else ref
        self._focus_from_here(self._pinned_ref, scroll=True)

    def _describe_ref(self, ref: str) -> str:
        tid = _thought_id(ref)
        if tid is not None:
            thought = self._thoughts.get(self._agent, {}).get(tid)
            return f"{ref}: {thought.text}" if thought else f"{ref} (deleted or not shown)"
        if ref.startswith("message:"):
            num = ref.partition(":")[2]
            msg = self._messages.get(int(num)) if num.isdigit() else None
            return f"{ref} — {msg.speaker}: {msg.text}" if msg else ""
        text = self._ref_texts.get(self._agent, {}).get(ref)
        return f"{ref}: {text}" if text else ""
