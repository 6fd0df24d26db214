"""Every reader reads a session inside one snapshot (issue 23).

``export`` and ``show`` run as ``python -m playground`` subprocesses, again and again, while a real
``playground simulate`` (offline engine) writes the same session; each answer must be whole and
agree with itself: every message's thought present, as many rows as the event log has events, the
session still marked running. In-process, a second connection commits a thought and its message
exactly between two statements of a reader (from SQLite's trace callback): ``show``, ``export``
and replay must not see it; the library and the report must read inside one transaction.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils

from playground import domain, events
from playground.history import recording as replay
from playground.report import stats as report
from playground.storage import SessionReader, SessionRecorder, library, open_database
from playground.storage.database import open_for_reading
from playground.transfer import export
from tests.support.cli import run_process

REPO = Path(__file__).resolve().parents[2]
READS = 15
SID = "20250101-000000-live"
AT = "2025-01-01T00:00:00+00:00"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}


_cli = run_process


def _messages(path: Path) -> tuple[str | None, int]:
    if not path.is_file():
        return None, 0
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as conn:
            row = conn.execute(
                "SELECT s.id, (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)"
                " FROM sessions s"
            ).fetchone()
    except sqlite3.OperationalError:  # the schema is still being created
        return None, 0
    return (row[0], row[1]) if row else (None, 0)


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[Path, str, subprocess.Popen[str]]]:
    """A session being written by ``simulate``: (database, session id, the writer). The talkative
    preset keeps it going (the default one ends after a few silent steps); it is stopped after."""
    path = tmp_path / "live.db"
    writer = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "playground",
            "simulate",
            "--engine",
            "offline",
            "--agents",
            "4",
            "--turns",
            "2000",
            "--seed",
            "5",
            "--preset",
            "active-contributor",
            "--quiet",
            "--db",
            str(path),
        ],
        cwd=REPO,
        env=_env(),
        preexec_fn=lambda: os.nice(10),  # on a busy machine the reads come first: a smaller session
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while True:
            assert writer.poll() is None, writer.stderr.read() if writer.stderr else ""
            sid, count = _messages(path)
            if sid is not None and count >= 2:
                break
            assert time.monotonic() < deadline, "the simulation never got going"
            time.sleep(0.1)
        yield path, sid, writer
        assert writer.poll() is None, "the run ended before the reads did: nothing was concurrent"
    finally:
        if writer.poll() is None:
            writer.send_signal(signal.SIGTERM)
        writer.communicate(timeout=120)


def _check_export(record: dict[str, Any]) -> None:
    assert record["session"]["status"] == "running"
    kinds = Counter(e["kind"] for e in record["events"])
    thoughts = {t["id"]: t for t in record["thoughts"]}
    assert len(record["messages"]) == kinds["message_posted"]
    assert len(thoughts) == kinds["thought_formed"]
    assert sum(len(t["evaluations"]) for t in thoughts.values()) == kinds["thought_evaluated"]
    assert len(record["decisions"]) == kinds["decision_made"]
    for m in record["messages"]:
        if m["thought_id"] is not None:
            assert m["thought"] is not None, m
            assert m["thought"]["id"] == m["thought_id"], m
    for d in record["decisions"]:
        assert d["thought_id"] is None or d["thought_id"] in thoughts, d


def _check_show(data: dict[str, Any]) -> None:
    assert data["session"]["status"] == "running"
    thoughts = {t["id"] for t in data["thoughts"]}
    for m in data["messages"]:
        assert m["thought_id"] is None or m["thought_id"] in thoughts, m
    for d in data["decisions"]:
        assert d["thought_id"] is None or d["thought_id"] in thoughts, d


@pytest.mark.timeout(540)  # 20 commands of a few seconds each, on a busy machine many more
def test_export_and_show_of_a_session_being_written_are_each_one_snapshot(live):
    path, sid, writer = live
    sizes: list[int] = []
    for i in range(READS):
        exported = _cli("export", sid, "--db", str(path))
        assert exported.returncode == 0, exported.stderr[-2000:]
        assert not exported.stderr, exported.stderr[-2000:]
        record = json.loads(exported.stdout)
        _check_export(record)
        sizes.append(len(record["messages"]))
        if i % 3:
            continue
        shown = _cli("show", sid, "--db", str(path), "--json")
        assert shown.returncode == 0, shown.stderr[-2000:]
        assert not shown.stderr, shown.stderr[-2000:]
        _check_show(json.loads(shown.stdout))
    assert writer.poll() is None
    assert sizes[-1] > sizes[0], f"the session did not grow while it was read: {sizes}"


# -- in-process: a write lands exactly between two of a reader's statements -------------------------


class Writer:
    """A second connection that records a running session through the real recorder."""

    def __init__(self, path: Path) -> None:
        self.db = open_database(path)
        self.bus = events.EventBus()
        SessionRecorder(self.db).attach(self.bus)
        self.seq = 0
        self.said = 0
        self._publish(
            events.SessionStarted,
            engine="offline engine",
            model="offline",
            seed=0,
            condition="inner-thoughts",
            settings={},
        )
        self._publish(events.ParticipantJoined, name="Ana", participant_kind="ai")
        for _ in range(3):
            self.say()

    def _publish(self, kind: Any, **fields: Any) -> None:
        self.seq += 1
        self.bus.publish(kind(session_id=SID, at=AT, seq=self.seq, step=self.said, **fields))

    def say(self) -> None:
        """A thought, then the message that expresses it: two events, two transactions."""
        self.said += 1
        n = self.said
        thought = domain.Thought(
            id=n, agent="Ana", text=f"thought {n}", system=2, created_step=n, last_access=n
        )
        self._publish(events.ThoughtFormed, thought=thought)
        message = domain.Message(
            id=n, speaker="Ana", text=f"message {n}", step=n, at=AT, thought_id=n
        )
        self._publish(events.MessagePosted, message=message)


class Interleave:
    """A trace callback on the reader: the first time ``marker`` is in a statement it is about to
    run (and each time it is armed again), ``writer`` first commits a new thought and message."""

    def __init__(self, reader: sqlite_utils.Database, writer: Writer, marker: str) -> None:
        self.writer = writer
        self.marker = marker
        self.armed = True
        self.ran: list[str] = []
        reader.conn.set_trace_callback(self)

    def __call__(self, sql: str) -> None:
        self.ran.append(sql)
        if self.armed and self.marker in sql:
            self.armed = False
            self.writer.say()


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[sqlite_utils.Database, Writer]]:
    path = tmp_path / "live.db"
    writer = Writer(path)
    reader = open_for_reading(path)
    yield reader, writer
    reader.close()
    writer.db.close()


def test_show_reads_a_session_in_one_snapshot(pair):
    reader, writer = pair
    Interleave(reader, writer, "FROM messages")
    data = SessionReader(reader).load(SID)
    assert writer.said == 4, "the write between the statements did not happen"
    assert [m["id"] for m in data["messages"]] == [1, 2, 3]
    assert [t["id"] for t in data["thoughts"]] == [1, 2, 3]


def test_export_reads_a_session_in_one_snapshot(pair):
    reader, writer = pair
    Interleave(reader, writer, "FROM messages")
    record = export.export_record(reader, SID)
    assert writer.said == 4
    assert [(m["id"], m["thought"] and m["thought"]["id"]) for m in record["messages"]] == [
        (1, 1),
        (2, 2),
        (3, 3),
    ]
    kinds = Counter(e["kind"] for e in record["events"])
    assert (kinds["thought_formed"], kinds["message_posted"]) == (3, 3)
    assert record["session"]["status"] == "running"


def test_replay_loads_and_refreshes_a_session_in_one_snapshot(pair):
    reader, writer = pair
    between = Interleave(reader, writer, "FROM messages")
    rec = replay.Recording.load(reader, SID)
    assert writer.said == 4
    assert set(rec.message_text) == set(rec.message_seq) == {1, 2, 3}
    between.armed = True
    assert rec.refresh() == 2  # message 4's two events; message 5 comes in between
    assert writer.said == 5
    assert set(rec.message_text) == set(rec.message_seq) == {1, 2, 3, 4}


@pytest.mark.parametrize("what", ["blueprint", "report", "facets"])
def test_the_library_and_the_report_read_inside_one_transaction(pair, what):
    reader, writer = pair
    ran = Interleave(reader, writer, "never matches").ran
    if what == "blueprint":
        assert library.session_blueprint(reader, SID).participants
    elif what == "report":
        assert report.build_report(reader, agreement_options={"skip": True}).counts.sessions == 1
    else:
        assert library.facets(reader)["status"] == ["running"]
    assert ran[0] == "BEGIN", ran
    assert ran[-1] == "COMMIT", ran
    assert ran.count("BEGIN") == 1, ran
    assert len(ran) > 3, ran
