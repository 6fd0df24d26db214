"""Text that came from a file, a model or a person never reaches the terminal as control codes.

A persona file, an icebreaker, an imported export or a profile can hold escape sequences (clear
the screen, set the window title, recolour), backspaces and carriage returns that overwrite what
was printed, C1 controls and bidi overrides that reorder a line. Every command prints them as
visible escapes (``\\u001b``) and keeps the stored data and the export files as they were. Each
command runs as a real ``python -m playground`` process on a real SQLite file; its output is read
as bytes, so a carriage return is not turned into a newline on the way.
"""

from __future__ import annotations

import json
import os
import pty
import sqlite3
import subprocess
import sys
import tty
import unicodedata
from pathlib import Path

import pytest

from playground.storm import profiles

REPO = Path(__file__).resolve().parents[2]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}

#: Clear screen, a window-title OSC ended by BEL, backspace, lone CR, C1 CSI, DEL, a bidi
#: override, and rich markup that must stay plain text.
HOSTILE = "Hi \x1b[2J\x1b]0;pwned\x07 there\x08\rover \x9b31m red\x7f \u202eevil [bold]x[/bold]"
#: A persona name may not have whitespace, ',', ':' or ';' but may have escape codes.
NAME = "Ana\x1b[31m\x9b1m\u202e\x08"
SHOWN_NAME = "Ana\\u001b[31m\\u009b1m\\u202e\\u0008"
SHOWN = (
    "Hi \\u001b[2J\\u001b]0;pwned\\u0007 there\\u0008\\u000dover \\u009b31m red\\u007f"
    " \\u202eevil [bold]x[/bold]"
)


def _unsafe(text: str) -> list[str]:
    """The characters of ``text`` that a terminal acts on instead of showing (newline and tab
    aside), found independently of the code under test."""
    return sorted(
        {
            c
            for c in text
            if (unicodedata.category(c) in ("Cc", "Cs") and c not in "\n\t")
            or 0x202A <= ord(c) <= 0x202E
            or 0x2066 <= ord(c) <= 0x2069
        }
    )


def _cli(*argv: str, timeout: float = 300) -> tuple[int, str, str]:
    """``python -m playground *argv``: the exit code and its stdout and stderr, decoded without
    newline translation."""
    proc = subprocess.run(
        [sys.executable, "-m", "playground", *argv],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def _safe(code: int, out: str, err: str) -> tuple[int, str, str]:
    assert _unsafe(out) == [], out
    assert _unsafe(err) == [], err
    assert "Traceback" not in err
    return code, out, err


# -- the function ---------------------------------------------------------------------------------


def test_visible_escapes_every_control_and_keeps_text_and_layout():
    from playground.terminal_text import visible

    assert visible(HOSTILE) == SHOWN
    assert _unsafe(SHOWN) == []
    kept = "line one\n\tline two\r\nשלום עולם 👩‍👩‍👧 café\u00a0ok"
    assert visible(kept) == kept
    assert visible("a\ud800b") == "a\\ud800b"
    assert visible(visible(HOSTILE)) == visible(HOSTILE)
    assert visible("two\nlines\tand a tab", one_line=True) == "two\\u000alines\\u0009and a tab"


# -- commands -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, Path, list[tuple[int, str, str]]]:
    """Two simulated sessions by a persona named with escape codes, opened by a hostile
    icebreaker: the personas folder, the database and what each ``simulate`` printed."""
    base = tmp_path_factory.mktemp("hostile")
    folder = base / "personas"
    folder.mkdir()
    for name in ("ana", "ben"):
        (folder / f"{name}.toml").write_text(
            (REPO / "personas" / f"{name}.toml").read_text(encoding="utf-8"), encoding="utf-8"
        )
    ana = folder / "ana.toml"
    ana.write_text(
        ana.read_text(encoding="utf-8").replace('name = "Ana"', f"name = {json.dumps(NAME)}"),
        encoding="utf-8",
    )
    (folder / "icebreakers.toml").write_text(
        f"icebreakers = [{json.dumps(HOSTILE)}]\n", encoding="utf-8"
    )
    db = base / "h.db"
    runs = [
        _cli(
            "simulate",
            "--engine",
            "offline",
            "--agents",
            "2",
            "--turns",
            "3",
            "--personas",
            str(folder),
            "--db",
            str(db),
            "--seed",
            str(seed),
        )
        for seed in (1, 2)
    ]
    return folder, db, runs


def test_simulate_prints_a_hostile_persona_and_icebreaker_visibly_and_stores_them_as_they_are(
    hostile,
):
    _, db, runs = hostile
    for run in runs:
        code, out, _ = _safe(*run)
        assert code == 0
        assert SHOWN in out
        assert f"{SHOWN_NAME}:" in out
    conn = sqlite3.connect(db)
    try:
        assert (NAME,) in conn.execute("SELECT name FROM participants").fetchall()
        assert conn.execute("SELECT text FROM messages WHERE id = 1").fetchone() == (HOSTILE,)
    finally:
        conn.close()


def test_sessions_and_show_print_hostile_text_visibly(hostile):
    _, db, _ = hostile
    code, listing, _ = _safe(*_cli("sessions", "--db", str(db)))
    assert code == 0
    assert SHOWN_NAME in listing
    sid = listing.splitlines()[-1].split()[0]
    code, shown, _ = _safe(*_cli("show", sid, "--db", str(db)))
    assert code == 0
    assert SHOWN in shown
    assert "[bold]x[/bold]" in shown


def test_show_json_stays_valid_json_with_the_text_unchanged(hostile):
    _, db, _ = hostile
    sid = sqlite3.connect(db).execute("SELECT id FROM sessions LIMIT 1").fetchone()[0]
    code, out, _ = _safe(*_cli("show", sid, "--db", str(db), "--json"))
    assert code == 0
    data = json.loads(out)
    assert data["messages"][0]["text"] == HOSTILE
    assert NAME in [p["name"] for p in data["participants"]]


def test_an_error_that_lists_sessions_prints_their_participants_visibly(hostile):
    _, db, _ = hostile
    code, out, err = _safe(*_cli("show", "2", "--db", str(db)))  # both ids start with the year
    assert code == 1
    assert out == ""
    assert err.startswith("error: ")
    assert SHOWN_NAME in err


def test_export_writes_the_data_unchanged_to_a_file_and_to_a_pipe(hostile, tmp_path):
    _, db, _ = hostile
    code, piped, err = _cli("export", "--all", "--db", str(db))
    assert code == 0
    assert err == ""
    target = tmp_path / "all.jsonl"
    _safe(*_cli("export", "--all", "--db", str(db), "--output", str(target)))
    assert piped == target.read_text(encoding="utf-8")
    assert "\u202e" in piped  # JSON keeps a bidi override as it is: the file is the data
    assert [json.loads(line)["messages"][0]["text"] for line in piped.splitlines()] == [HOSTILE] * 2


def test_export_shown_on_a_terminal_is_escaped(hostile):
    _, db, _ = hostile
    master, terminal = pty.openpty()
    tty.setraw(terminal)  # no newline translation: the bytes as the command wrote them
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground", "export", "--all", "--db", str(db)],
        cwd=REPO,
        env=ENV,
        stdout=terminal,
        stderr=subprocess.PIPE,
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the command has closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(master)
    assert proc.wait(timeout=300) == 0
    assert proc.stderr is not None
    assert proc.stderr.read() == b""
    text = shown.decode("utf-8")
    assert _unsafe(text) == []
    assert "\\u202eevil" in text
    records = [json.loads(line) for line in text.splitlines()]
    assert [r["messages"][0]["text"] for r in records] == [HOSTILE] * 2  # still the data


def test_import_of_a_hostile_file_prints_what_it_says_visibly(hostile, tmp_path):
    _, db, _ = hostile
    target = tmp_path / "one.jsonl"
    _safe(*_cli("export", "--all", "--db", str(db), "--output", str(target)))
    record = json.loads(target.read_text(encoding="utf-8").splitlines()[0])
    record["session"]["id"] = "evil\x1b[2J\u202e\x9b"
    target.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    fresh = tmp_path / "fresh.db"
    code, out, err = _safe(*_cli("import", str(target), "--db", str(fresh)))
    assert "evil\\u001b[2J\\u202e\\u009b" in out + err  # imported, or refused by its id
    if code == 0:
        _safe(*_cli("sessions", "--db", str(fresh)))


def test_experiment_and_experiments_print_hostile_text_visibly(hostile, tmp_path):
    folder, _, _ = hostile
    db = tmp_path / "x.db"
    code, _out, _ = _safe(
        *_cli(
            "experiment",
            "--conditions",
            "inner-thoughts",
            "--conversations",
            "1",
            "--agents",
            "2",
            "--turns",
            "2",
            "--personas",
            str(folder),
            "--db",
            str(db),
            "--engine",
            "offline",
            "--no-progress",
        )
    )
    assert code == 0
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE experiments SET name = ?", [HOSTILE])
    conn.close()
    code, listing, _ = _safe(*_cli("experiments", "--db", str(db)))
    assert code == 0
    assert SHOWN in listing


def test_profiles_storm_and_the_storm_report_print_a_hostile_profile_visibly(tmp_path):
    users = tmp_path / "users"
    users.mkdir()
    p = profiles.generate_profile(1, task="Rent an apartment", difficulty=2)
    text = profiles.dump_profile(p)
    text = text.replace(f"name = {json.dumps(p.name)}", f"name = {json.dumps(NAME)}")
    text = text.replace('task = "Rent an apartment"', f"task = {json.dumps(HOSTILE)}")
    (users / "someone.toml").write_text(text, encoding="utf-8")
    code, table, _ = _safe(*_cli("profiles", "list", str(users)))
    assert code == 0
    assert SHOWN_NAME in table
    db = tmp_path / "s.db"
    code, _, _ = _safe(
        *_cli(
            "storm",
            "--profiles-dir",
            str(users),
            "--turns",
            "2",
            "--engine",
            "offline",
            "--db",
            str(db),
            "--no-progress",
        )
    )
    assert code == 0
    code, _, _ = _safe(*_cli("report", "--storm", "--db", str(db), "--dialogues", "--no-goal"))
    assert code == 0
