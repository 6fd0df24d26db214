"""Evaluation popup: why an agent does (or does not) want to say one of its inner thoughts.

Opened from a thought bubble's right-click. It shows the latest evaluation of the thought: the
reasons for and against speaking, the rating and its distribution over 1..5, the expected value,
the silence factor and the resulting motivation score, how the distribution was obtained, and a
one-line score history when the thought was evaluated more than once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from playground import domain
from ui import screen_fit, theme

RATINGS = (1, 2, 3, 4, 5)
#: The pop-up's width (px) when the screen allows; its height is what its contents need.
WIDTH = 480
SILENCE_BASE = 1.02
METHOD_EXPLANATIONS = {
    "logprobs": "logprobs — the distribution comes from the rating token's top-5 "
    "log-probabilities.",
    "sampled": "sampled — the distribution is the share of each rating among ratings sampled "
    "at temperature 1 (G-Eval's way where the server gives no logprobs).",
    "parsed": "parsed — the written rating alone, with probability 1 (no logprobs and no "
    "samples were used).",
    "offline-heuristic": "offline-heuristic — offline engine: the rating is derived from eight "
    "measured signals.",
}


_LONG_WORD = re.compile(r"\S{31,}")


def breakable(text: str, chunk: int = 24) -> str:
    """``text`` with zero-width spaces inside very long words, so word-wrapped labels can wrap.

    For display only: a URL or a run of characters without spaces would otherwise force a label
    (and the pane around it) wider than the window.
    """

    def split(m: re.Match[str]) -> str:
        word = m.group(0)
        return "\u200b".join(word[i : i + chunk] for i in range(0, len(word), chunk))

    return _LONG_WORD.sub(split, text)


def method_explanation(method: str, samples: int | None = None) -> str:
    """One sentence saying how a score method obtained its rating distribution (with the sample
    count for the sampled method)."""
    text = METHOD_EXPLANATIONS.get(method, method)
    if method == "sampled" and samples:
        text += f" {samples} samples were read."
    return text


def silence_text(silence_factor: float) -> str:
    """Describe ``d = 1.02^(t−τp)``, recovering t−τp when the default base explains the value."""
    if silence_factor >= 1.0:
        n = round(math.log(silence_factor) / math.log(SILENCE_BASE))
        if abs(SILENCE_BASE**n - silence_factor) <= 1e-4 * max(1.0, silence_factor):
            steps = "step" if n == 1 else "steps"
            return (
                f"Silence factor 1.02^(t−τp) = 1.02^{n} = {silence_factor:.4f}"
                f"  ({n} {steps} since this participant last spoke)"
            )
    return f"Silence factor base^(t−τp) = {silence_factor:.4f}"


class DistributionBars(QWidget):
    """Small horizontal bars: the probability of each rating 1..5, with percentages.

    Args:
        distribution: Probability per rating; missing ratings count as 0.
        rating: The rating the model gave; its bar is drawn in the score colour.
        parent: Optional parent widget.
    """

    ROW_HEIGHT = 18

    def __init__(
        self, distribution: dict[int, float], rating: int, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.probabilities = {r: float(distribution.get(r, 0.0)) for r in RATINGS}
        self.rating = rating
        self.setMinimumHeight(self.ROW_HEIGHT * len(RATINGS))
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip(self.text())

    def text(self) -> str:
        return "  ".join(f"{r}: {self.probabilities[r]:.0%}" for r in RATINGS)

    def sizeHint(self) -> QSize:
        return QSize(260, self.ROW_HEIGHT * len(RATINGS))

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        fm = p.fontMetrics()
        label_w = fm.horizontalAdvance("5") + 8
        pct_w = fm.horizontalAdvance("100%") + 8
        bar_w = max(20, self.width() - label_w - pct_w)
        for i, r in enumerate(RATINGS):
            y = i * self.ROW_HEIGHT
            prob = max(0.0, min(1.0, self.probabilities[r]))
            p.setPen(QColor("#333333"))
            p.drawText(
                QRectF(0, y, label_w - 6, self.ROW_HEIGHT),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                str(r),
            )
            track = QRectF(label_w, y + 3, bar_w, self.ROW_HEIGHT - 6)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QColor("#eceff1"))
            p.drawRoundedRect(track, 3, 3)
            if prob > 0:
                fill = QRectF(track.x(), track.y(), max(2.0, bar_w * prob), track.height())
                p.setBrush(QColor(theme.BADGE_SCORE if r == self.rating else "#78909c"))
                p.drawRoundedRect(fill, 3, 3)
            p.setPen(QColor("#333333"))
            p.drawText(
                QRectF(label_w + bar_w + 6, y, pct_w, self.ROW_HEIGHT),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                f"{prob:.0%}",
            )
        p.end()


class EvaluationPopup(QDialog):
    """Non-modal dialog explaining the latest evaluation of one thought; fitted to its screen
    (:mod:`ui.screen_fit`: its size and place are kept), its details scroll above Close.

    Args:
        thought: The evaluated thought.
        evaluations: Its evaluations, oldest first; the last one is shown in detail and all of
            them make up the history line. May be empty ("not evaluated yet").
        parent: The widget the dialog belongs to (the thoughts pane).
    """

    def __init__(
        self,
        thought: domain.Thought,
        evaluations: Sequence[domain.Evaluation],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.thought = thought
        self.evaluations = list(evaluations)
        self._lines: list[str] = []
        self.setWindowTitle(f"Evaluation of thought #{thought.id} — {thought.agent}")
        self.setModal(False)
        self.setMinimumWidth(400)

        # The reasons and the eight heuristics make a long column: it scrolls, Close stays in
        # view, and the pop-up is no taller than its screen (a 1024×700 one cut Close in half).
        layout, outer = screen_fit.scrolling_body(self)
        layout.setSpacing(6)
        self._add(layout, f"Thought #{thought.id} of {thought.agent}", bold=True)
        quote = self._add(layout, thought.text)
        quote.setStyleSheet("font-style: italic; color: #333;")

        latest = self.evaluations[-1] if self.evaluations else None
        if latest is None:
            self._add(layout, "Not evaluated yet.")
        else:
            self._build_details(layout, latest)
        layout.addStretch(1)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        buttons.accepted.connect(self.close)
        outer.addWidget(buttons)
        screen_fit.fit_window(self, self._wanted(outer, layout, buttons))

    def _wanted(self, outer: QVBoxLayout, body: QVBoxLayout, buttons: QWidget) -> QSize:
        """The size that shows everything at :data:`WIDTH` without scrolling (word-wrapped
        labels are as tall as the width makes them)."""
        m = outer.contentsMargins()
        scroll = self.scroll_area  # type: ignore[attr-defined]
        bar = scroll.verticalScrollBar().sizeHint().width()
        inner = WIDTH - m.left() - m.right() - bar
        height = (
            m.top()
            + body.totalHeightForWidth(inner)
            + outer.spacing()
            + buttons.sizeHint().height()
            + m.bottom()
        )
        return QSize(WIDTH, height)

    def _build_details(self, layout: QVBoxLayout, ev: domain.Evaluation) -> None:
        self._add(layout, "Reasons to speak", bold=True)
        for reason in ev.reasons_for or ["(none given)"]:
            self._add(layout, f"+ {reason}", indent=True)
        self._add(layout, "Reasons to stay silent", bold=True)
        for reason in ev.reasons_against or ["(none given)"]:
            self._add(layout, f"− {reason}", indent=True)

        self._add(layout, f"Rating {ev.rating} of 5 (evaluated at step {ev.step})", bold=True)
        bars = DistributionBars(ev.distribution, ev.rating, self)
        self._lines.append(bars.text())
        layout.addWidget(bars)

        self._add(layout, f"Expected value Σ p·s = {ev.expected:.2f}")
        self._add(layout, silence_text(ev.silence_factor))
        self._add(
            layout,
            f"Score = expected × silence factor = {ev.expected:.2f} × "
            f"{ev.silence_factor:.4f} = {ev.score:.2f}",
            bold=True,
        )
        self._add(layout, f"Method: {method_explanation(ev.method, ev.samples)}")
        if ev.heuristics:
            order = [h for h in domain.HEURISTICS if h in ev.heuristics]
            order += sorted(h for h in ev.heuristics if h not in domain.HEURISTICS)
            for name in order:
                self._add(layout, f"{name}: {ev.heuristics[name]:.2f}", indent=True)
        if len(self.evaluations) > 1:
            history = " · ".join(f"step {e.step} → {e.score:.2f}" for e in self.evaluations)
            self._add(layout, f"History: {history}")

    def _add(
        self, layout: QVBoxLayout, text: str, *, bold: bool = False, indent: bool = False
    ) -> QLabel:
        label = QLabel(breakable(text), self)
        label.setTextFormat(Qt.TextFormat.PlainText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if bold:
            font = QFont(label.font())
            font.setBold(True)
            label.setFont(font)
        if indent:
            label.setIndent(12)
        layout.addWidget(label)
        self._lines.append(text)
        return label

    def text(self) -> str:
        """Everything the popup says, one line per label (for tests and copying)."""
        return "\n".join(self._lines)
