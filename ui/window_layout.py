"""How the main window shares its width between the three panes, from 1024 px to 4K.

The panes sit in a splitter. Each has a minimum width at which everything in it still reads
(a memory's text column of a few words per line, a thought bubble's badges and its ✕, the
conversation's composer and Send), and together they fit a 1024 px wide window. Above that the
spare width is shared out by stretch: the conversation takes half of it, each side pane a
quarter, so at 1920 or 2560 px every pane grows and the memory text and the thought bubbles get
the room, not only the conversation. Sizes are in device-independent pixels, so the same holds
at 200 % scaling.
"""

from __future__ import annotations

from PySide6.QtWidgets import QSplitter, QWidget

#: Narrowest each pane gets (memory, conversation + decision strip, thoughts). Their sum, with
#: the splitter handles and the window's margins, stays under 1024 px.
MIN_MEMORY = 290
MIN_CONVERSATION = 400
MIN_THOUGHTS = 290
#: How spare width is shared out (memory, conversation, thoughts).
STRETCH = (1, 2, 1)
#: The first sizes, at the window's default 1440 px width (scaled to the width it gets).
INITIAL = (360, 680, 400)


def fit_panes(splitter: QSplitter, memory: QWidget, center: QWidget, thoughts: QWidget) -> None:
    """Give the three panes their minimum widths, stretch factors and first sizes.

    Args:
        splitter: The horizontal splitter holding ``memory``, ``center`` and ``thoughts``.
        memory: The memory pane.
        center: The conversation column (conversation and decision strip).
        thoughts: The thoughts pane.
    """
    for index, (pane, minimum) in enumerate(
        ((memory, MIN_MEMORY), (center, MIN_CONVERSATION), (thoughts, MIN_THOUGHTS))
    ):
        pane.setMinimumWidth(minimum)
        splitter.setStretchFactor(index, STRETCH[index])
    splitter.setChildrenCollapsible(False)
    splitter.setSizes(list(INITIAL))
