"""A seeded fuzzer for `playground import`: mutated real exports, for a bounded time.

Each case starts from an export the app wrote and breaks it the way files get broken: values of
the wrong type, numbers too large for SQLite, text too long or full of control characters,
nesting thousands of levels deep, lone surrogates, references to rows that are gone, rows
dropped or repeated, lines cut short, bytes that are not UTF-8. Whatever the file, the importer
must either refuse it with a PlaygroundError, leaving the database as it was, or accept it, and
then `show`, `export` and replay must read back what it wrote.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import io
import json
import random
import shutil
import sqlite3
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from playground import errors
from playground.cli import main as cli
from playground.history.recording import Recording
from playground.storage import open_database
from playground.transfer import export
from playground.transfer import model as export_model
from playground.transfer.importer import Importer
from playground.transfer.validation import validate_record
from tests.support.exports import cached_source

SEED = 23
#: The loop stops after this long (the machine has 2 cores and other work): at most a minute.
BUDGET_SECONDS = 30.0
MAX_CASES = 2_000
Path_ = tuple[str | int, ...]


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> dict[str, Any]:
    return cached_source(tmp_path_factory, minilm)


# -- finding places in a record -------------------------------------------------------------------


def _walk(rng: random.Random, rec: dict[str, Any]) -> Path_:
    """A random place in the record: a top-level key first (so the long event log does not take
    every pick), then down into it, stopping at a random depth."""
    first = rng.choice([k for k in rec if k != "format"])
    path: list[str | int] = [first]
    node = rec[first]
    while isinstance(node, dict | list) and node and rng.random() > 0.25:
        key: str | int = (
            rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        )
        path.append(key)
        node = node[key]  # type: ignore[index]  # key was drawn from node itself
    return tuple(path)


def _get(rec: Any, path: Path_) -> Any:
    for key in path:
        rec = rec[key]
    return rec


def _put(rec: Any, path: Path_, value: Any) -> None:
    _get(rec, path[:-1])[path[-1]] = value


def _strings(rec: Any, path: Path_ = ()) -> list[Path_]:
    if isinstance(rec, str):
        return [path]
    if isinstance(rec, dict):
        return [p for k, v in rec.items() for p in _strings(v, (*path, k))]
    if isinstance(rec, list):
        return [p for i, v in enumerate(rec) for p in _strings(v, (*path, i))]
    return []


REFERENCES = [
    ("messages", "thought_id"),
    ("messages", "speaker"),
    ("decisions", "thought_id"),
    ("decisions", "agent"),
    ("thoughts", "expressed_in"),
    ("thoughts", "agent"),
    ("memories", "agent"),
    ("turn_marks", "message_id"),
    ("hidden_states", "message_id"),
    ("hidden_states", "participant"),
    ("predictions", "message_id"),
    ("preferences", "first_id"),
    ("preferences", "chosen_id"),
    ("storm_dialogues", "experiment_id"),
]
OTHER_TYPES: list[Any] = ["ten", 42, 3.5, True, None, [], {}, [1, "two"], {"a": 1}, "", -1]
HUGE: list[Any] = [2**63, -(2**63) - 1, 2**70, 10**30, 1e300, -0.0, 2**63 - 1]
CONTROL = ["\x00", "\x1b[2J", "\u202e", "\r", "\x9b", "\ufeff", "\u2028", "\x7f", "\t\n"]


# -- mutations of a record (each returns what it did) ---------------------------------------------


def wrong_type(rng: random.Random, rec: dict[str, Any]) -> str:
    path = _walk(rng, rec)
    _put(rec, path, rng.choice(OTHER_TYPES))
    return f"wrong type at {path}"


def huge(rng: random.Random, rec: dict[str, Any]) -> str:
    path = _walk(rng, rec)
    _put(rec, path, rng.choice(HUGE))
    return f"huge value at {path}"


def long_text(rng: random.Random, rec: dict[str, Any]) -> str:
    key = rng.choice(["session", "messages", "thoughts", "participants", "memories"])
    inside = _strings(rec[key])
    if not inside:
        return f"no text in {key}"
    path = (key, *rng.choice(inside))
    size = rng.choice([1_001, 70_000, export_model.LONG_TEXT + 1])
    _put(rec, path, "y" * size)
    return f"{size} characters at {path}"


def control(rng: random.Random, rec: dict[str, Any]) -> str:
    paths = _strings(rec)
    path = rng.choice(paths)
    old = _get(rec, path)
    at = rng.randrange(len(old) + 1)
    _put(rec, path, old[:at] + rng.choice(CONTROL) + old[at:])
    return f"control character in {path}"


def delete_key(rng: random.Random, rec: dict[str, Any]) -> str:
    path = _walk(rng, rec)
    parent: Any = _get(rec, path[:-1]) if len(path) > 1 else rec
    if isinstance(parent, dict):
        parent.pop(path[-1], None)
    else:
        parent.pop(path[-1])
    return f"deleted {path}"


def dangle(rng: random.Random, rec: dict[str, Any]) -> str:
    present = [(t, k) for t, k in REFERENCES if rec.get(t)]
    table, key = rng.choice(present)
    i = rng.randrange(len(rec[table]))
    value = rng.choice([987654, "Nobody", "20991231-235959-dead", None, 0])
    rec[table][i][key] = value
    return f"{table}[{i}].{key} = {value!r}"


def drop_row(rng: random.Random, rec: dict[str, Any]) -> str:
    lists = [k for k, v in rec.items() if isinstance(v, list) and v]
    key = rng.choice(lists)
    i = rng.randrange(len(rec[key]))
    del rec[key][i]
    return f"dropped {key}[{i}]"


def repeat_row(rng: random.Random, rec: dict[str, Any]) -> str:
    lists = [k for k, v in rec.items() if isinstance(v, list) and v]
    key = rng.choice(lists)
    rec[key].append(copy.deepcopy(rng.choice(rec[key])))
    return f"repeated a row of {key}"


def new_id(rng: random.Random, rec: dict[str, Any]) -> str:
    rec["session"]["id"] = f"2026{rng.randrange(10**4):04d}-000000-{rng.randrange(16**4):04x}"
    return f"session id {rec['session']['id']}"


def new_parent(rng: random.Random, rec: dict[str, Any]) -> str:
    rec["session"]["parent_id"] = rng.choice(["20250101-000000-beef", rec["session"]["id"]])
    return f"parent {rec['session']['parent_id']}"


def edit_text(rng: random.Random, rec: dict[str, Any]) -> str:
    m = rng.choice(rec["messages"])
    m["text"] = m["text"][::-1]
    return f"message {m['id']} reversed"


def swap_event(rng: random.Random, rec: dict[str, Any]) -> str:
    a, b = rng.sample(range(len(rec["events"])), 2)
    rec["events"][a]["data"], rec["events"][b]["data"] = (
        rec["events"][b]["data"],
        rec["events"][a]["data"],
    )
    return f"events {a} and {b} swapped their data"


def as_is(rng: random.Random, rec: dict[str, Any]) -> str:
    return "unchanged"


RECORD_MUTATIONS: list[Callable[[random.Random, dict[str, Any]], str]] = [
    wrong_type,
    wrong_type,
    huge,
    long_text,
    control,
    delete_key,
    dangle,
    dangle,
    drop_row,
    repeat_row,
    new_id,
    new_parent,
    edit_text,
    swap_event,
    as_is,
]


# -- mutations of the text of a line --------------------------------------------------------------


def truncate(rng: random.Random, text: str) -> tuple[str, str]:
    at = rng.randrange(1, len(text))
    return text[:at], f"cut at {at}"


def deep(rng: random.Random, text: str) -> tuple[str, str]:
    depth = rng.choice([10, 63, 65, 200, 3000, 100_000])
    opens = [i for i, c in enumerate(text) if c == "{"]
    at = rng.choice(opens) + 1
    return text[:at] + '"deep": ' + "[" * depth + "]" * depth + ", " + text[at:], f"depth {depth}"


def surrogate(rng: random.Random, text: str) -> tuple[str, str]:
    rec = json.loads(text)
    path = rng.choice(_strings(rec))
    _put(rec, path, rng.choice(["\ud800", "a\udfff", "\ud83d\ude00", "\udc00\ud800"]))
    return json.dumps(rec), f"surrogates at {path}"


def number_literal(rng: random.Random, text: str) -> tuple[str, str]:
    rec = json.loads(text)
    path = _walk(rng, rec)
    _put(rec, path, "@@NUMBER@@")
    literal = rng.choice(["NaN", "Infinity", "-Infinity", "1e400", "-1e999", "1" * 5000])
    return json.dumps(rec).replace('"@@NUMBER@@"', literal), f"{literal[:10]} at {path}"


def marker(rng: random.Random, text: str) -> tuple[str, str]:
    rec = json.loads(text)
    rec["format"] = rng.choice(
        [
            "thought-playground/9",
            "thought-playground/x",
            "thought-playground/" + "9" * 5000,
            7,
            None,
        ]
    )
    return json.dumps(rec), f"format {str(rec['format'])[:30]}"


TEXT_MUTATIONS: list[Callable[[random.Random, str], tuple[str, str]]] = [
    truncate,
    deep,
    surrogate,
    number_literal,
    marker,
]


def make_case(rng: random.Random, bases: list[dict[str, Any]]) -> tuple[list[bytes], list[str]]:
    """One file (its lines as bytes) and what was done to it."""
    rec = copy.deepcopy(rng.choice(bases))
    done = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        mutation = rng.choice(RECORD_MUTATIONS)
        try:
            done.append(mutation(rng, rec))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            done.append(f"{mutation.__name__} did not apply")  # an earlier one changed the shape
    text = json.dumps(rec, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.3:
        change = rng.choice(TEXT_MUTATIONS)
        try:
            text, what = change(rng, text)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            what = f"{change.__name__} did not apply"
        done.append(what)
    line = text.encode("utf-8", "surrogatepass")
    if rng.random() < 0.05:
        at = rng.randrange(len(line))
        line = line[:at] + b"\xff\xfe" + line[at:]
        done.append("bytes that are not UTF-8")
    lines = [line]
    if rng.random() < 0.3:
        other = json.dumps(rng.choice(bases)).encode()
        lines.insert(rng.randrange(2), other)
        done.append("beside an unchanged line")
    return lines, done


# -- what must hold -------------------------------------------------------------------------------


def fingerprint(path: Path) -> str:
    """The database's bytes and its write-ahead log's: a refused conversation changes neither."""
    digest = hashlib.sha256(path.read_bytes())
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        digest.update(wal.read_bytes())
    return digest.hexdigest()


def read_back(path: Path, session_id: str) -> None:
    """`show`, `sessions`, `export` and replay read what the import wrote."""
    for argv in (["show", session_id], ["show", session_id, "--json"], ["sessions"]):
        out, err = io.StringIO(), io.StringIO()
        code = cli.main([*argv, "--db", str(path)], out=out, err=err)
        assert code == 0, (argv, err.getvalue())
    db = open_database(path)
    try:
        exported = json.loads(json.dumps(export.export_record(db, session_id)))
        validate_record(exported)  # what export writes is importable again
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        refusal: str | None = None
        try:
            rec = Recording.load(db, session_id)
        except errors.PlaygroundError as exc:
            refusal = str(exc)
        if refusal is not None:
            assert "has no event log" in refusal, refusal
            return
        rec.events_between(rec.seqs[0] - 1, rec.last)
        rec.rebuild(rec.last)
        rec.thought_ledger(rec.last)
    finally:
        db.close()


def test_mutated_exports_are_refused_cleanly_or_read_back(source, tmp_path):
    rng = random.Random(SEED)
    text = source["file"].read_text(encoding="utf-8")
    bases = [json.loads(line) for line in text.splitlines()]
    empty, full = tmp_path / "empty.db", tmp_path / "full.db"
    open_database(empty).close()
    with sqlite3.connect(source["db"]) as src, sqlite3.connect(full) as dst:
        src.backup(dst)
    open_database(full).close()
    seen: Counter[str] = Counter()
    deadline = time.monotonic() + BUDGET_SECONDS
    number = 0
    while time.monotonic() < deadline and number < MAX_CASES:
        number += 1
        lines, done = make_case(rng, bases)
        file = tmp_path / "case.jsonl"
        file.write_bytes(b"".join(line + b"\n" for line in lines))
        # A new file each time: `show` leaves its connection to the garbage collector.
        gc.collect()
        for old in tmp_path.glob("target-*.db*"):
            old.unlink()
        target = tmp_path / f"target-{number}.db"
        shutil.copyfile(full if rng.random() < 0.25 else empty, target)
        as_new = rng.random() < 0.3
        db = open_database(target)
        accepted: list[str] = []
        try:
            state, changes = fingerprint(target), db.conn.total_changes
            refusal: str | None = None
            try:
                for outcome in Importer(db, as_new=as_new).import_lines(file):
                    accepted.append(outcome.db_id)
                    seen["imported" if outcome.imported else "already there"] += 1
                    state, changes = fingerprint(target), db.conn.total_changes
            except errors.PlaygroundError as exc:
                refusal = str(exc)
            if refusal is not None:
                seen["refused"] += 1
                assert "\n" not in refusal, refusal
                # the refused conversation wrote nothing at all, not even rows rolled back
                assert db.conn.total_changes == changes, refusal
                assert fingerprint(target) == state, refusal
        except Exception as exc:
            kept = tmp_path / f"failed-{number}.jsonl"
            shutil.copyfile(file, kept)
            raise AssertionError(
                f"case {number} (seed {SEED}, as_new={as_new}): {'; '.join(done)}; file kept at"
                f" {kept}\n{traceback.format_exc()}"
            ) from exc
        finally:
            db.close()
        for session_id in accepted:
            try:
                read_back(target, session_id)
            except Exception as exc:
                kept = tmp_path / f"failed-{number}.jsonl"
                shutil.copyfile(file, kept)
                raise AssertionError(
                    f"case {number} (seed {SEED}): accepted but not readable: {'; '.join(done)};"
                    f" file kept at {kept}\n{traceback.format_exc()}"
                ) from exc
    assert seen["refused"], seen
    assert seen["imported"], seen
