"""People's reviews of a replayed conversation, beside what the agents made of it.

After a study conversation each person who took part from a browser may review it message by
message (what they were thinking, whether they wanted to say it, why, when they would have
spoken). This window lists those rows as the database holds them, one per person and message,
with the message and, on a person's own message, the agents' interpretation of it: what the
person meant next to what the agents understood. Read-only; everything shown as plain text.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QTableWidget, QVBoxLayout, QWidget

from playground.rating.user_study import TIMINGS, WANTED
from playground.storage import study_rows
from ui.widgets.tool_window import ToolWindow, read_only_item, read_only_table

COLUMNS = [
    "#",
    "Speaker",
    "Message",
    "Person",
    "What they were thinking",
    "Wanted to say it",
    "Why",
    "When they would have spoken",
    "Agents' interpretation (their own message)",
]


def review_rows(db: Any, session_id: str) -> list[list[str]]:
    """The session's reviews as the window's rows, by message, then person."""
    out = []
    for r in study_rows.reviewed_messages(db, session_id):
        when = TIMINGS.get(r["timing"] or "", "")
        if r["timing"] == "after" and r["after_message_id"] is not None:
            when = f"After message #{r['after_message_id']}"
        own = r["author"] == r["speaker"]
        out.append(
            [
                str(r["message_id"]),
                r["speaker"],
                r["text"],
                r["author"],
                r["thinking"],
                WANTED.get(r["wanted"] or "", ""),
                r["why"],
                when,
                (r["interpretation"] or "") if own else "",
            ]
        )
    return out


class ReviewsWindow(ToolWindow):
    """The reviews of one session (Replay ▸ People's reviews…)."""

    def __init__(self, db: Any, session_id: str, parent: QWidget | None = None) -> None:
        super().__init__(f"People's reviews — {session_id}", (1200, 520), parent)
        self.db, self.session_id = db, session_id
        lay = QVBoxLayout(self)
        self.intro = QLabel()
        self.intro.setWordWrap(True)
        lay.addWidget(self.intro)
        self.table: QTableWidget = read_only_table(COLUMNS, stretch=2)
        self.table.setWordWrap(True)
        lay.addWidget(self.table, 1)
        self.refresh()

    def refresh(self) -> None:
        rows = review_rows(self.db, self.session_id)
        people = len({r[3] for r in rows})
        self.intro.setText(
            f"{len(rows)} review note{'s' if len(rows) != 1 else ''} by {people}"
            f" {'person' if people == 1 else 'people'}, written after the conversation. Only the"
            " researcher sees them; each person saw only their own."
            if rows
            else "Nobody has reviewed this conversation."
        )
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            for j, text in enumerate(row):
                self.table.setItem(i, j, read_only_item(text, right=j == 0))
        self.table.resizeRowsToContents()
