"""The study page's protocol is defined once (playground/study/protocol.py): its reference page,
its JSON schema and the page's own protocol module are generated from it and must be current;
the server serves each of the page's modules with a script's content type."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from playground.study import protocol
from playground.study.server import PAGE_MODULES, STATIC

ROOT = Path(__file__).resolve().parents[2]
STATIC_DIR = ROOT / "playground" / "study" / "static"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "study_protocol", ROOT / "scripts" / "study_protocol.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_reference_schema_and_page_module_are_current() -> None:
    generator = _generator()
    for path, text in generator.outputs().items():
        assert path.read_text(encoding="utf-8") == text, generator.STALE


def test_every_frame_kind_is_documented_and_in_the_schema() -> None:
    doc = (ROOT / "docs" / "study-protocol.md").read_text(encoding="utf-8")
    schema = json.loads((ROOT / "docs" / "study-protocol.schema.json").read_text("utf-8"))
    for direction in ("ServerFrame", "PageFrame"):
        mapping = schema["$defs"][direction]["discriminator"]["mapping"]
        for kind in mapping:
            assert f"### `{kind}`" in doc
    assert len(schema["$defs"]["ServerFrame"]["discriminator"]["mapping"]) == 18
    assert len(schema["$defs"]["PageFrame"]["discriminator"]["mapping"]) == 9
    for code in protocol.CloseCode:
        assert f"| {int(code)} | `{code.name}` |" in doc


def test_the_page_is_es_modules_each_served_as_a_script() -> None:
    on_disk = {p.name for p in STATIC_DIR.glob("*.js")}
    assert on_disk == set(PAGE_MODULES)
    assert all(STATIC[name] == "text/javascript" for name in PAGE_MODULES)
    page = (STATIC_DIR / "index.html").read_text(encoding="utf-8")
    assert '<script type="module" src="/static/app.js"></script>' in page
    for name in PAGE_MODULES:  # every module is reached from app.js, by a relative import
        if name != "app.js":
            assert any(
                f'from "./{name}"' in (STATIC_DIR / other).read_text("utf-8") for other in on_disk
            ), name
