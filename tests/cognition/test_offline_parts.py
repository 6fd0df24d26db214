"""The offline engine's parts: topics, repeats, the wording of replies and the heuristics."""

from __future__ import annotations

import re
from typing import Any

import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from playground import domain
from playground.cognition.base import Articulation, Context
from playground.cognition.offline import OfflineCognition
from playground.embedding.cache import CachingEmbedder
from tests.support.rooms import persona

pytestmark = pytest.mark.asyncio
PEOPLE = ["Ana", "Ben", "Chloe"]
ANA = persona(
    "Ana",
    [
        "I surf before work almost every morning.",
        "I cook a big fish stew for friends every Sunday.",
    ],
)
CHATTY = [
    "I see.",
    "Oh I see what you mean, that makes sense",
    "Same here, I guess.",
    "Yes, I did that too!",
    "Really? Why not!",
    "Hmm, maybe.",
]
HEDGES = re.compile(
    r"not sure|let me think|i don't know|anyone\?|what the others say|maybe|i guess", re.I
)


def _msg(i: int, speaker: str, text: str, thought: int | None = None) -> domain.Message:
    return domain.Message(
        id=i, speaker=speaker, text=text, step=i, at="", thought_id=thought, origin="offline engine"
    )


def _ctx(messages: list[domain.Message], agent: str = "Ana", **kw: Any) -> Context:
    return Context(
        agent=agent,
        persona=ANA if agent == "Ana" else None,
        participants=PEOPLE,
        recent=messages[-8:],
        latest=messages[-1],
        trigger=kw.pop("trigger", "new_message"),
        step=len(messages) + 1,
        **kw,
    )


def _thought(i: int, text: str, system: int, stimuli: list[str], agent: str = "Ana"):
    return domain.Thought(
        id=i, agent=agent, text=text, system=system, stimuli=stimuli, created_step=1, last_access=1
    )


async def _mind(embedder: CachingEmbedder, messages: list[domain.Message]) -> OfflineCognition:
    mind = OfflineCognition(embedder, seed=3)
    for k in range(len(messages)):
        await mind.interpret(messages[k], messages[:k], PEOPLE)
    return mind


async def test_content_free_messages_get_no_stop_word_topic(embedder: CachingEmbedder) -> None:
    for text in CHATTY:
        msgs = [_msg(1, "Ben", "What did you do last weekend?"), _msg(2, "Chloe", text)]
        mind = await _mind(embedder, msgs)
        said = await mind.interpret(msgs[-1], msgs[:-1], PEOPLE)
        thought = _thought(9, "Interesting point from Chloe.", 1, [msgs[-1].ref])
        reply = await mind.articulate(_ctx(msgs), Articulation(thought))
        for out in (said, reply):
            for word in re.findall(r"\b(?:about|on) (\w+)", out):
                assert word.casefold() not in ENGLISH_STOP_WORDS, (text, out)


async def test_topics_are_keybert_phrases_on_the_loaded_model_cached_per_text(
    minilm, embedder: CachingEmbedder
) -> None:
    from playground.cognition.offline.topics import Topics

    topics = Topics(embedder)
    topics.exclude = frozenset({"ana", "ben"})
    texts = [*ANA.facts, "Ben and Ana went to the Yorkshire Dales.", *CHATTY]
    found = {t: await topics.phrases(t, 3) for t in texts}
    assert topics.keybert.model.embedding_model is minilm.load_sync()  # nothing new loaded
    assert found["I cook a big fish stew for friends every Sunday."][0] == "fish stew"
    assert "Yorkshire Dales" in found["Ben and Ana went to the Yorkshire Dales."]
    for phrases in found.values():
        for phrase in phrases:
            assert 1 <= len(phrase.split()) <= 2
            assert not {w.casefold() for w in phrase.split()} & (
                ENGLISH_STOP_WORDS | {"ana", "ben"}
            )
    misses = embedder.misses
    for t in texts:
        assert await topics.phrases(t, 3) == found[t]
    assert embedder.misses == misses  # cached: nothing embedded twice


async def test_repeats_are_exact_or_near_duplicates(embedder: CachingEmbedder) -> None:
    from playground.cognition.offline.repeats import near

    pairs = [
        ("Hi Ben! How's everyone doing?", "Hi Ana! How's everyone doing?", True),  # names masked
        (
            "That reminds me: I surf before work almost every morning.",
            "Funny you say that. I surf before work almost every morning. You?",
            True,  # the same sentence in another frame
        ),
        ("So, what's everyone up to this week?", "What's everyone up to this week?", True),
        ("Oh nice, fish stew!", "Tell me more about fish stew?", False),
        ("I surf before work.", "I want to find someone to go surfing.", False),
    ]
    for a, b, expected in pairs:
        va, vb = await embedder.embed([a, b])
        assert near(a, b, float(va @ vb), PEOPLE) is expected, (a, b)


async def test_an_agent_never_says_again_what_is_already_in_the_conversation(
    embedder: CachingEmbedder,
) -> None:
    fact = "I surf before work almost every morning."
    msgs = [
        _msg(1, "Ben", "What did you do last weekend?"),
        _msg(2, "Ana", f"That reminds me: {fact}", thought=1),
        _msg(3, "Chloe", "Oh nice, surfing!", thought=2),
    ]
    mind = await _mind(embedder, msgs)
    memory = domain.Stimulus(ref="memory:1", text=fact, saliency=0.5)
    for i in range(12):
        thought = _thought(10 + i, f"I could share that {fact}", 2, ["memory:1", msgs[-1].ref])
        reply = await mind.articulate(_ctx(msgs), Articulation(thought, [memory]))
        assert "surf before work" not in reply, reply
        words = re.findall(r"\w+", reply.casefold())
        assert words not in [re.findall(r"\w+", m.text.casefold()) for m in msgs]


async def test_proactive_tone_restyles_the_wording_and_names_nobody_new(
    embedder: CachingEmbedder,
) -> None:
    cases = [
        ([_msg(1, "Ben", "What did you do last weekend?")], 1, "Ben asked about weekend.", []),
        (
            [_msg(1, "Ben", "I went to the Yorkshire Dales.")],
            2,
            "I don't know much about Yorkshire Dales, honestly.",
            [],
        ),
        ([_msg(1, "Ben", "I went to the Yorkshire Dales.")], 1, "I agree with Ben.", []),
        (
            [_msg(1, "Ben", "Any plans?"), _msg(2, "Chloe", "I bake bread on Sundays.")],
            2,
            "I could share that I cook a big fish stew for friends every Sunday.",
            [domain.Stimulus(ref="memory:2", text=ANA.facts[1], saliency=0.5)],
        ),
        (
            [
                _msg(1, "Ben", "I went hiking in the Yorkshire Dales."),
                _msg(2, "Chloe", "Oh nice!", thought=1),
                _msg(3, "Ana", "I surf.", thought=2),
                _msg(4, "Chloe", "Lovely.", thought=3),
                _msg(5, "Ana", "Mm.", thought=4),
                _msg(6, "Chloe", "Right.", thought=5),
            ],
            2,
            "Ask Ben more about Yorkshire Dales.",
            [
                domain.Stimulus(
                    ref="message:1", text="Ben: I went hiking in the Yorkshire Dales.", saliency=0.4
                )
            ],
        ),
    ]
    bold_seen = 0
    for msgs, system, text, stimuli in cases:
        for step in range(8):
            mind = await _mind(embedder, msgs)
            refs = [s.ref for s in stimuli] + [msgs[-1].ref]
            thought = _thought(20 + step, text, system, refs)
            ctx = _ctx(msgs)
            plain = await mind.articulate(ctx, Articulation(thought, stimuli))
            mind = await _mind(embedder, msgs)
            bold = await mind.articulate(ctx, Articulation(thought, stimuli, proactive_tone=True))
            assert bold != plain
            assert not HEDGES.search(bold), bold
            bold_seen += bool(HEDGES.search(plain))
            named = [p for p in PEOPLE if re.search(rf"\b{p}\b", plain)]
            assert [p for p in PEOPLE if re.search(rf"\b{p}\b", bold)] == named, (plain, bold)
            reply = _msg(len(msgs) + 1, "Ana", plain)
            turn = await mind.predict_turn_type(reply, msgs, PEOPLE)
            bold_turn = await mind.predict_turn_type(
                reply.model_copy(update={"text": bold}), msgs, PEOPLE
            )
            assert (turn.kind, turn.addressee) == (bold_turn.kind, bold_turn.addressee)
    assert bold_seen  # some plain replies hedged, and their assertive form did not


async def _rate(mind: OfflineCognition, ctx: Context, thoughts: list[domain.Thought]):
    return [r.heuristics for r in await mind.evaluate(ctx, thoughts, []) if r is not None]


async def test_the_turn_allocation_is_not_scored_again(embedder: CachingEmbedder) -> None:
    msgs = [_msg(1, "Ben", "Chloe, what did you cook last night?")]
    mind = await _mind(embedder, msgs)
    thought = _thought(1, "I could share that I cook a big fish stew every Sunday.", 2, [])
    rated = []
    for kind, to in (("open", None), ("allocated", "Ana"), ("allocated", "Chloe")):
        turn = domain.TurnType(message_id=1, kind=kind, addressee=to)
        rated.append(await _rate(mind, _ctx(msgs, turn_type=turn), [thought]))
    assert rated[0] == rated[1] == rated[2]


async def test_heuristics_follow_measured_signals(embedder: CachingEmbedder) -> None:
    question = [_msg(1, "Ben", "What do you cook for friends on Sundays?")]
    mind = await _mind(embedder, question)
    answer = _thought(
        1, "I could share that I cook a big fish stew for friends every Sunday.", 2, []
    )
    aside = _thought(2, "I could share that my cat is grumpy and old.", 2, [])
    h_answer, h_aside = await _rate(mind, _ctx(question), [answer, aside])
    assert h_answer["urgency"] > h_aside["urgency"]  # it answers the open question
    assert h_answer["coherence"] > h_aside["coherence"]
    said = [*question, _msg(2, "Chloe", "I cook a big fish stew for friends every Sunday.")]
    mind = await _mind(embedder, said)
    (h_echo,) = await _rate(mind, _ctx(said), [answer])
    assert h_echo["originality"] < h_answer["originality"]  # Chloe already said it
    quiet = await _rate(mind, _ctx(said, trigger="pause", silent_steps=2), [aside])
    (h_busy,) = await _rate(mind, _ctx(said), [aside])
    assert quiet[0]["dynamics"] > h_busy["dynamics"]
    assert quiet[0]["urgency"] > h_busy["urgency"]
    talkative = [*said, *(_msg(3 + i, "Ana", f"Point {i}.", thought=i) for i in range(4))]
    mind = await _mind(embedder, talkative)
    (h_talk,) = await _rate(mind, _ctx(talkative), [aside])
    assert h_talk["balance"] < h_busy["balance"]  # Ana spoke 4 of 6 messages
