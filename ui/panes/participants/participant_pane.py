"""ParticipantPane: the base of the side panes that show the selected participant (memory, thoughts).

Such a pane shows one participant at a time, the one selected in the window
(:class:`ui.selection.SelectedParticipant`): it builds itself, then follows the selection and
the stimulus focused across the panes, and starts on the participant selected now.
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from ui.bridge import EngineBridge
from ui.selection import SelectedParticipant


class ParticipantPane(QWidget):
    """A pane that follows the selected participant.

    A subclass builds its widgets and connects the bridge in :meth:`_setup`, shows a participant
    in :meth:`_show_agent` (on each selection change, and once at the end of construction with
    the participant selected then) and highlights a focused stimulus (a ref like "memory:3") in
    :meth:`_on_stimulus_focused`.

    Args:
        bridge: Source of engine events.
        selection: Which participant to follow; also used to focus stimuli across panes.
        parent: Optional parent widget.
    """

    def __init__(
        self,
        bridge: EngineBridge,
        selection: SelectedParticipant,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._bridge = bridge
        self._selection = selection
        #: The participant shown ("" for none).
        self._agent = ""
        #: Between ``begin_rebuild`` and ``end_rebuild`` (a replay jump): events only collect.
        self._rebuilding = False
        self._setup(bridge, selection)
        selection.changed.connect(self._show_agent)
        selection.stimulus_focused.connect(self._on_stimulus_focused)
        self._show_agent(selection.name)

    @property
    def agent(self) -> str:
        """The participant shown ("" for none)."""
        return self._agent

    def _setup(self, bridge: EngineBridge, selection: SelectedParticipant) -> None:
        """Build the pane and connect ``bridge`` (before the pane follows ``selection``)."""
        raise NotImplementedError

    def _show_agent(self, name: str) -> None:
        """Show ``name`` ("" for none)."""
        raise NotImplementedError

    def _on_stimulus_focused(self, ref: str) -> None:
        """Highlight the stimulus ``ref`` ("" to clear) where the pane shows it."""
        raise NotImplementedError
