"""Structured answers: the JSON schema a request carries, and reading the JSON a model wrote.

The schema is built from a pydantic model in the strict form OpenAI expects, with exact array
lengths and bounded strings (:func:`bounded_schema`), and travels the way a server takes it (see
:mod:`playground.llm.capabilities`): as a ``response_format``, or stated in the prompt
(:func:`with_schema_in_prompt`). The answer is read leniently (:func:`parse_json_reply`) and a
validation error becomes a short text a repair request can quote (:func:`validation_text`).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from playground.llm.capabilities import SCHEMA_KEYWORDS

T = TypeVar("T", bound=BaseModel)


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in the strict form OpenAI expects (all properties required, no extras)."""

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: fix(v) for k, v in node.items() if k not in ("default", "title")}
            if node.get("type") == "object" and "properties" in node:
                node["additionalProperties"] = False
                node["required"] = list(node["properties"])
            return node
        if isinstance(node, list):
            return [fix(v) for v in node]
        return node

    schema: dict[str, Any] = fix(model.model_json_schema())  # a dict comes back a dict
    return schema


#: Longest string a schema allows, in characters, where the model states no other bound: a
#: grammar-constrained string that never closes is cut here instead of at the token limit
#: (SmolLM2-135M on llama.cpp ran strings on until max_tokens). Validation does not enforce it.
MAX_STRING = 240
#: Most items of an array whose length the schema does not state otherwise (the same reason).
MAX_ITEMS = 6


def bounded_schema(
    model: type[BaseModel],
    lengths: Mapping[str, int],
    *,
    loose: bool = False,
    enums: bool = False,
) -> dict[str, Any]:
    """The strict schema with exact array lengths and bounded strings; ``loose`` leaves out the
    numeric and length keywords some servers refuse (the answer is still validated here);
    ``enums`` states a small integer range as an enum as well (see below)."""
    schema = exact_lengths(strict_schema(model), dict(lengths))

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: walk(v) for k, v in node.items()}
            low, high = node.get("minimum"), node.get("maximum")
            if (
                enums
                and node.get("type") == "integer"
                and isinstance(low, int)
                and isinstance(high, int)
                and 0 <= high - low <= 10
            ):
                # llama-cpp-python's grammar for a JSON-mode schema enforces an enum but not
                # minimum and maximum: SmolLM2 then writes "rating": 86. The enum says the same.
                node["enum"] = list(range(low, high + 1))
            if loose:
                for k in SCHEMA_KEYWORDS:
                    node.pop(k, None)
            elif node.get("type") == "string" and "maxLength" not in node and "enum" not in node:
                node["maxLength"] = MAX_STRING
            elif node.get("type") == "array" and "maxItems" not in node:
                node["maxItems"] = MAX_ITEMS
            return node
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)  # type: ignore[no-any-return]


@functools.lru_cache(maxsize=256)
def response_format(
    model: type[BaseModel], lengths: tuple[tuple[str, int], ...], loose: bool = False
) -> str:
    """The ``response_format`` for ``model`` as JSON text, built once per schema and lengths."""
    schema = bounded_schema(model, dict(lengths), loose=loose)
    fmt = {
        "type": "json_schema",
        "json_schema": {"name": model.__name__, "schema": schema, "strict": True},
    }
    return json.dumps(fmt)


@functools.lru_cache(maxsize=256)
def schema_text(
    model: type[BaseModel], lengths: tuple[tuple[str, int], ...], loose: bool = True
) -> str:
    """The schema as compact JSON, for JSON mode and for the prompt."""
    schema = bounded_schema(model, dict(lengths), loose=loose, enums=True)
    return json.dumps(schema, separators=(",", ":"))


def exact_lengths(schema: dict[str, Any], lengths: Mapping[str, int]) -> dict[str, Any]:
    """``schema`` with ``minItems`` = ``maxItems`` = n on every array property named in
    ``lengths`` (nested definitions included): the model is told how many items to give."""

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                for name, n in lengths.items():
                    prop = props.get(name)
                    if isinstance(prop, dict) and prop.get("type") == "array":
                        prop["minItems"] = prop["maxItems"] = n
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)  # strict_schema builds a fresh dict each call
    return schema


def parse_json_reply(text: str, schema: type[T]) -> T:
    """Parse a model's JSON answer, tolerating what real models write around it: code fences,
    prose before and after, trailing commas, and single values wrapped in a list.

    Raises:
        ValueError: when no candidate parses and validates; the message says why (for a value
            out of range, which field and what was wrong).
    """
    candidates = [text.strip()]
    candidates += re.findall(r"```(?:json|JSON)?\s*(.*?)```", text, flags=re.S)
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    last_error = "no JSON object found"
    seen: set[str] = set()
    for cand in candidates:
        for variant in (cand, _TRAILING_COMMA.sub(r"\1", cand)):
            if not variant or variant in seen:
                continue
            seen.add(variant)
            try:
                # strict=False: a raw line break inside a string (small models write them) is read.
                data = json.loads(variant, strict=False)
            except json.JSONDecodeError as exc:
                last_error = f"not JSON ({exc.msg} at character {exc.pos})"
                continue
            if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
                data = data[0]
            try:
                return schema.model_validate(data)
            except ValidationError as exc:
                last_error = validation_text(exc)
    raise ValueError(last_error)


_TRAILING_COMMA = re.compile(r",\s*([}\]])")


def validation_text(exc: ValidationError) -> str:
    """``thoughts.0.system: Input should be less than or equal to 2 (got 3)``, for a repair prompt
    and the reason a dropped answer is recorded with."""
    parts = []
    for err in exc.errors()[:4]:
        where = ".".join(str(x) for x in err.get("loc", ())) or "answer"
        got = err.get("input")
        shown = f" (got {json.dumps(got)[:40]})" if isinstance(got, (int, float, str)) else ""
        parts.append(f"{where}: {err.get('msg', 'invalid')}{shown}")
    return "; ".join(parts) or "invalid"


def with_schema_in_prompt(messages: list[dict[str, str]], schema: str) -> list[dict[str, str]]:
    """The messages with the JSON schema stated at the end of the last user message: what comes
    before it (persona, instructions, the conversation) stays a prefix a server can cache."""
    out = list(messages)
    for i in range(len(out) - 1, -1, -1):
        if out[i].get("role") == "user":
            out[i] = {
                **out[i],
                "content": f"{out[i]['content']}\n\nAnswer with one JSON object, nothing else,"
                f" that follows this JSON schema:\n{schema}",
            }
            return out
    return [
        *out,
        {
            "role": "user",
            "content": f"Answer with one JSON object that follows this JSON schema:\n{schema}",
        },
    ]
