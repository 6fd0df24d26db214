"""The command line under faults, as a user meets them: `python -m playground …` in a subprocess.

Signals at several moments (imports, the model load, mid-run), credentials written into the base
URL (the loopback server), invalid numbers named by the flag typed, and session id prefixes that
are literal and, when ambiguous, list the candidates.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from playground import errors, factory, personas
from playground.storage import open_database
from testbed.llm_server import FakeLLMServer
from tests.conftest import offline_settings, server_settings

REPO = Path(__file__).resolve().parents[2]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
SECRET = "sk-MARKER-7f3c9a"


def _cli(*argv: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "playground", *argv],
        cwd=REPO,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _read(db_path: Path, sql: str) -> list[tuple]:
    """Read the database as another program would, without the app's helper (which would mark
    sessions of dead processes)."""
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


# -- signals --------------------------------------------------------------------------------------


class Run:
    """``playground simulate`` in a subprocess, its output going to files (never a full pipe)."""

    def __init__(self, tmp: Path, agents: int = 3) -> None:
        self.db = tmp / "run.db"
        self.out, self.err = tmp / "out.txt", tmp / "err.txt"
        self.agents = agents
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "playground",
                    "simulate",
                    "--engine",
                    "offline",
                    "--agents",
                    str(agents),
                    "--turns",
                    "500",
                    "--max-silent-steps",
                    "100",
                    "--seed",
                    "1",
                    "--db",
                    str(self.db),
                ],
                cwd=REPO,
                env=ENV,
                stdout=out,
                stderr=err,
            )

    def wait_until(self, what: str, ready) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, f"exited before {what}: {self.err.read_text()}"
            try:
                if ready():
                    return
            except sqlite3.Error:
                pass  # not created yet
            time.sleep(0.005)
        raise AssertionError(f"never reached: {what}")

    def catches(self, signum: int) -> bool:
        """Whether the process has its own handler for ``signum`` (Linux: SigCgt)."""
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        mask = int(
            next(ln for ln in status.splitlines() if ln.startswith("SigCgt:")).split()[1], 16
        )
        return bool(mask >> (signum - 1) & 1)

    def stop(self, signum: int) -> tuple[int, float]:
        sent = time.monotonic()
        self.proc.send_signal(signum)
        code = self.proc.wait(60)
        return code, time.monotonic() - sent

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)


MOMENTS = ["imports", "model_load", "mid_run"]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_at_any_moment_exits_128_plus_it_quietly_and_never_leaves_a_running_session(
    tmp_path, signum, moment
):
    run = Run(tmp_path)
    try:
        if moment == "imports":
            # The handlers are installed first thing; the imports take about half a second more.
            run.wait_until("handlers installed", lambda: run.catches(signal.SIGTERM))
        elif moment == "model_load":
            # The session row exists while the embedding model still loads.
            run.wait_until("session started", lambda: _read(run.db, "SELECT id FROM sessions"))
        else:
            run.wait_until(
                "two messages", lambda: _read(run.db, "SELECT COUNT(*) FROM messages")[0][0] >= 2
            )
        code, _ = run.stop(signum)  # how long it takes: bench/bench_signal_stop.py
    finally:
        run.kill()
    out, err = run.out.read_text(), run.err.read_text()
    assert code == 128 + signum, err
    assert "Traceback" not in err, err
    assert "Exception ignored" not in err, err
    if moment == "imports":
        assert err == ""
        assert out == ""
        assert not run.db.exists()  # stopped before anything was opened
        return
    [(sid, status, reason)] = _read(run.db, "SELECT id, status, end_reason FROM sessions")
    assert (status, bool(reason)) == ("interrupted", True)
    assert out.strip().splitlines()[-1] == sid  # the id is printed, as at the end of any run
    assert err.strip().splitlines()[-1] == "interrupted"
    if moment == "model_load":
        # Stopped while the model still loaded: the agents are seated and the icebreaker may be
        # posted (neither waits for the model), but no memory was embedded and nobody answered.
        assert _read(run.db, "SELECT COUNT(*) FROM memories")[0][0] == 0
        assert _read(run.db, "SELECT COUNT(*) FROM messages")[0][0] <= 1


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc (Linux)")
def test_a_double_press_still_stops_cleanly(tmp_path):
    run = Run(tmp_path)
    try:
        run.wait_until("session started", lambda: _read(run.db, "SELECT id FROM sessions"))
        run.proc.send_signal(signal.SIGINT)
        code, _ = run.stop(signal.SIGINT)  # at once: the same request, not "leave now"
    finally:
        run.kill()
    assert code == 130
    [(sid, status)] = _read(run.db, "SELECT id, status FROM sessions")
    assert status == "interrupted"
    assert run.out.read_text().strip().splitlines()[-1] == sid


def test_a_closed_pipe_ends_show_quietly(tmp_path):
    db_path = tmp_path / "pipe.db"
    _saved_sessions(db_path, 1)
    [(sid,)] = _read(db_path, "SELECT id FROM sessions")
    # A pipe of one page: the JSON (several kB) cannot all fit before the reader leaves, as it
    # could in a default 64 kB pipe (the command then finished first and the test proved nothing).
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground", "show", sid, "--db", str(db_path), "--json"],
        cwd=REPO,
        env=ENV,
        stdout=write_end,
        stderr=subprocess.PIPE,
    )
    os.close(write_end)
    assert proc.stderr is not None
    with os.fdopen(read_end, "rb") as stdout:
        stdout.read(10)
    # closed, as `| head -c 10` does
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 128 + signal.SIGPIPE
    assert "Traceback" not in err, err
    assert "Exception ignored" not in err, err


# -- secrets --------------------------------------------------------------------------------------


def _with_secret(url: str) -> str:
    return url.replace("http://", f"http://alice:{SECRET}@", 1)


def _assert_secret_nowhere(tmp_path: Path, *texts: str) -> None:
    files = [p for p in tmp_path.iterdir() if p.is_file()]
    assert any(p.name.endswith(".db") for p in files)
    for p in files:  # the database, its WAL and shared memory if left, anything else written
        assert SECRET.encode() not in p.read_bytes(), p.name
        assert b"alice" not in p.read_bytes(), p.name
    for text in texts:
        assert SECRET not in text
        assert "alice" not in text


def test_credentials_in_the_base_url_reach_no_byte_of_the_database_or_the_output(tmp_path):
    with FakeLLMServer() as srv:
        url = srv.base_url
        proc = _cli(
            "simulate", "--engine", "openai", "--base-url", _with_secret(srv.base_url),
            "--model", "fake-model", "--embeddings", "remote", "--agents", "2", "--turns", "3",
            "--db", str(tmp_path / "secret.db"),
        )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert f"OpenAI-compatible ({url})" in proc.stdout  # the server, named without them
    _assert_secret_nowhere(tmp_path, proc.stdout, proc.stderr)
    [(_engine, config)] = _read(tmp_path / "secret.db", "SELECT engine, config FROM sessions")
    assert json.loads(config)["llm"]["base_url"] == url


def test_credentials_in_an_unreachable_base_url_are_not_in_the_error(tmp_path):
    proc = _cli(
        "simulate", "--engine", "openai", "--base-url", _with_secret("http://127.0.0.1:9/v1"),
        "--embeddings", "remote", "--turns", "2", "--db", str(tmp_path / "down.db"),
    )  # fmt: skip
    assert proc.returncode == 1
    assert "cannot reach http://127.0.0.1:9/v1" in proc.stderr
    assert "Traceback" not in proc.stderr
    _assert_secret_nowhere(tmp_path, proc.stdout, proc.stderr)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (f"http://alice:{SECRET}@host:port/v1", "base URL: http://host:port/v1 is not a valid URL"),
        (f"ftp://alice:{SECRET}@host/v1", "base URL: ftp://host/v1 must start with http://"),
        (f"http://alice:{SECRET}@/v1", "base URL: http:///v1 names no host"),
    ],
    ids=["bad_port", "not_http", "no_host"],
)
def test_an_unusable_base_url_is_one_line_without_its_credentials(tmp_path, url, message):
    proc = _cli(
        "simulate", "--engine", "openai", "--base-url", url, "--embeddings", "remote",
        "--turns", "2", "--db", str(tmp_path / "bad.db"),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    assert f"error: {message}" in proc.stderr
    assert SECRET not in proc.stderr + proc.stdout


class _HeaderEcho(BaseHTTPRequestHandler):
    seen: ClassVar[list[str | None]] = []

    def do_POST(self) -> None:
        self.seen.append(self.headers.get("Authorization"))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "OK"},
                        "finish_reason": "stop",
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def header_echo() -> Iterator[str]:
    """A plain HTTP server on loopback that records each request's Authorization header."""
    _HeaderEcho.seen = []
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _HeaderEcho)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


@pytest.mark.asyncio
async def test_credentials_in_the_url_are_still_sent_as_basic_auth_but_never_shown(header_echo):
    settings = offline_settings(engine="openai", base_url=_with_secret(header_echo))
    client = factory.make_chat_client(settings)
    try:
        await client.probe()
    finally:
        await client.close()
    assert client.where == header_echo
    assert _HeaderEcho.seen[0] == "Basic " + base64.b64encode(f"alice:{SECRET}".encode()).decode()
    assert SECRET not in json.dumps(settings.snapshot())


def test_credentials_in_the_url_and_an_api_key_are_refused_without_repeating_them():
    settings = offline_settings(
        engine="openai", base_url=_with_secret("http://127.0.0.1:9/v1"), api_key="sk-other"
    )
    with pytest.raises(
        errors.SettingsError, match=r"base URL: http://127\.0\.0\.1:9/v1 has a user"
    ) as info:
        factory.make_chat_client(settings)
    assert SECRET not in str(info.value)


# -- small things ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--turns", "-1"], "--turns: -1 is out of range (1 … 10000)"),
        (["--timeout", "0"], "--timeout: 0 is out of range (above 0 … 600)"),
        (["--max-retries", "11"], "--max-retries: 11 is out of range (0 … 10)"),
        (["--concurrency", "0"], "--concurrency: 0 is out of range (1 … 64)"),
        (["--max-silent-steps", "0"], "--max-silent-steps: 0 is out of range (1 … 1000)"),
        (["--busy-timeout", "-1"], "--busy-timeout: -1 is out of range (0 … 86400)"),
        (["--agents", "0"], "--agents: 0 is out of range (1 … 100)"),
    ],
    ids=["turns", "timeout", "max_retries", "concurrency", "max_silent_steps", "busy", "agents"],
)
def test_an_invalid_number_names_the_flag_typed(tmp_path, flags, message):
    proc = _cli("simulate", "--engine", "offline", *flags, "--db", str(tmp_path / "n.db"))
    assert proc.returncode == 2  # a usage error, as argparse's own, before anything runs
    assert proc.stderr == f"error: {message}\n"


def _saved_sessions(db_path: Path, n: int) -> list[str]:
    """``n`` real sessions with two seated agents each, made by the factory with the loopback
    server's embeddings (no model has to load), oldest first."""
    import asyncio

    async def make() -> list[str]:
        ids = []
        with FakeLLMServer() as srv:
            settings = server_settings(srv, embeddings="remote")
            engine = await factory.build_engine(settings, probe=False)
            db = open_database(db_path)
            try:
                for i in range(n):
                    people = personas.load_personas()[i % 4 : i % 4 + 2]
                    room, _ = await factory.create_room(settings, engine, db=db, personas=people)
                    room.finish("finished", "made for a test")
                    ids.append(room.session_id)
            finally:
                db.close()
                await engine.close()
        return ids

    return asyncio.run(make())


@pytest.fixture(scope="module")
def six_sessions(tmp_path_factory) -> tuple[Path, list[str]]:
    db_path = tmp_path_factory.mktemp("prefix") / "six.db"
    return db_path, _saved_sessions(db_path, 6)


@pytest.mark.parametrize("pattern", ["%", "_", "2026%", "____", "%-%"])
def test_an_id_prefix_is_literal_not_a_like_pattern(six_sessions, pattern):
    db_path, _ = six_sessions
    proc = _cli("show", pattern, "--db", str(db_path))
    assert proc.returncode == 1
    assert proc.stderr == f"error: no session {pattern!r} in this database\n"


def test_the_rating_window_matches_a_literal_prefix_too(six_sessions):
    from ui.rating.blind_view import resolve_session

    db_path, ids = six_sessions
    db = open_database(db_path)
    try:
        for pattern in ("%", ids[0][:-1] + "_"):  # as LIKE patterns: all six, and exactly one
            with pytest.raises(errors.SessionNotFound) as info:
                resolve_session(db, pattern)
            assert str(info.value) == f"no session {pattern!r} in this database"
        assert resolve_session(db, ids[0]) == ids[0]
    finally:
        db.close()


def test_an_ambiguous_prefix_lists_a_few_candidates_with_date_and_participants(six_sessions):
    db_path, ids = six_sessions
    common = os.path.commonprefix(ids)  # noqa: RUF071 - session ids, not paths
    proc = _cli("show", common, "--db", str(db_path))
    assert proc.returncode == 1
    err = proc.stderr
    assert err.startswith(f"error: ambiguous prefix {common!r}: 6 session ids start with it;")
    listed = sorted((sid for sid in ids if sid in err), key=err.index)
    assert listed == ids[:1:-1]  # the newest four
    assert err.rstrip().endswith("; and 2 more")
    rows = _read(db_path, "SELECT id, substr(created_at, 1, 10) FROM sessions")
    for sid, day in rows:
        if sid in listed:
            names = [
                r[0]
                for r in _read(db_path, f"SELECT name FROM participants WHERE session_id = '{sid}'")
            ]
            assert f"{sid} ({day} " in err
            assert ", ".join(names) in err
