"""A simulated user's private profile, read-only, for the left pane (with an Edit… button).

The left pane shows this instead of long-term memory when the selected participant is a STORM
simulated user: its task, difficulty and uncertainty, then the base profile, behavioural traits
and context. The attributes the user does not know about themself (the uncertainty share) stay
visible to the researcher, marked "unknown to the user".
"""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QTextBrowser, QVBoxLayout, QWidget

from playground.domain.simulated_user import UserProfile

#: How an attribute the user does not know is marked (tests look for it).
UNKNOWN_MARK = "unknown to the user"
SECTIONS = (
    ("base", "Base profile"),
    ("traits", "Behavioural traits"),
    ("context", "Context"),
)


def _label(key: str) -> str:
    return key.replace("_", " ")


def _rows(profile: UserProfile, section: str, values: dict[str, str]) -> str:
    if not values:
        return "<p style='color:#888'><i>none</i></p>"
    rows = []
    for key, value in values.items():
        unknown = f"{section}.{key}" in profile.unknown
        mark = (
            f" <span style='color:#b71c1c; font-style:italic'>({UNKNOWN_MARK})</span>"
            if unknown
            else ""
        )
        color = "#9e9e9e" if unknown else "#212121"
        rows.append(
            f"<tr><td style='color:#607d8b; padding-right:8px'>{html.escape(_label(key))}</td>"
            f"<td style='color:{color}'>{html.escape(value)}{mark}</td></tr>"
        )
    return "<table cellspacing='1'>" + "".join(rows) + "</table>"


def _list(items: list[str]) -> str:
    if not items:
        return "<p style='color:#888'><i>none</i></p>"
    return (
        "<ul style='margin-left:12px; -qt-list-indent:0'>"
        + "".join(f"<li>{html.escape(i)}</li>" for i in items)
        + "</ul>"
    )


def profile_html(profile: UserProfile) -> str:
    """The profile as the pane shows it (HTML)."""
    t, d = profile.task, profile.difficulty
    desc = profile.description
    if desc.startswith(profile.name):  # "Abebe (25-34, ...) is ...": the name leads already
        intro = html.escape(desc[len(profile.name) :])
    else:
        intro = f" — {html.escape(desc)}" if desc else ""
    head = (
        f"<p><b>{html.escape(profile.name)}</b>{intro}</p>"
        f"<p><b>Task</b> ({html.escape(t.category)}): {html.escape(t.task)}<br>"
        f"<b>Difficulty</b> {d.level} (style {d.style}, length {d.length}, content {d.content},"
        f" tone {d.tone}) · <b>Uncertainty</b> {profile.uncertainty}%"
        f" ({len(profile.unknown)} attribute{'' if len(profile.unknown) == 1 else 's'}"
        f" {UNKNOWN_MARK})</p>"
    )
    body = [head, "<h4>Task attributes</h4>", _rows(profile, "task", t.attributes)]
    body += ["<h4>Requirements</h4>", _list(t.requirements)]
    body += ["<h4>Success criteria</h4>", _list(t.success_criteria)]
    for section, title in SECTIONS:
        body += [f"<h4>{title}</h4>", _rows(profile, section, getattr(profile, section))]
    if profile.examples:
        body += ["<h4>Example messages</h4>", _list(profile.examples)]
    seed = f" · seed {profile.seed}" if profile.seed is not None else ""
    body.append(
        f"<p style='color:#78909c'>profile {html.escape(profile.id)}{seed} ·"
        f" {html.escape(profile.origin)}</p>"
    )
    return "".join(body)


class ProfileView(QWidget):
    """The selected simulated user's private profile; Edit… asks to open the editor.

    Attributes:
        browser: The read-only text of the profile.
        edit_button: Opens the profile editor (``edit_requested``).
    """

    edit_requested = Signal(object)  # UserProfile

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.profile: UserProfile | None = None
        #: Whether Edit profile… is offered (the live window's pane; not a look back).
        self.editable = False
        self.note = QLabel(
            "Private profile: the simulated user plays it; no other participant sees it."
        )
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color:#4a148c;")
        self.browser = QTextBrowser()
        self.browser.setOpenLinks(False)
        self.edit_button = QPushButton("Edit profile…")
        self.edit_button.setToolTip(
            "Edit this profile's TOML file (personas/users); it applies to new sessions"
        )
        self.edit_button.clicked.connect(self._edit)
        row = QHBoxLayout()
        row.addWidget(self.edit_button)
        row.addStretch(1)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.note)
        lay.addWidget(self.browser, 1)
        lay.addLayout(row)

    def show_profile(self, profile: UserProfile | None) -> None:
        """Show ``profile`` (None: a simulated user whose profile was not recorded)."""
        self.profile = profile
        self.browser.setHtml(
            profile_html(profile) if profile is not None else "<i>No profile was recorded.</i>"
        )
        self.edit_button.setVisible(self.editable)
        self.edit_button.setEnabled(profile is not None)

    def text(self) -> str:
        """What the view says, as plain text."""
        return self.browser.toPlainText()

    def _edit(self) -> None:
        if self.profile is not None:
            self.edit_requested.emit(self.profile)
