"""The session library dialog (File ▸ Open session…): listing, sorting, search, filters, delete,
open, "new session like this", export, bad databases, and opening at start-up."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QKeySequence

from playground import personas
from playground.embedding.cache import CachingEmbedder
from playground.room import loops
from playground.storage import library, open_database
from tests.conftest import offline_settings
from tests.support.rooms import build as build_room
from tests.ui.conftest import until
from ui.app import build, open_library_at_start
from ui.dialogs.new_session import NewSessionDialog
from ui.widgets.session_library import EMPTY_TEXT, SessionLibraryDialog
from ui.widgets.session_table import human_duration

MARMALADE = "Who here has tried making marmalade at home?"
CERTAINTY = "Is 100% certainty ever possible?"


async def _sessions(path: Path, minilm: Any) -> dict[str, str]:
    people = personas.load_personas()
    db = open_database(path)
    ids = {}
    for key, settings, who, icebreaker in (
        ("short", offline_settings(max_turns=4, seed=2), people[:3], MARMALADE),
        (
            "baseline",
            offline_settings(max_turns=3, seed=3),
            people[3:5],
            CERTAINTY,
        ),
    ):
        room, engine, _ = await build_room(settings, CachingEmbedder(minilm), who, db=db)
        await loops.run_simulation(room, icebreaker=icebreaker)
        await engine.close()
        ids[key] = room.session_id
    room, engine, _ = await build_room(
        offline_settings(seed=4), CachingEmbedder(minilm), people[5:7], db=db
    )
    await room.post(people[5].name, "Good morning, everyone.", origin="icebreaker")
    await room.post(people[6].name, "Morning! Coffee first.", origin="offline engine")
    for n in range(8):  # a longer transcript, typed in: turn counts reach two digits
        await room.post(people[5 + n % 2].name, f"Point number {n + 1}.", origin="offline engine")
    room.finish("interrupted", "stopped by the user")
    await engine.close()
    ids["stopped"] = room.session_id
    with db.conn:
        db.execute("UPDATE sessions SET condition = 'baseline' WHERE id = ?", [ids["baseline"]])
    db.close()
    return ids


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("ui-library") / "saved.db"
    return path, asyncio.run(_sessions(path, minilm))


@pytest.fixture
def db_path(saved: tuple[Path, dict[str, str]], tmp_path: Path) -> Path:
    """A private copy: tests may delete from it."""
    src, dst = sqlite3.connect(saved[0]), sqlite3.connect(tmp_path / "copy.db")
    src.backup(dst)
    src.close()
    dst.close()
    return tmp_path / "copy.db"


@pytest.fixture
def window(qtbot: Any, db_path: Path, tmp_path: Path):
    lib = tmp_path / "personas"
    shutil.copytree(personas.DEFAULT_DIR, lib)
    win, controller = build(db_path=str(db_path), environ={})
    controller.personas_dir = str(lib)
    controller.closed = True  # nothing runs: closing the window needs no clean stop
    qtbot.addWidget(win)
    win.show()
    return win, controller


@pytest.fixture
def dialog(qtbot: Any, db_path: Path) -> SessionLibraryDialog:
    dlg = SessionLibraryDialog(str(db_path))
    qtbot.addWidget(dlg)
    dlg.show()
    return dlg


def shown(dlg: SessionLibraryDialog) -> list[str]:
    return [dlg.session_at(r).id for r in range(dlg.proxy.rowCount())]


def column(dlg: SessionLibraryDialog, col: int) -> list[str]:
    return [dlg.proxy.index(r, col).data() for r in range(dlg.proxy.rowCount())]


def test_the_file_menu_opens_the_library_of_the_controllers_database(window, saved):
    win, controller = window
    menu = win.menuBar().actions()[0].menu()
    assert [a.text() for a in menu.actions() if a.text()] == [
        "Open session…",
        "Open database…",
        "Quit",
    ]
    assert win.act_open_session.shortcut() == QKeySequence(QKeySequence.StandardKey.Open)
    win.act_open_session.trigger()
    dlg = win.library_dialog
    assert dlg is not None
    assert dlg.isVisible()
    assert not dlg.isModal()
    assert dlg.db_path == str(controller.db_path)
    assert dlg.path_label.text() == dlg.db_path
    assert sorted(shown(dlg)) == sorted(saved[1].values())
    row = dlg.proxy_row(saved[1]["short"])
    people = ", ".join(p.name for p in personas.load_personas()[:3])
    assert [dlg.proxy.index(row, c).data() for c in (1, 2, 3, 4, 5, 8)] == [
        "finished",
        "inner-thoughts",
        "offline engine",
        people,
        "4",
        "0",
    ]
    assert dlg.proxy.index(row, 6).data().endswith(" s")  # a human-readable duration
    assert dlg.proxy.index(row, 7).data() == "0 · 0"


def test_durations_read_like_a_person_would_say_them():
    assert [human_duration(x) for x in (None, 45.4, 192, 3900)] == [
        "—",
        "45 s",
        "3 min 12 s",
        "1 h 05 min",
    ]


def test_sorting_by_turns_is_numeric(dialog, qtbot, saved):
    header = dialog.table.horizontalHeader()
    x = header.sectionViewportPosition(5) + header.sectionSize(5) // 2
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    turns = [int(t) for t in column(dialog, 5)]
    assert max(turns) >= 10
    assert min(turns) < 10  # "10" sorts after "4", not before
    assert turns in (sorted(turns), sorted(turns, reverse=True))
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, 5))
    assert [int(t) for t in column(dialog, 5)] == sorted(turns, reverse=turns == sorted(turns))


def test_search_requeries_after_a_short_pause(dialog, qtbot, saved):
    ids = saved[1]
    dialog.search.setText("MARMALADE")
    assert len(shown(dialog)) == 3  # debounced: nothing yet
    qtbot.waitUntil(lambda: shown(dialog) == [ids["short"]], timeout=2000)
    dialog.search.setText("coffee")
    qtbot.waitUntil(lambda: shown(dialog) == [ids["stopped"]], timeout=2000)
    name = personas.load_personas()[3].name
    dialog.search.setText(name.lower())
    qtbot.waitUntil(lambda: ids["baseline"] in shown(dialog), timeout=2000)
    dialog.search.setText("words nobody said")
    qtbot.waitUntil(lambda: not shown(dialog), timeout=2000)
    assert dialog.stack.currentWidget() is dialog.placeholder
    assert "matches" in dialog.placeholder.text()


def test_filters_list_the_values_present_and_filter_exactly(dialog, saved):
    ids = saved[1]
    statuses = [dialog.status_filter.itemText(i) for i in range(dialog.status_filter.count())]
    assert statuses == ["All statuses", "finished", "interrupted"]
    dialog.status_filter.setCurrentIndex(dialog.status_filter.findData("interrupted"))
    assert shown(dialog) == [ids["stopped"]]
    dialog.status_filter.setCurrentIndex(0)
    dialog.condition_filter.setCurrentIndex(dialog.condition_filter.findData("baseline"))
    assert shown(dialog) == [ids["baseline"]]
    dialog.engine_filter.setCurrentIndex(dialog.engine_filter.findData("offline engine"))
    assert shown(dialog) == [ids["baseline"]]
    dialog.condition_filter.setCurrentIndex(0)
    assert len(shown(dialog)) == 3


def test_delete_asks_first_and_declining_keeps_everything(dialog, saved, db_path):
    victim = saved[1]["short"]
    asked: list[str] = []

    def confirm(question: str) -> bool:
        asked.append(question)
        return False

    dialog.confirm = confirm
    assert dialog.select_session(victim)
    dialog.delete_button.click()
    assert victim in asked[0]
    assert "4 message(s) and 0 rating record(s)" in asked[0]
    assert victim in shown(dialog)

    dialog.confirm = lambda q: True
    dialog.delete_button.click()
    assert victim not in shown(dialog)
    assert len(shown(dialog)) == 2
    assert "Deleted" in dialog.message.text()
    check = open_database(db_path, create=False)
    assert [s.id for s in library.list_sessions(check) if s.id == victim] == []
    check.close()


def test_open_and_double_click_emit_the_database_and_the_session(dialog, qtbot, saved, db_path):
    sid = saved[1]["baseline"]
    assert not dialog.open_button.isEnabled()  # nothing selected yet
    dialog.select_session(sid)
    with qtbot.waitSignal(dialog.open_requested) as signal:
        dialog.open_button.click()
    assert signal.args == [str(db_path), sid]

    again = SessionLibraryDialog(str(db_path))
    qtbot.addWidget(again)
    again.show()
    index = again.proxy.index(again.proxy_row(sid), 4)
    centre = again.table.visualRect(index).center()
    qtbot.mouseClick(again.table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    with qtbot.waitSignal(again.open_requested) as signal:
        qtbot.mouseDClick(again.table.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert signal.args == [str(db_path), sid]


def test_multi_select_exports_and_single_actions_need_one(dialog, saved, tmp_path):
    ids = saved[1]
    dialog.select_session(ids["short"])
    dialog.select_session(ids["baseline"], clear=False)
    assert dialog.export_button.isEnabled()
    assert not dialog.open_button.isEnabled()
    target = tmp_path / "two.jsonl"
    dialog.ask_export_path = lambda: (str(target), "jsonl")
    dialog.export_button.click()
    assert len(target.read_text().splitlines()) == 2
    assert "Exported 2 session(s)" in dialog.message.text()
    dialog.export_selected(str(tmp_path / "missing-folder" / "x.csv"))
    assert dialog.message.text().startswith("⚠ Export:")


def test_new_session_like_this_prefills_the_dialog_and_applies_the_engine(window, saved):
    win, controller = window
    sid = saved[1]["baseline"]
    lib = Path(controller.personas_dir)
    snapshot = personas.load_personas()[3:5]
    changed, removed = snapshot
    (lib / f"{removed.id}.toml").unlink()  # gone from the library since the session
    edited = changed.model_copy(update={"description": "Changed since."})
    personas.save_persona(edited, lib)
    controller.configure({"engine": "offline", "max_turns": 40})

    dlg = win.open_library()
    dlg.select_session(sid)
    dlg.new_like_button.click()
    assert not dlg.isVisible()
    session = next(d for d in win.findChildren(NewSessionDialog) if d.isVisible())
    assert [p.id for p in session.chosen()] == [changed.id, removed.id]
    assert session.chosen() == snapshot  # the snapshots, not today's files
    assert session.icebreaker_text() == CERTAINTY
    assert session.seed.value() == 3
    assert session.preset.currentData() == "simulation"
    assert controller.settings.room.max_turns == 3  # the saved session's settings
    assert controller.settings.engine.engine == "offline"
    assert "API key" not in win.messages.status_label.text()


def test_new_session_like_a_server_session_says_the_key_was_not_saved(window, saved, db_path):
    win, controller = window
    sid = saved[1]["short"]
    db = open_database(db_path, create=False)
    config = library.session_blueprint(db, sid).settings.snapshot()
    engine, llm = config["engine"], config["llm"]
    assert isinstance(engine, dict)
    assert isinstance(llm, dict)
    engine["engine"] = "openai"
    llm.update(base_url="http://127.0.0.1:9/v1", model="llama3.1")
    import json

    with db.conn:
        db.execute("UPDATE sessions SET config = ? WHERE id = ?", [json.dumps(config), sid])
    db.close()
    session = win.new_session_like(str(db_path), sid)
    assert session is not None
    assert len(session.chosen()) == 3
    assert controller.settings.engine.engine == "openai"
    assert controller.settings.llm.model == "llama3.1"
    assert "API keys are never saved" in win.messages.status_label.text()
    assert "http://127.0.0.1:9/v1" in win.messages.status_label.text()


def test_a_corrupt_or_foreign_database_is_reported_and_the_previous_one_kept(
    dialog, saved, tmp_path
):
    before = shown(dialog)
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"garbage" * 1000)
    dialog.ask_database_path = lambda: str(bad)
    dialog.open_db_button.click()
    assert "bad.db: not a usable session database" in dialog.message.text()
    foreign = tmp_path / "notes.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE notes (body TEXT)")
    conn.commit()
    conn.close()
    assert not dialog.set_database(foreign)
    assert "another application" in dialog.message.text()
    assert shown(dialog) == before
    assert dialog.path_label.text() != str(foreign)
    assert dialog.db is not None
    assert library.count_sessions(dialog.db) == 3


def test_an_empty_or_missing_database_shows_the_placeholder(qtbot, tmp_path):
    open_database(tmp_path / "empty.db").close()
    for path in (tmp_path / "empty.db", tmp_path / "absent.db"):
        dlg = SessionLibraryDialog(str(path))
        qtbot.addWidget(dlg)
        dlg.show()
        assert dlg.stack.currentWidget() is dlg.placeholder
        assert dlg.placeholder.text() == EMPTY_TEXT
    assert not (tmp_path / "absent.db").exists()


def test_start_up_opens_the_library_only_when_there_are_sessions(qtbot, tmp_path, db_path):
    for path, expect in ((db_path, True), (tmp_path / "none.db", False)):
        win, controller = build(db_path=str(path), environ={})
        controller.closed = True
        qtbot.addWidget(win)
        win.show()
        dlg = open_library_at_start(win)
        assert (dlg is not None and dlg.isVisible()) is expect
    assert not (tmp_path / "none.db").exists()
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"garbage" * 1000)
    win, controller = build(db_path=str(corrupt), environ={})
    controller.closed = True
    qtbot.addWidget(win)
    win.show()
    assert open_library_at_start(win) is None
    assert win.banner.isVisible()
    assert "not a usable session database" in win.banner.text()


@pytest.mark.asyncio
async def test_open_from_the_library_replays_the_session(qtbot, db_path, saved, minilm):
    win, controller = build(db_path=str(db_path), environ={}, embedder=CachingEmbedder(minilm))
    qtbot.addWidget(win)
    win.show()
    sid = saved[1]["short"]
    dlg = win.open_library()
    dlg.select_session(sid)
    dlg.open_button.click()
    await until(lambda: win.replay.recording is not None, what="the replay")
    assert win.replay.recording is not None
    assert win.replay.recording.session["id"] == sid
    await controller.shutdown()


@pytest.mark.asyncio
async def test_rate_blind_from_the_library_opens_the_rater_window(qtbot, db_path, saved):
    win, controller = build(db_path=str(db_path), environ={})
    qtbot.addWidget(win)
    win.show()
    sid = saved[1]["short"]
    dlg = win.open_library()
    dlg.select_session(sid)
    assert dlg.rate_button.isEnabled()
    dlg.rate_button.click()
    rater = win.rating.rater
    assert rater is not None
    assert rater.isVisible()
    await controller.shutdown()
