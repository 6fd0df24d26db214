"""One thought bubble: id, saliency and score badges, System 1/2, stimuli, text; click, right-click, delete."""

from __future__ import annotations

import html
from collections.abc import Sequence

import shiboken6
from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QCursor, QMouseEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from playground import domain
from playground.history import ledger
from ui import theme
from ui.panes.decisions.evaluation_popup import EvaluationPopup, breakable
from ui.widgets.fitted_label import FittedLabel

SORT_NEWEST = "Newest first"
#: Sorting by score puts the scores of the participant's latest evaluation step first: a score
#: from an earlier step was given in another moment of the conversation, so it is not ranked as
#: if it were current (each bubble says the step it was scored at).
SORT_SCORE = "Score, latest step first"
SORT_SCORE_HELP = (
    "Score, latest step first: the thoughts scored at the participant's latest evaluation step,"
    " highest score first; then the thoughts last scored at an earlier step, by score; then"
    " those not scored yet."
)
NONE_PLACEHOLDER = "Select a participant to see their inner thoughts."
EMPTY_PLACEHOLDER = "No thoughts yet."
HUMAN_PLACEHOLDER = "Humans have no inner thoughts in the engine."
#: For a baseline agent (its policy's label), which takes turns without thinking.
BASELINE_PLACEHOLDER = (
    "{} forms no thoughts: it takes turns by the {} policy and answers from its static persona."
    " The decision strip shows why it spoke or stayed silent."
)
NO_SCORE = "–"
LINK_STYLE = "color:#1565c0; text-decoration:none;"

SortKey = tuple[float, ...]

STYLE = f"""
QFrame#thoughtBubble {{
    background: #ffffff;
    border: 1px solid #cfd8dc;
    border-radius: 8px;
}}
QFrame#thoughtBubble[expressed="true"] {{
    background: {theme.EXPRESSED_BG};
    border: 1px solid #e0c35a;
}}
QFrame#thoughtBubble[highlighted="true"] {{
    background: {theme.HIGHLIGHT_BG};
    border: 1px solid #5b9bd5;
}}
QLabel#badgeId {{
    background: {theme.BADGE_ID};
    color: #ffffff;
    border-radius: 4px;
    padding: 1px 5px;
    font-weight: bold;
}}
QLabel#badgeSaliency {{
    background: {theme.BADGE_SALIENCY};
    color: #000000;
    border: 1px solid #555555;
    border-radius: 4px;
    padding: 0px 4px;
}}
QLabel#badgeScore {{
    background: {theme.BADGE_SCORE};
    color: #ffffff;
    border-radius: 4px;
    padding: 1px 5px;
    font-weight: bold;
}}
QLabel#tagSystem, QLabel#tagRetained {{
    color: #455a64;
    border: 1px solid #b0bec5;
    border-radius: 4px;
    padding: 0px 4px;
}}
QLabel#tagRetained {{
    color: #6a1b9a;
    border-color: #ce93d8;
}}
QLabel#thoughtText {{
    color: #212121;
}}
QLabel#stimuli, QLabel#saidIn, QLabel#scoredAt {{
    color: #607d8b;
}}
QToolButton#deleteButton {{
    color: #78909c;
    border: none;
    padding: 0px 2px;
}}
QToolButton#deleteButton:hover {{
    color: {theme.BADGE_SCORE};
}}
"""


def _refresh_style(widget: QWidget) -> None:
    """Re-apply the style sheet after a dynamic property used by a selector changed."""
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)
    widget.update()


def _badge(text: str, name: str, parent: QWidget) -> QLabel:
    label = FittedLabel(text, parent)
    label.setObjectName(name)
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
    return label


class _LinkLabel(FittedLabel):
    """A rich-text label of links that also reports when the mouse leaves it."""

    left = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse)
        self.setWordWrap(True)
        self.setCursor(Qt.CursorShape.ArrowCursor)

    def leaveEvent(self, event) -> None:
        self.left.emit()
        super().leaveEvent(event)


class ThoughtBubble(QFrame):
    """One thought as a bubble: badges, text, stimuli and (once said) a link to its message.

    The bubble only reports what the user did through its signals; the pane turns them into its
    own requests.

    Args:
        thought: The thought to show.
        evaluations: Its evaluations so far, oldest first, as the pane's ledger holds them (read
            again when the evaluation popup opens; :meth:`set_evaluation` gives newer ones).
        retained: Whether the latest evaluation re-scored an older, retained thought.
        popup_parent: The widget evaluation popups are parented to (the pane).
        parent: Optional parent widget.

    Attributes:
        thought_id: The id of the thought shown.
        delete_button: The ✕ button.
    """

    clicked = Signal(int)  # thought id (left click on the body of an unexpressed thought)
    delete_clicked = Signal(int)  # thought id
    stimulus_hovered = Signal(str)  # ref, "" when the mouse left a link
    stimulus_clicked = Signal(str)  # ref
    message_clicked = Signal(int)  # message id

    def __init__(
        self,
        thought: domain.Thought,
        evaluations: Sequence[domain.Evaluation],
        *,
        retained: bool = False,
        popup_parent: QWidget | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("thoughtBubble")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.thought_id = thought.id
        self.thought = thought
        self._evaluations = evaluations
        self._popup_parent = popup_parent
        self._popup: EvaluationPopup | None = None
        self._pressed = False
        self.setProperty("expressed", False)
        self.setProperty("highlighted", False)

        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 6, 6, 7)
        outer.setSpacing(4)

        top = QHBoxLayout()
        top.setSpacing(3)
        self._id_badge = _badge(f"#{thought.id}", "badgeId", self)
        self._saliency_badge = _badge("", "badgeSaliency", self)
        self._saliency_badge.setToolTip("Saliency: how strongly the conversation evoked it")
        self._score_badge = _badge(NO_SCORE, "badgeScore", self)
        self._score_badge.setToolTip("Motivation score (right-click for the evaluation)")
        self._system_tag = _badge("", "tagSystem", self)
        self._retained_tag = _badge("retained", "tagRetained", self)
        self._retained_tag.setToolTip("Re-scored: this older thought became salient again")
        # The top row stays narrow enough for the pane's minimum width, so ✕ is always in view;
        # the "retained" tag goes to the bottom row, beside the step the score is from.
        for w in (self._id_badge, self._saliency_badge, self._score_badge, self._system_tag):
            top.addWidget(w)
        top.addStretch(1)
        self.delete_button = QToolButton(self)
        self.delete_button.setObjectName("deleteButton")
        self.delete_button.setText("✕")
        self.delete_button.setToolTip("Delete this thought")
        self.delete_button.setAutoRaise(True)
        self.delete_button.setCursor(Qt.CursorShape.ArrowCursor)
        self.delete_button.clicked.connect(lambda: self.delete_clicked.emit(self.thought_id))
        top.addWidget(self.delete_button)
        outer.addLayout(top)

        self._text = FittedLabel(self)
        self._text.setObjectName("thoughtText")
        self._text.setTextFormat(Qt.TextFormat.PlainText)
        self._text.setWordWrap(True)
        # Long words get break opportunities (breakable); anything else that cannot wrap is
        # clipped rather than widening the pane.
        self._text.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        outer.addWidget(self._text)

        self._stimuli = _LinkLabel(self)
        self._stimuli.setObjectName("stimuli")
        self._stimuli.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._stimuli.linkHovered.connect(self.stimulus_hovered.emit)
        self._stimuli.linkActivated.connect(self.stimulus_clicked.emit)
        self._stimuli.left.connect(lambda: self.stimulus_hovered.emit(""))
        outer.addWidget(self._stimuli)

        self.said_label = _LinkLabel(self)
        self.said_label.setObjectName("saidIn")
        self.said_label.setWordWrap(False)
        self.said_label.linkActivated.connect(self._on_said_link)
        self.scored_label = _badge("", "scoredAt", self)
        self.scored_label.setToolTip("The step of the conversation this score was given at")
        bottom = QHBoxLayout()
        bottom.setSpacing(6)
        bottom.addWidget(self.said_label)
        bottom.addWidget(self._retained_tag)
        bottom.addStretch(1)
        bottom.addWidget(self.scored_label)
        outer.addLayout(bottom)

        self.set_thought(thought)
        self.set_evaluation(evaluations, retained)

    def sizeHint(self) -> QSize:
        """The layout's size hint, without Qt's extra measuring of the texts at the hint's width
        (bubbles are always shown at the page's width, at their height for that width)."""
        lay = self.layout()
        if lay is None:
            return super().sizeHint()
        m = self.contentsMargins()
        s = lay.sizeHint()
        return QSize(s.width() + m.left() + m.right(), s.height() + m.top() + m.bottom())

    # -- content -------------------------------------------------------------------------------

    def set_thought(self, thought: domain.Thought) -> None:
        """Show a (new version of the) thought; only what changed is touched."""
        old = self.thought
        self.thought = thought
        first = self._text.text() == ""
        if first or thought.id != old.id:
            self._id_badge.setText(f"#{thought.id}")
        if first or thought.text != old.text:
            self._text.setText(breakable(thought.text))
        if first or thought.saliency != old.saliency:
            self._saliency_badge.setText(f"sal {thought.saliency:.2f}")
        if first or thought.system != old.system:
            self._system_tag.setText(f"S{thought.system}")
            self._system_tag.setToolTip(
                "System 1: fast, intuitive" if thought.system == 1 else "System 2: deliberate"
            )
        if first or thought.stimuli != old.stimuli:
            links = " · ".join(
                f'<a style="{LINK_STYLE}" href="{html.escape(ref)}">{html.escape(ref)}</a>'
                for ref in thought.stimuli
            )
            self._stimuli.setText(f"from {links}" if links else "")
            self._stimuli.setVisible(bool(thought.stimuli))
        self._id_badge.setToolTip(
            f"Thought #{thought.id} · formed at step {thought.created_step}"
            + (f" · {thought.origin}" if thought.origin else "")
        )
        self._apply_expressed()
        self._apply_score()

    def set_evaluation(self, evaluations: Sequence[domain.Evaluation], retained: bool) -> None:
        """Show the thought's evaluations as they stand now (the ledger's, after one more):
        the score badge, the step it was given at and the retained tag."""
        self._evaluations = evaluations
        self._retained_tag.setVisible(retained and bool(evaluations))
        self._apply_score()

    def rebind(
        self, thought: domain.Thought, evaluations: Sequence[domain.Evaluation], retained: bool
    ) -> None:
        """Show another thought, or another state of the same one (a replay moved in time)."""
        self._evaluations = evaluations
        self.thought_id = thought.id
        self.set_thought(thought)
        self.set_evaluation(evaluations, retained)

    def set_deletable(self, on: bool) -> None:
        """Offer ✕ or not (not in a replay or an ended session: nothing can be deleted there).
        Hidden, it keeps its room: the bubble's layout does not change."""
        policy = self.delete_button.sizePolicy()
        if not policy.retainSizeWhenHidden():
            policy.setRetainSizeWhenHidden(True)
            self.delete_button.setSizePolicy(policy)
        self.delete_button.setVisible(on)

    def set_highlighted(self, on: bool) -> None:
        if bool(self.property("highlighted")) != on:
            self.setProperty("highlighted", on)
            _refresh_style(self)

    def is_highlighted(self) -> bool:
        return bool(self.property("highlighted"))

    def is_expressed(self) -> bool:
        return self.thought.expressed_in is not None

    def score(self) -> float | None:
        """The score shown (:func:`playground.history.ledger.current_score`)."""
        return ledger.current_score(self.thought, self._evaluations)

    def text(self) -> str:
        """The thought text."""
        return self.thought.text

    def scored_step(self) -> int | None:
        """The step the score shown was given at (None before any evaluation)."""
        return ledger.scored_at(self._evaluations)

    def scored_text(self) -> str:
        """What the bubble says about its score's age: e.g. ``"scored at step 7"``, or ``""``."""
        return self.scored_label.text() if self.scored_label.isVisibleTo(self) else ""

    def score_text(self) -> str:
        """The score badge's text: e.g. ``"4.12"``, or ``"–"`` before any evaluation."""
        return self._score_badge.text()

    def _apply_score(self) -> None:
        score = self.score()
        text = NO_SCORE if score is None else f"{score:.2f}"
        if self._score_badge.text() != text:
            self._score_badge.setText(text)
        step = self.scored_step()
        scored = "" if step is None else f"scored at step {step}"
        if self.scored_label.text() != scored:
            self.scored_label.setText(scored)
        self.scored_label.setVisible(bool(scored))

    def _apply_expressed(self) -> None:
        mid = self.thought.expressed_in
        expressed = mid is not None
        if expressed:
            self.said_label.setText(f'<a style="{LINK_STYLE}" href="{mid}">said in #{mid}</a>')
            self.setToolTip(f"Said in message #{mid} · right-click for the evaluation")
            self.setCursor(Qt.CursorShape.ArrowCursor)
        else:
            self.setToolTip(
                f"Click to make {self.thought.agent} say this now · right-click for the evaluation"
            )
            self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.said_label.setVisible(expressed)
        if bool(self.property("expressed")) != expressed:
            self.setProperty("expressed", expressed)
            _refresh_style(self)

    def _on_said_link(self, href: str) -> None:
        if href.isdigit():
            self.message_clicked.emit(int(href))

    # -- interaction ---------------------------------------------------------------------------

    def show_evaluation(self) -> EvaluationPopup | None:
        """Open (or reopen) the evaluation popup; None when the thought is not evaluated yet."""
        if not self._evaluations:
            QToolTip.showText(QCursor.pos(), "Not evaluated yet.", self)
            return None
        if self._popup is not None and shiboken6.isValid(self._popup):
            self._popup.close()
        popup = EvaluationPopup(self.thought, self._evaluations, self._popup_parent)
        popup.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
        popup.show()
        popup.raise_()
        self._popup = popup
        return popup

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._pressed = True
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self._pressed:
            self._pressed = False
            inside = self.rect().contains(event.position().toPoint())
            if inside and not self.is_expressed():
                self.clicked.emit(self.thought_id)
            event.accept()
            return
        super().mouseReleaseEvent(event)

    def contextMenuEvent(self, event) -> None:
        self.show_evaluation()
        event.accept()
