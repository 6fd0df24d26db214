"""Memory pane: the selected participant's long-term memory, with add/edit/delete and retrieval highlights.

Each memory is shown with its kind and weight. Memories retrieved at the participant's latest trigger
are tinted pale yellow, carry their saliency (a random pull: "random" and its raw cosine) and are sorted
first; the rest follow by id. A stimulus focused elsewhere in the UI ("memory:N") is highlighted
more strongly and scrolled into view. The pane never changes memory itself: it emits
``add_requested`` / ``edit_requested`` / ``delete_requested`` for whoever owns the engine.
"""

from __future__ import annotations

import bisect

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from playground import domain
from ui import theme
from ui.bridge import EngineBridge
from ui.selection import SelectedParticipant
from ui.storm.profile_view import ProfileView
from ui.widgets.elided_label import ElidedLabel

EDITABLE_KINDS = ("fact", "objective", "interest", "knowledge", "experience")
RETRIEVED_BG = "#fff3c4"
COLUMNS = ("Kind", "Weight", "Saliency", "Memory")
COL_KIND, COL_WEIGHT, COL_SALIENCY, COL_TEXT = range(4)
HUMAN_PLACEHOLDER = "Humans have no memory in the engine."
NONE_PLACEHOLDER = "Select a participant to see their long-term memory."
_TOP = Qt.AlignmentFlag.AlignTop
_ALIGN = {
    COL_KIND: _TOP | Qt.AlignmentFlag.AlignLeft,
    COL_WEIGHT: _TOP | Qt.AlignmentFlag.AlignRight,
    COL_SALIENCY: _TOP | Qt.AlignmentFlag.AlignRight,
    COL_TEXT: _TOP | Qt.AlignmentFlag.AlignLeft,
}

SortKey = tuple[int, float, int]
#: Narrowest the memory text column may get before the Weight column is hidden (px).
MIN_TEXT_WIDTH = 120


class MemoryEditDialog(QDialog):
    """Add or edit one memory: kind, text and weight. OK stays disabled while the text is blank."""

    def __init__(
        self,
        title: str,
        memory: domain.MemoryItem | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setMinimumWidth(360)

        self.kind_combo = QComboBox()
        self.kind_combo.addItems(EDITABLE_KINDS)
        self.text_edit = QPlainTextEdit()
        self.text_edit.setPlaceholderText("What the participant remembers…")
        self.text_edit.setTabChangesFocus(True)
        self.weight_spin = QDoubleSpinBox()
        self.weight_spin.setRange(0.0, 1.0)
        self.weight_spin.setSingleStep(0.05)
        self.weight_spin.setDecimals(2)
        self.weight_spin.setValue(1.0)

        if memory is not None:
            if self.kind_combo.findText(memory.kind) < 0:
                # Engine-made kinds (utterance, thought) are kept as they are when editing.
                self.kind_combo.addItem(memory.kind)
            self.kind_combo.setCurrentText(memory.kind)
            self.text_edit.setPlainText(memory.text)
            self.weight_spin.setValue(memory.weight)

        self.button_box = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = self.button_box.button(QDialogButtonBox.StandardButton.Ok)
        self.button_box.accepted.connect(self.accept)
        self.button_box.rejected.connect(self.reject)

        form = QFormLayout()
        form.addRow("Kind", self.kind_combo)
        form.addRow("Text", self.text_edit)
        form.addRow("Weight", self.weight_spin)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.button_box)

        self.text_edit.textChanged.connect(self._update_ok)
        self._update_ok()

    def kind(self) -> str:
        return self.kind_combo.currentText()

    def text(self) -> str:
        return self.text_edit.toPlainText().strip()

    def weight(self) -> float:
        return round(self.weight_spin.value(), 2)

    def accept(self) -> None:
        if not self.text():
            return
        super().accept()

    def _update_ok(self) -> None:
        self.ok_button.setEnabled(bool(self.text()))


class MemoryPane(QWidget):
    """Long-term memory of the selected participant (see the module docstring)."""

    add_requested = Signal(str, str, str, float)  # agent, kind, text, weight
    edit_requested = Signal(str, int, str, str, float)  # agent, memory id, kind, text, weight
    delete_requested = Signal(str, int)  # agent, memory id

    def __init__(
        self,
        bridge: EngineBridge,
        selection: SelectedParticipant,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._selection = selection
        self._memories: dict[str, dict[int, domain.MemoryItem]] = {}
        # agent -> memory id -> (saliency, random) at that agent's latest retrieval
        # (saliency, pulled in at random, a random pull's raw cosine to the latest utterance)
        self._retrieved: dict[str, dict[int, tuple[float, bool, float | None]]] = {}
        self._retrieved_step: dict[str, int] = {}
        self._humans: set[str] = set()
        #: Simulated users' private profiles (shown instead of a memory), by name.
        self._profiles: dict[str, object] = {}
        self._agent = selection.name
        self._focus_id: int | None = None
        self._rebuilding = False
        # Shown rows, in table order, with their sort keys (kept in step with the table).
        self._order: list[int] = []
        self._keys: list[SortKey] = []
        self._dialog: MemoryEditDialog | None = None
        #: Memories can be changed (False in a replay or an ended session: see set_live).
        self._live = True

        self._build()

        bridge.memory_changed.connect(self._on_memory_changed)
        bridge.memories_retrieved.connect(self._on_memories_retrieved)
        bridge.participant_joined.connect(self._on_participant_joined)
        selection.changed.connect(self._on_selection_changed)
        selection.stimulus_focused.connect(self._on_stimulus_focused)

        self._repopulate()

    # ----------------------------------------------------------------------------- construction

    def _build(self) -> None:
        self.title_label = ElidedLabel()  # one line; elided, with a tooltip, when narrow
        font = self.title_label.font()
        font.setBold(True)
        self.title_label.setFont(font)
        self.count_label = QLabel()
        self.count_label.setStyleSheet("color: #666666;")
        self.count_label.setWordWrap(True)

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setWordWrap(True)
        self.table.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.table.verticalHeader().setVisible(False)
        # Row heights are computed per changed row (ResizeToContents would re-measure all rows on
        # every change, and quadratically while filling); a width change re-measures them once.
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        header.setMinimumSectionSize(24)
        metrics = self.table.fontMetrics()
        pad = 12  # cell margins and the header's own padding
        widest = {
            COL_KIND: EDITABLE_KINDS + ("utterance", "thought", "Kind"),
            COL_WEIGHT: ("Weight", "1.00"),
            COL_SALIENCY: ("Saliency", "random", "cos -0.00", "0.00"),
        }
        #: The fixed columns' widths, also while one is hidden (its section size is 0 then).
        self._fixed_widths = {
            col: max(map(metrics.horizontalAdvance, texts)) + pad for col, texts in widest.items()
        }
        for col, width in self._fixed_widths.items():
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(col, width)
        # The memory text takes every spare pixel; see _fit_columns for narrow panes.
        header.setSectionResizeMode(COL_TEXT, QHeaderView.ResizeMode.Stretch)
        for col, tip in (
            (COL_WEIGHT, "How much the memory counts in retrieval (0–1)"),
            (COL_SALIENCY, "Saliency at the participant's latest retrieval"),
        ):
            self.table.horizontalHeaderItem(col).setToolTip(tip)  # type: ignore[union-attr]
        self.table.installEventFilter(self)
        self._relayout_timer = QTimer(self)
        self._relayout_timer.setSingleShot(True)
        self._relayout_timer.setInterval(30)
        self._relayout_timer.timeout.connect(self.table.resizeRowsToContents)
        header.sectionResized.connect(self._on_section_resized)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.itemDoubleClicked.connect(lambda _item: self.open_edit_dialog())

        self.placeholder = QLabel()
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet("color: #777777; padding: 12px;")

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

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if watched is self.table and event.type() == QEvent.Type.Resize:
            self._fit_columns()
        return super().eventFilter(watched, event)

    def _fit_columns(self) -> None:
        """In a narrow pane the Weight column gives its width to the memory text (each row's
        tooltip still says the weight), so the text never shrinks to a word per line."""
        # The width the columns would take with Weight shown, whether it is shown now or not:
        # the choice depends on the pane's width alone (measured with Weight hidden, its own
        # width missing from the sum, it came back at once, and went again: it flickered).
        fixed = sum(self._fixed_widths.values())
        width = self.table.width() - 2 * self.table.frameWidth()
        width -= self.table.verticalScrollBar().sizeHint().width()  # room for it, always
        narrow = width - fixed < MIN_TEXT_WIDTH
        if self.table.isColumnHidden(COL_WEIGHT) != narrow:
            self.table.setColumnHidden(COL_WEIGHT, narrow)
            self.table.horizontalHeaderItem(COL_TEXT).setToolTip(  # type: ignore[union-attr]
                "The pane is narrow: each row's tooltip gives the memory's weight" if narrow else ""
            )

    # ----------------------------------------------------------------------------------- public

    def reset(self) -> None:
        """Forget every participant's memories (a new session); the selection is kept."""
        self._memories.clear()
        self._retrieved.clear()
        self._retrieved_step.clear()
        self._humans.clear()
        self._profiles.clear()
        self._focus_id = None
        self._close_dialog()
        self._repopulate()

    def begin_rebuild(self) -> None:
        """A replay jumps: forget the data but leave the table until :meth:`end_rebuild`, which
        fills it once instead of row by row."""
        self._memories.clear()
        self._retrieved.clear()
        self._retrieved_step.clear()
        self._humans.clear()
        self._profiles.clear()
        self._close_dialog()
        self._rebuilding = True

    def end_rebuild(self) -> None:
        self._rebuilding = False
        self._repopulate()

    def rows(self) -> list[dict]:
        """The shown rows in display order."""
        items = self._memories.get(self._agent, {})
        retrieved = self._retrieved.get(self._agent, {})
        out = []
        for mid in self._order:
            item = items[mid]
            hit = retrieved.get(mid)
            out.append(
                {
                    "id": mid,
                    "kind": item.kind,
                    "text": item.text,
                    "weight": item.weight,
                    "saliency": hit[0] if hit else None,
                    "highlighted": hit is not None,
                }
            )
        return out

    @property
    def agent(self) -> str:
        """The participant whose memory is shown ("" for none)."""
        return self._agent

    @property
    def focused_id(self) -> int | None:
        """The memory focused through ``selection.stimulus_focused``, if it is shown."""
        return self._focus_id

    def selected_id(self) -> int | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        row = rows[0].row()
        if self.table.rowCount() != len(self._order) or not 0 <= row < len(self._order):
            return None  # mid-update: the table and ``_order`` are out of step
        mid = self._order[row]
        return mid if mid in self._memories.get(self._agent, {}) else None

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
        memory = self._memories[agent][mid]
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

    def _on_participant_joined(self, event: object) -> None:
        name = getattr(event, "name", "")
        if getattr(event, "participant_kind", "") == "human":
            self._humans.add(name)
        else:
            self._humans.discard(name)
        if getattr(event, "participant_kind", "") == "simulated":
            self._profiles[name] = getattr(event, "profile", None)
        else:
            self._profiles.pop(name, None)
        if name == self._agent and not self._rebuilding:
            self._repopulate()

    def _on_memory_changed(self, agent: str, change: str, memory: domain.MemoryItem) -> None:
        shown = agent == self._agent and agent not in self._humans
        was_selected = shown and change == "deleted" and self.selected_id() == memory.id
        items = self._memories.setdefault(agent, {})
        if change == "deleted":
            items.pop(memory.id, None)
            retrieved = self._retrieved.get(agent)
            if retrieved:
                retrieved.pop(memory.id, None)
        else:
            items[memory.id] = memory
        if not shown or self._rebuilding:
            return
        self.setUpdatesEnabled(False)
        try:
            if change == "deleted":
                self._remove_row(memory.id)
                if was_selected:
                    # Qt would move the selection to a neighbour; Delete must not cascade.
                    self.table.clearSelection()
                if self._focus_id == memory.id:
                    self._focus_id = None
            elif memory.id in self._order:
                self._fill_row(self._order.index(memory.id), memory)
            else:
                self._insert_row(memory)
        finally:
            self.setUpdatesEnabled(True)
        self._update_labels()
        self._update_buttons()

    def _on_memories_retrieved(self, agent: str, stimuli: list, step: int) -> None:
        previous = self._retrieved.get(agent, {})
        current: dict[int, tuple[float, bool, float | None]] = {}
        for s in stimuli:
            ref = getattr(s, "ref", "")
            if not ref.startswith("memory:"):
                continue
            try:
                mid = int(ref.removeprefix("memory:"))
            except ValueError:
                continue
            if mid in current and current[mid][0] >= s.saliency:
                continue
            current[mid] = (
                float(s.saliency),
                bool(getattr(s, "random", False)),
                getattr(s, "cosine", None),
            )
        self._retrieved[agent] = current
        self._retrieved_step[agent] = step
        if agent != self._agent or agent in self._humans or self._rebuilding:
            return
        # Only rows whose highlight changed move; the rest stay where they are.
        items = self._memories.get(agent, {})
        selected = self.selected_id()
        self.setUpdatesEnabled(False)
        try:
            for mid in set(previous) | set(current):
                if mid in self._order:
                    self._remove_row(mid)
                if mid in items:
                    self._insert_row(items[mid])
            self._restore_selection(selected)
        finally:
            self.setUpdatesEnabled(True)
        self._update_labels()

    # --------------------------------------------------------------------------- selection slots

    def _on_selection_changed(self, name: str) -> None:
        if name == self._agent:
            return
        self._agent = name
        self._focus_id = None
        self._repopulate()

    def _on_stimulus_focused(self, ref: str) -> None:
        old = self._focus_id
        new: int | None = None
        if ref.startswith("memory:"):
            try:
                mid = int(ref.removeprefix("memory:"))
            except ValueError:
                mid = None
            if mid is not None and mid in self._order:
                new = mid
        self._focus_id = new
        for mid in {old, new} - {None}:
            if mid in self._order:
                self._paint_row(self._order.index(mid))
        if new is not None:
            row = self._order.index(new)
            # Row heights are laid out lazily: scroll once they are known.
            QTimer.singleShot(0, self, lambda: self._scroll_to(new))
            self._scroll_to(new, row)

    # ----------------------------------------------------------------------------------- rows

    def _editable(self) -> bool:
        return bool(self._agent) and self._agent not in self._humans | set(self._profiles)

    def set_live(self, live: bool) -> None:
        """A live session (True), or one nothing can change any more (an ended session, a
        replay): Add…, Edit… and Delete are offered only in a live session."""
        if live != self._live:
            self._live = live
            self._update_buttons()

    def _sort_key(self, mid: int) -> SortKey:
        hit = self._retrieved.get(self._agent, {}).get(mid)
        return (0, -hit[0], mid) if hit else (1, 0.0, mid)

    def _repopulate(self) -> None:
        """Rebuild the table for the selected participant (selection change, reset)."""
        selected = self.selected_id() if self._order else None
        items = self._memories.get(self._agent, {}) if self._editable() else {}
        ordered = sorted(items.values(), key=lambda m: self._sort_key(m.id))
        self._order = [m.id for m in ordered]
        self._keys = [self._sort_key(m.id) for m in ordered]
        if self._focus_id not in items:
            self._focus_id = None
        self.setUpdatesEnabled(False)
        try:
            self.table.clearContents()
            self.table.setRowCount(len(ordered))
            for row, memory in enumerate(ordered):
                self._fill_row(row, memory, resize=False, fresh=True)
            self.table.resizeRowsToContents()
            self._restore_selection(selected)
        finally:
            self.setUpdatesEnabled(True)
        if not self._agent:
            self.placeholder.setText(NONE_PLACEHOLDER)
            self.stack.setCurrentWidget(self.placeholder)
        elif self._agent in self._humans:
            self.placeholder.setText(HUMAN_PLACEHOLDER)
            self.stack.setCurrentWidget(self.placeholder)
        elif self._agent in self._profiles:
            self.profile_view.show_profile(self._profiles[self._agent])  # type: ignore[arg-type]
            self.stack.setCurrentWidget(self.profile_view)
        else:
            self.stack.setCurrentWidget(self.table)
        self._update_labels()
        self._update_buttons()

    def _insert_row(self, memory: domain.MemoryItem) -> None:
        key = self._sort_key(memory.id)
        row = bisect.bisect_left(self._keys, key)
        self._keys.insert(row, key)
        self._order.insert(row, memory.id)
        self.table.insertRow(row)
        self._fill_row(row, memory, fresh=True)

    def _remove_row(self, mid: int) -> None:
        if mid not in self._order:
            return
        row = self._order.index(mid)
        del self._order[row]
        del self._keys[row]
        self.table.removeRow(row)

    def _fill_row(
        self, row: int, memory: domain.MemoryItem, resize: bool = True, fresh: bool = False
    ) -> None:
        """Show ``memory`` in ``row``; ``fresh`` rows (just inserted) get new items.

        Kept to few calls into Qt per cell: this runs for every row of a 1000-memory agent.
        """
        hit = self._retrieved.get(self._agent, {}).get(memory.id)
        if hit is None:
            saliency = ""
        elif hit[1]:  # not salient: pulled in at random; its saliency would read as a score
            saliency = "random" if hit[2] is None else f"random\ncos {_cos(hit[2])}"
        else:
            saliency = f"{hit[0]:.2f}"
        tip = f"memory:{memory.id} · {memory.kind} · weight {memory.weight:.2f}"
        if hit is not None:
            tip += (
                " · pulled in at random, not by saliency"
                + ("" if hit[2] is None else f" (cosine to the latest utterance {_cos(hit[2])})")
                if hit[1]
                else f" · saliency {hit[0]:.2f}"
            )
        tip += (
            f"\ncreated at step {memory.created_step}, last accessed at step {memory.last_access}"
        )
        texts = (memory.kind, f"{memory.weight:.2f}", saliency, memory.text)
        for col, text in enumerate(texts):
            item = None if fresh else self.table.item(row, col)
            if item is None:
                item = QTableWidgetItem(text)
                item.setTextAlignment(_ALIGN[col])
                self.table.setItem(row, col, item)
            else:
                item.setText(text)
            if col == COL_TEXT:
                item.setToolTip(f"{tip}\n\n{memory.text}")
        self._paint_row(row, fresh=fresh)
        if resize:
            self.table.resizeRowToContents(row)

    def _paint_row(self, row: int, fresh: bool = False) -> None:
        mid = self._order[row]
        if mid == self._focus_id:
            color = theme.HIGHLIGHT_BG
        elif mid in self._retrieved.get(self._agent, {}):
            color = RETRIEVED_BG
        elif fresh:
            return  # new items have no background to clear
        else:
            color = ""
        bg = QBrush(QColor(color)) if color else QBrush()
        # Pale backgrounds need dark text even under a dark palette.
        fg = QBrush(QColor("#111111")) if color else QBrush()
        for col in range(len(COLUMNS)):
            item = self.table.item(row, col)
            if item is not None:
                item.setBackground(bg)  # an empty brush clears the role
                item.setForeground(fg)

    def _on_section_resized(self, col: int, _old: int, _new: int) -> None:
        if col == COL_TEXT and self._order:
            self._relayout_timer.start()

    def _restore_selection(self, mid: int | None) -> None:
        if mid is not None and mid in self._order:
            self.table.selectRow(self._order.index(mid))
        else:
            self.table.clearSelection()

    def _scroll_to(self, mid: int, row: int | None = None) -> None:
        if mid != self._focus_id or mid not in self._order:
            return
        if row is None:
            row = self._order.index(mid)
        item = self.table.item(row, COL_TEXT)
        if item is not None:
            self.table.scrollToItem(item, QAbstractItemView.ScrollHint.PositionAtCenter)

    # -------------------------------------------------------------------------------- controls

    def _update_labels(self) -> None:
        if not self._agent:
            self.title_label.setText("Long-term memory")
            self.count_label.setText("")
            return
        if self._agent in self._profiles:
            self.title_label.setText(f"Private profile — {self._agent} (simulated user)")
            self.count_label.setText("")
            return
        self.title_label.setText(f"Long-term memory — {self._agent}")
        if self._agent in self._humans:
            self.count_label.setText("")
            return
        n = len(self._order)
        text = f"{n} memor{'y' if n == 1 else 'ies'}"
        retrieved = self._retrieved.get(self._agent)
        if retrieved is not None and self._agent in self._retrieved_step:
            shown = sum(1 for mid in retrieved if mid in self._memories.get(self._agent, {}))
            text += f" · {shown} retrieved at step {self._retrieved_step[self._agent]}"
        self.count_label.setText(text)

    def _update_buttons(self) -> None:
        editable = self._editable() and self._live
        has_row = editable and self.selected_id() is not None
        # A simulated user has a profile (with its own Edit…), not a memory.
        self.buttons_row.setHidden(self._agent in self._profiles)
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


def _cos(x: float) -> str:
    """A cosine with 2 decimals; one that rounds to zero reads 0.00, never -0.00."""
    return f"{round(x, 2) + 0.0:.2f}"
