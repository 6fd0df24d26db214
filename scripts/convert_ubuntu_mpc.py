#!/usr/bin/env python3
"""Convert the Ubuntu IRC multi-party corpus to the next-speaker corpus format.

Input: the JSON release used by Hu et al. (2019, GSN) and later work on the Ubuntu IRC data of
Ouchi & Tsuboi (2016): one JSON object per line (or one JSON array of such objects), each a chat
window with its reply-to annotation::

    {"context": ["utterance", ...],        # or "ctx"
     "ctx_spk": [1, 2, 1, ...],            # speaker of each utterance (an id, 1-based)
     "ctx_adr": [-1, 1, 2, ...],           # whom each utterance addresses; -1: nobody in particular
     "answer": "the next utterance",       # or "ans" (optional)
     "ans_spk": 2, "ans_adr": 1}           # its speaker and addressee (with the answer)

Output: JSON Lines for ``playground eval-next-speaker`` (docs/next-speaker-corpus.md), one message
per line; each input window becomes one conversation named ``<prefix><line>``; speaker ids become
``speaker1``, ``speaker2``...; an addressee of -1 (or ``null``, ``"-"``, ``""``) becomes ``all``,
and so does an utterance addressed to its own speaker (counted in the summary).

Usage::

    python scripts/convert_ubuntu_mpc.py ubuntu_data_test.json -o ubuntu_test.jsonl
    playground eval-next-speaker ubuntu_test.jsonl --limit 500

Standard library only. Exits 1 with ``FILE, line N: FIELD: what is wrong`` on a bad window.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

NO_ADDRESSEE = (-1, None, "-", "", "all")


class ConversionError(Exception):
    """A window of the input cannot be converted; the message names the file, line and field."""


def _windows(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, window) for every window of a JSON Lines file or a JSON array file."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConversionError(f"{path}: cannot read it ({exc})") from exc
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise ConversionError(f"{path}: not valid JSON ({exc})") from exc
        # A JSON array has no useful line numbers: windows are numbered from 1.
        yield from enumerate(data, start=1)
        return
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            yield number, json.loads(raw)
        except ValueError as exc:
            raise ConversionError(f"{path}, line {number}: not valid JSON ({exc})") from exc


def _name(value: Any) -> str:
    return f"speaker{value}" if isinstance(value, int) else str(value).strip()


def _addressee(speaker: Any, addressee: Any) -> tuple[str, bool]:
    """The output addressee and whether it was a self-address turned into ``all``."""
    if addressee in NO_ADDRESSEE:
        return "all", False
    if _name(addressee) == _name(speaker):
        return "all", True
    return _name(addressee), False


def convert_window(where: str, window: Any, conversation: str) -> tuple[list[dict[str, str]], int]:
    """The messages of one window and how many self-addresses became ``all``.

    Raises:
        ConversionError: a field is missing or its lists do not line up.
    """
    if not isinstance(window, dict):
        raise ConversionError(f"{where}: must be a JSON object")
    texts = window.get("context", window.get("ctx"))
    speakers = window.get("ctx_spk")
    addressees = window.get("ctx_adr")
    for field, value in (("context", texts), ("ctx_spk", speakers), ("ctx_adr", addressees)):
        if not isinstance(value, list):
            raise ConversionError(f"{where}: {field}: missing or not a list")
    assert isinstance(texts, list)
    assert isinstance(speakers, list)
    assert isinstance(addressees, list)
    if not len(texts) == len(speakers) == len(addressees):
        raise ConversionError(
            f"{where}: ctx_spk/ctx_adr: {len(speakers)} speakers and {len(addressees)} addressees"
            f" for {len(texts)} utterances"
        )
    turns = list(zip(texts, speakers, addressees, strict=True))
    answer = window.get("answer", window.get("ans"))
    if answer is not None:
        if "ans_spk" not in window:
            raise ConversionError(f"{where}: ans_spk: missing (the answer has no speaker)")
        turns.append((answer, window["ans_spk"], window.get("ans_adr", -1)))
    out: list[dict[str, str]] = []
    selfs = 0
    for index, (text, speaker, addressee) in enumerate(turns):
        if not isinstance(text, str):
            raise ConversionError(f"{where}: context[{index}]: not a string")
        if speaker in NO_ADDRESSEE or isinstance(speaker, (list, dict, bool)):
            raise ConversionError(f"{where}: ctx_spk[{index}]: not a speaker id ({speaker!r})")
        to, was_self = _addressee(speaker, addressee)
        selfs += was_self
        out.append(
            {"conversation": conversation, "speaker": _name(speaker), "text": text, "addressee": to}
        )
    return out, selfs


def convert(paths: list[Path], out: TextIO, *, prefix: str | None, limit: int | None) -> str:
    """Write every window of ``paths`` to ``out``; return a one-line summary.

    Raises:
        ConversionError: a file cannot be read or a window is bad.
    """
    windows = messages = selfs = 0
    for path in paths:
        stem = f"{path.stem}-" if prefix is None else prefix
        for number, window in _windows(path):
            if limit is not None and windows >= limit:
                break
            rows, n_self = convert_window(f"{path}, line {number}", window, f"{stem}{number}")
            for row in rows:
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
            windows += 1
            messages += len(rows)
            selfs += n_self
    summary = f"converted {windows} windows, {messages} messages"
    if selfs:
        summary += f"; {selfs} messages addressed to their own speaker were written as 'all'"
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("inputs", nargs="+", type=Path, metavar="UBUNTU.json")
    parser.add_argument("-o", "--output", type=Path, help="output file (default: stdout)")
    parser.add_argument(
        "--prefix", help="conversation id prefix (default: the input file's name and a dash)"
    )
    parser.add_argument("--limit", type=int, metavar="N", help="convert at most N windows")
    args = parser.parse_args(argv)
    if args.limit is not None and args.limit < 1:
        parser.error("--limit must be at least 1")
    tmp = args.output.with_name(args.output.name + ".part") if args.output else None
    try:
        if tmp is None:
            summary = convert(args.inputs, sys.stdout, prefix=args.prefix, limit=args.limit)
        else:
            with tmp.open("w", encoding="utf-8") as handle:
                summary = convert(args.inputs, handle, prefix=args.prefix, limit=args.limit)
            tmp.replace(args.output)  # no half-written corpus under the real name
    except (ConversionError, OSError) as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(summary, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
