"""The conversation's rows of messages: a widget per message, kept in message order, sized to the
view, at most :data:`MAX_MESSAGES` of them; a replay jump re-binds the rows it has instead of
making new ones, and binds those out of view a moment later. New messages scroll the view to the
latest unless it is held still for a person writing (:meth:`MessageRows.holding`). The private
notes on messages, and the message in focus, are shown on their rows.

:class:`MessageRows` is the base of :class:`ui.panes.conversation.conversation_pane.ConversationPane`, which
adds what a person does (the composer, the questions) below the rows.
"""

from __future__ import annotations

import heapq
from operator import attrgetter

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from playground import domain
from ui.panes.conversation.message_widget import MessageList, MessageWidget, fitted_size
from ui.panes.conversation.row_placement import JUMP_MESSAGES, in_place, slide
from ui.widgets.deferred import Deferred

#: What the empty window suggests first.
EMPTY_HINT = "Start a new session (Ctrl+N) or open a saved one (File ▸ Open session…, Ctrl+O)."


#: Most messages on screen. Each is a widget; a long session keeps its latest ones (the title
#: says how many exist), so the window stays fast at a thousand messages.
MAX_MESSAGES = 150
_Row = tuple[QListWidgetItem, "MessageWidget"]

#: What a row made ahead of need shows until a message is bound to it (it is hidden).
_BLANK = domain.Message(id=0, speaker="", text="", step=0, at="")


class MessageRows(QWidget):
    """The rows of messages (see the module docstring), in a column under a title; a subclass
    adds its own widgets below them to ``column``.

    Args:
        colors: each speaker's colour.

    Attributes:
        human: the person whose private notes the rows show and offer to write (None: nobody).
    """

    note_requested = Signal(int, str)  # message id, text
    message_clicked = Signal(int)  # message id (the window shows the trigger that produced it)

    def __init__(self, colors: dict[str, str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self.human: str | None = None
        self._widgets: dict[int, MessageWidget] = {}
        # After a replay jump, until the deferred fill: rows (above the view) whose widget still
        # shows an earlier message, and the notes that belong on them.
        self._unbound: dict[int, object] = {}
        self._unbound_notes: list = []
        self._fill = Deferred(self._fill_rows, self)
        self.items: dict[int, QListWidgetItem] = {}
        self._unfitted: set[int] = set()
        self._fit_pending = False
        self._pending: list = []
        self._rebuilding = False
        self._keep = 0
        self._pending_notes: list = []
        # Hidden rows (item, widget) before and after the shown ones, in row order, for reuse.
        self._above: list[_Row] = []
        self._spare: list[_Row] = []
        #: Show every participant's private notes (a researcher replaying a session), not only
        #: the human's own.
        self.all_notes = False
        self._focused: int | None = None
        #: Scroll to each new message; off while the user looks at an earlier one (history).
        self.follow_latest = True
        #: The message widgets whose note editor is open.
        self._editing: set[MessageWidget] = set()
        #: The message widget whose "✎ note" button is under the pointer (None: no such).
        self._pointed: MessageWidget | None = None
        self.column = QVBoxLayout(self)
        self.column.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("<b>Conversation</b>")
        self.column.addWidget(self.title)
        self.list = MessageList(self._view_width_changed)
        self.list.installEventFilter(self)  # its height: an open note editor stays in view
        self.list.setVerticalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        self.list.setSelectionMode(QListWidget.SelectionMode.NoSelection)
        self.list.placeholder.setText(EMPTY_HINT)
        self.list.model().modelReset.connect(self._editing.clear)  # the list was cleared
        self.column.addWidget(self.list, 1)

    @property
    def widgets(self) -> dict[int, MessageWidget]:
        """The message widgets on screen, by message id (finishing any deferred work first)."""
        self.settle()
        return self._widgets

    def settle(self) -> None:
        """Finish any work put off after a replay jump (rows above the view)."""
        self._fill.flush()

    def reset(self) -> None:
        """No message shown (a new session); nothing of the one shown before stays."""
        self._fill.cancel()
        self._unbound.clear()
        self._unbound_notes.clear()
        self.list.clear()
        self._pointed = None
        self._widgets.clear()
        self.items.clear()
        self._above.clear()
        self._spare.clear()
        self._unfitted.clear()
        # Nothing of the session shown before stays (message ids restart at 1 in every session).
        self._pending, self._pending_notes = [], []
        self._rebuilding, self._keep = False, 0
        self._focused = None
        self._trim()

    def set_note_taker(self, name: str | None) -> None:
        """The person whose notes the rows offer to write (None: nobody, the buttons go)."""
        self.human = name
        for w in self._widgets.values():
            if name:
                w.enable_notes(name)
            else:
                w.note_button.setVisible(False)
        # The "✎ note" buttons change the header rows: every row is measured again.
        self._unfitted.update(self._widgets)
        self._schedule_fit()

    # -- holding the view still while a person types ---------------------------------------------

    def holding(self) -> bool:
        """True while a person writes a private note (an editor is open), or points at a "✎
        note" button: new messages must not move the view under them (a click would land on
        another message's button)."""
        return self._pointed is not None or any(w.is_editing_note() for w in self._editing)

    def _note_pointed(self, w: MessageWidget, on: bool) -> None:
        if on:
            self._pointed = w
        elif self._pointed is w:
            self._pointed = None
            self._hold_changed()

    def _hold_changed(self) -> None:
        """Holding the view may have ended (a note editor closed): a subclass that counts the
        messages that came meanwhile shows them."""

    def _note_editing(self, w: MessageWidget, on: bool) -> None:
        """A note editor opened or closed: its row gets (or gives back) the editor's room."""
        if on:
            self._editing.add(w)
        else:
            self._editing.discard(w)
        mid = w.msg.id
        if self._widgets.get(mid) is w:
            self._measure(mid)
            self._unfitted.discard(mid)
            if on:
                # The row grew by the editor, below the view for the newest message (and a
                # message that has just arrived was not followed yet): the person must see
                # what they type. The view then holds still while they do.
                self.list.doItemsLayout()
                self.list.scrollToItem(self.items[mid])
        self._hold_changed()

    def messages(self) -> list[tuple[str, str]]:
        self.settle()
        return [(w.msg.speaker, w.msg.text) for w in self._widgets.values()]

    # -- a replay's jumps -------------------------------------------------------------------------

    def begin_rebuild(self, keep: int) -> None:
        """A replay jumps: keep messages up to ``keep``; the messages published until
        :meth:`end_rebuild` are collected and laid out once, the last :data:`JUMP_MESSAGES`."""
        self._keep = keep
        for w in self._widgets.values():
            w.clear_notes()  # the rebuild brings every note again
        self._pending_notes = []
        if self._focused is not None and self._focused > keep:
            self._focused = None
        self._pending = []
        self._rebuilding = True

    def load_messages(self, messages: list) -> None:
        """During a rebuild, take the messages up to the new moment in one go, as if each were
        posted (only the latest :data:`JUMP_MESSAGES` can be laid out, so only those are read)."""
        for msg in heapq.nlargest(JUMP_MESSAGES, messages, key=attrgetter("id")):
            self._posted(msg)

    def end_rebuild(self) -> None:
        self._rebuilding = False
        self._fill.cancel()  # the rows it would have bound are taken over below
        pending, self._pending = self._pending, []
        unbound, self._unbound = self._unbound, {}
        msgs = {
            w.msg.id: w.msg
            for mid, w in self._widgets.items()
            if mid <= self._keep and mid not in unbound
        }
        msgs.update((mid, m) for mid, m in unbound.items() if mid <= self._keep)
        msgs.update((m.id, m) for m in pending)
        final = sorted(msgs)[-JUMP_MESSAGES:]
        # Rows stay in id order: hidden rows above the shown ones, then the shown ones, then
        # hidden rows below. A row that shows a message still wanted keeps it, and the window
        # slides over the hidden rows beside it (a step back or forth rebinds a row or two);
        # otherwise each row is rebound to the message it now shows, in place (a jump costs a
        # few label updates per message, never new widgets unless there are too few rows).
        shown = [(self.items[m], self._widgets[m]) for m in sorted(self._widgets)]
        placed = slide(self._above, shown, self._spare, sorted(self._widgets), final)
        if placed is None:
            placed = in_place(self._above, shown, self._spare, len(final))
        above, rows, below = placed
        # Rows no longer needed are hidden, not removed: removing a row deletes its widget, and
        # the next jump would have to make it again.
        for item, _w in above + below:
            if not item.isHidden():
                item.setHidden(True)
        self._above, self._spare = above, below
        self._widgets.clear()
        self.items.clear()
        stale = []
        for (item, w), mid in zip(rows, final, strict=False):
            self._widgets[mid] = w
            self.items[mid] = item
            if item.isHidden():  # it may still show an earlier message, and its notes
                item.setHidden(False)
                stale.append(mid)
            elif w.msg.id != mid or mid in unbound:
                stale.append(mid)
        for mid in final[len(rows) :]:  # too few rows: new ones, after all the others
            self._add(msgs[mid])
        # The rows in view (from the bottom up, as far as the view reaches) are rebound and
        # measured now; the ones above them by the deferred fill.
        room = self.list.viewport().height()
        for mid in reversed(final):
            if room <= 0:
                self._unbound.update((m, msgs[m]) for m in stale if m <= mid)
                break
            if stale and stale[-1] == mid:
                stale.pop()
                msg = msgs[mid]
                self._widgets[mid].bind(msg, self.colors.get(msg.speaker, "#333"))
                self._unfitted.discard(mid)
                self._schedule_fit()  # which scrolls to the latest message
                room -= self._measure(mid)
            else:
                room -= self.items[mid].sizeHint().height()
        notes, self._pending_notes = self._pending_notes, []
        self._unbound_notes = [e for e in notes if e.message_id in self._unbound]
        for e in notes:
            if e.message_id not in self._unbound:
                self._annotation(e)
        self._trim()
        if self._unbound:
            self._fill.schedule()

    def _bind(self, mid: int, msg) -> None:
        self._widgets[mid].bind(msg, self.colors.get(msg.speaker, "#333"))
        self._schedule_fit()
        self._unfitted.add(mid)

    def _fill_rows(self) -> None:
        unbound, self._unbound = self._unbound, {}
        for mid, msg in unbound.items():
            if mid in self._widgets:
                self._bind(mid, msg)
        notes, self._unbound_notes = self._unbound_notes, []
        for e in notes:
            self._annotation(e)
        self._fit()

    def reserve(self, rows: int) -> bool:
        """Make one hidden row ahead of need (a replay does so in idle time after opening, so
        that its first jump makes none); True once the list has ``rows`` rows."""
        if self.list.count() >= rows:
            return True
        item, w = self._new_row(_BLANK, "#333")
        item.setHidden(True)
        self._spare.append((item, w))
        return False

    # -- rows ------------------------------------------------------------------------------------

    def _schedule_fit(self) -> None:
        """Size new or rebound rows once laid out, all in one go. The pane is the timer's
        context: no call after it is gone; _fit looks items up again, since a reset deletes
        them."""
        if not self._fit_pending:
            self._fit_pending = True
            QTimer.singleShot(0, self, self._fit)

    def _measure(self, mid: int) -> int:
        """Size a row to its message now; its height."""
        w = self._widgets[mid]
        w.setFixedWidth(self._row_width())
        size = fitted_size(w)
        self.items[mid].setSizeHint(size)
        return size.height()

    def _row_width(self) -> int:
        return max(200, self.list.viewport().width() - 4)

    def _remove(self, mid: int) -> None:
        item = self.items.pop(mid)
        w = self._widgets.pop(mid)
        self._editing.discard(w)
        if self._pointed is w:
            self._pointed = None
        self.list.takeItem(self.list.row(item))

    def _trim(self) -> None:
        """At most MAX_MESSAGES message widgets: the oldest go (the title says how many)."""
        if len(self._widgets) > MAX_MESSAGES and self.holding():
            # The rows above go: the messages in view stay where they are on screen.
            anchor = self.list.itemAt(0, 0)
            top = self.list.visualItemRect(anchor).top() if anchor is not None else 0
            while len(self._widgets) > MAX_MESSAGES:
                self._remove(min(self._widgets))
            if anchor is not None and self.list.row(anchor) >= 0:
                bar = self.list.verticalScrollBar()
                bar.setValue(bar.value() + self.list.visualItemRect(anchor).top() - top)
        while len(self._widgets) > MAX_MESSAGES:
            self._remove(min(self._widgets))
        shown = len(self._widgets)
        total = max(self._widgets, default=0)  # message ids are turn numbers: 1, 2, 3…
        self.title.setText(
            "<b>Conversation</b>"
            + (
                f" <span style='color:#888'>— the last {shown} of {total} messages</span>"
                if total > shown
                else ""
            )
        )

    def _posted(self, msg) -> bool:
        """Show a message posted (or collect it during a replay's rebuild); True if it was added
        to the rows now."""
        if self._rebuilding:
            if msg.id > self._keep or msg.id not in self._widgets:  # not already on screen
                self._pending.append(msg)
            return False
        self.settle()
        if msg.id in self._widgets:
            return False
        self._add(msg)
        self._trim()
        return True

    def _add(self, msg) -> None:
        color = self.colors.get(msg.speaker, "#333")
        if self._spare:  # a hidden row left by a replay jump: show it again with this message
            item, w = self._spare.pop(0)
            w.bind(msg, color)
            item.setHidden(False)
        else:
            item, w = self._new_row(msg, color)
        if self.human:
            w.enable_notes(self.human)
        self.list.placeholder.hide()  # the empty window's hint
        self._widgets[msg.id] = w
        self.items[msg.id] = item
        self._schedule_fit()
        self._unfitted.add(msg.id)

    def _new_row(self, msg, color: str) -> tuple[QListWidgetItem, MessageWidget]:
        w = MessageWidget(msg, color)
        w.note_submitted.connect(self.note_requested)
        w.note_editing.connect(lambda on, w=w: self._note_editing(w, on))
        w.note_pointed.connect(lambda on, w=w: self._note_pointed(w, on))
        for part in (w, w.header, w.body):  # a click anywhere on the message but its buttons
            part.installEventFilter(self)
        item = QListWidgetItem()
        self.list.addItem(item)
        self.list.setItemWidget(item, w)
        return item, w

    def _fit(self) -> None:
        self._fit_pending = False
        for mid in self._unfitted:
            if mid in self.items:
                self._measure(mid)
        self._unfitted.clear()
        if self.follow_latest and not self.holding():
            self.list.scrollToBottom()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.list and event.type() == QEvent.Type.Resize:
            # The list got shorter (the "N new messages ↓" button came under it): the note
            # being written must not slip below the view.
            for editing in self._editing:
                item = self.items.get(editing.msg.id)
                if item is not None and editing.is_editing_note():
                    self.list.scrollToItem(item)
            return False
        if event.type() == QEvent.Type.MouseButtonPress and getattr(event, "button", None):
            w = watched if isinstance(watched, MessageWidget) else watched.parent()
            if (
                isinstance(w, MessageWidget)
                and w.msg.id
                and event.button() == Qt.MouseButton.LeftButton  # type: ignore[attr-defined]
            ):
                self.message_clicked.emit(w.msg.id)
        return super().eventFilter(watched, event)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        for mid in self.items:
            self._measure(mid)

    def _view_width_changed(self) -> None:
        """The list's scroll bar came or went: rows measured before are as wide as the view
        was then."""
        width = self._row_width()
        for mid, w in self._widgets.items():
            if w.width() != width:
                self._measure(mid)

    def _annotation(self, e) -> None:
        if self._rebuilding:
            self._pending_notes.append(e)
            return
        self.settle()
        w = self._widgets.get(e.message_id)
        if w is not None and (e.author == self.human or self.all_notes):
            w.add_note(e.note_kind, e.text, e.at, e.author if self.all_notes else None)
            self._refit(e.message_id)

    def reveal(self, message_id: int, chars: int | None) -> None:
        """Show only the first ``chars`` characters of a message, as if being typed (replay);
        ``None`` shows all of it."""
        self.settle()
        w = self._widgets.get(message_id)
        if w is None:
            return
        text = w.msg.text
        typing = chars is not None and chars < len(text)
        w.body.show_text(text[:chars] + "▍" if typing else text)
        self._refit(message_id)
        if message_id in self.items:
            self.list.scrollToItem(self.items[message_id])

    def _refit(self, message_id: int) -> None:
        if message_id in self.items:
            self.items[message_id].setSizeHint(fitted_size(self._widgets[message_id]))

    def focus_message(self, message_id: int) -> None:
        self.settle()
        if self._focused in self._widgets:
            self._widgets[self._focused].set_highlight(False)
        self._focused = message_id if message_id in self._widgets else None
        if self._focused is not None:
            self._widgets[message_id].set_highlight(True)
            self.list.scrollToItem(self.items[message_id])
