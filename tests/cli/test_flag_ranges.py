"""Every numeric flag of every subcommand has a range, checked while the command line is parsed.

A value outside it (huge, negative, NaN, infinite) is one ``error:`` line naming the flag, the
value and the range, with argparse's exit code 2, before anything runs: no database is made and
no model loads. ``simulate --seed 99999999999999999999999`` used to end in an OverflowError
traceback from SQLite.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from playground.cli import flag_ranges
from playground.cli import main as cli
from tests.support.cli import run_cli, run_process

REPO = Path(__file__).resolve().parents[2]
ENV = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
HUGE = "99999999999999999999999"
#: Positional arguments a command needs besides the flag under test.
POSITIONALS = {
    ("show",): ["x"],
    ("import",): ["x.jsonl"],
    ("merge",): ["out.db", "shard.db"],
    ("eval-next-speaker",): ["corpus.jsonl"],
    ("study", "resume"): ["plan-x"],
}
#: Where a command would write, for the commands without ``--db``.
WHERE = {
    ("merge",): [],
    ("eval-next-speaker",): [],
    ("profiles", "generate"): ["--out", "TMP"],
}
#: The numeric flags, by command: a new one must be added here, with its range.
EXPECTED = {
    ("simulate",): {"--agents", "--turns", "--seed", "--timeout", "--max-retries", "--concurrency",
                    "--max-silent-steps", "--llm-concurrency", "--rating-samples", "--busy-timeout"},
    ("report",): {"--high-threshold", "--goal-threshold", "--self-tolerance", "--ssa-lambda",
                  "--min-pairs", "--min-sessions"},
    ("experiment",): {"--conversations", "--agents", "--turns", "--seed", "--concurrency",
                      "--timeout", "--max-retries", "--llm-concurrency", "--rating-samples",
                      "--busy-timeout"},
    ("features",): {"--late-k", "--embed-batch", "--busy-timeout"},
    ("judge",): {"--plan", "--timeout", "--max-retries", "--llm-concurrency", "--rating-samples",
                 "--concurrency", "--busy-timeout"},
    ("storm",): {"--difficulty", "--turns", "--profiles", "--user-speak-probability", "--seed",
                 "--concurrency", "--timeout", "--max-retries", "--llm-concurrency",
                 "--rating-samples", "--busy-timeout"},
    ("storm-judge",): {"--timeout", "--max-retries", "--llm-concurrency", "--rating-samples",
                       "--concurrency", "--busy-timeout"},
    ("profiles", "generate"): {"--n", "--seed", "--difficulty", "--timeout", "--max-retries"},
    ("merge",): {"--busy-timeout"},
    ("eval-next-speaker",): {"--timeout", "--max-retries", "--llm-concurrency", "--rating-samples",
                             "--limit", "--concurrency"},
    ("serve",): {"--humans", "--agents", "--port", "--seed", "--timeout", "--max-retries",
                 "--llm-concurrency", "--rating-samples", "--busy-timeout", "--minutes"},
    ("study", "new"): {"--humans", "--group", "--seed", "--minutes", "--review-minutes", "--port",
                       "--timeout", "--max-retries", "--llm-concurrency", "--rating-samples",
                       "--busy-timeout"},
    ("study", "resume"): {"--review-minutes", "--port", "--timeout", "--max-retries",
                          "--llm-concurrency", "--rating-samples", "--busy-timeout"},
    ("study", "list"): {"--busy-timeout"},
    ("rate", "plan", "new"): {"--raters", "--items", "--seed", "--busy-timeout"},
    ("rate", "serve"): {"--cps", "--port", "--busy-timeout"},
    ("study-report",): {"--timeout", "--max-retries", "--llm-concurrency", "--rating-samples",
                        "--concurrency"},
}  # fmt: skip


def _parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _numeric() -> list[tuple[tuple[str, ...], argparse.Action]]:
    """Every flag whose value is a number: typed ``int`` or ``float``, or by a range."""
    return [
        (path, action)
        for path, parser in _parsers(cli.build_parser())
        for action in parser._actions
        if action.option_strings
        and (action.type in (int, float) or hasattr(action.type, "describe"))
    ]


FLAGS = [
    pytest.param(path, flag, id=" ".join((*path, flag)))
    for path, flags in EXPECTED.items()
    for flag in sorted(flags)
]


def test_every_numeric_flag_has_a_range_and_is_listed_here():
    found: dict[tuple[str, ...], set[str]] = {}
    for path, action in _numeric():
        found.setdefault(path, set()).add(action.option_strings[-1])
        assert action.type not in (int, float), f"{' '.join(path)} {action.option_strings}"
    assert found == EXPECTED


def _action(path: tuple[str, ...], flag: str) -> argparse.Action:
    return next(a for p, a in _numeric() if p == path and flag in a.option_strings)


def _number(action: argparse.Action) -> flag_ranges.Number:
    """The flag's range (its argparse ``type=``)."""
    assert isinstance(action.type, flag_ranges.Number), action
    return action.type


def _below(action: argparse.Action) -> str:
    """A value just under the flag's range."""
    lo = _number(action).lo
    if _number(action).above:
        return str(lo)
    return str(int(lo) - 1)


@pytest.mark.parametrize(("path", "flag"), FLAGS)
def test_a_value_out_of_range_is_one_line_naming_the_flag_and_exit_2(tmp_path, path, flag):
    action = _action(path, flag)
    db = tmp_path / "never.db"
    for value in (HUGE, "-" + HUGE, "nan", "inf", "-inf", _below(action)):
        argv = [*path, *POSITIONALS.get(path, []), *WHERE.get(path, ["--db", str(db)])]
        argv = [a.replace("TMP", str(tmp_path)) for a in argv] + [f"{flag}={value}"]
        code, out, err = run_cli(*argv)
        lines = err.strip().splitlines()
        assert (code, out) == (2, ""), (argv, err)
        assert len(lines) == 1, (argv, lines)
        assert lines[0].startswith(f"error: {flag}: "), (argv, lines)
        assert value in lines[0], lines[0]
        assert "Traceback" not in err
    assert not db.exists()
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".toml"]


@pytest.mark.parametrize(("path", "flag"), FLAGS)
def test_each_range_takes_its_bounds_and_its_default(path, flag):
    kind = _number(_action(path, flag))
    lo, hi = kind.lo, kind.hi
    if not kind.above:
        assert kind(str(lo)) == lo
    if not kind.below:
        assert kind(str(hi)) == hi
    default = _action(path, flag).default
    if default is not None:
        value = kind(str(default))
        assert not isinstance(value, str), value  # a word (auto) is no default of a range
        assert kind.contains(value)


_cli = run_process


def test_a_huge_seed_is_refused_by_name_before_anything_runs(tmp_path):
    db = tmp_path / "s.db"
    proc = _cli("simulate", "--engine", "offline", "--seed", HUGE, "--db", str(db))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"error: --seed: {HUGE} is out of range (0 … 2**63-1)\n"
    assert not db.exists()
    proc = _cli("storm", "--engine", "offline", "--seed", "-1", "--db", str(db))
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "error: --seed: -1 is out of range (0 … 2**63-1)\n"


def test_the_largest_seed_runs_and_is_stored(tmp_path):
    db = tmp_path / "s.db"
    top = str(2**63 - 1)
    proc = _cli("simulate", "--engine", "offline", "--agents", "2", "--turns", "2",
                "--seed", top, "--db", str(db), "--quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("SELECT seed FROM sessions").fetchall() == [(2**63 - 1,)]
    finally:
        conn.close()
