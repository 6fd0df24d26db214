"""The stimuli the thoughts pane's bubbles cite: what each one says, and which one has the focus.

A bubble lists the stimuli its thought came from (``memory:3``, ``message:5``, ``thought:2``…).
Hovering one focuses it in every pane (:meth:`SelectedParticipant.focus_stimulus`) and shows
what it says in a tooltip; a click pins the focus until a second click or the next step.
:class:`ThoughtStimuli` keeps what the tooltips quote (memory texts per participant, messages by
id) and the hovered and pinned refs; the pane highlights the focused thought's bubble.
"""

from __future__ import annotations

from operator import attrgetter

from PySide6.QtCore import QObject
from PySide6.QtGui import QCursor
from PySide6.QtWidgets import QToolTip, QWidget

from playground import domain
from playground.domain.refs import ref_id
from ui.selection import SelectedParticipant


class ThoughtStimuli(QObject):
    """What the stimuli say, and the focus the thoughts pane set on one of them.

    Args:
        selection: The window's selection, which carries the focus to every pane.
        pane: The thoughts pane (the tooltips' widget, and this object's parent).

    Attributes:
        focus_ref: The stimulus in focus, from any pane ("" for none).
        scroll_on_focus: Whether the pane scrolls to the focused thought (not while hovering:
            the pane must not move away from under the mouse).
    """

    def __init__(self, selection: SelectedParticipant, pane: QWidget) -> None:
        super().__init__(pane)
        self._selection = selection
        self._pane = pane
        self.texts: dict[str, dict[str, str]] = {}  # agent -> memory ref -> text
        self.messages: dict[int, domain.Message] = {}  # by id
        self.focus_ref = ""
        self.pinned_ref = ""
        self.hover_ref = ""
        self.scroll_on_focus = True

    def forget(self) -> tuple[object, ...]:
        """Start from fresh collections; the old ones, for the caller to let go of later."""
        old = (self.texts, self.messages)
        self.texts = {}
        self.messages = {}
        return old

    # -- what they say ---------------------------------------------------------------------------

    def retrieved(self, agent: str, stimuli: list[domain.Stimulus], _step: int = 0) -> None:
        texts = self.texts.setdefault(agent, {})
        for s in stimuli:
            texts[s.ref] = s.text

    def memory_changed(self, agent: str, change: str, memory: domain.MemoryItem) -> None:
        texts = self.texts.setdefault(agent, {})
        if change == "deleted":
            texts.pop(memory.ref, None)
        else:
            texts[memory.ref] = memory.text

    def posted(self, message: domain.Message) -> None:
        self.messages[message.id] = message

    def load_messages(self, messages: list[domain.Message]) -> None:
        """The messages up to a replay's new moment, in one go."""
        self.messages.update(zip(map(attrgetter("id"), messages), messages, strict=True))

    def describe(self, agent: str, ref: str, thoughts: dict[int, domain.Thought]) -> str:
        """What ``ref`` says, as ``agent``'s bubble cites it (``thoughts``: the agent's)."""
        tid = ref_id(ref, "thought")
        if tid is not None:
            thought = thoughts.get(tid)
            return f"{ref}: {thought.text}" if thought else f"{ref} (deleted or not shown)"
        mid = ref_id(ref, "message")
        if mid is not None:
            msg = self.messages.get(mid)
            return f"{ref} — {msg.speaker}: {msg.text}" if msg else ""
        text = self.texts.get(agent, {}).get(ref)
        return f"{ref}: {text}" if text else ""

    # -- the focus -------------------------------------------------------------------------------

    def unpin(self) -> None:
        """Another participant is shown: nothing of theirs is pinned or hovered."""
        self.pinned_ref = ""
        self.hover_ref = ""

    def clear(self) -> None:
        """A new step: a stimulus pinned or hovered at the last one is not one of this step's,
        so its highlight goes (in every pane)."""
        self.unpin()
        if self.focus_ref:
            self._selection.focus_stimulus("")

    def _focus_from_here(self, ref: str, *, scroll: bool) -> None:
        self.scroll_on_focus = scroll
        try:
            self._selection.focus_stimulus(ref)
        finally:
            self.scroll_on_focus = True

    def hovered(self, agent: str, ref: str, thoughts: dict[int, domain.Thought]) -> None:
        """The mouse is over ``ref`` in one of ``agent``'s bubbles ("" once it left)."""
        if ref == self.hover_ref:
            return  # a link's own "left" and the label's leave event both report ""
        self.hover_ref = ref
        if ref:
            # Hovering must not scroll the pane away from under the mouse.
            self._focus_from_here(ref, scroll=False)
            text = self.describe(agent, ref, thoughts)
            if text:
                QToolTip.showText(QCursor.pos(), text, self._pane)
        else:
            self._focus_from_here(self.pinned_ref, scroll=False)

    def clicked(self, ref: str) -> None:
        """A click pins the focus on a stimulus (a second click on it unpins)."""
        self.pinned_ref = "" if self.pinned_ref == ref else ref
        self._focus_from_here(self.pinned_ref, scroll=True)
