"""Memory pane: the selected participant's long-term memory, with add/edit/delete and retrieval highlights.

Each memory is shown with its kind and weight. Memories retrieved at the participant's latest trigger
are tinted pale yellow, carry their saliency (a random pull: "random" and its raw cosine) and are sorted
first; the rest follow by id. A stimulus focused elsewhere in the UI ("memory:N") is highlighted
more strongly and scrolled into view. The pane never changes memory itself: it emits
``add_requested`` / ``edit_requested`` / ``delete_requested`` for whoever owns the engine.
The rows themselves are :class:`ui.panes.memory.memory_table.MemoryTable`'s. What the pane
shows comes from a :class:`playground.history.memory_ledger.MemoryLedger`, the engine's fold of
the memory events, which the pane applies each event to; the pane works out nothing itself.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from playground import domain, events
from playground.domain.refs import ref_id
from playground.history.memory_ledger import MemoryChangeKind, MemoryLedger
from ui.bridge import EngineBridge
from ui.panes.memory.memory_edit import MemoryEditDialog
from ui.panes.memory.memory_table import MemoryTable
from ui.panes.memory.profile_view import ProfileView
from ui.panes.participants.participant_pane import ParticipantPane
from ui.selection import SelectedParticipant
from ui.widgets.elided_label import ElidedLabel
from ui.widgets.placeholder import placeholder_label

HUMAN_PLACEHOLDER = "Humans have no memory in the engine."
NONE_PLACEHOLDER = "Select a participant to see their long-term memory."


class MemoryPane(ParticipantPane):
    """Long-term memory of the selected participant (see the module docstring)."""

    add_requested = Signal(str, str, str, float)  # agent, kind, text, weight
    edit_requested = Signal(str, int, str, str, float)  # agent, memory id, kind, text, weight
    delete_requested = Signal(str, int)  # agent, memory id

    def _setup(self, bridge: EngineBridge, selection: SelectedParticipant) -> None:
        #: Every participant's memories and latest retrieval, as the engine folds them.
        self.ledger = MemoryLedger()
        self._dialog: MemoryEditDialog | None = None
        #: Memories can be changed (False in a replay or an ended session: see set_live).
        self._live = True

        self._build()

        bridge.memory_changed.connect(self._on_memory_changed)
        bridge.memories_retrieved.connect(self._on_memories_retrieved)
        bridge.participant_joined.connect(self._on_participant_joined)

    # ----------------------------------------------------------------------------- construction

    def _build(self) -> None:
        self.title_label = ElidedLabel()  # one line; elided, with a tooltip, when narrow
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.count_label = QLabel()
        self.count_label.setStyleSheet("color: #666666;")
        self.count_label.setWordWrap(True)

        self.table = MemoryTable(lambda: self.ledger.hits(self._agent))
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.itemDoubleClicked.connect(lambda _item: self.open_edit_dialog())

        self.placeholder = placeholder_label(style="color: #777777; padding: 12px;")

        self.stack = QStackedWidget()
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.placeholder)
        self.profile_view = ProfileView()
        self.stack.addWidget(self.profile_view)

        self.add_button = QPushButton("Add…")
        self.edit_button = QPushButton("Edit…")
        self.delete_button = QPushButton("Delete")
        self.add_button.setToolTip("Add a memory to this participant")
        self.edit_button.setToolTip("Edit the selected memory (or double-click it)")
        self.delete_button.setToolTip("Delete the selected memory")
        self.add_button.clicked.connect(lambda: self.open_add_dialog())
        self.edit_button.clicked.connect(lambda: self.open_edit_dialog())
        self.delete_button.clicked.connect(self._delete_selected)
        self.buttons_row = QWidget()
        buttons = QHBoxLayout(self.buttons_row)
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.edit_button)
        buttons.addWidget(self.delete_button)
        buttons.addStretch(1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title_label)
        layout.addWidget(self.count_label)
        layout.addWidget(self.stack, 1)
        layout.addWidget(self.buttons_row)

    # ----------------------------------------------------------------------------------- public

    def reset(self) -> None:
        """Forget every participant's memories (a new session); the selection is kept."""
        self.ledger = MemoryLedger()
        self.table.focus_id = None
        self._close_dialog()
        self._repopulate()

    def begin_rebuild(self) -> None:
        """A replay jumps: forget the data but leave the table until :meth:`end_rebuild`, which
        fills it once instead of row by row."""
        self.ledger = MemoryLedger()
        self._close_dialog()
        self._rebuilding = True

    def end_rebuild(self) -> None:
        self._rebuilding = False
        self._repopulate()

    def rows(self) -> list[dict]:
        """The shown rows in display order."""
        items = self.ledger.memories.get(self._agent, {})
        retrieved = self.ledger.hits(self._agent)
        out = []
        for mid in self.table.order:
            item = items[mid]
            hit = retrieved.get(mid)
            out.append(
                {
                    "id": mid,
                    "kind": item.kind,
                    "text": item.text,
                    "weight": item.weight,
                    "saliency": hit.saliency if hit else None,
                    "highlighted": hit is not None,
                }
            )
        return out

    @property
    def focused_id(self) -> int | None:
        """The memory focused through ``selection.stimulus_focused``, if it is shown."""
        return self.table.focus_id

    def selected_id(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        row = rows[0].row()
        order = self.table.order
        if self.table.rowCount() != len(order) or not 0 <= row < len(order):
            return None  # mid-update: the table and its ``order`` are out of step
        mid = order[row]
        return mid if mid in self.ledger.memories.get(self._agent, {}) else None

    def open_add_dialog(self) -> MemoryEditDialog:
        agent = self._agent
        dialog = self._new_dialog(MemoryEditDialog(f"Add memory — {agent}", parent=self))
        dialog.accepted.connect(
            lambda: self.add_requested.emit(agent, dialog.kind(), dialog.text(), dialog.weight())
        )
        dialog.show()
        return dialog

    def open_edit_dialog(self) -> MemoryEditDialog | None:
        mid = self.selected_id()
        if mid is None or not self._editable() or not self._live:  # double-click: not here
            return None
        agent = self._agent
        memory = self.ledger.memories[agent][mid]
        dialog = self._new_dialog(
            MemoryEditDialog(f"Edit memory {mid} — {agent}", memory=memory, parent=self)
        )
        dialog.accepted.connect(
            lambda: self.edit_requested.emit(
                agent, mid, dialog.kind(), dialog.text(), dialog.weight()
            )
        )
        dialog.show()
        return dialog

    # ------------------------------------------------------------------------------ bridge slots

    def _on_participant_joined(self, event: events.ParticipantJoined) -> None:
        self.ledger.joined(event)
        if event.name == self._agent and not self._rebuilding:
            self._repopulate()

    def _on_memory_changed(
        self, agent: str, change: MemoryChangeKind, memory: domain.MemoryItem
    ) -> None:
        shown = agent == self._agent and agent not in self.ledger.humans
        was_selected = shown and change == "deleted" and self.selected_id() == memory.id
        self.ledger.changed(agent, change, memory)
        if not shown or self._rebuilding:
            return
        self.setUpdatesEnabled(False)
        try:
            if change == "deleted":
                self.table.remove(memory.id)
                if was_selected:
                    # Qt would move the selection to a neighbour; Delete must not cascade.
                    self.table.clearSelection()
                if self.table.focus_id == memory.id:
                    self.table.focus_id = None
            elif memory.id in self.table.order:
                self.table.fill_row(self.table.order.index(memory.id), memory)
            else:
                self.table.insert(memory)
        finally:
            self.setUpdatesEnabled(True)
        self._update_labels()
        self._update_buttons()

    def _on_memories_retrieved(self, agent: str, stimuli: list[domain.Stimulus], step: int) -> None:
        previous = self.ledger.hits(agent)  # the retrieval replaces it, leaving it as it was
        self.ledger.retrieve(agent, stimuli, step)
        current = self.ledger.hits(agent)
        if agent != self._agent or agent in self.ledger.humans or self._rebuilding:
            return
        # Only rows whose highlight changed move; the rest stay where they are.
        items = self.ledger.memories.get(agent, {})
        selected = self.selected_id()
        self.setUpdatesEnabled(False)
        try:
            for mid in set(previous) | set(current):
                if mid in self.table.order:
                    self.table.remove(mid)
                if mid in items:
                    self.table.insert(items[mid])
            self.table.restore_selection(selected)
        finally:
            self.setUpdatesEnabled(True)
        self._update_labels()

    # --------------------------------------------------------------------------- selection slots

    def _show_agent(self, name: str) -> None:
        self._agent = name
        self.table.focus_id = None
        self._repopulate()

    def _on_stimulus_focused(self, ref: str) -> None:
        mid = ref_id(ref, "memory")
        self.table.set_focus(mid if mid is not None and mid in self.table.order else None)

    # ----------------------------------------------------------------------------------- rows

    def _editable(self) -> bool:
        return bool(self._agent) and self._agent not in self.ledger.humans | set(
            self.ledger.profiles
        )

    def set_live(self, live: bool) -> None:
        """A live session (True), or one nothing can change any more (an ended session, a
        replay): Add…, Edit… and Delete are offered only in a live session."""
        if live != self._live:
            self._live = live
            self._update_buttons()

    def _repopulate(self) -> None:
        """Rebuild the table for the selected participant (selection change, reset)."""
        selected = self.selected_id() if self.table.order else None
        items = self.ledger.memories.get(self._agent, {}) if self._editable() else {}
        if self.table.focus_id not in items:
            self.table.focus_id = None
        self.setUpdatesEnabled(False)
        try:
            self.table.show_all(items.values(), selected)
        finally:
            self.setUpdatesEnabled(True)
        if not self._agent:
            self.placeholder.setText(NONE_PLACEHOLDER)
            self.stack.setCurrentWidget(self.placeholder)
        elif self._agent in self.ledger.humans:
            self.placeholder.setText(HUMAN_PLACEHOLDER)
            self.stack.setCurrentWidget(self.placeholder)
        elif self._agent in self.ledger.profiles:
            self.profile_view.show_profile(self.ledger.profiles[self._agent])
            self.stack.setCurrentWidget(self.profile_view)
        else:
            self.stack.setCurrentWidget(self.table)
        self._update_labels()
        self._update_buttons()

    # -------------------------------------------------------------------------------- controls

    def _update_labels(self) -> None:
        if not self._agent:
            self.title_label.setText("Long-term memory")
            self.count_label.setText("")
            return
        if self._agent in self.ledger.profiles:
            self.title_label.setText(f"Private profile — {self._agent} (simulated user)")
            self.count_label.setText("")
            return
        self.title_label.setText(f"Long-term memory — {self._agent}")
        if self._agent in self.ledger.humans:
            self.count_label.setText("")
            return
        n = len(self.table.order)
        text = f"{n} memor{'y' if n == 1 else 'ies'}"
        retrieved = self.ledger.retrieved_count(self._agent)
        if retrieved is not None:
            text += f" · {retrieved[0]} retrieved at step {retrieved[1]}"
        self.count_label.setText(text)

    def _update_buttons(self) -> None:
        editable = self._editable() and self._live
        has_row = editable and self.selected_id() is not None
        # A simulated user has a profile (with its own Edit…), not a memory.
        self.buttons_row.setHidden(self._agent in self.ledger.profiles)
        self.add_button.setEnabled(editable)
        self.edit_button.setEnabled(has_row)
        self.delete_button.setEnabled(has_row)

    def _delete_selected(self) -> None:
        mid = self.selected_id()
        if mid is None or not self._editable() or not self._live:
            return
        self.delete_requested.emit(self._agent, mid)

    def _new_dialog(self, dialog: MemoryEditDialog) -> MemoryEditDialog:
        self._close_dialog()
        self._dialog = dialog
        dialog.setModal(False)
        return dialog

    def _close_dialog(self) -> None:
        if self._dialog is not None:
            old, self._dialog = self._dialog, None
            old.close()
            old.deleteLater()
