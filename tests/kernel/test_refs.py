"""References like ``memory:12``: written and read in one place, malformed text refused clearly."""

import pytest

from playground import domain
from playground.domain.refs import MalformedRef, parse_ref, ref, ref_id, ref_kind


def test_a_reference_is_written_and_read_back():
    assert ref("memory", 12) == "memory:12" == domain.MemoryItem(id=12, kind="fact", text="x").ref
    assert parse_ref("message:3") == ("message", 3)
    assert parse_ref(ref("thought", 7)) == ("thought", 7)


@pytest.mark.parametrize(
    "text", ["", "memory", "memory:", "memory:x", "memory:-1", "memory: 3", "memory:3:4", "note:3"]
)
def test_malformed_text_is_refused_with_a_clear_error(text):
    with pytest.raises(MalformedRef, match=r"not a reference|no known kind"):
        parse_ref(text)
    assert ref_kind(text) is None
    assert ref_id(text, "memory") is None


def test_the_tolerant_readers_name_the_kind_and_the_id_of_that_kind_only():
    assert ref_kind("thought:2") == "thought"
    assert ref_id("thought:2", "thought") == 2
    assert ref_id("thought:2", "memory") is None
    assert issubclass(MalformedRef, ValueError)
