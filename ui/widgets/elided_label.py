"""A one-line label that elides its text to the width it gets, with the whole text as tooltip.

Pane titles ("Inner thoughts — Christopher") must never widen their pane, and must never lose
the participant's name without a way to read it: the label asks for no width of its own, draws
as much of the text as fits (eliding the middle, so the start and the name at the end stay), and
shows the whole text in its tooltip while it is shortened.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget


class ElidedLabel(QLabel):
    """A plain-text, single-line QLabel that elides instead of growing.

    ``text()`` returns the whole text; the label shows it shortened with "…" when it does not fit.

    Args:
        text: The text.
        parent: Optional parent widget.
        mode: Where to elide (default: the middle).
    """

    def __init__(
        self,
        text: str = "",
        parent: QWidget | None = None,
        mode: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle,
    ) -> None:
        super().__init__(parent)
        self._full = ""
        self._mode = mode
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setText(text)

    def text(self) -> str:
        return self._full

    def shown_text(self) -> str:
        """The text as drawn now (elided when it does not fit)."""
        return super().text()

    def is_elided(self) -> bool:
        """Whether the label shows less than its whole text."""
        return super().text() != self._full

    def setText(self, text: str) -> None:
        self._full = text
        self._elide()

    def minimumSizeHint(self) -> QSize:
        m = self.contentsMargins()
        return QSize(
            self.fontMetrics().horizontalAdvance("…") + m.left() + m.right(),
            super().minimumSizeHint().height(),
        )

    def sizeHint(self) -> QSize:
        m = self.contentsMargins()
        fm = self.fontMetrics()
        return QSize(
            fm.horizontalAdvance(self._full) + m.left() + m.right() + 2,
            max(fm.height(), super().minimumSizeHint().height()),
        )

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        self._elide()

    def _elide(self) -> None:
        width = self.contentsRect().width()
        shown = self.fontMetrics().elidedText(self._full, self._mode, max(width, 0))
        if shown != super().text():
            super().setText(shown)
        tip = self._full if shown != self._full else ""
        if self.toolTip() != tip:
            self.setToolTip(tip)
