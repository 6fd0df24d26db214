"""The STORM pick lists show several profiles with their whole text, and a profile just
generated is in view; the empty STORM view says what to do first and offers no replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QRect, Qt

from playground.storage import open_database
from tests.ui.storm_rows import Dialogue, write
from ui.bridge import EngineBridge
from ui.session.controller import SessionController
from ui.storm.seating import AddSimulatedUserDialog, describe
from ui.storm.view import StormWindow


def _controller(tmp_path: Path, profiles: int) -> SessionController:
    c = SessionController(EngineBridge(), db_path=tmp_path / "s.db", environ={})
    c.simulated.users_dir = tmp_path / "users"
    for seed in range(profiles):
        c.simulated.save_profile(
            c.simulated.generate_profile(100 + seed, task=None, difficulty=None, uncertainty=40)
        )
    return c


def _fully_shown(lst: Any, row: int) -> bool:
    """The row's whole text fits its rectangle (wrapped over as many lines as it needs)."""
    item = lst.item(row)
    rect = lst.visualItemRect(item)
    text_width = (
        rect.width() - lst.style().pixelMetric(lst.style().PixelMetric.PM_IndicatorWidth) - 12
    )
    needed = lst.fontMetrics().boundingRect(
        QRect(0, 0, text_width, 10_000), Qt.TextFlag.TextWordWrap, item.text()
    )
    return needed.height() <= rect.height()


def test_the_pick_list_shows_several_whole_profiles_and_the_one_just_generated(qtbot, tmp_path):
    c = _controller(tmp_path, 9)
    dlg = AddSimulatedUserDialog(c)
    qtbot.addWidget(dlg)
    dlg.show()
    qtbot.waitExposed(dlg)
    lst = dlg.users.list
    assert lst.count() == 9
    shown = [
        r
        for r in range(lst.count())
        if lst.viewport().rect().contains(lst.visualItemRect(lst.item(r)))
    ]
    assert len(shown) >= 5, f"only {len(shown)} rows in view"
    for r in shown:
        item = lst.item(r)
        assert (
            item.toolTip()
            == item.text()
            == describe(dlg.users.profiles[item.data(Qt.ItemDataRole.UserRole)])
        )
        assert _fully_shown(lst, r), f"row {r} is cut: {item.text()!r}"
    gen = dlg.users.open_generate()
    gen.seed.setValue(777)
    gen.try_generate()
    assert gen.profile is not None
    qtbot.wait(50)
    new = next(
        lst.item(r)
        for r in range(lst.count())
        if lst.item(r).data(Qt.ItemDataRole.UserRole) == gen.profile.id
    )
    assert new.checkState() == Qt.CheckState.Checked
    assert lst.viewport().rect().contains(lst.visualItemRect(new)), "the new profile is out of view"
    assert lst.currentItem() is new


class _Db:
    """What the STORM window asks of the main window's controller: the database."""

    def __init__(self, path: Path) -> None:
        self.db_path = path
        self._db = open_database(path)

    def database(self) -> Any:
        return self._db


def test_the_empty_storm_view_says_what_to_do_and_offers_no_replay(qtbot, tmp_path):
    c = _Db(tmp_path / "storm.db")
    view = StormWindow(c, lambda *_: None)
    qtbot.addWidget(view)
    view.show()
    assert view.dialogues.rowCount() == 0
    assert not view.replay_button.isEnabled()
    assert view.empty_hint.isVisible()
    assert "simulated user" in view.empty_hint.text()
    write(c.database(), [Dialogue("s-a", "m1", 0, True, [(0.6, 0.5), (0.7, 0.6)])])
    view.refresh()
    assert not view.empty_hint.isVisible()
    assert view.replay_button.isEnabled()
    assert view.selected_session() == "s-a"
