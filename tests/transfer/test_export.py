"""Export and import: JSON Lines / JSON / CSV, round trips, id mapping, and clear errors on bad input.

Sessions come from real offline simulations in a real SQLite file; ratings, marks and preferences
are added through ``RatingStore``, annotations and labels with SQL matching the schema.
"""

import asyncio
import csv
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from playground import errors
from playground.cli import main as cli
from playground.history import recording as replay
from playground.rating import store as ratings
from playground.room import loops
from playground.storage import SessionReader, open_database
from playground.transfer import export, importer
from tests.conftest import offline_settings
from tests.support.rooms import SESSION_TABLES, build, library
from tests.support.timed import SID, write_timed_session

CONVERSATION = {item.key: 1 + i % 7 for i, item in enumerate(ratings.CONVERSATION_METRICS)}
PARTICIPANT = {item.key: 7 - i % 7 for i, item in enumerate(ratings.PARTICIPANT_ITEMS)}
COUNTED = SESSION_TABLES


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


async def _simulate(db: Any, embedder: Any, seed: int) -> str:
    room, engine, _ = await build(
        offline_settings(max_turns=5, seed=seed), embedder, library(3), db=db
    )
    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    await engine.close()
    return str(room.session_id)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> dict[str, Any]:
    """Three simulated sessions A, B, C (C a fork of A; A and B in an experiment), rated and noted."""
    from playground.embedding.cache import CachingEmbedder

    path = tmp_path_factory.mktemp("export") / "source.db"
    db = open_database(path)
    embedder = CachingEmbedder(minilm)
    a, b, c = (asyncio.run(_simulate(db, embedder, seed)) for seed in (2, 3, 4))
    now = "2026-01-02T03:04:05.678+00:00"
    with db.conn:
        db.execute(
            "INSERT INTO experiments (id, name, created_at, config) VALUES ('exp-1', 'pilot', ?, ?)",
            [now, json.dumps({"conditions": ["inner-thoughts", "baseline"]})],
        )
        db.execute("UPDATE sessions SET experiment_id = 'exp-1' WHERE id IN (?, ?)", [a, b])
        db.execute("UPDATE sessions SET condition = 'baseline' WHERE id = ?", [b])
        db.execute(
            "UPDATE sessions SET parent_id = ?, fork_seq = 40, fork_message = 2 WHERE id = ?",
            [a, c],
        )
        # Pat took part from a browser (an invited seat): remote, and offline at the end; a
        # person, so no policy, and still seated at the end, so leaving with it (as recorded).
        db.execute(
            "INSERT INTO participants (session_id, name, kind, joined_at, remote, online, policy,"
            " left_at) VALUES (?, 'Pat', 'human', ?, 1, 0, 'human',"
            " (SELECT finished_at FROM sessions WHERE id = ?))",
            [a, now, a],
        )
        for message_id, kind, text in [
            (1, "reason", "I wanted to see who would pick it up"),
            (2, "reaction", "too eager"),
            (2, "reaction", "but friendly"),
        ]:
            db.execute(
                "INSERT INTO annotations (session_id, message_id, author, kind, text, created_at)"
                " VALUES (?, ?, 'Pat', ?, ?, ?)",
                [a, message_id, kind, text, now],
            )
        db.execute(
            "INSERT INTO labels (session_id, message_id, author, question, answer, created_at)"
            " VALUES (?, 3, 'Pat', 'Was this a good moment to speak?', 'not sure', ?)",
            [a, now],
        )
        db.execute("INSERT INTO raters (id, created_at) VALUES ('r3', ?)", [now])
        db.execute(
            "INSERT INTO rating_plans (name, kind, seed, per_rater, raters, source, created_at)"
            " VALUES ('p', 'conversation', 0, 1, '[\"r3\"]', '{}', ?)",
            [now],
        )
        plan_id = db.execute("SELECT max(id) FROM rating_plans").fetchone()[0]
        db.execute(
            "INSERT INTO assignments (plan_id, rater, position, session_a) VALUES (?, 'r3', 0, ?)",
            [plan_id, b],
        )
        assignment = db.execute("SELECT max(id) FROM assignments").fetchone()[0]
    store = ratings.RatingStore(db)
    store.rate_conversation(a, "r1", CONVERSATION)
    store.rate_conversation(a, "r2", CONVERSATION)
    store.rate_conversation(b, "r1", CONVERSATION)
    store.rate_conversation(b, "r3", CONVERSATION, assignment_id=assignment)
    store.answer_questionnaire(a, "Pat", PARTICIPANT)
    store.mark_turn(a, 2, "r1", "too abrupt")
    store.mark_turn(b, 3, "r1")
    store.record_preference("r1", a, b, a, "flows better")
    store.record_preference("r2", b, c, c, "")
    db.close()
    return {"path": path, "a": a, "b": b, "c": c}


def copy_db(src: Path, dst: Path) -> Path:
    with sqlite3.connect(src) as s, sqlite3.connect(dst) as d:
        s.backup(d)
    return dst


def records(path: Path, ids: list[str]) -> list[dict[str, Any]]:
    db = open_database(path)
    try:
        return list(export.export_records(db, ids))
    finally:
        db.close()


def counts(path: Path, session_id: str) -> dict[str, int]:
    db = open_database(path)
    try:
        got = {
            t: db.execute(
                f"SELECT COUNT(*) FROM {t} WHERE session_id = ?", [session_id]
            ).fetchone()[0]
            for t in COUNTED
        }
        got["preferences"] = db.execute(
            "SELECT COUNT(*) FROM preferences WHERE ? IN (first_id, second_id)", [session_id]
        ).fetchone()[0]
        return got
    finally:
        db.close()


def session_ids(path: Path) -> list[str]:
    db = open_database(path)
    try:
        return [r[0] for r in db.execute("SELECT id FROM sessions ORDER BY id")]
    finally:
        db.close()


def unplanned(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Assignments are never imported: compare with assignment_id cleared."""
    for r in recs:
        for row in r["ratings"] + r["preferences"]:
            row["assignment_id"] = None
    return recs


def edited(path: Path, *ids: str) -> Path:
    """The sessions ``ids`` of ``path`` now hold something else than their export: importing the
    export there makes copies (with ``--as-new``), not "already in the database"."""
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "UPDATE sessions SET end_reason = 'edited here' WHERE id = ?", [[i] for i in ids]
        )
    conn.close()
    return path


def renamed(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, list):
        return [renamed(v, mapping) for v in value]
    if isinstance(value, dict):
        return {k: renamed(v, mapping) for k, v in value.items()}
    return value


def export_file(source: dict[str, Any], tmp_path: Path, *ids: str, name: str = "out.jsonl") -> Path:
    target = tmp_path / name
    code, _out, err = run("export", *ids, "--db", str(source["path"]), "--output", str(target))
    assert code == 0, err
    return target


# -- export -----------------------------------------------------------------------------------------


def test_jsonl_line_holds_the_whole_conversation(source, tmp_path):
    a, b = source["a"], source["b"]
    lines = export_file(source, tmp_path, a).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    rec = json.loads(lines[0])
    assert rec["format"] == "thought-playground/1"
    assert rec["session"]["id"] == a
    assert rec["session"]["experiment_id"] == "exp-1"
    assert rec["experiment"]["name"] == "pilot"
    assert isinstance(rec["session"]["config"], dict)
    assert {p["name"] for p in rec["participants"]} >= {"Pat"}
    assert len(rec["messages"]) == 5
    assert rec["memories"]
    assert rec["decisions"]
    thoughts = {t["id"]: t for t in rec["thoughts"]}
    assert all(t["evaluations"] for t in rec["thoughts"] if t["score"] is not None)
    expressed = [m for m in rec["messages"] if m["thought_id"] is not None]
    assert expressed
    for m in expressed:
        full = dict(thoughts[m["thought_id"]])
        del full["evaluations"]
        assert m["thought"] == full
    by_id = {m["id"]: m for m in rec["messages"]}
    assert [n["text"] for n in by_id[2]["annotations"]] == ["too eager", "but friendly"]
    assert by_id[1]["annotations"][0]["kind"] == "reason"
    assert by_id[3]["labels"][0]["answer"] == "not sure"
    assert len(rec["ratings"]) == 2 * 7 + 10
    assert {r["instrument"] for r in rec["ratings"]} == {"conversation", "participant"}
    assert rec["turn_marks"] == [
        {
            "message_id": 2,
            "rater": "r1",
            "comment": "too abrupt",
            "created_at": rec["turn_marks"][0]["created_at"],
        }
    ]
    assert [(p["other_id"], p["chosen_id"]) for p in rec["preferences"]] == [(b, a)]
    seqs = [e["seq"] for e in rec["events"]]
    assert seqs == sorted(seqs)
    assert len(seqs) == counts(source["path"], a)["events"]
    assert all(e["data"]["session_id"] == a for e in rec["events"])


def test_format_json_is_one_array_of_the_same_records(source):
    code, out, err = run("export", "--all", "--db", str(source["path"]), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    ids = [source["a"], source["b"], source["c"]]
    assert [r["session"]["id"] for r in data] == ids
    assert data == records(source["path"], ids)


def test_csv_has_one_row_per_rating(source, tmp_path):
    target = tmp_path / "ratings.csv"
    code, out, _ = run(
        "export",
        source["a"],
        source["b"],
        "--db",
        str(source["path"]),
        "--format",
        "csv",
        "--output",
        str(target),
    )
    assert code == 0
    assert "wrote 38 rating rows (2 conversations)" in out
    with open(target, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 * 7 + 10
    assert list(rows[0]) == list(export.CSV_COLUMNS)
    b_rows = [r for r in rows if r["session_id"] == source["b"]]
    assert {r["condition"] for r in b_rows} == {"baseline"}
    assert {r["experiment_id"] for r in b_rows} == {"exp-1"}
    assert {r["assignment_id"] for r in b_rows if r["rater"] == "r3"} != {""}
    assert {r["instrument"] for r in rows} == {"conversation", "participant"}
    assert all(1 <= int(r["value"]) <= 7 and r["metric"] and r["seed"] for r in rows)


def test_all_experiment_and_prefix_select_sessions(source):
    path = str(source["path"])
    a, b, c = source["a"], source["b"], source["c"]

    def exported(*argv: str) -> list[str]:
        code, out, err = run("export", *argv, "--db", path)
        assert code == 0, err
        return [json.loads(line)["session"]["id"] for line in out.splitlines()]

    assert exported("--all") == [a, b, c]
    assert exported("--experiment", "exp-1") == [a, b]
    assert exported("--experiment", "pilot") == [a, b]
    assert exported(c[:-2], a) == [c, a]
    assert exported(a, a[:-1]) == [a]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        ([], "nothing to export"),
        (["nope"], "no session 'nope'"),
        (["2"], "ambiguous prefix"),
        (["--experiment", "exp-9"], "no experiment 'exp-9'"),
    ],
    ids=["no_ids", "unknown_id", "ambiguous_prefix", "unknown_experiment"],
)
def test_export_errors_are_one_clear_line(source, argv, fragment):
    code, out, err = run("export", *argv, "--db", str(source["path"]))
    assert code == 1
    assert fragment in err
    assert "Traceback" not in err
    assert out == ""


def test_missing_database_is_not_created(tmp_path):
    db = tmp_path / "nowhere" / "x.db"
    code, _, err = run("export", "--all", "--db", str(db))
    assert code == 1
    assert f"no database at {db}" in err
    assert not db.exists()
    assert not db.parent.exists()


def test_write_export_replaces_a_file_only_when_complete(source, tmp_path):
    target = tmp_path / "keep.jsonl"
    target.write_text("precious\n")
    db = open_database(source["path"])
    try:
        with pytest.raises(errors.SessionNotFound):
            export.write_export(db, [source["a"], "nope"], target, "jsonl")
        assert target.read_text() == "precious\n"
        assert export.write_export(db, [source["a"], source["b"]], target, "jsonl") == 2
        with pytest.raises(errors.PlaygroundError, match="cannot write"):
            export.write_export(db, [source["a"]], tmp_path / "no" / "dir.jsonl", "json")
    finally:
        db.close()
    assert len(target.read_text().splitlines()) == 2
    assert [p.name for p in tmp_path.iterdir()] == ["keep.jsonl"]


# -- import -----------------------------------------------------------------------------------------


def test_an_export_from_before_migration_14_is_relabelled_as_the_migration_does(source, tmp_path):
    """An older export gave a person the policy ``inner-thoughts`` and left who was seated at the
    end without ``left_at``: the import stores them as migration 15 leaves older databases, so
    importing it where the session already is finds it "already in the database"."""
    line = export_file(source, tmp_path, source["a"]).read_text(encoding="utf-8")
    record = json.loads(line)
    for p in record["participants"]:
        p["policy"] = "inner-thoughts" if p["kind"] == "human" else p["policy"]
        p["left_at"] = None
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps(record) + "\n", encoding="utf-8")
    fresh = tmp_path / "fresh.db"
    code, _, err = run("import", str(old), "--db", str(fresh))
    assert code == 0, err
    db = open_database(fresh)
    try:
        rows = db.execute("SELECT name, policy, left_at FROM participants").fetchall()
        ended = db.execute("SELECT finished_at FROM sessions").fetchone()[0]
    finally:
        db.close()
    assert ("Pat", "human", ended) in rows
    assert all(left == ended for _, _, left in rows)
    code, out, err = run("import", str(old), "--db", str(source["path"]))
    assert code == 0, err
    assert out.splitlines()[-1] == "0 imported, 1 already in the database"


def test_round_trip_into_a_fresh_database_is_identical(source, tmp_path):
    ids = [source["a"], source["b"], source["c"]]
    fresh = tmp_path / "fresh.db"
    code, out, err = run("import", str(export_file(source, tmp_path, "--all")), "--db", str(fresh))
    assert code == 0, err
    assert out.splitlines() == [f"imported {s} as {s}" for s in ids] + [
        "3 imported, 0 already in the database"
    ]
    assert records(fresh, ids) == unplanned(records(source["path"], ids))
    db = open_database(fresh)
    try:
        assert db.execute("SELECT COUNT(*) FROM assignments").fetchone()[0] == 0
        assert db.execute("SELECT COUNT(*) FROM preferences").fetchone()[0] == 2
        assert [r[0] for r in db.execute("SELECT id FROM raters ORDER BY id")] == [
            "Pat",
            "r1",
            "r2",
            "r3",
        ]
    finally:
        db.close()


def test_import_into_the_same_database_maps_every_id(source, tmp_path):
    ids = [source["a"], source["b"], source["c"]]
    same = edited(copy_db(source["path"], tmp_path / "same.db"), *ids)
    before = {s: counts(same, s) for s in ids}
    original = records(same, ids)
    file = export_file(source, tmp_path, "--all")
    code, out, err = run("import", str(file), "--db", str(same), "--as-new")
    assert code == 0, err
    *lines, summary = out.splitlines()
    assert summary == "3 imported, 0 already in the database"
    assert all(line.endswith("(renamed: the id was taken)") for line in lines)
    mapping = {line.split()[1]: line.split()[3] for line in lines}
    assert list(mapping) == ids
    assert len(set(mapping.values()) | set(ids)) == 6
    assert all(new[:15] == old[:15] and new != old for old, new in mapping.items())
    assert {s: counts(same, s) for s in ids} == before
    assert records(same, ids) == original
    copies = records(same, [mapping[s] for s in ids])
    back = {new: old for old, new in mapping.items()}
    assert renamed(copies, back) == unplanned(records(source["path"], ids))
    assert copies[2]["session"]["parent_id"] == mapping[source["a"]]
    assert all(e["data"]["session_id"] == mapping[ids[0]] for e in copies[0]["events"])
    db = open_database(same)
    try:
        assert db.execute("SELECT COUNT(*) FROM preferences").fetchone()[0] == 4
    finally:
        db.close()


def test_trigger_timings_travel_through_export_and_import(tmp_path):
    """The timings are in the event log: an import, as a copy too, reads them back the same."""
    path = tmp_path / "timed.db"
    write_timed_session(path)
    file = tmp_path / "timed.jsonl"
    code, _, err = run("export", SID, "--db", str(path), "--output", str(file))
    assert code == 0, err
    db = open_database(path)
    try:
        before = SessionReader(db).trigger_timings(SID)
        assert len(before) == 2
        fresh = open_database(tmp_path / "fresh.db")
        try:
            assert importer.import_file(fresh, file) == [(SID, SID)]
            assert SessionReader(fresh).trigger_timings(SID) == before
        finally:
            fresh.close()
        [(_, new)] = importer.import_file(db, _edited_copy(file, tmp_path), as_new=True)
        assert new != SID
        copied = SessionReader(db).trigger_timings(new)
        assert [t.model_copy(update={"session_id": SID}) for t in copied] == before
    finally:
        db.close()


def _edited_copy(file: Path, tmp_path: Path) -> Path:
    """The export with its first message changed: another conversation under the same id."""
    rec = json.loads(file.read_text(encoding="utf-8"))
    rec["messages"][0]["text"] += " (edited)"
    copy = tmp_path / "edited.jsonl"
    copy.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    return copy


def test_imported_session_replays_like_the_original(source, tmp_path):
    same = edited(copy_db(source["path"], tmp_path / "same.db"), source["a"])
    db = open_database(same)
    try:
        file = export_file(source, tmp_path, source["a"])
        [(old, new)] = importer.import_file(db, file, as_new=True)
        assert new != old
        first, copy = replay.Recording.load(db, old), replay.Recording.load(db, new)
        assert copy.moments == first.moments
        assert copy.marks == first.marks
        assert {e.session_id for e in copy.rebuild(copy.last)} == {new}
    finally:
        db.close()


def test_importing_the_same_file_twice_imports_it_once(source, tmp_path):
    fresh = tmp_path / "twice.db"
    file = export_file(source, tmp_path, source["a"], source["b"])
    assert run("import", str(file), "--db", str(fresh))[0] == 0
    code, out, _ = run("import", str(file), "--db", str(fresh))
    assert code == 0
    assert out.count(": already in the database") == 2
    assert len(session_ids(fresh)) == 2
    db = open_database(fresh)
    try:
        # A–B was preferred once in the file: imported once, never again.
        assert db.execute("SELECT COUNT(*) FROM preferences").fetchone()[0] == 1
    finally:
        db.close()


def test_a_child_before_its_parent_still_links_to_the_imported_parent(source, tmp_path):
    same = edited(copy_db(source["path"], tmp_path / "same.db"), source["a"], source["c"])
    db = open_database(same)
    try:
        file = export_file(source, tmp_path, source["c"], source["a"])
        pairs = importer.import_file(db, file, as_new=True)
        mapping = dict(pairs)
        parent = db.execute(
            "SELECT parent_id FROM sessions WHERE id = ?", [mapping[source["c"]]]
        ).fetchone()[0]
        assert parent == mapping[source["a"]]
    finally:
        db.close()


def test_references_outside_the_file_link_to_the_database_or_are_skipped_with_a_warning(
    source, tmp_path
):
    file = export_file(source, tmp_path, source["c"])
    code, out, err = run("import", str(file), "--db", str(tmp_path / "fresh.db"))
    assert code == 0, err
    assert "warning: skipped 1 pairwise preference(s)" in out
    assert "1 fork(s) lost the link to their parent" in out
    same = edited(copy_db(source["path"], tmp_path / "same.db"), source["c"])
    code, out, _ = run("import", str(file), "--db", str(same), "--as-new")
    assert code == 0
    assert "warning" not in out
    new = out.split()[3]
    db = open_database(same)
    try:
        assert (
            db.execute("SELECT parent_id FROM sessions WHERE id = ?", [new]).fetchone()[0]
            == source["a"]
        )
        prefs = db.execute(
            "SELECT first_id, second_id, chosen_id FROM preferences WHERE ? IN (first_id, second_id)",
            [new],
        ).fetchall()
        assert prefs == [(source["b"], new, new)]
    finally:
        db.close()


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _line(source: dict[str, Any], tmp_path: Path, session: str, **changes: Any) -> str:
    rec = json.loads(export_file(source, tmp_path, session, name=f"{session}.jsonl").read_text())
    for key, value in changes.items():
        if value is None:
            rec.pop(key)
        else:
            rec[key] = value
    return json.dumps(rec)


def _without_text(source: dict[str, Any], tmp_path: Path, session: str) -> str:
    rec = json.loads(export_file(source, tmp_path, session, name="t.jsonl").read_text())
    del rec["messages"][3]["text"]
    return json.dumps(rec)


def _unknown_speaker(source: dict[str, Any], tmp_path: Path, session: str) -> str:
    rec = json.loads(export_file(source, tmp_path, session, name="s.jsonl").read_text())
    rec["messages"][2]["speaker"] = "Nobody"
    return json.dumps(rec)


def _latin1(path: Path, first: str) -> Path:
    path.write_bytes(first.encode() + b"\n" + '{"caf\u00e9": 1}'.encode("latin-1") + b"\n")
    return path


BAD = {
    "missing_file": (lambda s, t: t / "absent.jsonl", "no file"),
    "empty_file": (lambda s, t: _write(t / "e.jsonl", "", "  "), "the file is empty"),
    "not_json": (
        lambda s, t: _write(t / "x.jsonl", _line(s, t, s["a"]), "{oops"),
        "line 2: not JSON",
    ),
    "json_array": (lambda s, t: _write(t / "x.json", "[", "]"), "--format jsonl"),
    "not_an_object": (
        lambda s, t: _write(t / "x.jsonl", "[1, 2]"),
        "line 1: expected a JSON object",
    ),
    "foreign_format": (
        lambda s, t: _write(t / "x.jsonl", _line(s, t, s["a"], format="chat-dump/3")),
        "line 1: not a Thought Playground export",
    ),
    "newer_version": (
        lambda s, t: _write(t / "x.jsonl", _line(s, t, s["a"], format="thought-playground/2")),
        "line 1: written by a newer version",
    ),
    "missing_key": (
        lambda s, t: _write(t / "x.jsonl", _line(s, t, s["a"], messages=None)),
        "line 1: missing key 'messages'",
    ),
    "rejected_row": (
        lambda s, t: _write(t / "x.jsonl", _unknown_speaker(s, t, s["a"])),
        "line 1: messages[2].speaker: 'Nobody' is not one of the participants",
    ),
    "not_utf8": (
        lambda s, t: _latin1(t / "x.jsonl", _line(s, t, s["a"])),
        "line 2: not UTF-8 text",
    ),
    "missing_nested_key": (
        lambda s, t: _write(t / "x.jsonl", _line(s, t, s["b"]), _without_text(s, t, s["a"])),
        "line 2: messages[3]: missing key 'text'",
    ),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_import_files_are_one_clear_line_and_damage_nothing(source, tmp_path, case):
    make, fragment = BAD[case]
    file = make(source, tmp_path)
    # A changed there, so that the good line before a bad one is imported (as a copy).
    target = edited(copy_db(source["path"], tmp_path / "target.db"), source["a"], source["b"])
    before = session_ids(target)
    code, out, err = run("import", str(file), "--db", str(target), "--as-new")
    assert code == 1, out
    assert fragment in err
    assert "Traceback" not in err
    after = session_ids(target)
    if case in ("not_json", "not_utf8", "missing_nested_key"):
        assert "the 1 conversation before it was imported and kept" in err
        assert len(after) == len(before) + 1
        assert out.count("imported ") == 1
        db = open_database(target)
        try:
            # the bad conversation left nothing behind: only the good one's rows were added
            assert (
                db.execute("SELECT COUNT(DISTINCT session_id) FROM participants").fetchone()[0] == 4
            )
        finally:
            db.close()
    else:
        assert after == before
    # (a copy's preferences may add rows involving existing sessions; their own rows never change)
    assert {s: _own(counts(target, s)) for s in before} == {
        s: _own(counts(source["path"], s)) for s in before
    }


def _own(counted: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in counted.items() if k != "preferences"}


@pytest.mark.parametrize("command", ["import", "export"])
def test_a_database_of_another_application_is_refused_untouched(source, tmp_path, command):
    foreign = tmp_path / "notes.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    argv = [str(export_file(source, tmp_path, source["a"]))] if command == "import" else ["--all"]
    code, _, err = run(command, *argv, "--db", str(foreign))
    assert code == 1
    assert "a SQLite database of another application" in err
    assert "Traceback" not in err
    with sqlite3.connect(foreign) as conn:
        assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master")] == ["notes"]
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0


def test_a_file_that_is_not_sqlite_is_refused(source, tmp_path):
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database at all" * 100)
    code, _, err = run("import", str(export_file(source, tmp_path, source["a"])), "--db", str(junk))
    assert code == 1
    assert "not a usable session database" in err
    assert "Traceback" not in err
    assert junk.read_bytes() == b"this is not a database at all" * 100


def test_import_file_api_reports_the_line_through_playground_error(tmp_path, db):
    bad = _write(tmp_path / "x.jsonl", '{"format": "thought-playground/1", "session": {}}')
    with pytest.raises(errors.PlaygroundError, match=r"line 1: missing key 'participants'"):
        importer.import_file(db, bad)


def test_decisions_keep_their_best_score_through_export_and_import(source, tmp_path):
    """The best score travels beside the chosen thought's; an export made before it was kept
    gets it as an old database does (migration 10)."""
    a = source["a"]
    (rec,) = records(source["path"], [a])
    scored = [d for d in rec["decisions"] if d["score"] is not None]
    assert scored
    assert all(d["best_score"] is not None for d in scored)
    fresh = tmp_path / "fresh.db"
    code, _, err = run("import", str(export_file(source, tmp_path, a)), "--db", str(fresh))
    assert code == 0, err
    assert records(fresh, [a])[0]["decisions"] == rec["decisions"]

    old = json.loads(json.dumps(rec))
    for d in old["decisions"]:
        del d["best_score"]
    drawn = next(d for d in old["decisions"] if d["score"] is not None)
    drawn["reason"] = "best score 3.62 < imThreshold 3.95; System-1 reply drawn (p=0.1)"
    drawn["score"] = 1.8
    older = tmp_path / "older.jsonl"
    older.write_text(json.dumps(old) + "\n")
    again = tmp_path / "again.db"
    code, _, err = run("import", str(older), "--db", str(again))
    assert code == 0, err
    got = records(again, [a])[0]["decisions"]
    assert [(d["score"], d["best_score"]) for d in got if d["reason"].startswith("best score 3.62")] == [(1.8, 3.62)]  # fmt: skip
    for d, before in zip(got, rec["decisions"], strict=True):
        if d is not next(x for x in got if x["reason"].startswith("best score 3.62")):
            # as recorded; a System-1 draw's best score as its reason shows it (2 decimals)
            assert d["best_score"] == pytest.approx(before["best_score"], abs=0.005)
