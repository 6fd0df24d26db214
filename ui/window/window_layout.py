"""How the main window shares its width between the three panes, from 1024 px to 4K.

The panes sit in a splitter. Each has a minimum width at which everything in it still reads
(a memory's text column of a few words per line, a thought bubble's badges and its ✕, the
conversation's composer and Send), and together they fit a 1024 px wide window. Above that the
spare width is shared out by stretch: the conversation takes half of it, each side pane a
quarter, so at 1920 or 2560 px every pane grows and the memory text and the thought bubbles get
the room, not only the conversation. Sizes are in device-independent pixels, so the same holds
at 200 % scaling.

Heights from 700 px: the conversation comes first. The decision strip under it gets its height
only while the conversation keeps :data:`CONVERSATION_ROWS` rows in view
(:class:`ConversationFirst`), and a short window is compact (:class:`CompactWindow`): smaller
toolbar icons and margins, a tighter participants bar, no replay legend.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, QTimer
from PySide6.QtWidgets import QSplitter, QStyle, QWidget

#: Narrowest each pane gets (memory, conversation + decision strip, thoughts). Their sum, with
#: the splitter handles and the window's margins, stays under 1024 px.
MIN_MEMORY = 290
MIN_CONVERSATION = 400
MIN_THOUGHTS = 290
#: How spare width is shared out (memory, conversation, thoughts).
STRETCH = (1, 2, 1)
#: The first sizes, at the window's default 1440 px width (scaled to the width it gets).
INITIAL = (360, 680, 400)


def fit_panes(splitter: QSplitter, memory: QWidget, center: QWidget, thoughts: QWidget) -> None:
    """Give the three panes their minimum widths, stretch factors and first sizes.

    Args:
        splitter: The horizontal splitter holding ``memory``, ``center`` and ``thoughts``.
        memory: The memory pane.
        center: The conversation column (conversation and decision strip).
        thoughts: The thoughts pane.
    """
    for index, (pane, minimum) in enumerate(
        ((memory, MIN_MEMORY), (center, MIN_CONVERSATION), (thoughts, MIN_THOUGHTS))
    ):
        # A pane that needs more than its share (a thought bubble's ✕ beside the scroll bar, in
        # the fonts of this machine) gets it.
        pane.setMinimumWidth(max(minimum, pane.minimumSizeHint().width()))
        splitter.setStretchFactor(index, STRETCH[index])
    splitter.setChildrenCollapsible(False)
    splitter.setSizes(list(INITIAL))


#: Message rows (of one-line messages) the conversation keeps in view before the decision strip
#: below it gets more than its title line: six whole rows and a part of the next.
CONVERSATION_ROWS = 6.5
#: The decision table shows when the strip has at least this much height (px) beyond its title
#: line: its header and part of a row.
TABLE_AT_LEAST = 40
#: A window at most this tall (client area, px) is *compact* (see :class:`CompactWindow`).
COMPACT_HEIGHT = 820
#: Toolbar icons (px), and the margins around the window's contents, in a compact window.
COMPACT_ICONS = 16
COMPACT_MARGINS = (4, 2, 4, 2)
#: The margins around the window's contents otherwise.
ROOT_MARGINS = (6, 4, 6, 4)


class ConversationFirst(QObject):
    """Shares the conversation column's height between the conversation and the decision strip
    (a vertical splitter), the conversation first.

    The strip gets its preferred height (its size hint, or what the reader last dragged it to)
    only while the conversation keeps :data:`CONVERSATION_ROWS` rows; in a short window it shrinks
    down to its title line (◀ ▶ and which trigger it shows), and its handle drags it open again.

    Args:
        split: The vertical splitter: conversation above, decision strip below.
        conversation: The conversation pane (its ``list`` holds the messages).
        decisions: The decision strip (its ``title`` line stays when it is shrunk).
    """

    def __init__(self, split: QSplitter, conversation: Any, decisions: Any) -> None:
        super().__init__(split)
        self.split = split
        self.conversation = conversation
        self.decisions = decisions
        #: The strip's height the reader chose by dragging (None: its size hint).
        self.chosen: int | None = None
        self._applying = False
        split.setChildrenCollapsible(False)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 0)
        decisions.setMinimumHeight(self.title_height())
        split.splitterMoved.connect(self._dragged)
        split.handle(1).setToolTip("Drag to give the decision strip more or less room")
        split.installEventFilter(self)
        # The pane's own parts come and go (composer, question card): share out again after.
        self._again = QTimer(self)
        self._again.setSingleShot(True)
        self._again.timeout.connect(self.apply)
        conversation.installEventFilter(self)
        decisions.installEventFilter(self)

    def title_height(self) -> int:
        """The strip's title line (and, while it looks back, the line with the way back to
        live): the least it shrinks to."""
        d = self.decisions
        lay = d.layout()
        margins = lay.contentsMargins() if lay is not None else None
        extra = margins.top() + margins.bottom() if margins is not None else 0
        # The title wraps at the width it has beside ◀ ▶ (a framed one, looking back, takes two
        # lines at 1024 px: measured at a wider guess, it was cut to a sliver).
        width = d.title.width() if d.title.width() > 1 else 300
        title = d.title.heightForWidth(width)
        least = max(d.back_button.sizeHint().height(), title) + extra
        if not d.past_row.isHidden():
            spacing = lay.spacing() if lay is not None else 0
            least += spacing + d.past_row.sizeHint().height()
        return least

    def row_height(self) -> int:
        """A one-line message's row: its header and text lines, margins and border."""
        return 2 * self.conversation.fontMetrics().lineSpacing() + 14

    def conversation_needs(self) -> int:
        """The conversation pane's height with :data:`CONVERSATION_ROWS` rows in its list: the
        pane's other parts (title, composer, question card) as they want to be, and the rows."""
        conv = self.conversation
        lay = conv.layout()
        width = max(conv.width(), 1)
        around, shown = 0, 0
        for i in range(lay.count()):
            item = lay.itemAt(i)
            if item.isEmpty():
                continue
            shown += 1
            if item.widget() is conv.list:
                continue
            # A wrapping part (the question card's answers) at the pane's width.
            hfw = item.heightForWidth(width) if item.hasHeightForWidth() else -1
            around += hfw if hfw >= 0 else item.sizeHint().height()
        margins = lay.contentsMargins()
        around += max(0, shown - 1) * lay.spacing() + margins.top() + margins.bottom()
        return around + 2 * conv.list.frameWidth() + round(CONVERSATION_ROWS * self.row_height())

    def strip_wants(self) -> int:
        """The decision strip's height with its table (what the reader dragged it to, else its
        size hint)."""
        if self.chosen is not None:
            return self.chosen
        d = self.decisions
        wants = d.sizeHint().height()
        if d.table.isHidden():
            spacing = d.layout().spacing() if d.layout() is not None else 0
            wants += spacing + min(d.table.sizeHint().height(), d.table.maximumHeight())
        return wants

    def strip_height(self, total: int) -> int:
        """The decision strip's height when the column is ``total`` px tall."""
        spare = total - self.split.handleWidth() - self.conversation_needs()
        strip = min(self.strip_wants(), spare)
        title = self.title_height()
        return strip if strip > title + TABLE_AT_LEAST else title  # no room: the title line

    def _show_table(self, strip: int) -> None:
        """The strip's table shows when the strip is more than its title line."""
        self.decisions.table.setVisible(strip > self.title_height() + TABLE_AT_LEAST)

    def apply(self) -> None:
        """Share the column out again (the window or the column changed size)."""
        total = self.split.height()
        if total <= 0 or self._applying:
            return
        self._applying = True
        try:
            self.decisions.setMinimumHeight(self.title_height())
            strip = self.strip_height(total)
            self._show_table(strip)
            self.split.setSizes([max(0, total - self.split.handleWidth() - strip), strip])
        finally:
            self._applying = False

    def _dragged(self, _pos: int, _index: int) -> None:
        if not self._applying:
            self.chosen = self.split.sizes()[1]
            self._show_table(self.chosen)

    def _least_changed(self) -> bool:
        return self.title_height() != self.decisions.minimumHeight()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest and watched is self.conversation:
            self._again.start(0)
        elif event.type() == QEvent.Type.LayoutRequest and watched is self.decisions:
            # Only its least height matters here (looking back adds a line): a dragged strip's
            # own table coming or going must not undo the drag.
            if self._least_changed():
                self._again.start(0)
        elif event.type() == QEvent.Type.Resize and watched is self.split:
            self.apply()
        return False


class CompactWindow(QObject):
    """A short main window (:data:`COMPACT_HEIGHT`) gives the conversation the height its frame
    takes: smaller toolbar icons and margins, a participants bar without idle room for its
    scroll bar, and no replay mark legend (each mark names itself in the timeline's tooltip).

    Args:
        window: The main window (its ``toolbar``, ``participants`` and, once built,
            ``transport``).
    """

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = window
        self.compact: bool | None = None
        window.installEventFilter(self)

    def apply(self) -> None:
        """Follow the window's height."""
        w = self.window
        compact = w.height() <= COMPACT_HEIGHT
        transport = getattr(w, "transport", None)
        if transport is not None:
            transport.legend.setVisible(not compact)
        if compact == self.compact:
            return
        self.compact = compact
        normal = w.style().pixelMetric(QStyle.PixelMetric.PM_ToolBarIconSize)
        size = COMPACT_ICONS if compact else normal
        w.toolbar.setIconSize(QSize(size, size))
        w.participants.set_compact(compact)
        root = w.centralWidget().layout()
        root.setContentsMargins(*(COMPACT_MARGINS if compact else ROOT_MARGINS))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and watched is self.window:
            self.apply()
        return False
