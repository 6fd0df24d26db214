"""A simulated user's hidden state, for the researcher: one bubble per turn and a sparkline.

The right-hand pane shows this instead of thought bubbles when the selected participant is a
STORM simulated user (docs/spec.md §2.5). Each bubble is one
:class:`events.HiddenStateRecorded`: the turn, the message it came with, the inner thoughts, satisfaction (0.5 "missing" when the answer
gave none) and intent clarity with their explanations, emotion and intent (marked "from
keywords" when the paper's keyword maps supplied them). Above them a sparkline of satisfaction and
clarity grows one point per turn; a value the answer did not give is a gap there, never the
placeholder. Nothing here reaches another participant: the pane only reads events, and says so
in its banner.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from playground import domain, events
from playground.history.hidden_state_ledger import HiddenStateLedger
from ui.bridge import EngineBridge
from ui.widgets.sparkline import CLARITY_COLOR, SATISFACTION_COLOR, StateSparkline

#: The banner above a simulated user's hidden state (tests look for it).
MARKER = "Simulated user's inner state — hidden from the other participants"
MARKER_HELP = (
    "A STORM simulated user writes a hidden state with every message: inner thoughts,"
    " satisfaction and intent clarity (0–1, with explanations), emotion and intent. It is"
    " stored and shown to you, and never put into another participant's prompt."
)
EMPTY_TEXT = "No turns yet: the hidden state appears with the simulated user's first message."
#: Where a value came from, as the bubble says it.
SOURCE_TEXT = {"model": "", "keywords": "from keywords", "offline": "offline engine"}
FORMAT_TEXT = {
    "json": "structured answer",
    "tagged": "tagged-text answer",
    "fallback": "unreadable answer: fallbacks",
    "offline": "offline engine",
}
CARD_STYLE = """
QFrame#hiddenState {
    background: #f7f3fb;
    border: 1px solid #c9b8dc;
    border-radius: 8px;
}
QLabel#hiddenBanner {
    background: #4a148c;
    color: white;
    border-radius: 4px;
    padding: 4px 6px;
    font-weight: bold;
}
"""


def _value(label: str, value: float, color: str, missing: bool, explanation: str) -> str:
    if missing:  # the stored placeholder 0.5 (the paper's default), which no metric counts
        text = f"<b style='color:{color}'>{label} {value:g}</b>"
        text += " <span style='color:#b71c1c'>(missing)</span>"
    else:
        text = f"<b style='color:{color}'>{label} {value:.2f}</b>"
    if explanation:
        text += f" — {html.escape(explanation)}"
    return text


def _tagged(label: str, value: str, source: str) -> str:
    where = SOURCE_TEXT.get(source, source)
    shown = html.escape(value) if value else "<i>none</i>"
    return f"<b>{label}</b> {shown}" + (
        f" <span style='color:#6a1b9a'>({where})</span>" if where else ""
    )


class HiddenStateCard(QFrame):
    """One turn's hidden state (a bubble of the pane)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("hiddenState")
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 6)
        lay.setSpacing(3)
        self.header = QLabel(self)
        self.message = QLabel(self)
        self.thoughts = QLabel(self)
        self.satisfaction = QLabel(self)
        self.clarity = QLabel(self)
        self.feeling = QLabel(self)
        self.footer = QLabel(self)
        self.footer.setStyleSheet("color:#78909c; font-size:10px;")
        self.message.setStyleSheet("color:#37474f; font-style:italic;")
        #: The bubble's lines, top to bottom.
        self.labels = (
            self.header,
            self.message,
            self.thoughts,
            self.satisfaction,
            self.clarity,
            self.feeling,
            self.footer,
        )
        for label in self.labels:
            label.setWordWrap(True)
            label.setTextFormat(Qt.TextFormat.RichText)
            lay.addWidget(label)
        self.recorded: events.HiddenStateRecorded | None = None

    def bind(self, e: events.HiddenStateRecorded, message: domain.Message | None) -> None:
        """Show ``e``; ``message`` is the message it came with (None: not known here)."""
        self.recorded = e
        s = e.state
        self.header.setText(f"<b>Turn {e.turn}</b> <span style='color:#999'>· step {e.step}</span>")
        said = html.escape(message.text) if message is not None else "…"
        self.message.setText(f"Said in #{e.message_id}: “{said}”")
        thoughts = html.escape(s.inner_thoughts) if s.inner_thoughts else "<i>none given</i>"
        self.thoughts.setText(f"<b>Inner thoughts</b> {thoughts}")
        self.satisfaction.setText(
            _value(
                "Satisfaction",
                s.satisfaction,
                SATISFACTION_COLOR,
                s.satisfaction_missing,
                s.satisfaction_explanation,
            )
        )
        self.clarity.setText(
            _value("Clarity", s.clarity, CLARITY_COLOR, False, s.clarity_explanation)
        )
        self.feeling.setText(
            _tagged("Emotion", s.emotion, s.emotion_source)
            + " · "
            + _tagged("Intent", s.intent, s.intent_source)
        )
        how = FORMAT_TEXT.get(s.format, s.format)
        origin = f" · {html.escape(e.origin)}" if e.origin and e.origin != how else ""
        self.footer.setText(f"{how}{origin}")

    def text(self) -> str:
        """Everything the bubble says, as plain text (for tests and accessibility)."""
        doc = QTextDocument()
        parts = []
        for label in self.labels:
            doc.setHtml(label.text())
            parts.append(doc.toPlainText())
        return "\n".join(parts)


class HiddenStatePane(QWidget):
    """The hidden states of the selected simulated user (see the module docstring).

    It applies the events to a :class:`HiddenStateLedger` (:attr:`ledger`), the engine's fold of
    every simulated user's states, and shows one user's at a time (:meth:`show_participant`).
    Like the other panes it has :meth:`reset` (a new session) and :meth:`begin_rebuild` /
    :meth:`end_rebuild` (a replay or the history view showing another moment).

    Args:
        bridge: Source of engine events.
        parent: Optional parent widget.
    """

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(CARD_STYLE)
        self.ledger = HiddenStateLedger()
        self._messages: dict[int, domain.Message] = {}
        self._name = ""
        self._rebuilding = False
        self._cards: list[HiddenStateCard] = []

        self.banner = QLabel(MARKER, self)
        self.banner.setObjectName("hiddenBanner")
        self.banner.setWordWrap(True)
        self.banner.setToolTip(MARKER_HELP)
        self.sparkline = StateSparkline(self)
        self.sparkline.setToolTip(
            "Satisfaction (solid) and intent clarity (dashed) at each of the user's turns, 0–1"
        )
        self.empty = QLabel(EMPTY_TEXT, self)
        self.empty.setWordWrap(True)
        self.empty.setStyleSheet("color:#777; padding:8px;")
        self._list = QWidget()
        self._list_layout = QVBoxLayout(self._list)
        self._list_layout.setContentsMargins(0, 0, 4, 0)
        self._list_layout.setSpacing(6)
        self._list_layout.addWidget(self.empty)
        self._list_layout.addStretch(1)
        self.scroll_area = QScrollArea(self)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(self._list)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(4)
        lay.addWidget(self.banner)
        lay.addWidget(self.sparkline)
        lay.addWidget(self.scroll_area, 1)

        bridge.participant_joined.connect(self._on_joined)
        bridge.message_posted.connect(self._on_message)
        bridge.hidden_state_recorded.connect(self._on_state)

    # -- public ----------------------------------------------------------------------------------

    def is_simulated(self, name: str) -> bool:
        """True when ``name`` joined as a simulated user."""
        return name in self.ledger.simulated

    def turns(self, name: str) -> int:
        """How many hidden states ``name`` has recorded so far."""
        return self.ledger.turns(name)

    def cards(self) -> list[HiddenStateCard]:
        """The bubbles on screen, newest turn first."""
        return list(self._cards)

    def show_participant(self, name: str) -> None:
        """Show ``name``'s hidden states (a simulated user's; anyone else shows none)."""
        self._name = name
        self._refresh()

    def reset(self) -> None:
        """Forget everything (a new session)."""
        self.ledger = HiddenStateLedger()
        self._messages.clear()
        self._refresh()

    def begin_rebuild(self) -> None:
        """Forget the data; the events that follow describe another moment."""
        self.ledger = HiddenStateLedger()
        self._messages = {}
        self._rebuilding = True

    def end_rebuild(self) -> None:
        self._rebuilding = False
        self._refresh()

    def load_messages(self, messages: list[domain.Message]) -> None:
        """Take the messages up to the moment in one go (a rebuild)."""
        self._messages.update((m.id, m) for m in messages)

    # -- events ----------------------------------------------------------------------------------

    def _on_joined(self, e: events.ParticipantJoined) -> None:
        self.ledger.apply([e])

    def _on_message(self, message: domain.Message) -> None:
        self._messages[message.id] = message
        if message.kind == "simulated" and message.speaker == self._name:
            for card in self._cards:  # the state may have come first: fill in its message
                if card.recorded is not None and card.recorded.message_id == message.id:
                    card.bind(card.recorded, message)

    def _on_state(self, e: events.HiddenStateRecorded) -> None:
        self.ledger.apply([e])
        if not self._rebuilding and e.participant == self._name:
            self._refresh()

    # -- showing ---------------------------------------------------------------------------------

    def _refresh(self) -> None:
        states = self.ledger.history(self._name)
        self.sparkline.set_points(
            [e.turn for e in states],
            [e.state.rated_satisfaction for e in states],  # a turn not rated is a gap, not 0.5
            [e.state.rated_clarity for e in states],
        )
        newest_first = list(reversed(states))
        while len(self._cards) < len(newest_first):
            card = HiddenStateCard(self._list)
            self._list_layout.insertWidget(self._list_layout.count() - 1, card)
            self._cards.append(card)
        while len(self._cards) > len(newest_first):
            card = self._cards.pop()
            self._list_layout.removeWidget(card)
            card.deleteLater()
        for card, e in zip(self._cards, newest_first, strict=True):
            card.bind(e, self._messages.get(e.message_id))
        self.empty.setVisible(not states)
