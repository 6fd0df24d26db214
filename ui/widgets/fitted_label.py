"""Labels that remember their sizes, so a pane that rebinds many of them at once stays cheap.

A QLabel lays its text out again for every size question: a word-wrapped one for each
``heightForWidth``, and three times more for ``sizeHint``/``minimumSizeHint``. Rich or selectable
text goes through a QTextDocument, which is laid out two or three times per question. A layout
pass asks each label several such questions, so after a replay jump that rebinds a few dozen
labels, text layout took most of the frame.

:class:`FittedLabel` answers from caches shared by every label of the same look (object name,
font, text format, interaction flags, margins): heights per ``(text, width)``, and the size hints
of single-line labels per text. A text seen before costs no layout at all, and a new one costs
exactly one of Qt's own measurements, so every size is still Qt's, to the pixel.

A word-wrapped label gets its width from the vertical layout it sits in, and its height from
``heightForWidth``; its own size hints only feed the totals of its parent's size hint. It
therefore answers them without laying anything out (no minimum, a one-line preferred height),
which changes no geometry. Use it only where that holds: in a vertical layout, or with an
``Ignored`` horizontal size policy. A single-line label that gets a whole row while the one widget
beside it is hidden (:attr:`FittedLabel.width_given_while_hidden`) likewise gives only its
height, which depends on the fonts its line uses, not on the text.
"""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import QLabel, QWidget

#: Most remembered heights and size hints, each. Old entries go first.
CACHE_SIZE = 20_000

_heights: dict[tuple[Any, ...], int] = {}
_hints: dict[tuple[Any, ...], tuple[QSize, QSize]] = {}


def _remember(cache: dict[tuple[Any, ...], Any], key: tuple[Any, ...], value: Any) -> None:
    if len(cache) >= CACHE_SIZE:
        for old in list(cache)[: CACHE_SIZE // 10]:
            del cache[old]
    cache[key] = value


def clear_cache() -> None:
    """Forget every remembered size (tests; a font change applies by itself)."""
    _heights.clear()
    _hints.clear()


class FittedLabel(QLabel):
    """A QLabel whose size answers are remembered across labels of the same look.

    Word-wrapped: ``heightForWidth`` is remembered per (text, width) and the size hints are
    layout-free (see the module notes). Otherwise ``sizeHint`` and ``minimumSizeHint`` are
    remembered per text. Everything else is a plain QLabel.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._look_key: tuple[Any, ...] | None = None

    def _look(self) -> tuple[Any, ...]:
        """What, besides the text and width, decides the label's size."""
        look = self._look_key
        if look is None:
            self.ensurePolished()  # a style sheet may set the font or margins
            m = self.contentsMargins()
            look = self._look_key = (
                self.objectName(),
                self.font().key(),
                self.textFormat(),
                self.textInteractionFlags(),
                self.wordWrap(),
                self.alignment(),
                self.margin(),
                self.indent(),
                self.frameWidth(),
                m.left(),
                m.top(),
                m.right(),
                m.bottom(),
            )
        return look

    def changeEvent(self, event: QEvent) -> None:
        self._look_key = None  # font, style or contents margins may have changed
        super().changeEvent(event)

    # Setters that change the look without a change event.
    def setWordWrap(self, on: bool) -> None:
        self._look_key = None
        super().setWordWrap(on)

    def setTextFormat(self, fmt: Qt.TextFormat) -> None:
        self._look_key = None
        super().setTextFormat(fmt)

    def setTextInteractionFlags(self, flags: Qt.TextInteractionFlag) -> None:
        self._look_key = None
        super().setTextInteractionFlags(flags)

    def setAlignment(self, alignment: Qt.AlignmentFlag) -> None:
        self._look_key = None
        super().setAlignment(alignment)

    def setMargin(self, margin: int) -> None:
        self._look_key = None
        super().setMargin(margin)

    def setIndent(self, indent: int) -> None:
        self._look_key = None
        super().setIndent(indent)

    def setObjectName(self, name: str) -> None:
        self._look_key = None
        super().setObjectName(name)

    def heightForWidth(self, width: int) -> int:
        if not self.wordWrap():
            return super().heightForWidth(width)
        key = (self._look(), self.text(), width)
        height = _heights.get(key)
        if height is None:
            height = super().heightForWidth(width)
            _remember(_heights, key, height)
        return height

    def sizeHint(self) -> QSize:
        if self.wordWrap():
            return QSize(0, self.fontMetrics().height())
        return self._single_line_hints()[0]

    def minimumSizeHint(self) -> QSize:
        if self.wordWrap():
            return QSize(0, 0)
        return self._single_line_hints()[1]

    def _single_line_hints(self) -> tuple[QSize, QSize]:
        text = self.text()
        free = self.width_given_while_hidden
        if free is not None and free.isHidden():
            shape_key = (self._look(), _line_shape(text))
            hints = _hints.get(shape_key)
            if hints is None:
                size, minimum = self._measured_hints()
                hints = (QSize(0, size.height()), QSize(0, minimum.height()))
                _remember(_hints, shape_key, hints)
            return hints
        key = (self._look(), text)
        hints = _hints.get(key)
        if hints is None:
            hints = self._measured_hints()
            _remember(_hints, key, hints)
        return hints

    def _measured_hints(self) -> tuple[QSize, QSize]:
        minimum = super().minimumSizeHint()  # also works out the size hint
        return super().sizeHint(), minimum

    #: For a single-line label that shares its row with one other widget and gets the whole row
    #: while that widget is hidden (a message's header beside its "✎ note" button): that widget.
    #: While it is hidden, only the label's height matters, and the size hints give no width and
    #: a height remembered per line shape (see :func:`_line_shape`), not per text.
    width_given_while_hidden: QWidget | None = None


def _line_shape(text: str) -> tuple[str, frozenset[str]]:
    """What decides the height of a single line of ``text``: its markup without the text (tags
    choose fonts), and the characters outside ASCII (they may come from fallback fonts with
    other metrics). ASCII text is all drawn in the label's own fonts."""
    return _TEXT_BETWEEN_TAGS.sub("><", text), frozenset(c for c in text if c > "\x7f")


_TEXT_BETWEEN_TAGS = re.compile(r">[^<]*<")
