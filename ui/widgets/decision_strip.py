"""The decision strip: for the latest trigger, each agent's policy, its decision and why; for an
Inner Thoughts agent its best score against its thresholds, for a next-speaker agent the
predictor's probability, and above the table the next-speaker prediction itself."""

from __future__ import annotations

import html

from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from playground import domain, events
from ui.bridge import EngineBridge
from ui.policies import POLICY_HELP

#: Logical columns (``rows()`` keeps this order); the policy column is shown second.
AGENT, DECISION, BEST, WHY, POLICY = range(5)
METHOD_TEXT = {
    "logprobs": "from the answer's logprobs",
    "parsed": "the parsed answer only",
    "offline-heuristic": "offline heuristic",
}


def prediction_text(e: events.NextSpeakerPredicted) -> str:
    """One line of plain text: what was predicted, with every label's probability, and who got
    the turn by which rule."""
    p = e.prediction
    ranked = sorted(p.probabilities.items(), key=lambda kv: (-kv[1], kv[0]))
    probs = " · ".join(f"{label} {prob:.2f}" for label, prob in ranked)
    chosen = e.chosen or "nobody"
    rule = f" ({e.rule})" if e.rule else ""
    return (
        f"after #{p.message_id}: predicted {p.predicted} — {probs}"
        f" [{METHOD_TEXT.get(p.method, p.method)}] → turn: {chosen}{rule}"
    )


class DecisionStrip(QWidget):
    """Why each agent spoke or stayed silent at the latest trigger (Algorithm 1 and the
    baselines, made visible)."""

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.title = QLabel("<b>Decisions</b> — waiting for the first trigger")
        #: The next-speaker predictor's answer at this trigger (shown when a next-speaker agent
        #: is in the room).
        self.prediction = QLabel("")
        self.prediction.setWordWrap(True)
        self.prediction.setStyleSheet(
            "background:#f3f0fa; border:1px solid #d1c4e9; border-radius:3px; padding:2px 4px;"
        )
        self.prediction.hide()
        self._prediction: events.NextSpeakerPredicted | None = None
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(
            ["Agent", "Decision", "Best / threshold", "Why", "Policy"]
        )
        header = self.table.horizontalHeaderItem(BEST)
        assert header is not None  # set just above
        header.setToolTip(
            "Inner Thoughts: the best thought's motivation score / imThreshold (or"
            " interruptThreshold). Next speaker: the predictor's probability for this agent."
        )
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        h = self.table.horizontalHeader()
        for i in (AGENT, DECISION, BEST, POLICY):
            h.setSectionResizeMode(i, QHeaderView.ResizeMode.ResizeToContents)
        h.setSectionResizeMode(WHY, QHeaderView.ResizeMode.Stretch)
        h.moveSection(POLICY, 1)  # Agent · Policy · Decision · Best · Why
        # A narrower window wraps the reasons onto more lines rather than cutting them off.
        h.sectionResized.connect(lambda *_: self.table.resizeRowsToContents())
        self.table.setWordWrap(True)
        self.table.setMaximumHeight(150)
        lay.addWidget(self.title)
        lay.addWidget(self.prediction)
        lay.addWidget(self.table)
        bridge.trigger_fired.connect(self._trigger)
        bridge.decision_made.connect(self._decision)
        bridge.next_speaker_predicted.connect(self._predicted)

    def reset(self) -> None:
        self.table.setRowCount(0)
        self.title.setText("<b>Decisions</b> — waiting for the first trigger")
        self._show_prediction(None)

    def rows(self) -> list[list[str]]:
        """The table as text, one list per agent: agent, decision, best / threshold, why, policy
        (for tests and export)."""
        out = []
        for r in range(self.table.rowCount()):
            cells = [self.table.item(r, c) for c in range(self.table.columnCount())]
            out.append([c.text() if c is not None else "" for c in cells])
        return out

    def prediction_line(self) -> str:
        """The next-speaker prediction shown for this trigger, as plain text ("" when none)."""
        return prediction_text(self._prediction) if self._prediction is not None else ""

    def _trigger(self, e) -> None:  # noqa: ANN001
        self.table.setRowCount(0)
        self._show_prediction(None)
        what = f"new message #{e.message_id}" if e.trigger == "new_message" else "pause (silence)"
        self.title.setText(f"<b>Decisions</b> — step {e.step}, trigger: {what}")

    def _predicted(self, e: events.NextSpeakerPredicted) -> None:
        self._show_prediction(e)
        # The room predicts before the decisions; rows already in (a recording that says
        # otherwise) take their probability from it too.
        for r in range(self.table.rowCount()):
            policy, agent, best = (self.table.item(r, c) for c in (POLICY, AGENT, BEST))
            if policy is None or agent is None or best is None:
                continue
            if policy.text() == "next-speaker":
                best.setText(self._probability(agent.text()))

    def _show_prediction(self, e: events.NextSpeakerPredicted | None) -> None:
        self._prediction = e
        if e is None:
            self.prediction.clear()
            self.prediction.hide()
            return
        p = e.prediction
        ranked = sorted(p.probabilities.items(), key=lambda kv: (-kv[1], kv[0]))
        probs = " · ".join(
            f"<b>{html.escape(label)} {prob:.2f}</b>"
            if label == p.predicted
            else f"{html.escape(label)} {prob:.2f}"
            for label, prob in ranked
        )
        chosen = html.escape(e.chosen) if e.chosen else "nobody"
        self.prediction.setText(
            f"<b>Next speaker</b> after #{p.message_id}: predicted {probs}"
            f" <span style='color:#666'>({METHOD_TEXT.get(p.method, p.method)})</span>"
            f" → turn: <b>{chosen}</b>"
        )
        self.prediction.setToolTip(e.rule or "")
        self.prediction.show()

    def _probability(self, agent: str) -> str:
        """A next-speaker agent's own probability in the prediction at this trigger."""
        if self._prediction is None:
            return "–"
        p = self._prediction.prediction.probabilities.get(agent)
        return "–" if p is None else f"p {p:.2f}"

    def _decision(self, d: domain.Decision) -> None:
        r = self.table.rowCount()
        self.table.insertRow(r)
        if d.policy == "next-speaker":
            best = self._probability(d.agent)
            if best == "–" and d.probability is not None:
                best = f"p {d.probability:.2f}"
        else:
            best = "–" if d.score is None else f"{d.score:.2f}"
            best += "" if d.threshold is None else f" / {d.threshold:g}"
        if d.action != "speak":
            action = "silent"
        elif d.turn_type == "allocated-other" and d.policy == "inner-thoughts":
            action = "interrupts"  # takes a turn allocated to someone else
        else:
            action = "speaks"
        cells = {AGENT: d.agent, DECISION: action, BEST: best, WHY: d.reason, POLICY: d.policy}
        for c, text in cells.items():
            item = QTableWidgetItem(text)
            item.setToolTip(POLICY_HELP.get(d.policy, "") if c == POLICY else d.reason)
            if d.action == "speak":
                item.setBackground(QColor("#e8f5e9"))
            self.table.setItem(r, c, item)
        self.table.resizeRowsToContents()
