"""The text a pane or a list shows in place of its content while it has none (centred, wrapped, grey)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

#: The thoughts pane's look; other panes pass their own ``style``.
PLACEHOLDER_STYLE = "color: #90a4ae; padding: 24px;"


def placeholder_label(
    text: str = "", parent: QWidget | None = None, *, style: str = PLACEHOLDER_STYLE
) -> QLabel:
    """A label for ``text`` (set it later with ``setText``), centred and wrapped, in ``style``."""
    label = QLabel(text, parent)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    label.setStyleSheet(style)
    return label
