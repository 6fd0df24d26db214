"""Names in a study: lookalike names are the same name, a person may take a later agent's name
(the agent is then shown under another), and bidi controls are refused alike in names,
messages, notes and reviews (playground/study/names.py, over a real plan on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import re

import pytest

from playground.rating.user_study import USER_STUDY_METRICS
from playground.study import names
from playground.study.hub import check_name
from playground.study.review import StudyError
from playground.study.server import CLOSE_NEXT
from testbed.study import live_plan, live_study, open_browser

FARID_CYRILLIC = "F\u0430r\u0456d"  # Fаrіd: Cyrillic а and і


def test_lookalike_names_have_one_skeleton():
    assert names.skeleton(FARID_CYRILLIC) == names.skeleton("Farid") == "farid"
    assert names.skeleton("ΝΟΑ") == names.skeleton("Noa")  # Greek capitals
    assert names.skeleton("ANA") == names.skeleton("ana")
    assert names.skeleton("Zoë") != names.skeleton("Zoe")  # an accent is a different name
    assert names.skeleton("Ana\u200d") == names.skeleton("Ana")  # invisible joiner
    assert names.clash("Ben", ["Ana", "Ben"]) == "Ben"
    assert names.clash("Bea", ["Ana", "Ben"]) is None


def test_a_name_that_only_looks_like_anothers_is_refused_naming_the_letters():
    with pytest.raises(StudyError) as refused:
        check_name(FARID_CYRILLIC, ["Farid", "Ivy"])
    message = str(refused.value)
    assert message.startswith(f"{FARID_CYRILLIC} looks like Farid")
    assert "Cyrillic" in message
    with pytest.raises(StudyError, match="already called ivy"):
        check_name("ivy", ["Farid", "Ivy"])
    assert check_name("  Zoë   Li ", ["Zoe"]) == "Zoë Li"


@pytest.mark.parametrize("control", sorted(names.BIDI_CONTROLS))
def test_bidi_controls_are_refused_in_names_and_texts_naming_the_character(control):
    code = f"U+{ord(control):04X}"
    with pytest.raises(StudyError, match=re.escape(f"The name holds {code}")):
        check_name(f"Ana{control}", [])
    for what in ("message", "note"):
        with pytest.raises(names.TextRefused, match=re.escape(f"The {what} holds {code}")):
            names.text(f"see {control}txt.exe", what, 2000)
    with pytest.raises(names.TextRefused, match=re.escape(f"The note on why holds {code}")):
        names.optional_text(f"because{control}", "note on why", 2000)
    assert names.text("  שלום, hello  ", "message", 2000) == "שלום, hello"  # RTL text is fine


def test_an_agent_gets_a_free_name_when_its_personas_is_taken():
    assert names.free_name("Ana", ["Ben"]) == "Ana"
    assert names.free_name("Ana", ["ana"]) == names.AGENT_NAMES[0]
    assert names.free_name("Ana", ["Ana", names.AGENT_NAMES[0]]) == names.AGENT_NAMES[1]
    assert names.free_name("Ana", ["Ana", *names.AGENT_NAMES]) == "Agent 2"


@pytest.mark.asyncio
async def test_a_message_note_or_review_with_a_bidi_control_is_refused_on_the_live_page(
    tmp_path, embedder
):
    async with live_study(tmp_path, embedder, humans=1) as study:
        ivy, _ = await open_browser(study.links[0], study.origin)
        await ivy.send(type="join", name="Ivy")
        await ivy.until(lambda p: p["type"] == "you")
        await ivy.send(type="say", text="look at \u202etxt.exe")
        error = await ivy.until(lambda p: p["type"] == "error")
        assert error["message"].startswith("The message holds U+202E RIGHT-TO-LEFT OVERRIDE")
        await ivy.send(type="say", text="hello")
        await ivy.until(lambda p: p["type"] == "message" and p["message"]["speaker"] == "Ivy")
        await ivy.send(type="note", message_id=1, text="\u2066hidden\u2069")
        error = await ivy.until(lambda p: p["type"] == "error")
        assert error["message"].startswith("The note holds U+2066 LEFT-TO-RIGHT ISOLATE")
        await ivy.session.close()
    texts = study.rows("SELECT text FROM messages WHERE speaker = 'Ivy'")
    assert texts == [("hello",)]
    assert study.rows("SELECT COUNT(*) FROM annotations") == [(0,)]


@pytest.mark.asyncio
async def test_a_person_may_take_a_later_agents_name_which_is_then_shown_under_another(
    tmp_path, embedder
):
    async with live_plan(tmp_path, embedder, humans=1) as plan:
        agents = [r[0] for r in plan.rows("SELECT persona FROM plan_steps ORDER BY position")]
        ivy, hello = await open_browser(plan.links[0], plan.origin)
        assert hello["study"]["agent"] == agents[0]
        cyrillic = {v: k for k, v in names.LOOKALIKES.items() if "\u0400" <= k <= "\u052f"}
        fake = "".join(cyrillic.get(c, c) for c in agents[0])
        assert fake != agents[0]  # every default persona's name has a letter to fake
        await ivy.send(type="join", name=fake)
        error = await ivy.until(lambda p: p["type"] == "error")
        assert error["message"].startswith(f"{fake} looks like {agents[0]}")
        await ivy.send(type="join", name=agents[0].upper())
        error = await ivy.until(lambda p: p["type"] == "error")
        assert error["message"] == f"Someone in this study is already called {agents[0].upper()}."
        # The next conversation's agent's name is free: no such agent is in view.
        await ivy.send(type="join", name=agents[1])
        you = await ivy.until(lambda p: p["type"] in ("you", "error"))
        assert you == {"type": "you", "name": agents[1]}

        await ivy.until(lambda p: p["type"] == "ended", 60)
        await ivy.send(type="questionnaire", answers={m.key: 4 for m in USER_STUDY_METRICS})
        await ivy.until(lambda p: p["type"] == "phase" and p["phase"] == "wait", 30)
        frame = await asyncio.wait_for(ivy.ws.receive(), 60)
        while frame.type.name == "TEXT":
            frame = await asyncio.wait_for(ivy.ws.receive(), 60)
        assert frame.data == CLOSE_NEXT
        await ivy.session.close()
        ivy, hello = await open_browser(plan.links[0], plan.origin)
        shown = hello["study"]["agent"]
        assert hello["study"]["position"] == 2
        assert shown == names.AGENT_NAMES[0]
        assert hello["you"] == agents[1]
        assert {p["name"] for p in hello["participants"]} == {agents[1], shown}
        await ivy.session.close()
        step = plan.rows("SELECT persona, agent, session_id FROM plan_steps WHERE position = 2")
        assert step[0][:2] == (agents[1], shown)
        seated = plan.rows(
            "SELECT name, persona_id FROM participants WHERE session_id = ? AND kind = 'ai'",
            (step[0][2],),
        )
        assert [r[0] for r in seated] == [shown]
        assert seated[0][1]  # the persona is kept: only its name is shown differently
