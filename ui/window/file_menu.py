"""The main window's File menu: the session library, other databases, "new session like this"."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence

from playground import errors
from playground.storage import library as saved
from playground.urls import redact
from ui.dialogs.new_session import NewSessionDialog
from ui.widgets.session_library import SessionLibraryDialog, ask_database_path


class FileMenu(QObject):
    """Adds File ▸ Open session… (Ctrl+O), Open database… and Quit to ``window``."""

    def __init__(self, window: Any) -> None:
        super().__init__(window)
        self.window = w = window
        menu = w.menuBar().addMenu("&File")
        self.act_open_session = QAction("Open session…", w)
        self.act_open_session.setShortcut(QKeySequence.StandardKey.Open)
        self.act_open_session.setToolTip("Saved sessions: replay, new session like one, export")
        self.act_open_database = QAction("Open database…", w)
        self.act_quit = QAction("Quit", w)
        self.act_quit.setShortcut(QKeySequence.StandardKey.Quit)
        menu.addAction(self.act_open_session)
        menu.addAction(self.act_open_database)
        menu.addSeparator()
        menu.addAction(self.act_quit)
        self.act_open_session.triggered.connect(lambda: self.open_library())
        self.act_open_database.triggered.connect(lambda: self.open_database_file())
        self.act_quit.triggered.connect(w.close)
        self.library_dialog: SessionLibraryDialog | None = None

    def open_library(self, db_path: str | None = None) -> SessionLibraryDialog:
        w = self.window
        if self.library_dialog is not None:
            self.library_dialog.close()
        dlg = SessionLibraryDialog(str(db_path or w.controller.db_path), w)
        dlg.open_requested.connect(w.open_replay)
        dlg.new_like_requested.connect(self.new_session_like)
        dlg.rate_requested.connect(lambda path, sid: w.rating.rate_session(sid, db_path=path))
        self.library_dialog = dlg
        dlg.setModal(False)
        dlg.show()
        dlg.raise_()
        return dlg

    def open_database_file(self, path: str | None = None) -> SessionLibraryDialog | None:
        path = path or ask_database_path(self.window)
        return self.open_library(path) if path else None

    def new_session_like(self, db_path: str, session_id: str) -> NewSessionDialog | None:
        """The New session dialog pre-filled with a saved session's settings and participants.

        The saved session's engine settings apply to the next session; its API key was never
        stored, so a server that needs one is mentioned in the hint.
        """
        w = self.window
        c = w.controller
        try:
            bp = saved.session_blueprint(c.database_at(db_path), session_id)
            s = bp.settings
            c.configure(
                {
                    "engine": s.engine.engine,
                    "model": s.llm.model,
                    "base_url": s.llm.base_url,
                    "evaluation_mode": s.engine.evaluation_mode,
                    "embeddings": s.engine.embeddings,
                    **s.room.model_dump(exclude={"pace"}),
                    "pace": c.settings.room.pace,  # the window's speed menu stays in charge
                }
            )
        except errors.PlaygroundError as exc:
            w.show_error(f"New session like {session_id}: {exc}")
            return None
        dlg = w.dialogs.open_new_session()
        if dlg is None:
            return None
        dlg.prefill(
            bp.personas,
            icebreaker=bp.icebreaker,
            preset=bp.preset,
            seed=bp.seed,
            policies=bp.policies,
        )
        text = f"New session like {session_id}: {len(bp.personas)} participants, seed {bp.seed}."
        if s.engine.engine == "openai" and not (c.api_key or c.environ.get("OPENAI_API_KEY")):
            where = redact(s.llm.base_url or "api.openai.com")  # an older database may hold one
            text += (
                f" It used {s.llm.model} at {where}; API keys are never saved, so if that server"
                " needs one, enter it under Engine… before starting."
            )
        w.hint(text)
        return dlg
