"""BusyOverlay: a veil over a pane that says what the window is waiting for (e.g. the model)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QVBoxLayout, QWidget


class BusyOverlay(QWidget):
    """Covers its parent while shown: a busy bar and one line of text, centred.

    It follows the parent's size, and the pane under it takes no clicks meanwhile. ``show_text``
    with a text shows it; with ``""`` hides it.
    """

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._covered = parent
        self.setObjectName("busyOverlay")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setStyleSheet(
            "#busyOverlay { background: rgba(255, 255, 255, 225); }"
            "QLabel { color: #263238; font-size: 11pt; }"
        )
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 0)  # busy: no known end
        self.bar.setTextVisible(False)
        self.bar.setFixedWidth(220)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addWidget(self.label)
        layout.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(2)
        parent.installEventFilter(self)
        self.hide()

    def text(self) -> str:
        """What it says ("" while hidden)."""
        return self.label.text() if self.isVisible() else ""

    def show_text(self, text: str) -> None:
        """Show ``text`` over the parent, or hide the overlay when ``text`` is empty."""
        if not text:
            self.hide()
            return
        self.label.setText(text)
        self.setGeometry(self._covered.rect())
        self.raise_()
        self.show()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._covered and event.type() == QEvent.Type.Resize:
            self.setGeometry(self._covered.rect())
        return False
