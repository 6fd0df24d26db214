"""The decision strip: for the latest trigger, each agent's policy, its decision and why; for an
Inner Thoughts agent its best score against its thresholds (and the chosen thought's when a
System-1 reply was drawn below the best), for a next-speaker agent the
predictor's probability, and above the table the next-speaker prediction itself.

The strip can also show an earlier trigger (the window's history view, :mod:`ui.window.history`):
◀ / ▶ (or ← / → while the strip has the focus) ask for the previous or next trigger, and the
title says plainly which trigger is shown, with a "Back to live" button. Live triggers that
arrive meanwhile are kept and shown again on the way back.

The title's tooltip gives the shown trigger's time breakdown (:mod:`playground.history.timings`):
its total, critical path and every stage, from the ``trigger_timed`` event recorded when it
ended. Until the shown trigger ends, it gives the latest timed trigger's, saying so."""

from __future__ import annotations

import html

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from playground import domain, events
from playground.history.timings import breakdown
from ui.bridge import EngineBridge
from ui.policies import POLICY_HELP, POLICY_TAGS

#: Logical columns (``rows()`` keeps this order); the policy column is shown second.
AGENT, DECISION, BEST, WHY, POLICY = range(5)
#: The least width (px) of the Why column: the scores column wraps its text to leave it this.
WHY_AT_LEAST = 140
#: The least width (px) of the scores column ("4.20 / 3.95" on one line in the app's font).
BEST_AT_LEAST = 64
#: The table's preferred height (px): what the strip asks for; dragging its handle gives more.
TABLE_HEIGHT = 150
METHOD_TEXT = {
    "logprobs": "from the answer's logprobs",
    "sampled": "from sampled answers",
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


#: In a decision's reason: a System-1 reply was drawn (not "; no System-1 reply drawn").
SYSTEM1_DRAWN = "; System-1 reply drawn"


def timing_text(step: int | None, timing: events.TriggerTimed | None) -> str:
    """The time breakdown shown for the trigger of ``step`` (plain text): its own when it has
    ended, else the latest timed trigger's, said to be earlier; "" when none was timed."""
    if timing is None:
        return ""
    if step is None or timing.step == step:
        return breakdown(timing)
    return (
        f"Step {step} has no time breakdown (yet): a trigger is timed when it ends, unless a"
        f" newer one replaced it. The latest timed trigger:\n\n{breakdown(timing)}"
    )


def scores_text(d: domain.Decision) -> str:
    """An Inner Thoughts decision's scores against its threshold: the best score (``4.20 /
    3.95``), and the chosen thought's too when it differs, both labelled (``best 3.90 / 3.95 ·
    chosen 2.00``, a System-1 reply drawn below the best). A decision recorded before the best
    score was kept has ``score`` only: the best one, except for a drawn System-1 reply, whose
    own score it is (labelled ``chosen``; its reason gives the best)."""
    thr = "" if d.threshold is None else f" / {d.threshold:g}"
    if d.best_score is None:
        if d.score is None:
            return "–" + thr
        drawn = SYSTEM1_DRAWN in d.reason
        return f"{'chosen ' if drawn else ''}{d.score:.2f}{thr}"
    if d.score is None or f"{d.score:.2f}" == f"{d.best_score:.2f}":
        return f"{d.best_score:.2f}{thr}"
    return f"best {d.best_score:.2f}{thr} · chosen {d.score:.2f}"


def scores_lines(text: str) -> str:
    """:func:`scores_text` as shown in its cell: "chosen …" on a line of its own, so that the
    column is as narrow as one score and the reasons keep the width."""
    return text.replace(" · chosen ", "\nchosen ")


class DecisionTable(QTableWidget):
    """The strip's table: it asks for :data:`TABLE_HEIGHT`, and takes what the strip is given."""

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), TABLE_HEIGHT)


WAITING = "<b>Decisions</b> — waiting for the first trigger"
PAST_STYLE = (
    "background:#fff3e0; border:1px solid #ffb74d; border-radius:3px; padding:2px 4px;"
    " color:#4e342e;"
)


class DecisionStrip(QWidget):
    """Why each agent spoke or stayed silent at the latest trigger (Algorithm 1 and the
    baselines, made visible), or at an earlier one (see the module docstring).

    Attributes:
        looking_back: an earlier trigger is shown (live updates are kept, not shown).
    """

    step_requested = Signal(int)  # -1: the previous trigger, +1: the next one
    live_requested = Signal()

    def __init__(self, bridge: EngineBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.looking_back = False
        # The latest trigger as it arrives, shown again on the way back from history.
        self._live_title = WAITING
        self._live_prediction: events.NextSpeakerPredicted | None = None
        self._live_decisions: list[domain.Decision] = []
        self._live_step: int | None = None
        self._live_timing: events.TriggerTimed | None = None
        #: The time breakdown in the title's tooltip, as plain text ("" when none).
        self.timing = ""
        self.title = QLabel(WAITING)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.back_button = QToolButton()
        self.back_button.setText("◀")
        self.back_button.setToolTip("The previous trigger's decisions (←)")
        self.back_button.clicked.connect(lambda: self.step_requested.emit(-1))
        self.forward_button = QToolButton()
        self.forward_button.setText("▶")
        self.forward_button.setToolTip("The next trigger's decisions (→); after the latest: live")
        self.forward_button.clicked.connect(lambda: self.step_requested.emit(1))
        self.live_button = QPushButton("Back to live")
        self.live_button.setToolTip("Show the latest trigger again and follow the run")
        self.live_button.clicked.connect(self.live_requested)
        self.live_button.hide()
        #: While looking back: what happened live meanwhile ("2 new messages since").
        self.past_note = QLabel("")
        self.past_note.setStyleSheet("color:#8d6e63;")
        self.past_note.hide()
        head = QHBoxLayout()
        head.setSpacing(4)
        head.addWidget(self.back_button)
        head.addWidget(self.forward_button)
        head.addWidget(self.title, 1)
        # While looking back, a second line: what happened live meanwhile, and the way back.
        self.past_row = QWidget()
        past = QHBoxLayout(self.past_row)
        past.setContentsMargins(0, 0, 0, 0)
        past.addStretch(1)
        past.addWidget(self.past_note)
        past.addWidget(self.live_button)
        self.past_row.hide()
        self._keys: list[QShortcut] = []
        for key, direction in (("Left", -1), ("Right", 1)):
            sc = QShortcut(QKeySequence(key), self)
            sc.setWhatsThis(  # Help ▸ Keyboard shortcuts says what it does
                "In the decision strip: the decisions of the trigger "
                + ("before" if direction < 0 else "after")
            )
            sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            sc.activated.connect(lambda d=direction: self.step_requested.emit(d))
            self._keys.append(sc)
        #: The next-speaker predictor's answer at this trigger (shown when a next-speaker agent
        #: is in the room).
        self.prediction = QLabel("")
        self.prediction.setWordWrap(True)
        self.prediction.setStyleSheet(
            "background:#f3f0fa; border:1px solid #d1c4e9; border-radius:3px; padding:2px 4px;"
        )
        self.prediction.hide()
        self._prediction: events.NextSpeakerPredicted | None = None
        self.table = DecisionTable(0, 5)
        self.table.setHorizontalHeaderLabels(["Agent", "Decision", "Best / thr.", "Why", "Policy"])
        header = self.table.horizontalHeaderItem(BEST)
        assert header is not None  # set just above
        header.setToolTip(
            "Inner Thoughts: the best thought's motivation score / imThreshold (or"
            " interruptThreshold); when a System-1 reply was drawn below it, “chosen” is the"
            " score of the thought said. Next speaker: the predictor's probability for this agent."
        )
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        h = self.table.horizontalHeader()
        for i in (AGENT, DECISION, POLICY):
            h.setSectionResizeMode(i, QHeaderView.ResizeMode.ResizeToContents)
        # The scores column is as wide as its text only while Why keeps WHY_AT_LEAST: a drawn
        # System-1 reply's "best … / chosen …" once left Why 25 px at 1024×700.
        h.setSectionResizeMode(BEST, QHeaderView.ResizeMode.Fixed)
        h.setSectionResizeMode(WHY, QHeaderView.ResizeMode.Stretch)
        h.moveSection(POLICY, 1)  # Agent · Policy · Decision · Best · Why
        # A narrower window wraps the reasons onto more lines rather than cutting them off.
        h.sectionResized.connect(lambda *_: self.table.resizeRowsToContents())
        self.table.setWordWrap(True)
        # The Why column stretches with the window, and Qt does not report that as a section
        # resize: a narrower window would keep rows one line high and cut the reasons short.
        self.table.viewport().installEventFilter(self)
        lay.addLayout(head)
        lay.addWidget(self.past_row)
        lay.addWidget(self.prediction)
        # The table takes any height the strip is given (its handle dragged up), not the title.
        lay.addWidget(self.table, 1)
        bridge.trigger_fired.connect(self._trigger)
        bridge.decision_made.connect(self._decision)
        bridge.next_speaker_predicted.connect(self._predicted)
        bridge.trigger_timed.connect(self._timed)

    def reset(self) -> None:
        self._live_title = WAITING
        self._live_prediction = None
        self._live_decisions = []
        self._live_step = None
        self._live_timing = None
        if not self.looking_back:
            self.table.setRowCount(0)
            self.title.setText(WAITING)
            self._show_prediction(None)
            self._show_timing("")

    def set_navigation(self, enabled: bool) -> None:
        """Offer ◀ / ▶ and ← / → (not while a replay has its own stepping)."""
        for w in (self.back_button, self.forward_button):
            w.setVisible(enabled)
        for sc in self._keys:
            sc.setEnabled(enabled)

    def show_past(
        self,
        title: str,
        prediction: events.NextSpeakerPredicted | None,
        decisions: list[domain.Decision] | tuple[domain.Decision, ...],
        timing: events.TriggerTimed | None = None,
    ) -> None:
        """Show an earlier trigger (``title`` is plain text saying which, ``timing`` where its
        time went); live updates are kept until :meth:`show_live`."""
        self.looking_back = True
        self.title.setText(f"<b>Decisions</b> — {html.escape(title)}")
        self.title.setStyleSheet(PAST_STYLE)
        self.live_button.show()
        self.past_row.show()
        self._render(prediction, decisions)
        self._show_timing(timing_text(None, timing))

    def show_live(self) -> None:
        """Show the latest trigger again, and follow the run."""
        self.looking_back = False
        self.title.setStyleSheet("")
        self.title.setText(self._live_title)
        self.live_button.hide()
        self.past_note.hide()
        self.past_row.hide()
        self._render(self._live_prediction, self._live_decisions)
        self._show_timing(timing_text(self._live_step, self._live_timing))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.table.viewport() and event.type() == QEvent.Type.Resize:
            self._share_columns()
            QTimer.singleShot(
                0, self.table, self.table.resizeRowsToContents
            )  # after the columns follow
        return super().eventFilter(watched, event)

    def _share_columns(self) -> None:
        """The scores column: as wide as its widest line, but never so wide that Why gets less
        than :data:`WHY_AT_LEAST` (its text then wraps)."""
        h = self.table.horizontalHeader()
        wants = max(self.table.sizeHintForColumn(BEST), h.sectionSizeHint(BEST))
        others = sum(h.sectionSize(c) for c in (AGENT, DECISION, POLICY))
        room = self.table.viewport().width() - others - WHY_AT_LEAST
        width = max(BEST_AT_LEAST, min(wants, room))
        if h.sectionSize(BEST) != width:
            h.resizeSection(BEST, width)

    def set_past_note(self, text: str) -> None:
        self.past_note.setText(text)
        self.past_note.setVisible(bool(text) and self.looking_back)

    def _render(
        self,
        prediction: events.NextSpeakerPredicted | None,
        decisions: list[domain.Decision] | tuple[domain.Decision, ...],
    ) -> None:
        self.table.setRowCount(0)
        self._show_prediction(prediction)
        for d in decisions:
            self._add_row(d)

    def rows(self) -> list[list[str]]:
        """The table as text, one list per agent: agent, decision, best / threshold, why, policy
        (for tests and export)."""
        out = []
        for r in range(self.table.rowCount()):
            cells = [self.table.item(r, c) for c in range(self.table.columnCount())]
            out.append([_full_text(c) for c in cells])
        return out

    def prediction_line(self) -> str:
        """The next-speaker prediction shown for this trigger, as plain text ("" when none)."""
        return prediction_text(self._prediction) if self._prediction is not None else ""

    def _trigger(self, e) -> None:
        what = f"new message #{e.message_id}" if e.trigger == "new_message" else "pause (silence)"
        self._live_title = f"<b>Decisions</b> — step {e.step}, trigger: {what}"
        self._live_prediction = None
        self._live_decisions = []
        self._live_step = e.step
        if self.looking_back:
            return
        self.table.setRowCount(0)
        self._show_prediction(None)
        self.title.setText(self._live_title)
        self._show_timing(timing_text(self._live_step, self._live_timing))

    def _timed(self, e: events.TriggerTimed) -> None:
        self._live_timing = e
        if not self.looking_back:
            self._show_timing(timing_text(self._live_step, e))

    def _show_timing(self, text: str) -> None:
        """Put ``text`` (plain, a table in columns) in the title's tooltip, in a fixed font."""
        self.timing = text
        self.title.setToolTip(f"<pre>{html.escape(text)}</pre>" if text else "")

    def _predicted(self, e: events.NextSpeakerPredicted) -> None:
        self._live_prediction = e
        if self.looking_back:
            return
        self._show_prediction(e)
        # The room predicts before the decisions; rows already in (a recording that says
        # otherwise) take their probability from it too.
        for r in range(self.table.rowCount()):
            policy, agent, best = (self.table.item(r, c) for c in (POLICY, AGENT, BEST))
            if policy is None or agent is None or best is None:
                continue
            if _full_text(policy) == "next-speaker":
                probability = self._probability(agent.text())
                best.setText(probability)
                best.setData(Qt.ItemDataRole.UserRole, probability)
        self._share_columns()

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
        self._live_decisions.append(d)
        if not self.looking_back:
            self._add_row(d)

    def _add_row(self, d: domain.Decision) -> None:
        r = self.table.rowCount()
        self.table.insertRow(r)
        if d.policy == "next-speaker":
            best = self._probability(d.agent)
            if best == "–" and d.probability is not None:
                best = f"p {d.probability:.2f}"
        else:
            best = scores_text(d)
        if d.action != "speak":
            action = "silent"
        elif d.turn_type == "allocated-other" and d.policy == "inner-thoughts":
            action = "interrupts"  # takes a turn allocated to someone else
        else:
            action = "speaks"
        cells = {AGENT: d.agent, DECISION: action, BEST: best, WHY: d.reason, POLICY: d.policy}
        shown = {POLICY: POLICY_TAGS.get(d.policy, d.policy), BEST: scores_lines(best)}
        for c, text in cells.items():
            # The policy shows as its tag (IT, NS, R, as on the chips): at 1024 px its full name
            # took the width the reasons need; the scores on two lines, as narrow as one. The
            # full text stays in the item for rows().
            item = QTableWidgetItem(shown.get(c, text))
            if c in shown:
                item.setData(Qt.ItemDataRole.UserRole, text)
            if c == POLICY:
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
            item.setToolTip(
                f"{d.policy}: {POLICY_HELP.get(d.policy, '')}" if c == POLICY else d.reason
            )
            if d.action == "speak":
                item.setBackground(QColor("#e8f5e9"))
            self.table.setItem(r, c, item)
        self._share_columns()
        self.table.resizeRowsToContents()


def _full_text(item: QTableWidgetItem | None) -> str:
    """An item's text, or the full value behind a shortened one (the policy tags)."""
    if item is None:
        return ""
    full = item.data(Qt.ItemDataRole.UserRole)
    return full if isinstance(full, str) else item.text()
