"""Fault-injection trials against the command line, as a table (issue 8, "Done when").

Four families, each trial a real ``python -m playground`` process on a real SQLite file:

* **kill points**: SIGKILL (no handler runs) after the icebreaker (the model still loading),
  after 3 and after 6 messages;
* **bad servers**: the loopback server answers with a web page, broken JSON, no choices, an error
  object with status 200, plain text, a proxy's 502 page, 401, endless 429 or 500, or nothing at
  all, at connect time and in the middle of a run;
* **unwritable paths**: a read-only database file or folder, a database path that is a folder or
  whose parent is a file;
* **bad files**: persona and icebreaker files that are binary, UTF-16, invalid TOML or miss a field.

A trial *survives* when the process ends as it should (the exit code its fault calls for), never
prints a traceback, says what went wrong in one ``error:`` line when it fails, and leaves no
session ``running``. *Rows lost* counts messages the run printed (so the user saw them) that are
not in the database. Every trial must survive with no row lost.

``python -m tests.cli.test_fault_trials`` runs them all and prints the table for the README.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import pytest
import sqlite_utils

from playground.storage.database import DEAD_REASON, dead_sessions
from testbed.llm_server import FakeLLMServer
from tests.support.faults import read_only

REPO = Path(__file__).resolve().parents[2]
PRINTED = re.compile(r"^\[\s*(\d+)/\d+\] ", re.M)  # a message line of `simulate`'s transcript


@dataclass
class Outcome:
    survived: bool
    rows_lost: int
    detail: str


@dataclass(frozen=True)
class Trial:
    family: str
    name: str
    run: Callable[[Path], Outcome]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}


def _simulate_argv(db: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "playground", "simulate", "--seed", "3", "--db", str(db), *flags]


def _sessions(db: Path) -> list[tuple[str, str, int]]:
    """(status, end reason, messages) of every session as every reader shows it (a run whose
    process is gone is interrupted), read without changing the file."""
    if not db.is_file():
        return []
    with closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            "SELECT id, status, coalesce(end_reason, ''),"
            " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id) FROM sessions s"
        ).fetchall()
        dead = dead_sessions(sqlite_utils.Database(conn))
    return [
        ("interrupted", DEAD_REASON, n) if sid in dead else (status, reason, n)
        for sid, status, reason, n in rows
    ]


def _stored_messages(db: Path) -> set[int]:
    if not db.is_file():
        return set()
    with closing(sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)) as conn:
        try:
            return {r[0] for r in conn.execute("SELECT id FROM messages")}
        except sqlite3.OperationalError:  # polled before the run created its tables
            return set()


def _judge(
    proc: subprocess.CompletedProcess[str], db: Path, *, codes: set[int], says: str = ""
) -> Outcome:
    """The common verdict: exit code, no traceback, one clear line, no running session."""
    problems = []
    out, err = proc.stdout or "", proc.stderr or ""
    if proc.returncode not in codes:
        problems.append(f"exit {proc.returncode}, expected {sorted(codes)}")
    if "Traceback" in out + err:
        problems.append("a traceback was printed")
    if proc.returncode not in (0, 130, 143, -9):
        lines = [line for line in err.splitlines() if line.startswith("error:")]
        if len(lines) != 1:
            problems.append(f"{len(lines)} error lines")
        elif says and says not in lines[0]:
            problems.append(f"the error line does not say {says!r}: {lines[0]}")
    if any(status == "running" for status, _, _ in _sessions(db)):
        problems.append("a session was left running")
    printed = {int(m) for m in PRINTED.findall(out)}
    lost = len(printed - _stored_messages(db))
    return Outcome(not problems, lost, "; ".join(problems) or "ok")


def _run(argv: list[str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=REPO, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


# -- kill points -------------------------------------------------------------------------------------


def _kill_after(messages: int) -> Callable[[Path], Outcome]:
    def trial(tmp: Path) -> Outcome:
        db = tmp / "kill.db"
        out_path = tmp / "kill.out"
        with out_path.open("w") as out:
            proc = subprocess.Popen(
                _simulate_argv(db, "--engine", "offline", "--agents", "4", "--turns", "200"),
                cwd=REPO,
                env=_env(),
                stdout=out,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and proc.poll() is None:
                if len(PRINTED.findall(out_path.read_text())) >= messages:
                    break
                time.sleep(0.02)
            proc.kill()
            _, err = proc.communicate(timeout=30)
        stdout = out_path.read_text()
        # Every reader shows a session whose process is gone as interrupted (without writing).
        status = _run([sys.executable, "-m", "playground", "sessions", "--db", str(db)])
        done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, err)
        verdict = _judge(done, db, codes={-9})
        if status.returncode != 0 or "interrupted" not in status.stdout:
            verdict.survived = False
            verdict.detail = f"after the kill, `sessions` said: {status.stdout or status.stderr}"
        return verdict

    return trial


# -- bad servers -------------------------------------------------------------------------------------


def _server_flags(srv: FakeLLMServer | str) -> list[str]:
    url = srv if isinstance(srv, str) else srv.base_url
    return ["--engine", "openai", "--base-url", url, "--api-key", "test-key", "--model", "fake-model",
            "--agents", "2", "--turns", "6", "--max-retries", "2"]  # fmt: skip


def _bad_server(
    fault: Callable[[FakeLLMServer], None], *, mid_run: bool, says: str
) -> Callable[[Path], Outcome]:
    def trial(tmp: Path) -> Outcome:
        db = tmp / "server.db"
        with FakeLLMServer(api_key="test-key") as srv:
            if not mid_run:
                fault(srv)
                return _judge(
                    _run(_simulate_argv(db, *_server_flags(srv))), db, codes={1}, says=says
                )
            proc = subprocess.Popen(
                _simulate_argv(db, *_server_flags(srv)),
                cwd=REPO,
                env=_env(),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline and proc.poll() is None:
                if len(_stored_messages(db)) >= 2:
                    break
                time.sleep(0.02)
            fault(srv)
            out, err = proc.communicate(timeout=240)
        verdict = _judge(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), db,
                         codes={1}, says=says)  # fmt: skip
        failed = [s for s in _sessions(db) if s[0] == "failed" and says in s[1]]
        if verdict.survived and not failed:
            verdict.survived = False
            verdict.detail = f"the session did not end failed saying {says!r}: {_sessions(db)}"
        return verdict

    return trial


def _garble(kind: str) -> Callable[[FakeLLMServer], None]:
    return lambda srv: srv.garble_next(kind, count=100_000)


def _status(code: int) -> Callable[[FakeLLMServer], None]:
    return lambda srv: srv.fail_next(code, count=100_000)


def _wrong_key(srv: FakeLLMServer) -> None:
    srv.api_key = "another-key"


def _unreachable(tmp: Path) -> Outcome:
    db = tmp / "gone.db"
    proc = _run(_simulate_argv(db, *_server_flags("http://127.0.0.1:9/v1")))
    return _judge(proc, db, codes={1}, says="cannot reach http://127.0.0.1:9/v1")


# -- unwritable paths --------------------------------------------------------------------------------


def _read_only_file(tmp: Path) -> Outcome:
    db = tmp / "ro.db"
    _run(_simulate_argv(db, "--engine", "offline", "--agents", "2", "--turns", "2"))
    before = _stored_messages(db)
    with read_only(db) as prefix:
        proc = _run(
            prefix + _simulate_argv(db, "--engine", "offline", "--agents", "2", "--turns", "3")
        )
    verdict = _judge(proc, db, codes={1}, says=str(db))
    if _stored_messages(db) != before:
        verdict.survived, verdict.detail = False, "the earlier session changed"
    return verdict


def _read_only_folder(tmp: Path) -> Outcome:
    folder = tmp / "locked"
    folder.mkdir()
    db = folder / "new.db"
    with read_only(folder) as prefix:
        proc = _run(
            prefix + _simulate_argv(db, "--engine", "offline", "--agents", "2", "--turns", "3")
        )
    return _judge(proc, db, codes={1}, says=str(db))


def _path_is_a_folder(tmp: Path) -> Outcome:
    db = tmp / "folder.db"
    db.mkdir()
    proc = _run(_simulate_argv(db, "--engine", "offline", "--agents", "2", "--turns", "3"))
    return _judge(proc, tmp / "none.db", codes={1}, says=str(db))


def _parent_is_a_file(tmp: Path) -> Outcome:
    (tmp / "plain").write_text("not a folder")
    db = tmp / "plain" / "x.db"
    proc = _run(_simulate_argv(db, "--engine", "offline", "--agents", "2", "--turns", "3"))
    return _judge(proc, tmp / "none.db", codes={1}, says=str(tmp / "plain"))


def _reads_in_read_only_folder(tmp: Path) -> Outcome:
    folder = tmp / "shelf"
    folder.mkdir()
    db = folder / "done.db"
    _run(_simulate_argv(db, "--engine", "offline", "--agents", "2", "--turns", "2"))
    with read_only(folder) as prefix:
        listed = _run([*prefix, sys.executable, "-m", "playground", "sessions", "--db", str(db)])
    verdict = _judge(listed, db, codes={0})
    if "finished" not in listed.stdout:
        verdict.survived, verdict.detail = False, f"`sessions` said: {listed.stdout}{listed.stderr}"
    return verdict


def _mistyped_path(tmp: Path) -> Outcome:
    db = tmp / "typo" / "sesions.db"
    proc = _run([sys.executable, "-m", "playground", "show", "abc", "--db", str(db)])
    verdict = _judge(proc, db, codes={1}, says="no database")
    if (tmp / "typo").exists():
        verdict.survived, verdict.detail = False, "a folder was created at the mistyped path"
    return verdict


# -- bad files ---------------------------------------------------------------------------------------


def _bad_persona(name: str, content: bytes, says: str) -> Callable[[Path], Outcome]:
    def trial(tmp: Path) -> Outcome:
        folder = tmp / "personas"
        folder.mkdir()
        for src in (REPO / "personas").glob("*.toml"):
            (folder / src.name).write_bytes(src.read_bytes())
        (folder / name).write_bytes(content)
        db = tmp / "files.db"
        proc = _run(_simulate_argv(db, "--engine", "offline", "--agents", "2", "--turns", "2",
                                   "--personas", str(folder)))  # fmt: skip
        return _judge(proc, db, codes={1}, says=says)

    return trial


PERSONA = (
    (REPO / "personas" / "ana.toml").read_bytes()
    if (REPO / "personas" / "ana.toml").exists()
    else b""
)

TRIALS: list[Trial] = [
    Trial("kill points", "SIGKILL after the icebreaker", _kill_after(1)),
    Trial("kill points", "SIGKILL after 3 messages", _kill_after(3)),
    Trial("kill points", "SIGKILL after 6 messages", _kill_after(6)),
    *[
        Trial("bad servers", f"{label} at connect time", _bad_server(fault, mid_run=False, says=says))
        for label, fault, says in [
            ("web page", _garble("html"), "web page"),
            ("broken JSON", _garble("broken_json"), "not JSON"),
            ("error object with 200", _garble("error_200"), "model is loading"),
            ("no choices", _garble("no_choices"), "no choices"),
            ("plain text", _garble("text_plain"), "not JSON"),
            ("endless 500", _status(500), "500"),
            ("wrong key (401)", _wrong_key, "refused the API key"),
        ]
    ],
    *[
        Trial("bad servers", f"{label} mid-run", _bad_server(fault, mid_run=True, says=says))
        for label, fault, says in [
            ("web page", _garble("html"), "web page"),
            ("broken JSON", _garble("broken_json"), "not JSON"),
            ("proxy's 502 page", _garble("proxy_502"), "502 Bad Gateway"),
            ("endless 429", _status(429), "429"),
        ]
    ],
    Trial("bad servers", "nothing listening", _unreachable),
    Trial("unwritable paths", "read-only database file", _read_only_file),
    Trial("unwritable paths", "new database in a read-only folder", _read_only_folder),
    Trial("unwritable paths", "database path is a folder", _path_is_a_folder),
    Trial("unwritable paths", "parent of the path is a file", _parent_is_a_file),
    Trial("unwritable paths", "sessions in a read-only folder (reads work)", _reads_in_read_only_folder),
    Trial("unwritable paths", "show on a mistyped path", _mistyped_path),
    Trial("bad files", "binary persona", _bad_persona("zed.toml", b"\x00\x89PNG\r\n\x1a\n\xff\xfe", "zed.toml")),
    Trial("bad files", "UTF-16 persona", _bad_persona("zed.toml", PERSONA.decode().encode("utf-16"), "zed.toml")),
    Trial("bad files", "invalid TOML", _bad_persona("zed.toml", b"name = [unclosed\n", "zed.toml")),
    Trial("bad files", "a field of the wrong type", _bad_persona(
        "zed.toml", PERSONA.replace(b'name = "', b'name = 7 # "', 1), "zed.toml: name")),
    Trial("bad files", "UTF-16 icebreakers", _bad_persona(
        "icebreakers.toml", (REPO / "personas" / "icebreakers.toml").read_text().encode("utf-16"),
        "icebreakers.toml")),
]  # fmt: skip


@pytest.mark.parametrize("trial", TRIALS, ids=[f"{t.family}: {t.name}" for t in TRIALS])
def test_fault_trial(trial: Trial, tmp_path: Path) -> None:
    outcome = trial.run(tmp_path)
    assert outcome.survived, outcome.detail
    assert outcome.rows_lost == 0, f"{outcome.rows_lost} printed messages are not in the database"


def main(out: TextIO | None = None) -> None:
    """Run every trial and write the README's table to ``out`` (standard output): trials run,
    survived, rows lost, per family."""
    import tempfile

    out = out or sys.stdout
    rows: dict[str, list[Outcome]] = {}
    for t in TRIALS:
        with tempfile.TemporaryDirectory() as d:
            started = time.perf_counter()
            outcome = t.run(Path(d))
        rows.setdefault(t.family, []).append(outcome)
        mark = "survived" if outcome.survived else f"FAILED ({outcome.detail})"
        out.write(f"{t.family:16} {t.name:48} {mark}, {outcome.rows_lost} rows lost, "
                  f"{time.perf_counter() - started:.1f} s\n")  # fmt: skip
        out.flush()
    out.write("\n| family | trials | survived | rows lost |\n|---|---|---|---|\n")
    for family, outs in rows.items():
        out.write(
            f"| {family} | {len(outs)} | {sum(o.survived for o in outs)} | {sum(o.rows_lost for o in outs)} |\n"
        )
    total = [o for outs in rows.values() for o in outs]
    out.write(
        f"| all | {len(total)} | {sum(o.survived for o in total)} | {sum(o.rows_lost for o in total)} |\n"
    )


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    main()
