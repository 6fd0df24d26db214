"""The raters' protocol without a server: ids without lookalikes, the page's names for the
close codes, text set as text, and docs/rater-protocol.md generated from the models."""

from __future__ import annotations

import re
import runpy
from importlib import resources
from pathlib import Path

from pydantic import BaseModel

from playground.rating import links as rater_links
from playground.rating.web import protocol

ROOT = Path(__file__).resolve().parents[2]


def test_made_up_rater_ids_and_codes_have_no_lookalikes():
    ids = rater_links.new_rater_ids(500)
    assert len(set(ids)) == 500
    assert all(re.fullmatch(r"R-[34679ACDEFGHJKMNPQRTUVWXY]{6}", i) for i in ids)
    assert not set("0O1IL2Z5S8B") & set(rater_links.ALPHABET)


def test_the_page_names_the_close_codes_as_the_server_does():
    script = (resources.files("playground.rating.web") / "static" / "protocol.js").read_text()
    named = dict(re.findall(r"^\s+([A-Z_]+): (\d+),$", script, re.M))
    assert named == {c.name: str(int(c)) for c in protocol.CloseCode}
    main = (resources.files("playground.rating.web") / "static" / "main.js").read_text()
    assert not re.search(r"\b40\d\d\b", main)  # no bare close numbers in the page
    for name in ("main.js", "conversation.js", "rating.js", "connection.js"):
        text = (resources.files("playground.rating.web") / "static" / name).read_text()
        assert "innerHTML" not in text
        assert "insertAdjacentHTML" not in text


def test_docs_rater_protocol_md_is_current() -> None:
    generator = runpy.run_path(str(ROOT / "scripts" / "rater_protocol.py"))
    written = (ROOT / "docs" / "rater-protocol.md").read_text(encoding="utf-8")
    assert written == generator["render"](), generator["STALE"]
    for model in (*protocol.SERVER_FRAMES, *protocol.PAGE_FRAMES):
        assert f"### {model.__name__}\n" in written


def test_every_frame_model_forbids_extra_fields_and_sends_only_its_own() -> None:
    models: list[type[BaseModel]] = [*protocol.SERVER_FRAMES, *protocol.PAGE_FRAMES, protocol.Line]
    for model in models:
        assert model.model_config.get("extra") == "forbid", model
    line = protocol.Line.model_fields
    assert set(line) == {"n", "speaker", "text"}
