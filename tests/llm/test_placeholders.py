"""Issue: placeholder thoughts. A small model copies the prompt's example (``"text": "..."``):
such a draft is refused before evaluation, and such an utterance is never posted. The prompts'
reply shapes describe each field instead of showing a value to copy."""

from __future__ import annotations

import re

import pytest

from playground import domain, events
from playground.cognition import next_speaker, prompts
from playground.cognition.base import PROMPT_SLOTS, Context, ThoughtDraft, placeholder_reason
from playground.cognition.offline import OfflineCognition
from playground.domain.simulated_user import HiddenState
from playground.judging import prompts as judging_prompts
from playground.rating.store import CONVERSATION_METRICS
from playground.room import loops
from playground.settings import PRESETS
from playground.storm import enrich, judge, profiles
from playground.storm import prompts as storm_prompts
from playground.storm.dialogues import DialogueTurn
from tests.conftest import offline_settings
from tests.support.rooms import build, library, listener_count, of

REFUSED = [
    "",
    "   ",
    "...",
    "…",
    "-",
    "—",
    "?!",
    '"..."',
    "N/A",
    "n/a.",
    "None",
    "null",
    "text",
    "Text",
    "your thought",
    "Your thought here.",
    "thought",
    "<thought>",
    "<your thought, in your own words>",
    "<the thought, in your own words>",
    "the thought, in your own words",
    "The thought, in your own words.",
    "{text}",
    "[thought]",
    "<1 or 2>",
    "ok",
    "Yes.",
    "Hmm",
    "a",
    "42",
]
KEPT = [
    "I agree with Bob on that.",
    "Go on",
    "Absolutely!",
    "Ask Ana more about her trip.",
    "Nice to see Zoe here.",
    "我同意他的看法",
    "... and then it rained all weekend",
    "Text her back?",
]


@pytest.mark.parametrize("text", REFUSED)
def test_placeholder_texts_are_refused_with_a_reason(text: str) -> None:
    assert placeholder_reason(text), text


@pytest.mark.parametrize("text", KEPT)
def test_real_thoughts_pass(text: str) -> None:
    assert placeholder_reason(text) is None


def test_a_short_utterance_passes_but_a_placeholder_one_does_not() -> None:
    assert placeholder_reason("Yes!", short_ok=True) is None
    assert placeholder_reason("ok", short_ok=True) is None
    for text in ("...", "", "<your message>", "N/A", "message text"):
        assert placeholder_reason(text, short_ok=True), text


def test_each_slot_the_prompts_describe_is_refused_with_or_without_its_brackets() -> None:
    for description in PROMPT_SLOTS:
        assert placeholder_reason(description), description
        assert placeholder_reason(f"<{description}>"), description
        assert placeholder_reason(f'"{description}"'), description


# -- the prompts ------------------------------------------------------------------------------


def _ctx() -> Context:
    persona = domain.Persona(id="ana", name="Ana", description="A baker.", facts=["I bake bread."])
    msg = domain.Message(id=1, speaker="Bob", text="Who likes bread?", step=0, at="", kind="ai")
    return Context(
        agent="Ana",
        persona=persona,
        participants=["Ana", "Bob"],
        recent=[msg],
        latest=msg,
        trigger="new_message",
        step=1,
        interpretation="Bob asks the group.",
    )


def _every_prompt() -> dict[str, list[dict[str, str]]]:
    ctx = _ctx()
    msg = ctx.recent[0]
    thought = domain.Thought(
        id=3, agent="Ana", text="I bake every day.", system=2, created_step=1, last_access=1
    )
    stim = [domain.Stimulus(ref="memory:1", text="I bake bread.", saliency=0.5)]
    profile = profiles.generate_profile(3, task="Buy a phone")
    turn = DialogueTurn(
        turn=0, message_id=1, message="Hi", state=HiddenState(clarity=0.5), replies=("Hey",)
    )
    metric = CONVERSATION_METRICS[0]
    return {
        "interpret": prompts.interpret_messages(msg, [], ["Ana", "Bob"]),
        "turn type": prompts.turn_type_messages(msg, [], ["Ana", "Bob"]),
        "thoughts": prompts.thoughts_messages(ctx, stim, system1=1, system2=2),
        "evaluation": prompts.evaluation_messages(ctx, thought),
        "batch evaluation": prompts.batch_evaluation_messages(ctx, [thought]),
        "articulation": prompts.articulation_messages(ctx, thought, stim, proactive_tone=True),
        "response": prompts.response_messages(ctx),
        "next speaker": next_speaker.prompt_messages([msg], ["Ana", "Bob"]),
        "judge metric": judging_prompts.metric_messages("Bob: hi", metric),
        "judge metrics": judging_prompts.all_metrics_messages("Bob: hi", CONVERSATION_METRICS),
        "judge pair": judging_prompts.pair_messages("Bob: hi", "Ana: hey"),
        "storm user": storm_prompts.user_messages(profile, profile.name, [], [], None),
        "storm judge": judge.pair_messages(turn, turn),
        "storm enrich": enrich.enrichment_messages(profile),
    }


@pytest.mark.parametrize("name", list(_every_prompt()))
def test_no_reply_shape_shows_a_value_a_model_could_copy(name: str) -> None:
    text = "\n".join(m["content"] for m in _every_prompt()[name])
    assert '"..."' not in text, text
    assert ": ...," not in text, text
    assert ": ...}" not in text, text
    assert '"text": "' not in text
    assert '"reason": "' not in text
    assert '"explanation": "' not in text


def test_the_cognition_prompts_slots_are_all_known_and_refused() -> None:
    prompt = _every_prompt()
    for name in ("interpret", "thoughts", "evaluation", "batch evaluation"):
        text = "\n".join(m["content"] for m in prompt[name])
        slots = re.findall(r"<([^<>]+)>", text)
        assert slots, name
        for slot in slots:
            assert slot in PROMPT_SLOTS, (name, slot)
            assert placeholder_reason(f"<{slot}>")
            assert placeholder_reason(slot)


def test_the_stable_instructions_come_first_and_the_conversation_last() -> None:
    """A server's prompt cache reuses a repeated prefix: the conversation (which changes at
    every step) is never in the system message, and the reply shapes never after it."""
    marker = "Who likes bread?"
    for name, messages in _every_prompt().items():
        if name.startswith(("judge", "storm")):
            continue
        system, user = messages[0], messages[-1]
        assert system["role"] == "system", name
        assert marker not in system["content"], name
        assert marker in user["content"], name
    shapes = {
        "interpret": prompts.INTERPRETATION_SHAPE,
        "thoughts": prompts.THOUGHTS_SHAPE,
        "evaluation": prompts.EVALUATION_SHAPE,
        "batch evaluation": prompts.BATCH_EVALUATION_SHAPE,
    }
    for name, shape in shapes.items():
        messages = _every_prompt()[name]
        assert shape in messages[0]["content"], name
        assert shape not in messages[-1]["content"], name
    evaluation = _every_prompt()["evaluation"]
    assert prompts.HEURISTICS_TEXT in evaluation[0]["content"]
    assert "Thought: I bake every day." in evaluation[-1]["content"]


# -- the room: refused before evaluation, never posted ----------------------------------------

SAYS_NOTHING = ["...", "<the thought, in your own words>", "text", "", "…"]


class CopyingMind(OfflineCognition):
    """The offline mind, but its drafts are what a small model copies from the prompt (plus one
    real thought when ``real``), and it remembers every thought it was asked to rate."""

    def __init__(self, embedder, *, real: bool = False) -> None:
        super().__init__(embedder, seed=0)
        self.real = real
        self.rated: list[str] = []

    async def form_thoughts(self, ctx, stimuli, *, system1, system2):
        drafts = [ThoughtDraft(text=t, system=2) for t in SAYS_NOTHING]
        if self.real:
            drafts.append(ThoughtDraft(text="I could tell them about my bakery.", system=2))
        return drafts

    async def evaluate(self, ctx, thoughts, stimuli):
        self.rated += [t.text for t in thoughts]
        return await super().evaluate(ctx, thoughts, stimuli)


async def _room_with(embedder, mind, settings):
    room, _, seen = await build(settings, embedder, library(2), cognition=mind)
    for a in room.agents:
        a.cognition = mind
    return room, seen


@pytest.mark.asyncio
async def test_placeholder_drafts_are_refused_never_evaluated_and_the_end_says_why(embedder):
    mind = CopyingMind(embedder)
    room, seen = await _room_with(embedder, mind, offline_settings(max_silent_steps=2))
    status = await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    assert status == "finished"
    assert len(room.messages) == 1  # only the icebreaker
    assert mind.rated == []
    assert of(events.ThoughtFormed, seen) == []
    assert of(events.ThoughtEvaluated, seen) == []
    refused = of(events.ThoughtRefused, seen)
    assert {e.text for e in refused} == set(SAYS_NOTHING)
    assert all(e.reason and e.stage == "thought" for e in refused)
    # Each listener asks for its System-1 and its System-2 thoughts at every trigger.
    assert len(refused) == len(SAYS_NOTHING) * 2 * listener_count(seen) == 30
    decisions = [e.decision for e in of(events.DecisionMade, seen)]
    assert decisions
    assert all("refused" in d.reason for d in decisions)
    reason = of(events.SessionFinished, seen)[0].reason
    assert reason.startswith("2 silent steps in a row: every thought the model formed was unusable")
    assert "30 thoughts refused as empty or placeholder text" in reason


@pytest.mark.asyncio
async def test_the_real_thought_among_placeholders_is_the_only_one_evaluated(embedder):
    mind = CopyingMind(embedder, real=True)
    room, seen = await _room_with(embedder, mind, offline_settings(max_turns=2))
    await loops.run_simulation(room, icebreaker="What did you do last weekend?")
    assert set(mind.rated) == {"I could tell them about my bakery."}
    assert {e.thought.text for e in of(events.ThoughtFormed, seen)} == set(mind.rated)


class BlankSpeaker(OfflineCognition):
    """The offline mind, whose every utterance is a copied placeholder."""

    async def articulate(self, ctx, request):
        return "..."

    async def respond(self, ctx):
        return "<your message>"


@pytest.mark.asyncio
@pytest.mark.parametrize("policy", ["inner-thoughts", "reactive"])
async def test_a_placeholder_utterance_is_never_posted(embedder, policy):
    mind = BlankSpeaker(embedder, seed=0)
    settings = offline_settings(max_silent_steps=2, max_turns=10)
    room, _, seen = await build(settings, embedder, library(2), cognition=mind, policy=policy)
    for a in room.agents:
        a.cognition = mind
        a.proactivity = PRESETS["simulation"].model_copy(update={"im_threshold": 1.0})
    first, other = (a.name for a in room.agents)
    await loops.run_simulation(
        room, icebreaker=f"{other}, what did you do last weekend?", initiator=first
    )
    assert [m.origin for m in room.messages] == ["icebreaker"]
    spoken = [e for e in of(events.ThoughtRefused, seen) if e.stage == "utterance"]
    assert spoken
    assert spoken[0].agent == other
    reason = of(events.SessionFinished, seen)[0].reason
    assert "the model's messages were unusable" in reason
    assert "try a stronger model" in reason


@pytest.mark.asyncio
async def test_a_forced_thought_worded_as_a_placeholder_is_not_posted(embedder):
    from playground import errors

    mind = BlankSpeaker(embedder, seed=0)
    room, seen = await _room_with(embedder, mind, offline_settings())
    await room.post(room.agents[0].name, "What did you do last weekend?", origin="icebreaker")
    await room.step_once()
    agent = room.agents[1]
    thought = agent.reservoir.unexpressed()[0]
    with pytest.raises(errors.PlaygroundError, match="empty or a placeholder"):
        await room.force_express(agent.name, thought.id)
    assert len(room.messages) == 1
    assert of(events.ThoughtRefused, seen)[-1].stage == "utterance"


def test_an_echo_of_the_articulation_prompt_is_left_out_of_the_message():
    from playground.cognition.base import without_name

    echoed = "You decided to say this thought-out-loud: What's the best thing you did this week?"
    assert without_name(echoed, "Farid") == "What's the best thing you did this week?"
    assert without_name("Farid: you decide to say this thought out loud: Hi.", "Farid") == "Hi."
    assert without_name("I went hiking.", "Farid") == "I went hiking."
