"""What the main window says: the banner above the conversation and the status line.

The banner shows an error (red, until closed or replaced) or a notice (something to read, such as
why a session ended with nobody speaking). The status bar names the session's engine, counts the
LLM calls and tokens (with retries and what the server was found to support), and says the latest
news: a hint, or the error the banner shows.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QLabel, QStatusBar, QToolButton

from playground import domain, events
from playground.llm.capabilities import server_profile, summary_of
from playground.room import silence
from ui.widgets.elided_label import ElidedLabel

#: The banner above the conversation: an error, or a notice (why a session ended quietly).
ERROR_STYLE = (
    "background:#fdecea; color:#b71c1c; padding:6px; border:1px solid #f5c6cb; border-radius:4px;"
)
NOTICE_STYLE = (
    "background:#fff8e1; color:#4e342e; padding:6px; border:1px solid #ffe082; border-radius:4px;"
)
#: The usage line before the first LLM call of a session.
NO_USAGE = "0 LLM calls · 0 tokens"


class WindowMessages(QObject):
    """The banner (with its ✕) and the status line's labels; the window lays them out.

    Args:
        engine: The engine the status line names first.
        parent: The window.

    Attributes:
        banner: The banner's text (an error or a notice; rich text once links are offered).
        banner_close: Its ✕ button.
        engine_label: The engine and model of the session on screen.
        usage_label: LLM calls and tokens so far (the server's profile in its tooltip).
        status_label: The latest hint or error (elided; its tooltip has all of it).
    """

    def __init__(self, engine: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.banner = QLabel("")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(ERROR_STYLE)
        self.banner.hide()
        self.banner_close = QToolButton()
        self.banner_close.setText("✕")
        self.banner_close.setAutoRaise(True)
        self.banner_close.hide()
        self.banner_close.clicked.connect(self.hide_error)
        self.engine_label = QLabel(engine)
        self.usage_label = QLabel(NO_USAGE)
        self.status_label = ElidedLabel("", mode=Qt.TextElideMode.ElideRight)  # tooltip: all

    def add_to(self, status_bar: QStatusBar) -> None:
        """Lay the status line out: engine | usage | the latest news."""
        status_bar.addWidget(self.engine_label)
        status_bar.addWidget(QLabel("|"))
        status_bar.addWidget(self.usage_label)
        status_bar.addWidget(QLabel("|"))
        status_bar.addWidget(self.status_label, 1)

    # -- the status line ---------------------------------------------------------------------------

    def hint(self, text: str) -> None:
        self.status_label.setStyleSheet("color:#333;")
        self.status_label.setText(text)

    def session_finished(self, status: str, reason: str) -> None:
        """The end in the status bar; an end that says why nobody spoke (and what to change)
        also in the banner, wrapped, where it is read in full."""
        self.hint(f"Session {status}: {reason}")
        if silence.explains_silence(reason):
            self.show_notice(f"Session {status}: {reason}")

    def condition_changed(self, e: events.ConditionChanged) -> None:
        """The session's condition followed its seats: say so where the user looks."""
        self.hint(f"Step {e.step}: {e.why}. The session's condition is now {e.new} (was {e.old}).")

    def refused(self, e: events.ThoughtRefused) -> None:
        what = "thought" if e.stage == "thought" else "message"
        self.hint(f"{e.agent}'s {what} was refused: {e.reason}")

    def show_usage(self, u: domain.Usage) -> None:
        retried = f" · {u.retry_text()}" if u.retries else ""
        profile = server_profile(u.server_profile)
        server = f" · {profile['structured']}" if profile else ""
        self.usage_label.setText(
            f"{u.calls} LLM calls · {u.prompt_tokens + u.completion_tokens:,} tokens{retried}"
            f"{u.loss_text(' · ')}{server}"
        )
        if profile:
            learned = "".join(f"\n• {why}" for why in profile.get("learned") or [])
            self.usage_label.setToolTip(f"Server: {summary_of(profile)}{learned}")

    def reset_usage(self) -> None:
        self.usage_label.setText(NO_USAGE)

    # -- the banner --------------------------------------------------------------------------------

    def show_notice(self, text: str) -> None:
        """Something to read, not an error: the banner, in its notice colours, as plain text."""
        self.banner.setStyleSheet(NOTICE_STYLE)
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.setToolTip("")
        self.banner.setText(text)
        self.banner.show()
        self.banner_close.show()

    def show_error(self, text: str) -> None:
        self.banner.setStyleSheet(ERROR_STYLE)
        if self.banner.textFormat() == Qt.TextFormat.PlainText:
            self.banner.setTextFormat(Qt.TextFormat.AutoText)  # as before any notice
        self.banner.setText(f"⚠ {text}")
        self.banner.show()
        self.banner_close.show()
        self.status_label.setStyleSheet("color:#c62828;")
        self.status_label.setText(text)

    def hide_error(self) -> None:
        self.banner.hide()
        self.banner_close.hide()
