"""The progress panel: a bar per condition, LLM calls, tokens, retries, errors, elapsed and ETA."""

from __future__ import annotations

import time

from PySide6.QtWidgets import (
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from playground.experiments import runner as experiment


def duration(seconds: float) -> str:
    """``m:ss`` or ``h:mm:ss``."""
    s = max(0, round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def eta(progress: experiment.Progress, now: float | None = None) -> float | None:
    """Seconds left at the pace of the conversations finished by this run (those skipped because
    an earlier run finished them do not count); ``None`` before the first one ends."""
    skipped = sum(c.skipped for c in progress.conditions.values())
    done_now = progress.finished - skipped
    if done_now <= 0:
        return None
    elapsed = (time.monotonic() if now is None else now) - progress.started
    return elapsed / done_now * (progress.total - progress.finished)


class ProgressPanel(QGroupBox):
    """Bars per condition and overall, with the run's counters."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Progress", parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 6)
        self.grid = QGridLayout()
        self.grid.setHorizontalSpacing(10)
        self.grid.setVerticalSpacing(3)
        self.grid.setColumnStretch(1, 1)
        lay.addLayout(self.grid, 3)
        side = QVBoxLayout()
        self.stats = QLabel("")
        self.stats.setWordWrap(True)
        self.last_error = QLabel("")
        self.last_error.setWordWrap(True)
        self.last_error.setStyleSheet("color:#c62828;")
        self.last_error.hide()
        side.addWidget(self.stats)
        side.addWidget(self.last_error)
        side.addStretch(1)
        lay.addSpacing(16)
        lay.addLayout(side, 2)
        self.bars: dict[str, QProgressBar] = {}
        self.details: dict[str, QLabel] = {}
        self._rows: list[QWidget] = []
        self.clear("Select an experiment, or launch one with “New experiment…”.")

    def clear(self, text: str = "") -> None:
        for w in self._rows:
            self.grid.removeWidget(w)
            w.deleteLater()
        self._rows.clear()
        self.bars.clear()
        self.details.clear()
        self.stats.setText(text)
        self.last_error.hide()

    def _ensure_rows(self, names: list[str]) -> None:
        if list(self.bars) == names:
            return
        self.clear()
        for i, name in enumerate(names):
            label = QLabel(name if name != "all" else "all conditions")
            bar = QProgressBar()
            bar.setFormat("%v/%m")
            bar.setMinimumWidth(160)
            bar.setMaximumHeight(18)
            detail = QLabel("")
            detail.setMinimumWidth(200)
            for col, w in enumerate((label, bar, detail)):
                self.grid.addWidget(w, i, col)
                self._rows.append(w)
            self.bars[name] = bar
            self.details[name] = detail

    def set_progress(self, p: experiment.Progress, *, live: bool) -> None:
        """Show ``p``; ``live`` when it is running in this window (counters, elapsed, ETA)."""
        names = [*p.conditions, "all"]
        self._ensure_rows(names)
        for name in names:
            if name == "all":
                total, finished = p.total, p.finished
                failed = sum(c.failed for c in p.conditions.values())
                skipped = sum(c.skipped for c in p.conditions.values())
            else:
                c = p.conditions[name]
                total, finished, failed, skipped = c.total, c.done + c.failed, c.failed, c.skipped
            bar = self.bars[name]
            bar.setMaximum(max(total, 1))
            bar.setValue(min(finished, max(total, 1)))
            parts = []
            if failed:
                parts.append(f"{failed} failed")
            if skipped and live:
                parts.append(f"{skipped} done before")
            self.details[name].setText(" · ".join(parts))
            self.details[name].setStyleSheet("color:#c62828;" if failed else "color:#555;")
        if live:
            elapsed = time.monotonic() - p.started
            left = eta(p)
            counters = (
                f"{p.calls:,} LLM calls · {p.tokens:,} tokens · {p.retries} retries ·"
                f" {p.errors} errors\n"
            )
            if p.running or p.finished < p.total:
                when = f"{p.running} conversations running · elapsed {duration(elapsed)} · ETA "
                when += duration(left) if left is not None else "—"
            else:
                when = f"all done in {duration(elapsed)}"
            self.stats.setText(counters + when)
        else:
            self.stats.setText(
                f"{p.calls:,} LLM calls · {p.tokens:,} tokens in its saved conversations"
            )
        if p.last_error:
            self.last_error.setText(f"Last error: {p.last_error}")
            self.last_error.show()
        else:
            self.last_error.hide()
