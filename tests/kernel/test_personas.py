"""Persona and icebreaker files: the shipped library, and bad files named with file and field."""

import pytest

from playground import errors, personas

GOOD = """name = "Zed"
facts = ["I fix bikes.", "I live in Oslo.", "I like jazz.", "I run at night.", "I hate mornings."]
[[memories]]
kind = "interest"
text = "I like old road bikes."
weight = 0.8
"""


def test_the_shipped_library_has_eight_personas_with_five_facts_and_weighted_memories():
    lib = personas.load_personas()
    assert len(lib) >= 8
    for p in lib:
        assert len(p.facts) == 5, p.name
        kinds = {m.kind for m in p.memories}
        assert {"objective", "interest"} <= kinds, p.name
        assert all(0 <= m.weight <= 1 for m in p.memories)
    assert len(personas.load_icebreakers()) == 10


@pytest.mark.parametrize(
    ("text", "field", "message"),
    [
        (GOOD.replace('name = "Zed"\n', ""), "name", "missing"),
        (
            GOOD.replace("weight = 0.8", "weight = 7"),
            "memories.0.weight",
            "less than or equal to 1",
        ),
        (GOOD.replace('kind = "interest"', 'kind = "hobby"'), "memories.0.kind", "objective"),
        (GOOD.replace("facts = [", "facts = 3 #["), "facts", "list"),
        ("colour = 'red'\n" + GOOD, "colour", "Extra inputs"),
        (GOOD.replace('name = "Zed"', 'name = "Zed Smith"'), "name", "pattern"),
    ],
    ids=[
        "missing_name",
        "weight_out_of_range",
        "unknown_memory_kind",
        "facts_not_a_list",
        "unknown_field",
        "name_with_space",
    ],
)
def test_a_bad_persona_file_is_rejected_naming_file_and_field(tmp_path, text, field, message):
    path = tmp_path / "zed.toml"
    path.write_text(text)
    with pytest.raises(errors.PersonaError) as exc:
        personas.load_persona(path)
    assert exc.value.field == field
    assert str(exc.value).startswith(f"{path}: {field}:")
    assert message in str(exc.value)


def test_broken_toml_is_named(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('name = "Zed\nfacts = [')
    with pytest.raises(errors.PersonaError, match=r"broken\.toml: not valid TOML"):
        personas.load_persona(path)


def test_duplicate_names_and_empty_directories_are_rejected(tmp_path):
    with pytest.raises(errors.PersonaError, match="contains no persona files"):
        personas.load_personas(tmp_path)
    (tmp_path / "a.toml").write_text(GOOD)
    (tmp_path / "b.toml").write_text(GOOD)
    with pytest.raises(errors.PersonaError, match=r"b\.toml: name: 'Zed' is also used by a\.toml"):
        personas.load_personas(tmp_path)


def test_bad_icebreakers_file_is_named(tmp_path):
    (tmp_path / "icebreakers.toml").write_text("icebreakers = []\n")
    with pytest.raises(
        errors.PersonaError, match=r"icebreakers\.toml: icebreakers: must be a non-empty list"
    ):
        personas.load_icebreakers(tmp_path)


def test_a_persona_round_trips_through_save(tmp_path):
    original = personas.load_personas()[0]
    edited = original.model_copy(
        update={
            "description": 'Now with "quotes" and a \\ backslash',
            "facts": [*original.facts[:4], "I learned to sail."],
        }
    )
    path = personas.save_persona(edited, tmp_path)
    assert path.name == f"{original.id}.toml"
    assert personas.load_persona(path) == edited
