"""Simulated users' minds: the answer parser, the keyword maps, the LLM simulator through the real
openai client against the loopback server, and the offline simulator on real MiniLM."""

from __future__ import annotations

import json

import pytest

from playground import errors, factory
from playground.cognition.user import UserView
from playground.domain.simulated_user import (
    CLARITY_CARRIED,
    Difficulty,
    HiddenState,
    TaskProfile,
    UserProfile,
)
from playground.storm import keywords, parse, prompts
from playground.storm.user import LLMUserSimulator, OfflineUserSimulator, parse_user_answer
from tests.conftest import server_settings

pytestmark = pytest.mark.asyncio


def profile(
    *, uncertainty: int = 0, difficulty: int = 2, unknown: list[str] | None = None
) -> UserProfile:
    return UserProfile(
        id="mia-phone",
        name="Mia",
        description="A nurse who works night shifts.",
        base={"age_group": "35-44", "tech_experience": "beginner"},
        traits={"patience": "low"},
        context={"time_constraints": "needs it this week"},
        task=TaskProfile(
            category="technology",
            task="Buy a smartphone",
            attributes={"budget": "under 400 euros", "brand": "Fairphone"},
            requirements=["Long battery life", "A good camera for photos of my kids"],
            success_criteria=["The phone lasts a whole night shift"],
        ),
        difficulty=Difficulty(
            style=difficulty, length=difficulty, content=difficulty, tone=difficulty
        ),
        uncertainty=uncertainty,
        unknown=unknown or [],
        examples=["my phone dies before my shift ends, help"],
    )


# -- the parser ------------------------------------------------------------------------------------

WELL_FORMED = json.dumps(
    {
        "message": "Which phone keeps going through a 12-hour night shift?",
        "inner_thoughts": "I hope this works, my old one is useless.",
        "satisfaction": {"score": 0.6, "explanation": "a start"},
        "clarity": {"score": 0.4, "explanation": "I know the battery matters"},
        "emotion": "Hopeful",
        "intent": "exploring",
    }
)


async def test_well_formed_json_is_read_field_by_field():
    turn = parse_user_answer(WELL_FORMED)
    assert turn.text == "Which phone keeps going through a 12-hour night shift?"
    s = turn.state
    assert (s.format, s.satisfaction, s.satisfaction_missing, s.clarity) == (
        "json",
        0.6,
        False,
        0.4,
    )
    assert (s.satisfaction_explanation, s.clarity_explanation) == (
        "a start",
        "I know the battery matters",
    )
    assert (s.emotion, s.emotion_source, s.intent, s.intent_source) == (
        "hopeful",
        "model",
        "exploring",
        "model",
    )


async def test_json_in_a_code_fence_with_prose_around_it():
    turn = parse_user_answer(f"Sure:\n```json\n{WELL_FORMED}\n```\nbye")
    assert turn.state.format == "json"
    assert turn.text.startswith("Which phone")


async def test_the_papers_paired_tags():
    text = (
        "[INNER_THOUGHTS] I'm not sure about the options yet [/INNER_THOUGHTS]\n"
        "[SATISFACTION] 0.7 - The suggestions are good but I need more information [/SATISFACTION]\n"
        "[CLARITY] 0.3 - only the budget is clear [/CLARITY]\n"
        "Could you tell me more about the features?"
    )
    s = parse_user_answer(text).state
    assert parse_user_answer(text).text == "Could you tell me more about the features?"
    assert s.format == "tagged"
    assert s.inner_thoughts == "I'm not sure about the options yet"
    assert (s.satisfaction, s.satisfaction_explanation) == (0.7, "The suggestions are good but I need more information")  # fmt: skip
    assert (s.clarity, s.clarity_explanation) == (0.3, "only the budget is clear")


async def test_the_papers_one_bracket_form_and_our_emotion_and_intent_tags():
    text = "[SATISFACTION: 0.25 - too vague] [EMOTION: Annoyed] [INTENT: comparing] Is the Pixel any better?"
    turn = parse_user_answer(text)
    assert turn.text == "Is the Pixel any better?"
    assert (turn.state.satisfaction, turn.state.satisfaction_explanation) == (0.25, "too vague")
    assert (turn.state.emotion, turn.state.intent) == ("annoyed", "comparing")
    assert turn.state.emotion_source == turn.state.intent_source == "model"


@pytest.mark.parametrize(
    "score",
    ["1.7", "abc", "", "-0.2"],
    ids=["above-one", "not-a-number", "empty", "negative"],
)
async def test_an_unreadable_satisfaction_is_stored_flagged_and_rated_as_none(score):
    turn = parse_user_answer(
        f"[SATISFACTION] {score} - hm [/SATISFACTION] I want a phone, any tips?"
    )
    # The column holds the placeholder 0.5, flagged; the metrics read no rating at all.
    assert turn.state.satisfaction == 0.5
    assert turn.state.satisfaction_missing
    assert turn.state.rated_satisfaction is None
    assert turn.text == "I want a phone, any tips?"


async def test_a_json_score_outside_the_scale_counts_as_missing():
    data = json.loads(WELL_FORMED)
    data["satisfaction"]["score"] = 1.7
    s = parse_user_answer(json.dumps(data)).state
    assert (s.satisfaction, s.satisfaction_missing, s.format) == (0.5, True, "json")


async def test_no_tags_at_all_makes_the_whole_text_the_message_and_everything_falls_back():
    turn = parse_user_answer("I need a phone that does not die, thanks", previous_clarity=0.42)
    s = turn.state
    assert turn.text == "I need a phone that does not die, thanks"
    assert (s.format, s.satisfaction, s.satisfaction_missing) == ("fallback", 0.5, True)
    assert s.clarity == 0.42
    assert "carried over" in s.clarity_explanation
    # Neither rating was given: both are marked missing, and the metrics see no value.
    assert s.clarity_missing
    assert s.rated_clarity is None
    assert s.rated_satisfaction is None
    assert s.emotion_source == s.intent_source == "keywords"
    assert s.intent == "leaving"  # "thanks" (L.3) -- first listed label with the most hits


async def test_clarity_without_a_previous_turn_starts_from_the_uncertainty():
    assert parse.start_clarity(0) == 0.8
    assert parse.start_clarity(80) == pytest.approx(0.32)
    s = parse_user_answer("hello there, I need help", start=parse.start_clarity(60)).state
    assert s.clarity == pytest.approx(0.44)
    assert "uncertainty" in s.clarity_explanation
    assert s.clarity_missing
    assert s.rated_clarity is None
    rated = parse_user_answer(WELL_FORMED).state
    assert not rated.clarity_missing
    assert rated.rated_clarity == 0.4
    assert rated.rated_satisfaction == 0.6


@pytest.mark.parametrize("text", ["", "   ", "[INNER_THOUGHTS] only private things [/INNER_THOUGHTS]"], ids=["empty", "blank", "only-tags"])  # fmt: skip
async def test_no_usable_message_is_an_output_error(text):
    with pytest.raises(errors.LLMOutputError, match="no message"):
        parse_user_answer(text)


async def test_a_cut_off_json_answer_keeps_its_message_only():
    turn = parse_user_answer(
        '{"message": "Is 400 euros enough for a good one?", "inner_thoughts": "secretly wo'
    )
    assert turn.text == "Is 400 euros enough for a good one?"
    assert turn.state.format == "fallback"
    assert turn.state.satisfaction_missing


async def test_an_unclosed_inner_thoughts_tag_never_reaches_the_message():
    turn = parse_user_answer(
        "[INNER_THOUGHTS] they will never guess my budget\nWhat phones do you suggest?"
    )
    assert turn.text == "What phones do you suggest?"
    assert turn.state.inner_thoughts == "they will never guess my budget"


async def test_a_long_message_is_cut_at_a_word_boundary_and_a_short_one_kept():
    long = "I need a phone " + "with a really great battery " * 6
    cut = parse_user_answer(long).text
    assert len(cut) <= 100
    assert long.startswith(cut)
    assert long[len(cut)] == " "
    assert parse_user_answer("ok thanks").text == "ok thanks"


# -- the keyword maps ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "inner", "emotion", "intent"),
    [
        ("How much is it? Any discount?", "", "neutral", "purchasing"),
        ("Which one is better, compare them please", "", "neutral", "comparing"),
        ("I'm confused, what do you mean?", "", "confused", "clarifying"),
        (
            "ok",
            "so annoying, they keep asking; I'm leaning towards leaving",
            "frustrated",
            "deciding",
        ),
        ("sure", "fingers crossed, hope this works; not sure yet", "hopeful", "exploring"),
    ],
    ids=["purchase", "compare", "clarify", "inner-frustrated", "inner-hopeful"],
)
async def test_keyword_maps_give_emotion_and_intent(message, inner, emotion, intent):
    assert keywords.infer_emotion(message, inner) == emotion
    assert keywords.infer_intent(message, inner) == intent


async def test_keywords_match_whole_words_only():
    assert keywords.match("I know", keywords.MESSAGE_EMOTIONS) is None  # not "no"
    assert keywords.match("Oh wow, no", keywords.MESSAGE_EMOTIONS) == "surprised"  # 2 hits beat 1
    assert keywords.match("I don\u2019t understand", keywords.MESSAGE_INTENTS) == "clarifying"


async def test_the_model_omitting_emotion_and_intent_falls_back_to_the_maps():
    data = json.loads(WELL_FORMED)
    data["emotion"] = data["intent"] = ""
    s = parse_user_answer(json.dumps(data)).state
    assert (s.emotion, s.emotion_source) == ("hopeful", "keywords")  # "hope this works" (L.5)
    assert s.intent_source == "keywords"


# -- the LLM simulator, through the real openai client ---------------------------------------------


async def _llm(srv, **kw):
    return LLMUserSimulator(factory.make_chat_client(server_settings(srv)), **kw)


async def test_an_llm_turn_sends_the_schema_and_reads_the_servers_instance(llm_server):
    sim = await _llm(llm_server)
    p = profile(uncertainty=40, unknown=["task.brand", "base.tech_experience"])
    turn = await sim.turn(
        p, UserView(me="Mia", messages=[("Bot", "How can I help?")], addressed_by="Bot")
    )
    await sim.client.close()
    assert turn.state.format == "json"
    assert 1 <= len(turn.text) <= 100
    assert turn.state.satisfaction == 0.5
    assert not turn.state.satisfaction_missing  # the fake's 0.5
    body = llm_server.requests[-1]
    assert body["response_format"]["json_schema"]["name"] == "UserAnswerOut"
    prompt = "\n".join(m["content"] for m in body["messages"])
    assert "under 400 euros" in prompt
    assert "Long battery life" in prompt  # known
    assert "Fairphone" not in prompt
    assert "beginner" not in prompt  # unknown values never shown
    assert "brand" in prompt
    assert "tech experience" in prompt  # named as unsure
    assert "Bot: How can I help?" in prompt
    assert "Bot is talking to you" in prompt
    assert "content 2/5" in prompt
    assert "my phone dies before my shift ends" in prompt


async def test_an_llm_turn_shows_the_users_own_earlier_states(llm_server):
    sim = await _llm(llm_server)
    before = HiddenState(inner_thoughts="PRIVATE-EARLIER", satisfaction=0.3, clarity=0.2)
    await sim.turn(
        profile(), UserView(me="Mia", messages=[("Mia", "hi"), ("Bot", "hello")], previous=[before])
    )
    await sim.client.close()
    prompt = llm_server.requests[-1]["messages"][-1]["content"]
    assert "PRIVATE-EARLIER" in prompt
    assert "satisfaction 0.30" in prompt
    assert "You: hi" in prompt


async def test_an_earlier_unreadable_rating_is_shown_to_the_user_as_not_given():
    unread = HiddenState(
        inner_thoughts="EARLIER", satisfaction=0.5, satisfaction_missing=True, clarity=0.2,
        clarity_explanation=CLARITY_CARRIED,
    )  # fmt: skip
    prompt = prompts.turn_prompt("Mia", [("Mia", "hi"), ("Bot", "hello")], [unread], None)
    assert "satisfaction not given" in prompt
    assert "clarity not given" in prompt
    assert "0.50" not in prompt
    assert "0.20" not in prompt  # no placeholder passed off as a rating


async def test_a_server_answering_in_tagged_text_is_read_as_tags(llm_server):
    llm_server.set_responder(
        lambda body: (
            "[INNER_THOUGHTS] hmm [/INNER_THOUGHTS] [SATISFACTION: 0.9 - nice] Thanks, that's all I needed."
        )
    )
    sim = await _llm(llm_server)
    turn = await sim.turn(profile(), UserView(me="Mia", previous=[HiddenState(clarity=0.7)]))
    await sim.client.close()
    assert turn.text == "Thanks, that's all I needed."
    assert (turn.state.format, turn.state.satisfaction, turn.state.clarity) == ("tagged", 0.9, 0.7)
    assert (
        len([r for r in llm_server.requests if r["_path"].endswith("completions")]) == 1
    )  # no retry


async def test_a_broken_answer_falls_back_and_an_empty_one_is_an_error(llm_server):
    llm_server.set_responder(lambda body: "no json here, just words about phones")
    sim = await _llm(llm_server)
    turn = await sim.turn(profile(), UserView(me="Mia"))
    assert turn.state.format == "fallback"
    assert turn.text == "no json here, just words about phones"
    llm_server.set_responder(lambda body: "[INNER_THOUGHTS] nothing to say [/INNER_THOUGHTS]")
    with pytest.raises(errors.LLMOutputError):
        await sim.turn(profile(), UserView(me="Mia"))
    await sim.client.close()


async def test_a_short_message_is_kept_or_asked_for_again(llm_server):
    answers = iter(["[SATISFACTION: 0.5 - ok] ok", "[SATISFACTION: 0.5 - ok] Okay, which one has the best battery?"])  # fmt: skip
    llm_server.set_responder(lambda body: next(answers))
    keep = await _llm(llm_server)
    assert (await keep.turn(profile(), UserView(me="Mia"))).text == "ok"
    answers = iter(["[SATISFACTION: 0.5 - ok] ok", "[SATISFACTION: 0.5 - ok] Okay, which one has the best battery?"])  # fmt: skip
    retry = await _llm(llm_server, short_messages="retry")
    turn = await retry.turn(profile(), UserView(me="Mia"))
    assert turn.text == "Okay, which one has the best battery?"
    assert "must be between 20 and 100" in llm_server.requests[-1]["messages"][-1]["content"]
    await keep.client.close()
    await retry.client.close()


# -- the offline simulator, on real MiniLM ---------------------------------------------------------

ON_POINT = (
    "This model's battery lasts two full days, and the camera takes sharp photos of children."
)
OFF_POINT = "The weather in Lisbon is lovely in spring, with mild evenings by the river."


async def _dialogue(embedder, seed, replies, p=None):
    sim = OfflineUserSimulator(embedder, seed)
    msgs: list[tuple[str, str]] = []
    states: list[HiddenState] = []
    for reply in [*replies, None]:
        turn = await sim.turn(p or profile(), UserView(me="Mia", messages=list(msgs), previous=list(states), addressed_by="Bot" if msgs else None))  # fmt: skip
        msgs.append(("Mia", turn.text))
        states.append(turn.state)
        if reply is not None:
            msgs.append(("Bot", reply))
    return msgs, states


async def test_offline_user_is_deterministic_by_seed(embedder):
    replies = [ON_POINT, OFF_POINT, ON_POINT]
    a = await _dialogue(embedder, 7, replies)
    assert a == await _dialogue(embedder, 7, replies)
    b = await _dialogue(embedder, 8, replies)
    assert [s.satisfaction for s in a[1]] != [s.satisfaction for s in b[1]]


async def test_offline_clarity_rises_when_the_assistant_addresses_a_requirement(embedder):
    _, on = await _dialogue(embedder, 1, [ON_POINT])
    _, off = await _dialogue(embedder, 1, [OFF_POINT])
    assert on[0].clarity == off[0].clarity == pytest.approx(0.8)  # start value at 0 % uncertainty
    assert on[1].clarity > on[0].clarity > off[1].clarity
    assert on[1].satisfaction > off[1].satisfaction
    assert all(s.format == "offline" and s.emotion_source == "keywords" for s in on + off)


async def test_offline_clarity_rises_more_slowly_at_higher_uncertainty_and_difficulty(embedder):
    _, easy = await _dialogue(embedder, 1, [ON_POINT])
    _, hard = await _dialogue(embedder, 1, [ON_POINT], profile(uncertainty=80, difficulty=5))
    assert easy[1].clarity - easy[0].clarity > hard[1].clarity - hard[0].clarity > 0


async def test_offline_messages_keep_to_the_length_limits_and_reveal_known_needs_only(embedder):
    p = profile(uncertainty=40, difficulty=5, unknown=["task.brand"])
    msgs, _ = await _dialogue(embedder, 3, [ON_POINT, OFF_POINT, ON_POINT, ON_POINT, OFF_POINT], p)
    mine = [t for who, t in msgs if who == "Mia"]
    assert all(20 <= len(t) <= 100 for t in mine), mine
    assert not any("Fairphone" in t for t in mine)


async def test_the_user_prompt_leaves_out_the_description_once_anything_is_unknown():
    from playground.storm import prompts

    known = prompts.system_prompt(profile())
    unsure = prompts.system_prompt(profile(uncertainty=40, unknown=["base.age_group"]))
    assert "A nurse who works night shifts." in known
    assert "A nurse who works night shifts." not in unsure  # it may state what the user lacks
    assert "35-44" in known
    assert "35-44" not in unsure
    assert "beginner" in unsure  # what the user does know is still there


async def test_offline_clarity_explanation_never_shows_a_negative_zero_cosine():
    """A reply at cosine -0.001 to every need reads "cos 0.00", not "cos -0.00"."""
    import numpy as np

    from playground.storm.offline_user import offline_turn

    reply = "Something else entirely."
    off = np.array([-0.001, np.sqrt(1 - 1e-6), 0.0], np.float32)

    class Embedder:
        async def embed(self, texts):
            on = np.array([1.0, 0, 0], np.float32)
            return np.stack([off if t == reply else on for t in texts])

    turn = await offline_turn(
        Embedder(),  # type: ignore[arg-type]  # embed() alone: all the turn uses
        1,
        profile(),
        me="Mia",
        messages=[("Mia", "My phone dies before my shift ends, help"), ("Bot", reply)],
        previous=[],
    )
    assert "(cos 0.00)" in turn.state.clarity_explanation
    assert "-0.00" not in turn.state.clarity_explanation
