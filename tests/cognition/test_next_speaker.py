"""The next-speaker predictor (offline and LLM), `playground eval-next-speaker` and the Ubuntu
corpus converter.

LLM predictions go through the real openai client to the loopback server. Accuracy is checked on
a hand-made corpus whose every prediction and gold label is worked out in the comments.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from playground import domain, factory
from playground.cognition import next_speaker
from playground.cognition.offline.next_speaker import predict_offline
from playground.experiments.next_speaker_corpus import CorpusError, items, read_corpus
from playground.llm.responses import TokenLogprob
from testbed.llm_server import FakeLLMServer
from tests.conftest import server_settings
from tests.support.cli import openai_flags
from tests.support.cli import run_cli as run

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_CORPUS = ROOT / "tests" / "data" / "next_speaker_corpus.jsonl"
CONVERTER = ROOT / "scripts" / "convert_ubuntu_mpc.py"


def msgs(*turns: tuple[str, str]) -> list[domain.Message]:
    return [
        domain.Message(id=i, speaker=who, text=text, step=i, at="", kind="human")
        for i, (who, text) in enumerate(turns, start=1)
    ]


def softmax(logits: dict[str, float]) -> dict[str, float]:
    total = sum(math.exp(v) for v in logits.values())
    return {k: math.exp(v) / total for k, v in logits.items()}


# -- labels and the offline heuristic ----------------------------------------------------------


def test_labels_are_each_name_once_then_anyone():
    assert next_speaker.labels(["Ann", "Ben", "ann", "Cal"]) == ["Ann", "Ben", "Cal", "anyone"]


def test_offline_gives_the_turn_to_the_participant_the_message_calls_on():
    recent = msgs(("Ann", "I painted the fence today."), ("Ben", "Looks great. Cal, did you help?"))
    pred = predict_offline(recent, ["Ann", "Ben", "Cal"])
    # By the documented rule: Ann answered by Ben and spoke earlier 1.0 + 0.5; Ben just spoke
    # -1.5; Cal named 2.0 and called on with a question 1.5; anyone 2.0 - 3.0 (someone called on).
    expected = softmax({"Ann": 1.5, "Ben": -1.5, "Cal": 3.5, "anyone": -1.0})
    assert pred.predicted == "Cal"
    assert pred.probabilities == pytest.approx(expected, abs=1e-6)
    assert pred.method == "offline-heuristic"
    assert pred.origin == "offline engine"
    assert pred.message_id == 2


def test_offline_predicts_anyone_after_a_statement_and_more_surely_after_an_open_question():
    people = ["Ann", "Ben", "Cal"]
    statement = predict_offline(
        msgs(("Ann", "Morning all."), ("Ben", "The river path is flooded again.")), people
    )
    question = predict_offline(
        msgs(("Ann", "Morning all."), ("Ben", "Is the river path flooded again?")), people
    )
    assert statement.predicted == question.predicted == "anyone"
    assert question.probabilities["anyone"] > statement.probabilities["anyone"]
    # The latest speaker is the least likely; the one Ben answered beats the silent Cal.
    for pred in (statement, question):
        assert min(pred.probabilities, key=pred.probabilities.__getitem__) == "Ben"
        assert pred.probabilities["Ann"] > pred.probabilities["Cal"]
        assert sum(pred.probabilities.values()) == pytest.approx(1.0, abs=1e-5)


def test_offline_only_reads_the_last_five_messages():
    people = ["Ann", "Ben", "Cal", "Dee"]
    early = [("Dee", "Hello there.")]
    later = [("Ann", "a"), ("Ben", "b"), ("Ann", "c"), ("Ben", "d"), ("Ann", "e")]
    with_dee = predict_offline(msgs(*early, *later), people)
    without = predict_offline(msgs(*later), people)
    assert with_dee.probabilities == without.probabilities
    assert with_dee.probabilities["Dee"] == with_dee.probabilities["Cal"]  # Dee is out of view


def test_offline_is_deterministic_and_needs_a_message():
    recent = msgs(("Ann", "Ben, tea or coffee?"))
    assert predict_offline(recent, ["Ann", "Ben"]) == predict_offline(recent, ["Ann", "Ben"])
    with pytest.raises(ValueError, match="at least one message"):
        predict_offline([], ["Ann"])


# -- reading probabilities from logprobs -------------------------------------------------------


def test_the_first_answer_token_and_its_alternatives_become_label_probabilities():
    tokens = [
        TokenLogprob(t, -0.01, [])
        for t in ['{"', "next", "_speaker", '":', ' "']  # the key: no alternatives needed
    ]
    first = TokenLogprob(
        "Al",
        math.log(0.5),
        [("Al", math.log(0.5)), ("Bob", math.log(0.3)), (" any", math.log(0.1)), ("xyz", -2.3)],
    )
    tokens += [first, TokenLogprob("ice", -0.01, []), TokenLogprob('"}', -0.01, [])]
    dist = next_speaker.distribution_from_tokens(
        tokens, ["Alice", "Alan", "Bob", "anyone"], "Alice"
    )
    # The sampled "Al" went on to "Alice": its 0.5 is Alice's; "Bob" 0.3; " any" 0.1 → anyone;
    # "xyz" starts no label and is dropped. Normalised over 0.9.
    assert dist == pytest.approx(
        {"Alice": 0.5 / 0.9, "Alan": 0.0, "Bob": 0.3 / 0.9, "anyone": 0.1 / 0.9}, abs=1e-6
    )


def test_no_answer_value_in_the_tokens_gives_no_distribution():
    tokens = [TokenLogprob("Bob", -0.1, [("Bob", -0.1), ("Ann", -3.0)])]
    assert next_speaker.distribution_from_tokens(tokens, ["Ann", "Bob", "anyone"], "Bob") is None


# -- the LLM predictor through the real client -------------------------------------------------


class NameAlternativesServer(FakeLLMServer):
    """The loopback server, with chosen top alternatives for one answer token (the generic server
    gives alternatives only for digits)."""

    def __init__(self, token: str, top: list[tuple[str, float]], **kw: Any) -> None:
        super().__init__(**kw)
        self.token, self.top = token, top

    # The base's is a static method; this one reads the chosen alternatives from the server.
    def _token_logprobs(self, content: str, top_n: int) -> list[dict]:  # type: ignore[override]
        entries = FakeLLMServer._token_logprobs(content, top_n)
        for entry in entries:
            if entry["token"] == self.token:
                entry["logprob"] = self.top[0][1]
                entry["top_logprobs"] = [
                    {"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in self.top
                ]
        return entries


SEVEN = msgs(
    ("Alice", "First, an old message."),
    ("Bob", "Second, also old."),
    ("Alan", "Third."),
    ("Alice", "Fourth."),
    ("Bob", "Fifth."),
    ("Alan", "Sixth."),
    ("Alice", "Bob, what did the mechanic say?"),
)


async def _predict(srv: FakeLLMServer, recent=SEVEN, people=("Alice", "Bob", "Alan")):
    client = factory.make_chat_client(server_settings(srv))
    try:
        return await next_speaker.predict_with_llm(client, recent, list(people))
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_llm_prediction_reads_its_probabilities_from_the_answer_logprobs():
    top = [
        ("Bob", math.log(0.6)),
        ("Al", math.log(0.25)),
        ("any", math.log(0.1)),
        (" the", math.log(0.05)),
    ]
    with NameAlternativesServer("Bob", top) as srv:
        srv.set_responder(lambda body: '{"next_speaker": "Bob"}')
        pred = await _predict(srv)
        request = srv.requests[-1]
    # "Al" starts both Alice and Alan: its 0.25 is split; " the" starts no label.
    assert pred.method == "logprobs"
    assert pred.predicted == "Bob"
    assert pred.probabilities == pytest.approx(
        {"Alice": 0.125 / 0.95, "Bob": 0.6 / 0.95, "Alan": 0.125 / 0.95, "anyone": 0.1 / 0.95},
        abs=1e-6,
    )
    assert pred.message_id == 7
    assert pred.origin == "fake-model"
    # The request: top-5 logprobs, the labels as the schema's enum, the last 5 messages only.
    assert request["logprobs"] is True
    assert request["top_logprobs"] == 5
    schema = request["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["next_speaker"]["enum"] == ["Alice", "Bob", "Alan", "anyone"]
    prompt = request["messages"][-1]["content"]
    assert "3 participants: Alice, Bob, Alan" in prompt
    assert "Third." in prompt
    assert "Bob, what did the mechanic say?" in prompt
    assert "Second, also old." not in prompt
    assert "First, an old message." not in prompt


@pytest.mark.asyncio
async def test_llm_prediction_without_logprobs_puts_everything_on_the_parsed_answer():
    with FakeLLMServer(logprobs=False) as srv:
        srv.set_responder(lambda body: '{"next_speaker": "@bob"}')
        pred = await _predict(srv)
    assert pred.method == "parsed"
    assert pred.predicted == "Bob"  # case and a leading @ do not matter
    assert pred.probabilities == {"Alice": 0.0, "Bob": 1.0, "Alan": 0.0, "anyone": 0.0}


@pytest.mark.asyncio
async def test_llm_answer_naming_no_participant_counts_as_anyone():
    with FakeLLMServer() as srv:
        srv.set_responder(lambda body: '{"next_speaker": "the waiter"}')
        pred = await _predict(srv)
    assert pred.predicted == "anyone"
    assert pred.method == "logprobs"
    assert max(pred.probabilities, key=pred.probabilities.__getitem__) == "anyone"
    assert sum(pred.probabilities.values()) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.asyncio
async def test_llm_prediction_from_the_generic_server_is_one_of_the_labels():
    with FakeLLMServer() as srv:  # no responder: the server fills the schema, enum included
        pred = await _predict(srv)
    assert pred.predicted in {"Alice", "Bob", "Alan", "anyone"}
    assert pred.probabilities[pred.predicted] == max(pred.probabilities.values())


# -- the corpus ------------------------------------------------------------------------------

# Hand-made: every prediction worked out below.
#   a1 Ann→all  "I finally finished..."   self,  gold anyone; offline: no name → anyone      ✓
#   a2 Ben→Ann  "Nice work, Ann. Did..."   alloc, gold Ann;    offline: Ann called on → Ann  ✓
#   a3 Ann→Ben  "Not yet. Ben, do you..."  alloc, gold Ben;    offline: Ben                  ✓
#                 (Cal spoke next: an allocated turn taken by someone else)
#   a4 Cal→all  "Green would look..."      self,  gold anyone; offline: anyone               ✓
#   b1 Dee→all  "Has anyone seen...?"      self,  gold anyone; offline: open question        ✓
#   b2 Eve→Dee  "Yes! I walked..."         alloc, gold Dee;    offline: no name → anyone     ✗
#   b3 Dee→Eve  "Was it busy?"             alloc, gold Eve;    offline: no name → anyone     ✗
#   (b4 is the last message: nothing to predict after it)
# Offline: self 3/3, alloc 2/4, overall 5/7. Against who spoke next, alloc: a2 only, 1/4.
# Random guess: conversation a offers 4 labels, b offers 3: overall (4/4 + 3/3)/7 = 2/7;
# self (1/4 + 1/4 + 1/3)/3 = 0.277778; alloc (1/4 + 1/4 + 1/3 + 1/3)/4 = 0.291667.
TINY = [
    ("a", "Ann", "I finally finished the garden fence.", "all"),
    ("a", "Ben", "Nice work, Ann. Did you paint it?", "Ann"),
    ("a", "Ann", "Not yet. Ben, do you still have that green paint?", "Ben"),
    ("a", "Cal", "Green would look great against the hedge.", "all"),
    ("b", "Dee", "Has anyone seen the new bridge downtown?", "all"),
    ("a", "Ben", "I have half a tin left.", "all"),  # interleaved: still conversation a
    ("b", "Eve", "Yes! I walked across it yesterday.", "Dee"),
    ("b", "Dee", "Was it busy?", "eve"),  # addressee matched case-insensitively
    ("b", "Eve", "Only a little.", "all"),
]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    lines = [
        json.dumps({"conversation": c, "speaker": s, "text": t, "addressee": a})
        for c, s, t, a in TINY
    ]
    path.write_text("\n".join(lines[:4]) + "\n\n" + "\n".join(lines[4:]) + "\n")  # a blank line
    return path


def test_corpus_items_carry_the_papers_labels(tiny: Path):
    convs = read_corpus(tiny)
    assert [c.id for c in convs] == ["a", "b"]
    assert convs[0].participants == ("Ann", "Ben", "Cal")
    todo = items(convs)
    assert [(i.conversation, i.kind, i.gold, i.next_speaker) for i in todo] == [
        ("a", "self", "anyone", "Ben"),
        ("a", "allocated", "Ann", "Ann"),
        ("a", "allocated", "Ben", "Cal"),
        ("a", "self", "anyone", "Ben"),
        ("b", "self", "anyone", "Eve"),
        ("b", "allocated", "Dee", "Dee"),
        ("b", "allocated", "Eve", "Eve"),
    ]
    assert [i.line for i in todo] == [1, 2, 3, 4, 6, 8, 9]  # the line of the message just read
    assert len(items(convs, limit=3)) == 3


def test_offline_accuracy_on_the_hand_made_corpus(tiny: Path):
    code, out, err = run("eval-next-speaker", str(tiny), "--engine", "offline", "--format", "json")
    assert code == 0, err
    got = json.loads(out)
    assert got["predictions"] == 7
    assert got["conversations"] == 2
    assert (got["overall"]["correct"], got["overall"]["total"]) == (5, 7)
    assert (got["self"]["correct"], got["self"]["total"]) == (3, 3)
    assert (got["allocated"]["correct"], got["allocated"]["total"]) == (2, 4)
    assert got["overall"]["accuracy"] == pytest.approx(5 / 7)
    assert got["overall"]["random"] == pytest.approx(2 / 7)
    assert got["self"]["random"] == pytest.approx((1 / 4 + 1 / 4 + 1 / 3) / 3)
    assert got["allocated"]["random"] == pytest.approx((1 / 4 + 1 / 4 + 1 / 3 + 1 / 3) / 4)
    assert got["overall"]["always_anyone"] == pytest.approx(3 / 7)
    assert got["allocated_taken_by_other"] == 1
    assert got["allocated_vs_next_speaker"]["correct"] == 1
    assert got["methods"] == {"offline-heuristic": 7}
    assert [i["correct"] for i in got["items"]] == [True, True, True, True, True, False, False]
    assert got["paper"][0] == {
        "model": "GPT-4o (speaker name)",
        "overall": 0.435,
        "self": 0.121,
        "allocated": 0.697,
    }


def test_table_shows_the_papers_layout_baselines_and_reference_rows(tiny: Path):
    code, out, _ = run("eval-next-speaker", str(tiny), "--engine", "offline")
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("#"))
    assert header.split() == ["#", "Predictor", "Overall", "Self", "Alloc"]
    ours = next(line for line in out.splitlines() if line.startswith("1 "))
    assert ours.split()[-6:] == ["0.714", "(5/7)", "1.000", "(3/3)", "0.500", "(2/4)"]
    rand = next(line for line in out.splitlines() if line.startswith("2 "))
    assert rand.split()[-3:] == ["0.286", "0.278", "0.292"]
    assert "The paper's Table 1" in out
    gpt4o = next(line for line in out.splitlines() if "paper: GPT-4o" in line)
    assert gpt4o.split()[-3:] == ["0.435", "0.121", "0.697"]
    tuned = next(line for line in out.splitlines() if "paper: fine-tuned" in line)
    assert tuned.split()[-3:] == ["0.810", "0.853", "0.765"]
    assert next(line for line in out.splitlines() if "paper: random" in line).split()[-3] == "0.127"
    assert "1 of the 4 allocated turns were taken by someone other than the addressee" in out


def test_limit_caps_the_predictions(tiny: Path):
    code, out, _ = run(
        "eval-next-speaker", str(tiny), "--engine", "offline", "--limit", "5", "--format", "json"
    )
    assert code == 0
    got = json.loads(out)
    assert (got["overall"]["correct"], got["overall"]["total"]) == (5, 5)
    assert got["self"]["total"] == 3
    assert got["allocated"]["total"] == 2
    code, _, err = run("eval-next-speaker", str(tiny), "--engine", "offline", "--limit", "0")
    assert code == 2
    assert "--limit: 0 is out of range (1 … 1000000)" in err


def _answer_partner(body: dict) -> str | None:
    """Answer the speaker of the message before the last one shown, else anyone."""
    if body.get("max_tokens") == 1:
        return None
    lines = re.findall(r"^- ([^:]+): ", body["messages"][-1]["content"], flags=re.M)
    return json.dumps({"next_speaker": lines[-2] if len(lines) > 1 else "anyone"})


def test_llm_accuracy_on_the_hand_made_corpus_with_concurrent_calls(tiny: Path):
    # The responder answers the previous speaker: a1 anyone ✓, a2 Ann ✓, a3 Ben ✓, a4 Ann ✗
    # (gold anyone), b1 anyone ✓, b2 Dee ✓, b3 Eve ✓: self 2/3, alloc 4/4, overall 6/7.
    lock, met = threading.Lock(), threading.Barrier(2)
    calls: list[int] = []
    together: list[bool] = []

    def responder(body: dict) -> str | None:
        answer = _answer_partner(body)
        if answer is None:
            return None
        with lock:
            calls.append(1)
            first_two = len(calls) <= 2
        if first_two:  # two predictions must be in flight at once to pass the barrier
            try:
                met.wait(timeout=20)
                together.append(True)
            except threading.BrokenBarrierError:
                together.append(False)
        return answer

    with FakeLLMServer() as srv:
        srv.set_responder(responder)
        code, out, err = run(
            "eval-next-speaker", str(tiny), *openai_flags(srv.base_url), "--format", "json"
        )
        chat_calls = srv.chat_calls
    assert code == 0, err
    got = json.loads(out)
    assert (got["self"]["correct"], got["self"]["total"]) == (2, 3)
    assert (got["allocated"]["correct"], got["allocated"]["total"]) == (4, 4)
    assert (got["overall"]["correct"], got["overall"]["total"]) == (6, 7)
    assert got["methods"] == {"logprobs": 7}
    assert got["model"] == "fake-model"
    assert chat_calls == 8
    assert got["usage"]["calls"] == 8  # the logprobs probe, then one per prediction
    assert together == [True, True]


def test_shipped_corpus_reads_and_mixes_both_turn_types():
    convs = read_corpus(SHIPPED_CORPUS)
    todo = items(convs)
    assert 4 <= len(convs) <= 6
    assert 60 <= sum(len(c.messages) for c in convs) <= 120
    assert all(3 <= len(c.participants) <= 5 for c in convs)
    kinds = {i.kind for i in todo}
    assert kinds == {"self", "allocated"}


# -- errors ------------------------------------------------------------------------------------

GOOD = '{"conversation": "c", "speaker": "Ann", "text": "Hi", "addressee": "all"}'


@pytest.mark.parametrize(
    ("second_line", "field", "says"),
    [
        ("{not json", "", "not valid JSON"),
        ('["c", "Ann"]', "", "must be a JSON object"),
        ('{"conversation": "c", "text": "Hi", "addressee": "all"}', "speaker", "missing"),
        (
            '{"conversation": "c", "speaker": "Ben", "text": "Hi", "addressee": 3}',
            "addressee",
            "must be a string",
        ),
        (
            '{"conversation": "c", "speaker": "Ben", "text": "Hi", "addressee": " "}',
            "addressee",
            "must not be empty",
        ),
        (
            '{"conversation": "c", "speaker": "Ben", "text": 5, "addressee": "all"}',
            "text",
            "must be a string",
        ),
        (
            '{"conversation": "c", "speaker": "Ben", "text": "Me?", "addressee": "ben"}',
            "addressee",
            "is the speaker",
        ),
    ],
    ids=[
        "bad-json",
        "not-object",
        "no-speaker",
        "addressee-number",
        "addressee-empty",
        "text-number",
        "self-addressed",
    ],
)
def test_a_bad_corpus_line_is_named_by_file_line_and_field(
    tmp_path: Path, second_line, field, says
):
    path = tmp_path / "bad.jsonl"
    path.write_text(GOOD + "\n" + second_line + "\n")
    with pytest.raises(CorpusError) as caught:
        read_corpus(path)
    assert (caught.value.line, caught.value.field) == (2, field)
    assert str(caught.value).startswith(f"{path}, line 2: {field + ': ' if field else ''}")
    assert says in str(caught.value)


def test_missing_or_empty_corpus_files_are_clear_errors(tmp_path: Path):
    code, _, err = run("eval-next-speaker", str(tmp_path / "nope.jsonl"), "--engine", "offline")
    assert code == 1
    assert "nope.jsonl: cannot read it" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    code, _, err = run("eval-next-speaker", str(empty), "--engine", "offline")
    assert code == 1
    assert "empty.jsonl: holds no messages" in err
    single = tmp_path / "single.jsonl"
    single.write_text(GOOD + "\n")
    code, _, err = run("eval-next-speaker", str(single), "--engine", "offline")
    assert code == 1
    assert "nothing to predict" in err


def test_unreachable_server_and_refused_key_are_one_clear_line(tiny: Path):
    with FakeLLMServer() as srv:
        dead = srv.base_url  # nothing listens here once the server stops
    code, out, err = run(
        "eval-next-speaker",
        str(tiny),
        "--engine",
        "openai",
        "--base-url",
        dead,
        "--api-key",
        "k",
        "--max-retries",
        "0",
    )
    assert code == 1
    assert "error: cannot reach" in err
    assert "Traceback" not in err
    assert out == ""
    with FakeLLMServer(api_key="right") as srv:
        code, _, err = run(
            "eval-next-speaker",
            str(tiny),
            "--engine",
            "openai",
            "--base-url",
            srv.base_url,
            "--api-key",
            "wrong",
        )
        assert srv.chat_calls == 1  # the probe failed: no prediction was attempted
    assert code == 1
    assert "refused the API key (401)" in err


# -- the Ubuntu IRC converter ------------------------------------------------------------------

UBUNTU = [
    {
        "context": ["how do i mount an iso ?", "mount -o loop file.iso /mnt", "thanks , worked"],
        "relation_at": [[1, 0], [2, 1]],
        "ctx_spk": [1, 2, 1],
        "ctx_adr": [-1, 1, 2],
        "answer": "np",
        "ans_idx": 1,
        "ans_spk": 2,
        "ans_adr": 1,
    },
    {
        "ctx": ["anyone on 24.04 ?", "me", "note to self : reboot"],
        "ctx_spk": [3, 1, 1],
        "ctx_adr": [-1, 3, 1],
        "ans": "did the upgrade go fine ?",
        "ans_spk": 3,
        "ans_adr": 1,
    },
]


def _convert(tmp_path: Path, windows: list, *extra: str) -> subprocess.CompletedProcess[str]:
    src = tmp_path / "ubuntu_sample.json"
    src.write_text("\n".join(json.dumps(w) for w in windows) + "\n")
    return subprocess.run(
        [sys.executable, str(CONVERTER), str(src), "-o", str(tmp_path / "out.jsonl"), *extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_converter_turns_ubuntu_windows_into_corpus_lines(tmp_path: Path):
    done = _convert(tmp_path, UBUNTU)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert rows == [
        {
            "conversation": "ubuntu_sample-1",
            "speaker": "speaker1",
            "text": "how do i mount an iso ?",
            "addressee": "all",
        },
        {
            "conversation": "ubuntu_sample-1",
            "speaker": "speaker2",
            "text": "mount -o loop file.iso /mnt",
            "addressee": "speaker1",
        },
        {
            "conversation": "ubuntu_sample-1",
            "speaker": "speaker1",
            "text": "thanks , worked",
            "addressee": "speaker2",
        },
        {
            "conversation": "ubuntu_sample-1",
            "speaker": "speaker2",
            "text": "np",
            "addressee": "speaker1",
        },
        {
            "conversation": "ubuntu_sample-2",
            "speaker": "speaker3",
            "text": "anyone on 24.04 ?",
            "addressee": "all",
        },
        {
            "conversation": "ubuntu_sample-2",
            "speaker": "speaker1",
            "text": "me",
            "addressee": "speaker3",
        },
        {
            "conversation": "ubuntu_sample-2",
            "speaker": "speaker1",
            "text": "note to self : reboot",
            "addressee": "all",
        },
        {
            "conversation": "ubuntu_sample-2",
            "speaker": "speaker3",
            "text": "did the upgrade go fine ?",
            "addressee": "speaker1",
        },
    ]
    assert (
        "converted 2 windows, 8 messages; 1 messages addressed to their own speaker" in done.stderr
    )
    # The output is a corpus the evaluation reads.
    todo = items(read_corpus(tmp_path / "out.jsonl"))
    assert [(i.kind, i.gold) for i in todo] == [
        ("self", "anyone"),
        ("allocated", "speaker1"),
        ("allocated", "speaker2"),
        ("self", "anyone"),
        ("allocated", "speaker3"),
        ("self", "anyone"),
    ]


def test_converter_names_the_bad_window_and_leaves_no_output(tmp_path: Path):
    bad = dict(UBUNTU[1], ctx_adr=[-1, 3])
    done = _convert(tmp_path, [UBUNTU[0], bad])
    assert done.returncode == 1
    assert (
        "ubuntu_sample.json, line 2: ctx_spk/ctx_adr: 3 speakers and 2 addressees for 3 utterances"
        in done.stderr
    )
    assert not (tmp_path / "out.jsonl").exists()
    assert not (tmp_path / "out.jsonl.part").exists()


def test_converter_reads_a_json_array_file_too(tmp_path: Path):
    lines = _convert(tmp_path, UBUNTU)
    assert lines.returncode == 0
    expected = (tmp_path / "out.jsonl").read_text()
    array = tmp_path / "ubuntu_sample.json"
    array.write_text(json.dumps(UBUNTU, indent=1))  # one JSON array: windows numbered from 1
    done = subprocess.run(
        [sys.executable, str(CONVERTER), str(array), "-o", str(tmp_path / "array.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "array.jsonl").read_text() == expected
