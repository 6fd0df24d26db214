"""Values typed as Literals (server capabilities, rating methods, states, statuses, conditions)
are stored as the same strings as before they were typed.

``tests/data/export_before_typed_values.jsonl`` was exported by the version before (commit
03365b3): a 3-message session of two agents against the stand-in server's ``gpt5`` profile, so
its server profile learned ``max_completion_tokens``, no temperature, no logprobs and no stop.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from playground import domain, events, settings
from playground.llm import capabilities, rating
from playground.storage import open_database
from playground.transfer.export import export_record
from playground.transfer.importer import import_file

EXPORT = Path(__file__).resolve().parents[1] / "data" / "export_before_typed_values.jsonl"


def _record() -> dict[str, Any]:
    record: dict[str, Any] = json.loads(EXPORT.read_text(encoding="utf-8").splitlines()[0])
    return record


def test_an_export_from_before_imports_and_exports_again_string_for_string(tmp_path: Path) -> None:
    record = _record()
    db = open_database(tmp_path / "typed.db")
    [(_, sid)] = import_file(db, EXPORT)
    assert export_record(db, sid) == record
    row = db.execute("SELECT status, condition, server_profile FROM sessions").fetchone()
    assert row[:2] == ("finished", "inner-thoughts")
    assert json.loads(row[2]) == json.loads(record["session"]["server_profile"])
    methods = [r[0] for r in db.execute("SELECT method FROM thoughts WHERE score IS NOT NULL")]
    assert methods == ["sampled"] * 3
    db.close()


def test_every_stored_event_reads_into_its_typed_model_and_writes_back_the_same() -> None:
    adapter: TypeAdapter[events.Event] = TypeAdapter(events.Event)
    stored = _record()["events"]
    for e in stored:
        assert adapter.dump_python(adapter.validate_python(e["data"]), mode="json") == e["data"]
    started = adapter.validate_python(stored[0]["data"])
    finished = adapter.validate_python(stored[-1]["data"])
    assert isinstance(started, events.SessionStarted)
    assert started.condition == "inner-thoughts"
    assert isinstance(finished, events.SessionFinished)
    assert finished.status == "finished"


def test_the_stored_server_profile_and_settings_keep_their_strings() -> None:
    session = _record()["session"]
    stored = json.loads(session["server_profile"])
    assert (stored["structured"], stored["tokens"]) == ("json_schema", "max_completion_tokens")
    assert stored["structured"] in settings.STRUCTURED_TIERS
    assert stored["tokens"] in settings.TOKEN_PARAMS
    # A profile pinned to the stored values writes them back unchanged, as pins are given.
    pins = {"structured": stored["structured"], "tokens": stored["tokens"]}
    profile = capabilities.ServerProfile.with_pins(settings.parse_pins(pins))
    assert {k: profile.as_dict()[k] for k in pins} == pins
    assert capabilities.summary_of(stored) == (
        "json_schema · max_completion_tokens · default temperature · no logprobs · n · seed"
        " · no stop"
    )
    config = settings.Settings.model_validate(session["config"])
    assert config.engine.rating_method == "auto"
    assert config.model_dump(mode="json", exclude={"llm": {"api_key"}}) == session["config"]


def test_the_typed_values_are_the_strings_the_commands_and_files_take() -> None:
    """The tuples the CLI, pins and checks offer are the Literals' values, in their order."""
    assert settings.STRUCTURED_TIERS == (
        "json_schema",
        "json_schema_loose",
        "json_object_schema",
        "json_object",
        "text",
    )
    assert settings.TOKEN_PARAMS == ("max_tokens", "max_completion_tokens", "none")
    assert rating.METHODS == ("auto", "logprobs", "sampled", "parsed")
    assert set(domain.POLICY_LABELS) == set(domain.POLICIES)
