"""The conversation: messages with speaker colour, time, turn and markers; the human's composer,
private notes (reasons / reactions) and one-click in-the-moment questions."""

from __future__ import annotations

import heapq
from operator import attrgetter

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from playground import domain
from ui.bridge import EngineBridge
from ui.deferred import Deferred
from ui.selection import SelectedParticipant
from ui.widgets.flow_layout import FlowLayout
from ui.widgets.message_widget import Composer, MessageList, MessageWidget, fitted_size

QUESTION = "How did you take {speaker}'s message?"
ANSWERS = ["Interesting", "Helpful", "Off-topic", "Too pushy", "Not sure"]
#: The composer's invitation before a person joins, once they have, and while the agents wait.
JOIN_PLACEHOLDER = "Join as a human to take part (Enter sends, Shift+Enter for a new line)"
MESSAGE_PLACEHOLDER = "Message as {name} (Enter sends, Shift+Enter for a new line)"
WAITING_PLACEHOLDER = "The agents are waiting for you, {name}: say something (Enter to send)"
#: Above the composer when the agents stop for the person (``loops.agent_streak``).
WAITING_TEXT = "Agents are waiting for you to speak ({n} agent messages in a row)"
#: What the empty window suggests first.
EMPTY_HINT = "Start a new session (Ctrl+N) or open a saved one (File ▸ Open session…, Ctrl+O)."


#: Most messages on screen. Each is a widget; a long session keeps its latest ones (the title
#: says how many exist), so the window stays fast at a thousand messages.
MAX_MESSAGES = 150
#: Messages laid out when a replay jumps to another moment: the ones just before it. Playing or
#: stepping on adds messages again (up to MAX_MESSAGES).
JUMP_MESSAGES = 40
#: Hidden rows left above the shown ones after a jump: a replay stepping back slides over them
#: instead of rebinding every row.
SLIDE_ROOM = 8
#: Rows a replay makes ahead of need after opening: a jump's and room to slide both ways.
RESERVED_ROWS = JUMP_MESSAGES + 2 * SLIDE_ROOM

_Row = tuple[QListWidgetItem, "MessageWidget"]
_Placed = tuple[list[_Row], list[_Row], list[_Row]]  # hidden above, shown, hidden below

#: What a row made ahead of need shows until a message is bound to it (it is hidden).
_BLANK = domain.Message(id=0, speaker="", text="", step=0, at="")


class ConversationPane(QWidget):
    """The overt conversation, plus everything the human participant does."""

    send_requested = Signal(str)
    note_requested = Signal(int, str)  # message id, text
    label_requested = Signal(int, str, str)  # message id, question, answer
    message_clicked = Signal(int)  # message id (the window shows the trigger that produced it)

    def __init__(
        self,
        bridge: EngineBridge,
        selection: SelectedParticipant,
        colors: dict[str, str],
        parent: QWidget | None = None,
    ) -> None:
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
        self.thinking: set[str] = set()
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
        #: Messages that arrived while the view held still for a person typing (see holding()).
        self._unseen = 0
        #: The message widgets whose note editor is open.
        self._editing: set[MessageWidget] = set()
        self._waiting = 0  # agent messages in a row while the agents wait for the person
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.title = QLabel("<b>Conversation</b>")
        lay.addWidget(self.title)
        self.list = MessageList(self._view_width_changed)
        self.list.setVerticalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        self.list.setSelectionMode(QListWidget.SelectionMode.NoSelection)
        self.list.placeholder.setText(EMPTY_HINT)
        self.list.model().modelReset.connect(self._forget_unseen)  # the list was cleared
        lay.addWidget(self.list, 1)
        # While a person types, new messages do not scroll the view: this says they came.
        self.jump_button = QPushButton()
        self.jump_button.setToolTip("Show the latest message")
        self.jump_button.setStyleSheet("QPushButton { color:#1565c0; font-weight:bold; }")
        self.jump_button.clicked.connect(self.jump_to_latest)
        self.jump_button.hide()
        lay.addWidget(self.jump_button, 0, Qt.AlignmentFlag.AlignHCenter)
        self.thinking_label = QLabel("")
        self.thinking_label.setStyleSheet("color:#b26a00; font-style:italic;")
        lay.addWidget(self.thinking_label)
        # The one-click question: inside the conversation column, its answers wrapping to
        # more rows when the column is narrow (it never widens the column, or the window).
        self.card = QFrame()
        self.card.setObjectName("questionCard")
        self.card.setStyleSheet(
            "#questionCard { background:#f3f0ff; border:1px solid #d1c4e9; border-radius:6px; }"
        )
        card_lay = QHBoxLayout(self.card)
        card_lay.setContentsMargins(8, 4, 4, 4)
        answers = QWidget()
        flow = FlowLayout(answers, spacing=6)
        self.card_label = QLabel()
        self.card_label.setMinimumHeight(24)
        flow.addWidget(self.card_label)
        self.card_buttons: list[QPushButton] = []
        for answer in ANSWERS:
            b = QPushButton(answer)
            b.setFlat(False)
            b.clicked.connect(lambda _=False, a=answer: self._answer(a))
            flow.addWidget(b)
            self.card_buttons.append(b)
        card_lay.addWidget(answers, 1)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close the question without answering")
        close.setAutoRaise(True)
        close.clicked.connect(self.card.hide)
        card_lay.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.card_close = close
        self.card.hide()
        self._card_message: int | None = None
        lay.addWidget(self.card)
        self.waiting_label = QLabel("")
        self.waiting_label.setObjectName("agentsWaiting")
        self.waiting_label.setWordWrap(True)
        self.waiting_label.setStyleSheet(
            "#agentsWaiting { background:#e3f2fd; color:#0d47a1; padding:4px;"
            " border:1px solid #90caf9; border-radius:4px; }"
        )
        self.waiting_label.hide()
        lay.addWidget(self.waiting_label)
        row = QHBoxLayout()
        self.composer = Composer()
        self.composer.setPlaceholderText(JOIN_PLACEHOLDER)
        self.composer.setFixedHeight(56)
        self.composer.setEnabled(False)
        self.composer.submitted.connect(self.send_requested)
        self.composer.textChanged.connect(self._hold_changed)
        self.send_button = QPushButton("Send")
        self.send_button.setEnabled(False)
        self.send_button.clicked.connect(self._send_clicked)
        row.addWidget(self.composer, 1)
        row.addWidget(self.send_button)
        lay.addLayout(row)
        bridge.message_posted.connect(self._posted)
        bridge.state_changed.connect(self._state)
        bridge.annotation_added.connect(self._annotation)
        selection.stimulus_focused.connect(self._focus_ref)

    @property
    def widgets(self) -> dict[int, MessageWidget]:
        """The message widgets on screen, by message id (finishing any deferred work first)."""
        self.settle()
        return self._widgets

    def settle(self) -> None:
        """Finish any work put off after a replay jump (rows above the view)."""
        self._fill.flush()

    def reset(self) -> None:
        self._fill.cancel()
        self._unbound.clear()
        self._unbound_notes.clear()
        self.list.clear()
        self._widgets.clear()
        self.items.clear()
        self._above.clear()
        self._spare.clear()
        self._unfitted.clear()
        # Nothing of the session shown before stays (message ids restart at 1 in every session).
        self._pending, self._pending_notes = [], []
        self._rebuilding, self._keep = False, 0
        self._focused = self._card_message = None
        self._trim()
        self.thinking.clear()
        self.thinking_label.setText("")
        self.card.hide()
        self.set_human(None)

    def set_human(self, name: str | None) -> None:
        self.human = name
        self.composer.setEnabled(bool(name))
        self.send_button.setEnabled(bool(name))
        if not name:
            self._waiting = 0
            self.waiting_label.hide()
        self._update_placeholder()
        for w in self._widgets.values():
            if name:
                w.enable_notes(name)
            else:
                w.note_button.setVisible(False)
        # The "✎ note" buttons change the header rows: every row is measured again.
        self._unfitted.update(self._widgets)
        self._schedule_fit()
        if not name:
            self.card.hide()

    def set_composer_visible(self, visible: bool) -> None:
        """Hide the composer where nobody can type (a replay)."""
        self.composer.setVisible(visible)
        self.send_button.setVisible(visible)
        self._hold_changed()

    def show_waiting(self, streak: int) -> None:
        """Say that the agents wait for the person to speak after ``streak`` agent messages in a
        row (0: they do not wait)."""
        self._waiting = streak if self.human else 0
        self.waiting_label.setText(WAITING_TEXT.format(n=self._waiting))
        self.waiting_label.setVisible(bool(self._waiting))
        self._update_placeholder()

    def _update_placeholder(self) -> None:
        name = self.human
        self.composer.setPlaceholderText(
            JOIN_PLACEHOLDER
            if not name
            else WAITING_PLACEHOLDER.format(name=name)
            if self._waiting
            else MESSAGE_PLACEHOLDER.format(name=name)
        )

    # -- holding the view still while a person types ---------------------------------------------

    def holding(self) -> bool:
        """True while a person types a message (the composer holds text) or a private note (an
        editor is open): new messages must not move the view under them."""
        drafting = not self.composer.isHidden() and bool(self.composer.toPlainText().strip())
        return drafting or any(w.is_editing_note() for w in self._editing)

    def _hold_changed(self) -> None:
        """Typing ended: show what arrived meanwhile."""
        if self._unseen and not self.holding():
            self.jump_to_latest()

    def jump_to_latest(self) -> None:
        """Scroll to the latest message (the "N new messages ↓" button)."""
        self._unseen = 0
        self.jump_button.hide()
        if self._fit_pending:
            self._fit()
        self.list.scrollToBottom()

    def _count_unseen(self) -> None:
        self._unseen += 1
        n = self._unseen
        self.jump_button.setText(f"{n} new message{'' if n == 1 else 's'} ↓")
        self.jump_button.show()

    def _forget_unseen(self) -> None:
        self._unseen = 0
        self._editing.clear()
        self.jump_button.hide()

    def _note_editing(self, w: MessageWidget, on: bool) -> None:
        """A note editor opened or closed: its row gets (or gives back) the editor's room."""
        if on:
            self._editing.add(w)
        else:
            self._editing.discard(w)
        mid = w.msg.id
        if self._widgets.get(mid) is w:
            self._measure(mid)
        self._hold_changed()

    def messages(self) -> list[tuple[str, str]]:
        self.settle()
        return [(w.msg.speaker, w.msg.text) for w in self._widgets.values()]

    def _send_clicked(self) -> None:
        text = self.composer.toPlainText().strip()
        if text:
            self.send_requested.emit(text)
            self.composer.clear()

    def begin_rebuild(self, keep: int) -> None:
        """A replay jumps: keep messages up to ``keep``; the messages published until
        :meth:`end_rebuild` are collected and laid out once, the last :data:`JUMP_MESSAGES`."""
        self._keep = keep
        for w in self._widgets.values():
            w.clear_notes()  # the rebuild brings every note again
        self._pending_notes = []
        if self._focused is not None and self._focused > keep:
            self._focused = None
        self.thinking.clear()
        self.thinking_label.setText("")
        self.card.hide()
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
        placed = self._slide(shown, sorted(self._widgets), final)
        if placed is None:
            placed = self._in_place(shown, len(final))
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

    def _slide(self, shown: list[_Row], ids: list[int], final: list[int]) -> _Placed | None:
        """The rows for ``final`` when the rows showing its messages stay and the window slides
        over the hidden rows around them; None when no shown message is still wanted, or the
        hidden rows on a side are too few."""
        wanted = set(final)
        kept = [i for i, mid in enumerate(ids) if mid in wanted]
        if not kept:
            return None
        first, last = kept[0], kept[-1]
        lower = final.index(ids[first])  # new messages before the kept ones
        higher = len(final) - lower - len(kept)
        if ids[first : last + 1] != final[lower : lower + len(kept)]:
            return None  # not one run of messages in both
        up = self._above + shown[:first]
        down = shown[last + 1 :] + self._spare
        if len(up) < lower or len(down) < higher:
            return None
        cut = len(up) - lower
        rows = up[cut:] + shown[first : last + 1] + down[:higher]
        return up[:cut], rows, down[higher:]

    def _in_place(self, shown: list[_Row], count: int) -> _Placed:
        """The rows for ``count`` messages, rebound where they stand: the first rows after a few
        hidden ones left above (room for the window to slide back later)."""
        rows = self._above + shown + self._spare
        top = min(SLIDE_ROOM, max(0, len(rows) - count))
        return rows[:top], rows[top : top + count], rows[top + count :]

    def _bind(self, mid: int, msg) -> None:  # noqa: ANN001
        self._widgets[mid].bind(msg, self.colors.get(msg.speaker, "#333"))
        self._schedule_fit()
        self._unfitted.add(mid)

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

    def _fill_rows(self) -> None:
        unbound, self._unbound = self._unbound, {}
        for mid, msg in unbound.items():
            if mid in self._widgets:
                self._bind(mid, msg)
        notes, self._unbound_notes = self._unbound_notes, []
        for e in notes:
            self._annotation(e)
        self._fit()

    def _remove(self, mid: int) -> None:
        item = self.items.pop(mid)
        self._editing.discard(self._widgets.pop(mid))
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

    def _posted(self, msg) -> None:  # noqa: ANN001
        if self._rebuilding:
            if msg.id > self._keep or msg.id not in self._widgets:  # not already on screen
                self._pending.append(msg)
            return
        self.settle()
        if msg.id in self._widgets:
            return
        self._add(msg)
        if self.follow_latest and self.holding():
            self._count_unseen()
        self._trim()
        if self.human and msg.kind == "ai":
            self._ask(msg)
        elif self.card.isVisible() and msg.speaker == self.human:
            self.card.hide()

    def _add(self, msg) -> None:  # noqa: ANN001
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

    def _new_row(self, msg, color: str) -> tuple[QListWidgetItem, MessageWidget]:  # noqa: ANN001
        w = MessageWidget(msg, color)
        w.note_submitted.connect(self.note_requested)
        w.note_editing.connect(lambda on, w=w: self._note_editing(w, on))
        for part in (w, w.header, w.body):  # a click anywhere on the message but its buttons
            part.installEventFilter(self)
        item = QListWidgetItem()
        self.list.addItem(item)
        self.list.setItemWidget(item, w)
        return item, w

    def reserve(self, rows: int) -> bool:
        """Make one hidden row ahead of need (a replay does so in idle time after opening, so
        that its first jump makes none); True once the list has ``rows`` rows."""
        if self.list.count() >= rows:
            return True
        item, w = self._new_row(_BLANK, "#333")
        item.setHidden(True)
        self._spare.append((item, w))
        return False

    def _fit(self) -> None:
        self._fit_pending = False
        for mid in self._unfitted:
            if mid in self.items:
                self._measure(mid)
        self._unfitted.clear()
        if self.follow_latest and not self.holding():
            self.list.scrollToBottom()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt override
        if event.type() == QEvent.Type.MouseButtonPress and getattr(event, "button", None):
            w = watched if isinstance(watched, MessageWidget) else watched.parent()
            if (
                isinstance(w, MessageWidget)
                and w.msg.id
                and event.button() == Qt.MouseButton.LeftButton  # type: ignore[attr-defined]
            ):
                self.message_clicked.emit(w.msg.id)
        return super().eventFilter(watched, event)

    def resizeEvent(self, event) -> None:  # noqa: N802, ANN001 - Qt override
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

    def _ask(self, msg) -> None:  # noqa: ANN001
        self._card_message = msg.id
        self.card_label.setText(QUESTION.format(speaker=msg.speaker))
        self.card.show()

    def _answer(self, answer: str) -> None:
        if self._card_message is not None:
            self.label_requested.emit(self._card_message, self.card_label.text(), answer.lower())
        self.card.hide()

    def _annotation(self, e) -> None:  # noqa: ANN001
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

    def _state(self, name: str, state: str) -> None:
        if state == "thinking":
            self.thinking.add(name)
        else:
            self.thinking.discard(name)
        names = sorted(self.thinking)
        if not names:
            self.thinking_label.setText("")
        else:
            who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            self.thinking_label.setText(f"{who} {'is' if len(names) == 1 else 'are'} thinking…")

    def focus_message(self, message_id: int) -> None:
        self.settle()
        if self._focused in self._widgets:
            self._widgets[self._focused].set_highlight(False)
        self._focused = message_id if message_id in self._widgets else None
        if self._focused is not None:
            self._widgets[message_id].set_highlight(True)
            self.list.scrollToItem(self.items[message_id])

    def _focus_ref(self, ref: str) -> None:
        if ref.startswith("message:"):
            self.focus_message(int(ref.split(":")[1]))
        elif not ref and self._focused is not None:
            self.focus_message(-1)
