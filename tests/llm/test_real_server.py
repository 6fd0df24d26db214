"""Every LLM path, end to end, against a real server nobody here wrote: llama-cpp-python's
OpenAI-compatible server with SmolLM2-135M-Instruct on 127.0.0.1 (testbed/real_server.py).

The commands run as a user runs them, in a process of their own. What is asserted must hold with
any model: exit 0, messages posted, every thought scored with a recorded method, the negotiated
profile recorded, no traceback; never the quality of a 135M model's text.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from playground import errors
from playground.cognition import utterance
from playground.cognition.llm import LLMCognition
from playground.llm.client import ChatClient
from playground.settings import LLMSettings
from testbed.real_server import MODEL_ALIAS, llama_cpp_server
from tests.support import minds

REPO = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.real_server,
    pytest.mark.xdist_group("real_server"),  # one server, one worker (./test: --dist loadgroup)
    pytest.mark.timeout(1200),
]


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with llama_cpp_server(log=log) as url:
        yield url


def playground(*argv: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    proc = subprocess.run(
        [sys.executable, "-m", "playground", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-3000:]
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
    return proc


def model_flags(url: str) -> list[str]:
    return ["--engine", "openai", "--base-url", url, "--model", MODEL_ALIAS]


def rows(db: Path, sql: str, *args: object) -> list[sqlite3.Row]:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return list(con.execute(sql, args))
    finally:
        con.close()


def assert_session_sound(db: Path, session_id: str) -> dict:
    """Agent messages posted, every evaluated thought scored with its method, the profile kept."""
    (s,) = rows(db, "SELECT * FROM sessions WHERE id = ?", session_id)
    assert s["status"] == "finished", (s["status"], s["end_reason"])
    profile = json.loads(s["server_profile"])
    # llama-cpp-python has no json_schema response format: it must have been negotiated away.
    assert profile["structured"] in ("json_object_schema", "json_object", "text"), profile
    assert profile["learned"], profile
    agents = rows(
        db,
        "SELECT * FROM messages WHERE session_id = ? AND speaker_kind = 'ai' AND id > 1",
        session_id,
    )
    assert agents, "no agent spoke after the icebreaker"
    for m in agents:
        assert m["text"].strip(), m["text"]
        assert not m["text"].lstrip().startswith("{"), m["text"]
        assert m["text"].strip() not in ("...", "…"), m["text"]
    thoughts = rows(db, "SELECT * FROM thoughts WHERE session_id = ?", session_id)
    assert thoughts
    for t in thoughts:
        assert t["score"] is not None, dict(t)
        assert t["method"] in ("logprobs", "sampled", "parsed"), dict(t)
        assert t["text"].strip() not in ("", "...", "…"), dict(t)
    return dict(s)


def test_simulate_three_agents_runs_and_scores_every_thought(real_server: str, tmp_path: Path):
    # The chattiest preset: a 135M model's motivation ratings stay under the thresholds, so its
    # agents speak through System-1 replies (drawn with probability 0.7 here).
    db = tmp_path / "s.db"
    proc = playground(
        "simulate", *model_flags(real_server), "--agents", "3", "--turns", "4",
        "--preset", "non-stop-chatter", "--evaluation-mode", "batched", "--seed", "3",
        "--db", str(db),
    )  # fmt: skip
    session_id = proc.stdout.strip().splitlines()[-1]
    s = assert_session_sound(db, session_id)
    # The negotiation was said once on stderr, and is shown by `show`.
    assert proc.stderr.count("server has no json_schema") == 1, proc.stderr
    shown = playground("show", session_id, "--db", str(db)).stdout
    assert "Server: json_object" in shown
    assert s["calls"] > 0
    # The automatic judge on the same session (each statement's rating from its logprobs).
    playground("judge", session_id, *model_flags(real_server), "--db", str(db))
    scores = rows(db, "SELECT * FROM judge_scores WHERE session_id = ?", session_id)
    assert len(scores) == 7
    assert all(s["method"] for s in scores)


def test_a_tiny_experiment_runs_its_conditions(real_server: str, tmp_path: Path):
    # The experiment machinery with the baselines (the Inner Thoughts agent is covered above; a
    # 135M model's Inner Thoughts agents sit out the silent steps, minutes on 2 cores).
    db = tmp_path / "x.db"
    playground(
        "experiment", *model_flags(real_server), "--conditions", "next-speaker,reactive",
        "--conversations", "1", "--agents", "2", "--turns", "3", "--db", str(db),
        "--no-progress",
    )  # fmt: skip
    sessions = rows(db, "SELECT id, condition, status, server_profile FROM sessions")
    assert {s["condition"] for s in sessions} == {"next-speaker", "reactive"}
    assert all(s["status"] == "finished" and s["server_profile"] for s in sessions)
    msgs = rows(db, "SELECT * FROM messages WHERE speaker_kind = 'ai' AND id > 1")
    assert msgs


def test_a_tiny_storm_run_and_its_judge(real_server: str, tmp_path: Path):
    # The plain assistant: the Inner Thoughts agent is covered above, the simulated user here.
    db = tmp_path / "storm.db"
    playground(
        "storm", *model_flags(real_server), "--profiles", "1", "--turns", "2",
        "--assistant", "plain", "--db", str(db), "--no-progress",
    )  # fmt: skip
    dialogues = rows(db, "SELECT * FROM storm_dialogues")
    assert dialogues
    states = rows(db, "SELECT * FROM hidden_states")
    assert states
    for m in rows(db, "SELECT text FROM messages"):
        assert not m["text"].lstrip().startswith("{"), m["text"]


@pytest.mark.asyncio
async def test_an_articulation_carries_stop_sequences_and_says_no_scaffolding(real_server: str):
    # One short request, in this process: llama-cpp-python takes `stop` (nothing is learned)
    # and what is said has no scaffolding left; a 135M model may also leave nothing to say,
    # which is an unusable answer, never a failure.
    settings = LLMSettings(base_url=real_server, api_key="none", model=MODEL_ALIAS)
    raw = openai.AsyncOpenAI(base_url=real_server, api_key="none", max_retries=0)
    mind = LLMCognition(ChatClient(raw, settings, seed=9))
    ctx = minds.chat_context()
    try:
        said = await mind.articulate(
            ctx, minds.articulation("The gym is my plan, maybe beer after.")
        )
    except errors.LLMUnusableText:
        said = None
    finally:
        await mind.client.close()
    assert mind.client.profile.stop is True
    assert mind.client.profile.learned == []  # stop was not refused
    if said is not None:
        assert said.strip()
        assert utterance.scaffolding_start(said, names=ctx.participants) is None, said


def test_next_speaker_evaluation(real_server: str):
    out = playground(
        "eval-next-speaker", str(REPO / "tests" / "data" / "next_speaker_corpus.jsonl"),
        *model_flags(real_server), "--limit", "3", "--format", "json",
    ).stdout  # fmt: skip
    assert json.loads(out)
