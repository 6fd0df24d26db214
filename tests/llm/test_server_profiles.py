"""The stand-in server's profiles refuse what real servers refuse, with their exact bodies.

Plain ``urllib`` requests against :class:`FakeLLMServer`; the expected bodies come from
``testbed/server_bodies.json`` (captured from real servers, see
``docs/server-capabilities.md``).
"""

from __future__ import annotations

import itertools
import json
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionUserMessageParam

from testbed.llm_server import (
    PROFILES,
    SCHEMA_KEYWORDS,
    FakeLLMServer,
    reference_body,
    server_bodies,
)

USER: ChatCompletionUserMessageParam = {
    "role": "user",
    "content": "Rate the idea of a rooftop garden on the library roof.",
}
SYSTEM_JSON = {"role": "system", "content": "You rate ideas. Answer in JSON."}
RATING = {
    "type": "object",
    "properties": {
        "rating": {"type": "integer", "minimum": 1, "maximum": 5},
        "system": {"type": "integer", "minimum": 1, "maximum": 2},
        "reason": {"type": "string"},
    },
    "required": ["rating", "system", "reason"],
    "additionalProperties": False,
}
PLAIN = {  # the same without numeric keywords
    "type": "object",
    "properties": {"rating": {"type": "integer"}, "reason": {"type": "string"}},
    "required": ["rating", "reason"],
    "additionalProperties": False,
}


def schema_format(schema: dict[str, Any], name: str = "Rating") -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


def post(srv: FakeLLMServer, **body: Any) -> tuple[int, Any]:
    """POST a chat completion; ``(status, parsed JSON body or raw text)``."""
    body = {"model": "m", "messages": [USER], **body}
    request = urllib.request.Request(
        srv.base_url + "/chat/completions",
        data=json.dumps(body).encode("utf-8"),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as res:
            status, raw = res.status, res.read()
    except urllib.error.HTTPError as err:
        status, raw = err.code, err.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8")


def expected(key: str) -> tuple[int, Any]:
    case = server_bodies()[key]
    return case["status"], case["body"]


def content(payload: dict[str, Any], index: int = 0) -> str:
    return payload["choices"][index]["message"]["content"]


def check_rating(value: dict[str, Any]) -> None:
    assert set(value) == {"rating", "system", "reason"}
    assert 1 <= value["rating"] <= 5
    assert 1 <= value["system"] <= 2
    assert isinstance(value["reason"], str)
    assert value["reason"]


@pytest.fixture
def srv(request):
    with FakeLLMServer(profile=request.param) as server:
        yield server


# --------------------------------------------------------------------------
# The reference file
# --------------------------------------------------------------------------


def test_reference_file_is_complete():
    cases = server_bodies()
    assert len(cases) >= 20
    for key, case in cases.items():
        assert {"status", "body", "source"} <= set(case), key
        assert isinstance(case["status"], int), key
        assert 200 <= case["status"] < 600, key
        assert case["source"], key
    for key in (
        "openai_max_tokens_unsupported",
        "openai_temperature_unsupported_value",
        "openai_logprobs_unsupported",
        "openai_top_logprobs_requires_logprobs",
        "openai_n_above_max",
        "openai_json_object_needs_word_json",
        "openai_strict_schema_keyword_not_permitted",
        "deepseek_json_schema_unavailable",
        "deepseek_json_object_needs_word_json",
        "llama_cpp_python_json_schema",
        "openai_stop_unsupported",
    ):  # the cases the stand-in sends
        assert key in cases


def test_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="unknown profile"):
        FakeLLMServer(profile="gpt-4o")
    assert PROFILES[0] == "permissive"


# --------------------------------------------------------------------------
# permissive: today's behaviour
# --------------------------------------------------------------------------


@pytest.mark.parametrize("srv", ["permissive"], indirect=True)
def test_permissive_accepts_everything(srv):
    status, body = post(
        srv,
        max_tokens=50,
        temperature=0.2,
        logprobs=True,
        top_logprobs=3,
        n=3,
        zzz_unknown=1,
        response_format=schema_format(RATING),
    )
    assert status == 200
    assert len(body["choices"]) == 1  # n is ignored unless n_supported
    check_rating(json.loads(content(body)))
    assert body["choices"][0]["logprobs"]["content"]
    status, body = post(srv, max_tokens=50, response_format={"type": "json_object"})
    assert status == 200
    assert set(json.loads(content(body))) == {"text"}
    assert srv.rejections == []


# --------------------------------------------------------------------------
# gpt5: OpenAI reasoning models
# --------------------------------------------------------------------------


@pytest.mark.parametrize("srv", ["gpt5"], indirect=True)
def test_gpt5_refuses_with_openai_bodies(srv):
    assert post(srv, max_tokens=200) == expected("openai_max_tokens_unsupported")
    assert post(srv, temperature=0) == expected("openai_temperature_unsupported_value")
    assert post(srv, logprobs=True, top_logprobs=5) == expected("openai_logprobs_unsupported")
    assert post(srv, top_logprobs=5) == expected("openai_top_logprobs_requires_logprobs")
    assert post(srv, n=64) == expected("openai_n_above_max")
    assert post(srv, response_format={"type": "json_object"}) == expected(
        "openai_json_object_needs_word_json"
    )
    assert srv.rejections == [
        (400, "openai_max_tokens_unsupported"),
        (400, "openai_temperature_unsupported_value"),
        (400, "openai_logprobs_unsupported"),
        (400, "openai_top_logprobs_requires_logprobs"),
        (400, "openai_n_above_max"),
        (400, "openai_json_object_needs_word_json"),
    ]
    assert len(srv.requests) == 6  # refused requests are recorded too


@pytest.mark.parametrize("srv", ["gpt5"], indirect=True)
def test_gpt5_refuses_stop_sequences(srv):
    assert post(srv, max_completion_tokens=50, stop=["\n\n"]) == expected(
        "openai_stop_unsupported"
    )
    assert srv.rejections == [(400, "openai_stop_unsupported")]


@pytest.mark.parametrize("srv", ["permissive", "llama-cpp-python"], indirect=True)
def test_stop_sequences_end_the_content_before_the_first_one(srv):
    status, body = post(srv, max_tokens=50, stop=["about", "part"])
    assert status == 200
    assert content(body) == "Honestly, the "  # the generic answer: "Honestly, the part about..."
    assert body["choices"][0]["finish_reason"] == "stop"
    status, body = post(srv, max_tokens=50, stop="nowhere in it")
    assert content(body).startswith("Honestly, the part about")
    assert content(body).endswith("sounds great to me.")


@pytest.mark.parametrize("srv", ["gpt5"], indirect=True)
def test_gpt5_echoes_the_temperature(srv):
    status, body = post(srv, temperature=0.7, max_completion_tokens=100)
    assert status == 400
    assert body == reference_body("openai_temperature_unsupported_value", value="0.7")[1]
    assert body["error"]["message"] == (
        "Unsupported value: 'temperature' does not support 0.7 with this model. "
        "Only the default (1) value is supported."
    )
    assert body["error"]["param"] == "temperature"


@pytest.mark.parametrize("srv", ["gpt5"], indirect=True)
def test_gpt5_accepts_the_adapted_request(srv):
    status, body = post(
        srv,
        max_completion_tokens=300,
        temperature=1,
        seed=7,
        response_format=schema_format(RATING),
    )
    assert status == 200
    check_rating(json.loads(content(body)))
    status, body = post(
        srv,
        messages=[SYSTEM_JSON, USER],
        max_completion_tokens=300,
        response_format={"type": "json_object"},
    )
    assert status == 200
    assert isinstance(json.loads(content(body)), dict)
    status, body = post(srv, max_completion_tokens=300, n=3, response_format=schema_format(RATING))
    assert status == 200
    assert len(body["choices"]) == 3  # OpenAI honours n
    assert srv.rejections == []


@pytest.mark.parametrize("srv", ["gpt5"], indirect=True)
def test_gpt5_error_reaches_the_openai_client(srv):
    client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model="m", messages=[USER], max_tokens=10)
    assert info.value.status_code == 400
    assert info.value.code == "unsupported_parameter"
    assert info.value.param == "max_tokens"
    assert info.value.body == expected("openai_max_tokens_unsupported")[1]["error"]


# --------------------------------------------------------------------------
# json-object-only: DeepSeek
# --------------------------------------------------------------------------


@pytest.mark.parametrize("srv", ["json-object-only"], indirect=True)
def test_json_object_only_refuses_json_schema(srv):
    assert post(srv, response_format=schema_format(RATING)) == expected(
        "deepseek_json_schema_unavailable"
    )
    assert post(srv, response_format={"type": "json_object"}) == expected(
        "deepseek_json_object_needs_word_json"
    )
    assert srv.rejections == [
        (400, "deepseek_json_schema_unavailable"),
        (400, "deepseek_json_object_needs_word_json"),
    ]


@pytest.mark.parametrize("srv", ["json-object-only"], indirect=True)
def test_json_object_only_follows_a_schema_in_the_prompt(srv):
    system = {
        "role": "system",
        "content": "Answer with a JSON object matching this JSON schema:\n"
        + json.dumps(RATING, indent=2)
        + "\nNothing else.",
    }
    status, body = post(srv, messages=[system, USER], response_format={"type": "json_object"})
    assert status == 200
    check_rating(json.loads(content(body)))
    # no schema in the prompt: any JSON object
    status, body = post(srv, messages=[SYSTEM_JSON, USER], response_format={"type": "json_object"})
    assert status == 200
    assert set(json.loads(content(body))) == {"text"}
    # plain text is still fine, logprobs too
    status, body = post(srv, max_tokens=100, temperature=0.3, logprobs=True, top_logprobs=2)
    assert status == 200
    assert body["choices"][0]["logprobs"]["content"]


# --------------------------------------------------------------------------
# no-schema-keywords: OpenAI strict mode of old
# --------------------------------------------------------------------------


@pytest.mark.parametrize("srv", ["no-schema-keywords"], indirect=True)
def test_no_schema_keywords_reproduces_the_captured_body(srv):
    review = {
        "type": "object",
        "properties": {
            "scores": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"value": {"type": "number", "minimum": 0, "maximum": 10}},
                },
            }
        },
    }
    assert post(srv, response_format=schema_format(review, name="review")) == expected(
        "openai_strict_schema_keyword_not_permitted"
    )


@pytest.mark.parametrize("srv", ["no-schema-keywords"], indirect=True)
@pytest.mark.parametrize("keyword", SCHEMA_KEYWORDS)
def test_no_schema_keywords_names_each_keyword(srv, keyword):
    value: dict[str, Any] = {"type": "string"} if "Length" in keyword else {"type": "integer"}
    if "Items" in keyword:
        value = {"type": "array", "items": {"type": "string"}}
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"x": {**value, keyword: 2}},
        "required": ["x"],
        "additionalProperties": False,
    }
    status, body = post(srv, response_format=schema_format(schema, name="S"))
    assert status == 400
    assert body["error"]["message"] == (
        f"Invalid schema for response_format 'S': In context=('properties', 'x'), "
        f"'{keyword}' is not permitted."
    )
    assert body["error"]["param"] == "response_format"
    assert body["error"]["code"] is None
    assert srv.rejections == [(400, "openai_strict_schema_keyword_not_permitted")]


@pytest.mark.parametrize("srv", ["no-schema-keywords"], indirect=True)
def test_no_schema_keywords_reports_the_path_through_defs(srv):
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"p": {"$ref": "#/$defs/Point"}},
        "$defs": {"Point": {"type": "object", "properties": {"w": {"type": "integer"}}}},
    }
    schema["$defs"]["Point"]["properties"]["w"]["maximum"] = 3
    status, body = post(srv, response_format=schema_format(schema, name="S"))
    assert status == 400
    assert "In context=('$defs', 'Point', 'properties', 'w'), 'maximum'" in body["error"]["message"]


@pytest.mark.parametrize("srv", ["no-schema-keywords"], indirect=True)
def test_no_schema_keywords_accepts_a_plain_schema(srv):
    status, body = post(srv, max_tokens=300, response_format=schema_format(PLAIN))
    assert status == 200
    value = json.loads(content(body))
    assert set(value) == {"rating", "reason"}
    assert srv.rejections == []


# --------------------------------------------------------------------------
# llama-cpp-python
# --------------------------------------------------------------------------


@pytest.mark.parametrize("srv", ["llama-cpp-python"], indirect=True)
def test_llama_cpp_python_answers_json_schema_with_its_500(srv):
    assert post(srv, max_tokens=100, response_format=schema_format(RATING)) == expected(
        "llama_cpp_python_json_schema"
    )
    status, body = post(srv, response_format={"type": "bogus"})
    assert (status, body) == expected("llama_cpp_python_response_format_bogus")
    assert srv.rejections == [
        (500, "llama_cpp_python_json_schema"),
        (500, "llama_cpp_python_json_schema"),
    ]


@pytest.mark.parametrize("srv", ["llama-cpp-python"], indirect=True)
def test_llama_cpp_python_json_object_schema_field(srv):
    status, body = post(
        srv, max_tokens=100, response_format={"type": "json_object", "schema": RATING}
    )
    assert status == 200
    check_rating(json.loads(content(body)))
    # without the word "json" anywhere: llama-cpp-python does not mind
    status, body = post(srv, response_format={"type": "json_object"})
    assert status == 200
    assert isinstance(json.loads(content(body)), dict)


@pytest.mark.parametrize("srv", ["llama-cpp-python"], indirect=True)
def test_llama_cpp_python_ignores_what_it_does_not_know(srv):
    status, body = post(srv, max_completion_tokens=1, n=3, seed=4, zzz_unknown=True)
    assert status == 200
    assert len(body["choices"]) == 1  # n ignored
    assert content(body) != "OK"  # max_completion_tokens ignored: no 1-token answer
    status, body = post(srv, max_tokens=1)
    assert content(body) == "OK"
    assert srv.rejections == []


@pytest.mark.parametrize("srv", ["llama-cpp-python"], indirect=True)
def test_llama_cpp_python_logprobs(srv):
    status, body = post(srv, max_tokens=50, logprobs=True)
    assert status == 200
    assert body["choices"][0]["logprobs"] is None  # no top_logprobs: none
    status, body = post(srv, max_tokens=50, top_logprobs=3)
    assert body["choices"][0]["logprobs"] is None
    status, body = post(srv, max_tokens=50, logprobs=True, top_logprobs=3)
    entries = body["choices"][0]["logprobs"]["content"]
    assert "".join(e["token"] for e in entries) == content(body)
    assert all(e["bytes"] is None and len(e["top_logprobs"]) == 3 for e in entries)
    assert all(alt["bytes"] is None for e in entries for alt in e["top_logprobs"])


# --------------------------------------------------------------------------
# Knobs usable with any profile
# --------------------------------------------------------------------------


@pytest.mark.parametrize("srv", ["permissive"], indirect=True)
def test_n_supported_gives_different_ratings(srv):
    srv.n_supported = True
    _, single = post(srv, response_format=schema_format(RATING))
    status, body = post(srv, n=4, response_format=schema_format(RATING))
    assert status == 200
    assert [c["index"] for c in body["choices"]] == [0, 1, 2, 3]
    values = [json.loads(content(body, i)) for i in range(4)]
    for value in values:
        check_rating(value)
    assert values[0] == json.loads(content(single))  # choice 0 is the n=1 answer
    ratings = [v["rating"] for v in values]
    assert len(set(ratings)) == 4
    assert all((b - a) % 5 == 1 for a, b in itertools.pairwise(ratings))
    _, again = post(srv, n=4, response_format=schema_format(RATING))
    assert again["choices"] == body["choices"]  # deterministic
    status, body = post(srv, n=2)
    assert len({content(body, 0), content(body, 1)}) == 2


def test_n_supported_defaults_by_profile():
    assert FakeLLMServer(profile="gpt5").n_supported
    assert not FakeLLMServer().n_supported
    assert not FakeLLMServer(profile="llama-cpp-python").n_supported
    assert FakeLLMServer(profile="llama-cpp-python", n_supported=True).n_supported


@pytest.mark.parametrize("srv", ["gpt5"], indirect=True)
def test_cut_next_json_cuts_inside_a_string(srv):
    fmt = schema_format(RATING)
    _, whole = post(srv, max_completion_tokens=40, response_format=fmt)
    srv.cut_next(1)
    assert post(srv, max_tokens=40)[0] == 400  # a refusal does not use the cut up
    status, body = post(srv, max_completion_tokens=40, response_format=fmt)
    assert status == 200
    cut = content(body)
    assert body["choices"][0]["finish_reason"] == "length"
    assert body["usage"]["completion_tokens"] == 40  # the whole budget spent
    assert content(whole).startswith(cut)
    assert len(cut) < len(content(whole))
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut)
    assert cut.count('"') % 2 == 1  # inside a string
    _, after = post(srv, max_completion_tokens=40, response_format=fmt)
    assert after["choices"] == whole["choices"]  # only the next call


@pytest.mark.parametrize("srv", ["permissive"], indirect=True)
def test_cut_next_text_cuts_mid_word(srv):
    _, whole = post(srv, max_tokens=30)
    srv.cut_next(2)
    _, first = post(srv, max_tokens=30)
    _, second = post(srv, max_tokens=30, logprobs=True, top_logprobs=2)
    full = content(whole)
    for body in (first, second):
        cut = content(body)
        assert body["choices"][0]["finish_reason"] == "length"
        assert full.startswith(cut)
        assert 0 < len(cut) < len(full)
        assert cut[-1].isalpha()
        assert full[len(cut)].isalpha()  # mid-word
    tokens = second["choices"][0]["logprobs"]["content"]
    assert "".join(t["token"] for t in tokens) == content(second)
    srv.cut_next(1, "text")
    _, forced = post(srv, response_format=schema_format(RATING))
    assert forced["choices"][0]["finish_reason"] == "length"
    with pytest.raises(ValueError, match="unknown cut kind"):
        srv.cut_next(1, "middle")


@pytest.mark.parametrize("srv", ["permissive"], indirect=True)
def test_invalid_next_puts_bounded_values_out_of_range(srv):
    fmt = schema_format(RATING)
    srv.invalid_next(1)
    _, plain = post(srv)  # not a JSON call: does not use it up
    assert plain["choices"][0]["finish_reason"] == "stop"
    _, body = post(srv, response_format=fmt)
    value = json.loads(content(body))
    assert value["rating"] == 0
    assert value["system"] == 3  # 1-5 -> 0, 1-2 -> 3
    assert isinstance(value["reason"], str)
    _, body = post(srv, response_format=fmt)
    check_rating(json.loads(content(body)))
    srv.invalid_next(1)
    _, body = post(srv, response_format=schema_format(PLAIN))
    assert set(json.loads(content(body))) == {"reason"}  # nothing bounded: a property left out


@pytest.mark.parametrize("srv", ["permissive"], indirect=True)
def test_placeholder_next_fills_strings_with_dots(srv):
    srv.placeholder_next(2)
    _, body = post(srv, response_format=schema_format(RATING))
    value = json.loads(content(body))
    assert value["reason"] == "..."
    assert 1 <= value["rating"] <= 5
    _, body = post(srv, response_format={"type": "json_object"})
    assert json.loads(content(body)) == {"text": "..."}
    _, body = post(srv, response_format=schema_format(RATING))
    assert json.loads(content(body))["reason"] != "..."


@pytest.mark.parametrize("srv", ["json-object-only"], indirect=True)
def test_knobs_work_with_prompt_schemas(srv):
    system = {"role": "system", "content": "JSON schema: " + json.dumps(RATING)}
    srv.invalid_next(1)
    srv.placeholder_next(1)
    _, body = post(srv, messages=[system, USER], response_format={"type": "json_object"})
    assert json.loads(content(body))["rating"] == 0
    _, body = post(srv, messages=[system, USER], response_format={"type": "json_object"})
    assert json.loads(content(body))["reason"] == "..."
