"""The memory pane's table: its columns, how one memory reads in a row (kind, weight, saliency,
tooltip, tint) and rows kept in display order as memories come and go.

Memories retrieved at the participant's latest trigger come first, most salient first; the rest
follow by id. A retrieved row is tinted pale yellow; the focused one (a stimulus focused elsewhere
in the UI) is highlighted more strongly. In a narrow pane the Weight column gives its width to the
memory text.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor, QResizeEvent
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from playground import domain
from playground.history.memory_ledger import Hit
from ui import theme

RETRIEVED_BG = "#fff3c4"
COLUMNS = ("Kind", "Weight", "Sal.", "Memory")
COL_KIND, COL_WEIGHT, COL_SALIENCY, COL_TEXT = range(4)
#: What the fixed columns are at least as wide as: their headers and, for Weight, every value.
_LEAST = {COL_KIND: ("Kind",), COL_WEIGHT: ("Weight", "1.00"), COL_SALIENCY: ("Sal.", "0.00")}
#: Cell margins and the header's own padding (px).
_PAD = 12
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


class MemoryTable(QTableWidget):
    """The rows of one participant's memories.

    Args:
        hits: the shown participant's latest retrieval, by memory id (read at each change).

    Attributes:
        order: the ids of the shown rows, in table order (kept in step with the table).
        focus_id: the memory highlighted as focused, if it is shown.
    """

    def __init__(self, hits: Callable[[], Mapping[int, Hit]]) -> None:
        super().__init__(0, len(COLUMNS))
        self._hits = hits
        self.order: list[int] = []
        self._keys: list[SortKey] = []
        self.focus_id: int | None = None
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.verticalHeader().setVisible(False)
        # Row heights are computed per changed row (ResizeToContents would re-measure all rows on
        # every change, and quadratically while filling); a width change re-measures them once.
        self.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        header = self.horizontalHeader()
        header.setHighlightSections(False)
        header.setMinimumSectionSize(24)
        #: The fixed columns' widths, also while one is hidden (its section size is 0 then): Kind
        #: and Saliency are as wide as what they show (see :meth:`fit_contents`), Weight as its
        #: widest value; the memory text has the rest.
        self._fixed_widths = {col: self._measure(texts) for col, texts in _LEAST.items()}
        for col, width in self._fixed_widths.items():
            header.setSectionResizeMode(col, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(col, width)
        # The memory text takes every spare pixel; see fit_columns for narrow panes.
        header.setSectionResizeMode(COL_TEXT, QHeaderView.ResizeMode.Stretch)
        for col, tip in (
            (COL_WEIGHT, "How much the memory counts in retrieval (0–1)"),
            (COL_SALIENCY, "Saliency at the participant's latest retrieval"),
            (COL_KIND, "What kind of memory it is"),
        ):
            self.horizontalHeaderItem(col).setToolTip(tip)  # type: ignore[union-attr]
        self._relayout_timer = QTimer(self)
        self._relayout_timer.setSingleShot(True)
        self._relayout_timer.setInterval(30)
        self._relayout_timer.timeout.connect(self.resizeRowsToContents)
        header.sectionResized.connect(self._on_section_resized)

    def _measure(self, texts: Iterable[str]) -> int:
        """The width a column needs to show each of ``texts`` (each line of it) on one line."""
        metrics = self.fontMetrics()
        lines = (line for text in texts for line in text.split("\n"))
        return max(map(metrics.horizontalAdvance, lines), default=0) + _PAD

    def fit_contents(self, rows: Iterable[int] | None = None) -> None:
        """Size Kind and Saliency to what they show, so the memory text has the rest.

        Saliency is measured over the retrieved rows (the only ones that show one), so it
        narrows again when a wide value ("random", "cos -0.12") leaves. Kind is measured over
        every row (``rows`` None) or, growing only, over the ``rows`` just filled (a column
        narrows again when the table is filled anew).
        """
        header = self.horizontalHeader()
        hits = self._hits()
        retrieved = [row for row, mid in enumerate(self.order) if mid in hits]
        for col, over in ((COL_KIND, rows), (COL_SALIENCY, retrieved)):
            every = range(self.rowCount()) if over is None else over
            width = self._measure([*_LEAST[col], *(self._text(row, col) for row in every)])
            if col == COL_KIND and rows is not None:
                width = max(width, self._fixed_widths[col])
            if width != self._fixed_widths[col]:
                self._fixed_widths[col] = width
                header.resizeSection(col, width)
        self.fit_columns()

    def _text(self, row: int, col: int) -> str:
        item = self.item(row, col)
        return "" if item is None else item.text()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self.fit_columns()
        super().resizeEvent(event)

    def fit_columns(self) -> None:
        """In a narrow pane the Weight column gives its width to the memory text (each row's
        tooltip still says the weight), so the text never shrinks to a word per line."""
        # The width the columns would take with Weight shown, whether it is shown now or not:
        # the choice depends on the pane's width alone (measured with Weight hidden, its own
        # width missing from the sum, it came back at once, and went again: it flickered).
        fixed = sum(self._fixed_widths.values())
        width = self.width() - 2 * self.frameWidth()
        width -= self.verticalScrollBar().sizeHint().width()  # room for it, always
        narrow = width - fixed < MIN_TEXT_WIDTH
        if self.isColumnHidden(COL_WEIGHT) != narrow:
            self.setColumnHidden(COL_WEIGHT, narrow)
            self.horizontalHeaderItem(COL_TEXT).setToolTip(  # type: ignore[union-attr]
                "The pane is narrow: each row's tooltip gives the memory's weight" if narrow else ""
            )

    # -- rows ---------------------------------------------------------------------------------

    def sort_key(self, mid: int) -> SortKey:
        hit = self._hits().get(mid)
        return (0, -hit.saliency, mid) if hit else (1, 0.0, mid)

    def show_all(self, memories: Iterable[domain.MemoryItem], selected: int | None) -> None:
        """Fill the table with ``memories`` in display order, at once; ``selected`` stays
        selected when it is among them."""
        ordered = sorted(memories, key=lambda m: self.sort_key(m.id))
        self.order = [m.id for m in ordered]
        self._keys = [self.sort_key(m.id) for m in ordered]
        self.clearContents()
        self.setRowCount(len(ordered))
        for row, memory in enumerate(ordered):
            self.fill_row(row, memory, resize=False, fresh=True)
        self.fit_contents()
        self.resizeRowsToContents()
        self.restore_selection(selected)

    def insert(self, memory: domain.MemoryItem) -> None:
        """A row for ``memory`` at its place in the order."""
        key = self.sort_key(memory.id)
        row = bisect.bisect_left(self._keys, key)
        self._keys.insert(row, key)
        self.order.insert(row, memory.id)
        self.insertRow(row)
        self.fill_row(row, memory, fresh=True)

    def remove(self, mid: int) -> None:
        """Remove the row of memory ``mid``, if it is shown."""
        if mid not in self.order:
            return
        row = self.order.index(mid)
        del self.order[row]
        del self._keys[row]
        self.removeRow(row)

    def fill_row(
        self, row: int, memory: domain.MemoryItem, resize: bool = True, fresh: bool = False
    ) -> None:
        """Show ``memory`` in ``row``; ``fresh`` rows (just inserted) get new items.

        Kept to few calls into Qt per cell: this runs for every row of a 1000-memory agent.
        """
        hit = self._hits().get(memory.id)
        if hit is None:
            saliency = ""
        elif hit.random:  # not salient: pulled in at random; its saliency would read as a score
            saliency = "random" if hit.cosine is None else f"random\ncos {_cos(hit.cosine)}"
        else:
            saliency = f"{hit.saliency:.2f}"
        tip = f"{memory.ref} · {memory.kind} · weight {memory.weight:.2f}"
        if hit is not None:
            tip += (
                " · pulled in at random, not by saliency"
                + (
                    ""
                    if hit.cosine is None
                    else f" (cosine to the latest utterance {_cos(hit.cosine)})"
                )
                if hit.random
                else f" · saliency {hit.saliency:.2f}"
            )
        tip += (
            f"\ncreated at step {memory.created_step}, last accessed at step {memory.last_access}"
        )
        texts = (memory.kind, f"{memory.weight:.2f}", saliency, memory.text)
        for col, text in enumerate(texts):
            item = None if fresh else self.item(row, col)
            if item is None:
                item = QTableWidgetItem(text)
                item.setTextAlignment(_ALIGN[col])
                self.setItem(row, col, item)
            else:
                item.setText(text)
            if col == COL_TEXT:
                item.setToolTip(f"{tip}\n\n{memory.text}")
        self.paint_row(row, fresh=fresh)
        if resize:
            self.fit_contents([row])
            self.resizeRowToContents(row)

    def paint_row(self, row: int, fresh: bool = False) -> None:
        mid = self.order[row]
        if mid == self.focus_id:
            color = theme.HIGHLIGHT_BG
        elif mid in self._hits():
            color = RETRIEVED_BG
        elif fresh:
            return  # new items have no background to clear
        else:
            color = ""
        bg = QBrush(QColor(color)) if color else QBrush()
        # Pale backgrounds need dark text even under a dark palette.
        fg = QBrush(QColor("#111111")) if color else QBrush()
        for col in range(len(COLUMNS)):
            item = self.item(row, col)
            if item is not None:
                item.setBackground(bg)  # an empty brush clears the role
                item.setForeground(fg)

    def _on_section_resized(self, col: int, _old: int, _new: int) -> None:
        if col == COL_TEXT and self.order:
            self._relayout_timer.start()

    def restore_selection(self, mid: int | None) -> None:
        if mid is not None and mid in self.order:
            self.selectRow(self.order.index(mid))
        else:
            self.clearSelection()

    # -- focus --------------------------------------------------------------------------------

    def set_focus(self, new: int | None) -> None:
        """Highlight memory ``new`` (a shown one, or None) as focused and scroll it into view."""
        old = self.focus_id
        self.focus_id = new
        for mid in {old, new} - {None}:
            if mid in self.order:
                self.paint_row(self.order.index(mid))
        if new is not None:
            row = self.order.index(new)
            # Row heights are laid out lazily: scroll once they are known.
            QTimer.singleShot(0, self, lambda: self._scroll_to(new))
            self._scroll_to(new, row)

    def _scroll_to(self, mid: int, row: int | None = None) -> None:
        if mid != self.focus_id or mid not in self.order:
            return
        if row is None:
            row = self.order.index(mid)
        item = self.item(row, COL_TEXT)
        if item is not None:
            self.scrollToItem(item, QAbstractItemView.ScrollHint.PositionAtCenter)


def _cos(x: float) -> str:
    """A cosine with 2 decimals; one that rounds to zero reads 0.00, never -0.00."""
    return f"{round(x, 2) + 0.0:.2f}"
