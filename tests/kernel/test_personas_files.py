"""Persona and icebreaker files that are not UTF-8 TOML: every failure names the file (and field)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from playground import errors, personas

REPO = Path(__file__).resolve().parents[2]
GOOD = 'name = "Zed"\nfacts = ["I fix bikes.", "I live in Oslo."]\n'


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (GOOD.encode("utf-16"), "is UTF-16 text; save it as UTF-8"),
        (GOOD.encode("utf-32"), "is UTF-32 text; save it as UTF-8"),
        (GOOD.encode("utf-16-le"), "a NUL byte at line 1: UTF-16 or a binary file?"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "is not UTF-8 text"),
        (GOOD.replace("Oslo", "Malmö").encode("latin-1"), "byte 0xf6 at line 2, column 41"),
    ],
    ids=["utf16_with_bom", "utf32", "utf16_without_bom", "binary", "latin1"],
)
def test_a_persona_file_that_is_not_utf8_is_named(tmp_path, raw, message):
    path = tmp_path / "zed.toml"
    path.write_bytes(raw)
    with pytest.raises(errors.PersonaError) as info:
        personas.load_persona(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)
    assert info.value.path == str(path)
    with pytest.raises(errors.PersonaError, match=r"zed\.toml: "):
        personas.load_personas(tmp_path)  # the same through the directory loader


def test_an_icebreakers_file_in_utf16_is_named(tmp_path):
    path = tmp_path / "icebreakers.toml"
    path.write_bytes('icebreakers = ["Hello!"]\n'.encode("utf-16"))
    with pytest.raises(errors.PersonaError, match=r"icebreakers\.toml: is UTF-16 text"):
        personas.load_icebreakers(tmp_path)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "zed.toml"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode())
    assert personas.load_persona(path).name == "Zed"


def test_a_directory_named_like_a_persona_file_is_named(tmp_path):
    (tmp_path / "zed.toml").mkdir()
    with pytest.raises(errors.PersonaError, match=r"zed.toml: cannot be read \("):
        personas.load_personas(tmp_path)


def test_a_duplicate_name_names_both_files_even_when_ids_differ_from_file_names(tmp_path):
    (tmp_path / "a.toml").write_text('id = "first"\n' + GOOD)
    (tmp_path / "b.toml").write_text('id = "second"\n' + GOOD)
    with pytest.raises(errors.PersonaError) as info:
        personas.load_personas(tmp_path)
    assert str(info.value) == f"{tmp_path / 'b.toml'}: name: 'Zed' is also used by a.toml"


def test_saving_an_invalid_persona_names_the_file_it_was_written_for(tmp_path):
    bad = personas.load_persona(_write(tmp_path / "zed.toml", GOOD)).model_copy(
        update={"facts": []}
    )
    with pytest.raises(errors.PersonaError) as info:
        personas.save_persona(bad, tmp_path)
    assert info.value.path == str(tmp_path / "zed.toml")
    assert info.value.field == "facts"
    assert not list(tmp_path.glob("*.tmp"))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_the_cli_names_an_undecodable_persona_file_in_one_line(tmp_path):
    lib = tmp_path / "personas"
    lib.mkdir()
    for p in sorted(personas.DEFAULT_DIR.glob("*.toml"))[:3]:
        (lib / p.name).write_bytes(p.read_bytes())
    victim = sorted(p for p in lib.glob("*.toml") if p.name != personas.ICEBREAKERS)[0]
    victim.write_bytes(victim.read_text().encode("utf-16"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "playground",
            "simulate",
            "--engine",
            "offline",
            "--agents",
            "2",
            "--personas",
            str(lib),
            "--db",
            str(tmp_path / "p.db"),
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert (
        proc.stderr.strip()
        == f"error: {victim}: is UTF-16 text; save it as UTF-8 (persona files are UTF-8 TOML)"
    )
    assert not (tmp_path / "p.db").exists()  # nothing was started
