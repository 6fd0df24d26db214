"""One participant's page of thought bubbles in the thoughts pane (:mod:`ui.panes.thoughts.thoughts_pane`).

A page keeps at most :data:`MAX_BUBBLES` bubbles in a scroll area, in the pane's sort order.
Bubbles are widgets, so they are reused rather than made: a replay jump rebinds them
(:meth:`AgentPage.place`), bubbles that leave the page wait hidden in a pool, and a replay that
opens makes them ahead of need in idle time (:meth:`AgentPage.reserve`).

The page reads the thoughts from the pane's :class:`ThoughtLedger`, the engine's one fold of
thoughts, including their order by score (:meth:`ThoughtLedger.rank`), and reports what the user
does to a bubble through its own signals, which the pane connects.
"""

from __future__ import annotations

import bisect
import contextlib
import heapq
from collections.abc import Callable, Iterator, Sequence

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtWidgets import QFrame, QScrollArea, QStyle, QVBoxLayout, QWidget

from playground import domain
from playground.history.ledger import ThoughtLedger
from ui.panes.thoughts.thought_bubble import EMPTY_PLACEHOLDER, SortKey, ThoughtBubble
from ui.widgets.placeholder import placeholder_label

#: A bubble as wide as any gets in a long session: a four-digit id, said and
#: scored at a three-digit step (what :func:`width_needed` measures).
WIDEST = domain.Thought(
    id=9999,
    agent="",
    text="",
    system=2,
    stimuli=[],
    saliency=0.99,
    created_step=999,
    last_access=999,
    expressed_in=999,
)
_WIDEST_SCORE = domain.Evaluation(
    thought_id=9999,
    step=999,
    rating=5,
    distribution={},
    reasons_for=[],
    reasons_against=[],
    expected=5.0,
    silence_factor=1.0,
    score=9.99,
    method="logprobs",
)
#: The page's margins around its bubbles (left, top, right, bottom).
MARGINS = (3, 4, 3, 4)

#: Most bubbles a page holds. Bubbles are widgets (a few ms each), so a participant with
#: thousands of thoughts keeps its newest (or highest-scored, by the sort) ones on screen; the
#: header says how many more exist.
MAX_BUBBLES = 60


class AgentPage(QScrollArea):
    """One participant's bubbles in their own scroll area.

    A page is built the first time its participant is selected and then kept up to date, so
    switching back and forth is instant and each participant keeps its scroll position.

    Args:
        agent: The participant whose thoughts the page shows.
        ledger: The thoughts to show, as the pane holds them now (a replay jump gives the pane
            another ledger).
        popup_parent: The widget the bubbles' evaluation popups are parented to (the pane).
        deletable: Whether bubbles offer ✕ (see :meth:`set_deletable`).
    """

    force_requested = Signal(str, int)  # agent, thought id (a click on a thought not yet said)
    delete_requested = Signal(str, int)  # agent, thought id
    message_clicked = Signal(int)  # message id (a said thought's link)
    stimulus_hovered = Signal(str)  # ref, "" when the mouse left a link
    stimulus_clicked = Signal(str)  # ref

    def __init__(
        self,
        agent: str,
        ledger: Callable[[], ThoughtLedger],
        *,
        popup_parent: QWidget,
        deletable: bool,
    ) -> None:
        super().__init__()
        self.agent = agent
        self._ledger = ledger
        self._popup_parent = popup_parent
        self.deletable = deletable
        self.bubbles: dict[int, ThoughtBubble] = {}
        self.pool: list[ThoughtBubble] = []  # hidden bubbles a replay jump can rebind
        self.order: list[int] = []
        # After a replay jump, until the pane's deferred fill runs: thoughts whose bubbles still
        # show something else (they are out of view), and bubbles no thought needs any more
        # (laid out after the others, out of view, to be hidden).
        self.unbound: set[int] = set()
        self.parked: list[ThoughtBubble] = []
        self.highlighted: int | None = None
        self.by_score = False

        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.content = _Content()
        self.content.setObjectName("thoughtsContent")
        self.list = QVBoxLayout(self.content)
        self.list.setContentsMargins(*MARGINS)
        self.list.setSpacing(6)
        self.placeholder = placeholder_label(EMPTY_PLACEHOLDER, self.content)
        self.list.addWidget(self.placeholder)
        self.list.addStretch(1)
        self.setWidget(self.content)

    def place(self, wanted: list[int], *, in_view: bool) -> None:
        """Show the thoughts ``wanted``, in that order.

        A thought that is still shown keeps its bubble, wherever it moves (a step through the
        replay changes a few bubbles, not all of them); the other bubbles are rebound to the new
        thoughts in layout order, so a jump far away rebinds them where they stand, moving no
        widget. When the page is ``in_view``, the bubbles down to the bottom of the view are
        brought up to date now; the rest wait for :meth:`fill`.
        """
        layout_order = [self.bubbles[t] for t in self.order] + self.parked
        assigned, rest = self._assign(wanted)
        self.bubbles = {}
        self.unbound = set()
        # Bubbles are bound from the top while their new heights reach into the view.
        bottom = self.verticalScrollBar().value() + self.viewport().height() if in_view else -1
        width = self.viewport().width() - MARGINS[0] - MARGINS[2]
        reached = 4
        with self.held():
            for i, tid in enumerate(wanted):
                if assigned[i] is None:
                    if self.pool:
                        assigned[i] = self.pool.pop()
                    else:  # a new bubble, made up to date
                        assigned[i] = self.add(self._thoughts()[tid], place=False)
            shown: list[ThoughtBubble] = [b for b in assigned if b is not None]
            _arrange(self.list, layout_order, shown + rest)
            for tid, bubble in zip(wanted, shown, strict=True):
                self.bubbles[tid] = bubble
                if reached > bottom:
                    self.unbound.add(tid)
                    continue
                self.bind(tid)
                reached += bubble.heightForWidth(width) + self.list.spacing()
        self.parked = rest
        self.order = list(wanted)
        if self.highlighted not in self.bubbles:
            self.highlighted = None
        self.placeholder.setVisible(not self.bubbles)

    def _assign(self, wanted: list[int]) -> tuple[list[ThoughtBubble | None], list[ThoughtBubble]]:
        """Which bubble shows each wanted thought (None: one from the pool or a new one), and
        the bubbles left over, in layout order."""
        old = self.bubbles
        slots = [old[t] for t in self.order] + self.parked  # in layout order
        keep = set(wanted) & old.keys()
        if [t for t in self.order if t in keep] != [t for t in wanted if t in keep]:
            # The thoughts still shown changed their order (a sort by score): rebind by place.
            assigned: list[ThoughtBubble | None] = list(slots[: len(wanted)])
            return assigned + [None] * (len(wanted) - len(assigned)), slots[len(wanted) :]
        free = [old[t] for t in self.order if t not in keep] + self.parked
        free.reverse()  # taken from the top
        assigned = [old[t] if t in keep else (free.pop() if free else None) for t in wanted]
        free.reverse()
        return assigned, free

    def bind(self, tid: int) -> None:
        bubble = self.bubbles[tid]
        bubble.rebind(self._thoughts()[tid], self._evaluations(tid), self._retained(tid))
        bubble.set_highlighted(tid == self.highlighted)
        if bubble.isHidden():  # from the pool: lay it out at the page's width straight away
            bubble.resize(self.viewport().width() - MARGINS[0] - MARGINS[2], bubble.height())
            bubble.show()
        self.unbound.discard(tid)

    def fill(self) -> None:
        """Finish a replay jump: bring the bubbles out of view up to date, hide unused ones."""
        with self.held():
            for tid in [t for t in self.order if t in self.unbound]:
                self.bind(tid)
            for bubble in self.parked:
                self.list.removeWidget(bubble)
                bubble.hide()
                self.pool.append(bubble)
        self.parked = []

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold the page's layout while many bubbles change: showing a widget (a bubble's
        "said in" link, a bubble from the pool) makes Qt lay out every visible parent at once,
        here all the bubbles, for each one shown. Held, the page is laid out once, afterwards."""
        self.list.setEnabled(False)
        try:
            yield
        finally:
            self.list.setEnabled(True)

    def sort_key(self, tid: int) -> SortKey:
        """A thought's place in the page's current sort."""
        return self.data_key(tid, self.by_score)

    def data_key(self, tid: int, by_score: bool) -> SortKey:
        """A thought's place in a sort: by score, the ledger's :meth:`ThoughtLedger.rank`;
        newest first otherwise."""
        if by_score:
            return self._ledger().rank(self.agent, tid)
        return (-tid,)

    def top(self) -> list[int]:
        """The ids of the participant's first :data:`MAX_BUBBLES` thoughts in the page's sort,
        in order."""
        thoughts = self._thoughts()
        if not self.by_score:  # newest first (as ``data_key``); ids come mostly in order: O(n)
            return sorted(thoughts, reverse=True)[:MAX_BUBBLES]
        return heapq.nsmallest(MAX_BUBBLES, thoughts, key=lambda t: self.data_key(t, True))

    def _thoughts(self) -> dict[int, domain.Thought]:
        return self._ledger().thoughts.get(self.agent, {})

    def _evaluations(self, tid: int) -> Sequence[domain.Evaluation]:
        return self._ledger().evaluations_of(self.agent, tid)

    def _retained(self, tid: int) -> bool:
        return self._ledger().is_retained(self.agent, tid)

    def refresh(self, tid: int) -> None:
        """Bring the thought's bubble, if shown, up to the ledger (a new saliency, an evaluation,
        the message that said it)."""
        bubble = self.bubbles.get(tid)
        thought = self._thoughts().get(tid)
        if bubble is not None and thought is not None:
            bubble.set_thought(thought)
            bubble.set_evaluation(self._evaluations(tid), self._retained(tid))

    def reorder(self) -> None:
        """Sort again after every key changed at once (the participant was scored at a new
        step: the scores of the step before are no longer current). Only bubbles out of place
        move, and the scroll position stays."""
        before = [self.bubbles[t] for t in self.order]
        self.order.sort(key=self.sort_key)
        with self.held():
            _arrange(self.list, before, [self.bubbles[t] for t in self.order])

    def build(self, by_score: bool) -> None:
        """Create every bubble at once (first selection of the participant)."""
        self.by_score = by_score
        thoughts = sorted(self._thoughts().values(), key=lambda t: t.id)
        keep = sorted(thoughts, key=lambda t: self.data_key(t.id, by_score))
        self.content.setUpdatesEnabled(False)
        try:
            for thought in keep[:MAX_BUBBLES]:
                self.add(thought, place=False)
            self.order = sorted(self.bubbles, key=self.sort_key)
            for i, tid in enumerate(self.order):
                self.list.insertWidget(i, self.bubbles[tid])
        finally:
            self.content.setUpdatesEnabled(True)
        self.placeholder.setVisible(not self.bubbles)

    def add(self, thought: domain.Thought, *, place: bool = True) -> ThoughtBubble:
        evaluations = self._evaluations(thought.id)
        retained = self._retained(thought.id)
        if self.pool:  # a bubble that left the screen earlier: rebinding it is much cheaper
            bubble = self.pool.pop()
            bubble.rebind(thought, evaluations, retained)
            bubble.set_highlighted(False)
            bubble.show()
        else:
            bubble = self._new_bubble(thought, evaluations, retained)
        self.bubbles[thought.id] = bubble
        if place:
            index = bisect.bisect_left(self.order, self.sort_key(thought.id), key=self.sort_key)
            self.order.insert(index, thought.id)
            self.list.insertWidget(index, bubble)
            self.placeholder.hide()
            if len(self.order) > MAX_BUBBLES:
                self.remove(self.order[-1])
        return bubble

    def _new_bubble(
        self, thought: domain.Thought, evaluations: Sequence[domain.Evaluation], retained: bool
    ) -> ThoughtBubble:
        bubble = ThoughtBubble(
            thought,
            evaluations,
            retained=retained,
            popup_parent=self._popup_parent,
            parent=self.content,
        )
        if not self.deletable:
            bubble.set_deletable(False)
        bubble.clicked.connect(lambda _id, b=bubble: self._force(b))
        bubble.delete_clicked.connect(
            lambda _id, b=bubble: self.delete_requested.emit(b.thought.agent, b.thought_id)
        )
        bubble.message_clicked.connect(self.message_clicked.emit)
        bubble.stimulus_hovered.connect(self.stimulus_hovered.emit)
        bubble.stimulus_clicked.connect(self.stimulus_clicked.emit)
        return bubble

    def _force(self, bubble: ThoughtBubble) -> None:
        if not bubble.is_expressed():
            self.force_requested.emit(bubble.thought.agent, bubble.thought_id)

    def set_deletable(self, deletable: bool) -> None:
        """Whether the bubbles offer ✕ (only a live session's thoughts can be deleted)."""
        self.deletable = deletable
        for bubble in self.content.findChildren(
            ThoughtBubble, options=Qt.FindChildOption.FindDirectChildrenOnly
        ):
            bubble.set_deletable(deletable)

    def reserve(self) -> bool:
        """Make one bubble ahead of need, hidden in the pool (a replay does so in idle time
        after opening, so that its first jump makes none); True once the page has
        :data:`MAX_BUBBLES` bubbles."""
        if len(self.bubbles) + len(self.parked) + len(self.pool) >= MAX_BUBBLES:
            return True
        blank = domain.Thought(
            id=0, agent=self.agent, text="", system=2, created_step=0, last_access=0
        )
        bubble = self._new_bubble(blank, [], False)
        bubble.hide()
        self.pool.append(bubble)
        return False

    def remove(self, tid: int) -> None:
        bubble = self.bubbles.pop(tid, None)
        if bubble is None:
            return
        self.order.remove(tid)
        self.list.removeWidget(bubble)
        bubble.hide()
        self.pool.append(bubble)
        if self.highlighted == tid:
            self.highlighted = None
        self.placeholder.setVisible(not self.bubbles)

    def reposition(self, tid: int) -> None:
        """Move one bubble if its sort key changed its place; nothing happens otherwise."""
        index = self.order.index(tid)
        key = self.sort_key(tid)
        before_ok = index == 0 or self.sort_key(self.order[index - 1]) <= key
        after_ok = index == len(self.order) - 1 or key <= self.sort_key(self.order[index + 1])
        if before_ok and after_ok:
            return
        del self.order[index]
        new_index = bisect.bisect_left(self.order, key, key=self.sort_key)
        self.order.insert(new_index, tid)
        bubble = self.bubbles[tid]
        self.list.removeWidget(bubble)
        self.list.insertWidget(new_index, bubble)

    def resort(self, by_score: bool) -> None:
        if by_score == self.by_score:
            return
        self.by_score = by_score
        self.content.setUpdatesEnabled(False)
        try:
            self.order.sort(key=self.sort_key)
            for bubble in self.bubbles.values():
                self.list.removeWidget(bubble)
            for i, tid in enumerate(self.order):
                self.list.insertWidget(i, self.bubbles[tid])
        finally:
            self.content.setUpdatesEnabled(True)
        self.verticalScrollBar().setValue(0)

    def highlight(self, tid: int | None, *, scroll: bool) -> None:
        if self.highlighted is not None and self.highlighted != tid:
            old = self.bubbles.get(self.highlighted)
            if old is not None:
                old.set_highlighted(False)
            self.highlighted = None
        bubble = self.bubbles.get(tid) if tid is not None else None
        if bubble is None:
            return
        bubble.set_highlighted(True)
        self.highlighted = tid
        if scroll:
            self.ensureWidgetVisible(bubble, 0, 8)


def width_needed(styled: QWidget) -> int:
    """The narrowest a page can be with a bubble's badges, ✕ and "scored at step N" in view:
    :data:`WIDEST`'s minimum width (styled as ``styled``'s children are), the page's margins and
    its vertical scroll bar, which takes its width from the page's viewport."""
    sample = ThoughtBubble(
        WIDEST, [_WIDEST_SCORE], retained=False, popup_parent=None, parent=styled
    )
    try:
        sample.ensurePolished()
        bubble = sample.minimumSizeHint().width()
    finally:
        sample.setParent(None)
        sample.deleteLater()
    bar = styled.style().pixelMetric(QStyle.PixelMetric.PM_ScrollBarExtent, None, styled)
    return bubble + MARGINS[0] + MARGINS[2] + bar


class _Content(QWidget):
    """The column of bubbles in a page's scroll area.

    Its size hint is its layout's, without Qt's extra step of measuring every bubble once more
    at the hint's width (a width nothing is shown at): the scroll area sizes the column from its
    minimum size and its height for the viewport's width, never from the hint."""

    def sizeHint(self) -> QSize:
        lay = self.layout()
        return lay.sizeHint() if lay is not None else super().sizeHint()


def _arrange(
    layout: QVBoxLayout, current: list[ThoughtBubble], wanted: list[ThoughtBubble]
) -> None:
    """Put the bubbles ``wanted`` first in ``layout``, in that order, where ``current`` are the
    layout's first widgets now. Bubbles already in order among themselves stay (the longest such
    run); only the others are taken out and put back, so a far jump, which rebinds bubbles where
    they stand, moves none."""
    place = {id(b): i for i, b in enumerate(wanted)}
    staying = _longest_increasing([place[id(b)] for b in current])
    for b in current:
        if place[id(b)] not in staying:
            layout.removeWidget(b)
    for i, b in enumerate(wanted):
        if i not in staying:
            layout.insertWidget(i, b)


def _longest_increasing(values: list[int]) -> set[int]:
    """The values of a longest strictly increasing subsequence of ``values``."""
    tails: list[int] = []  # tails[k]: the smallest last value of an increasing run of k + 1
    ends: list[int] = []  # index in values of that last value
    before = [-1] * len(values)
    for i, v in enumerate(values):
        k = bisect.bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
            ends.append(i)
        else:
            tails[k] = v
            ends[k] = i
        before[i] = ends[k - 1] if k else -1
    run: set[int] = set()
    i = ends[-1] if ends else -1
    while i >= 0:
        run.add(values[i])
        i = before[i]
    return run
