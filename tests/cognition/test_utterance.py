"""Where a model's chat message ends: the scaffolding cut on real-looking answers.

Most answers below are what SmolLM2-135M wrote behind llama-cpp-python's server for our
articulation prompt, without stop sequences: the issue's, a `simulate --preset non-stop-chatter
--seed 3` run's, and a probe of one articulation request at seeds 1-12 (temperature 0.7); one
is what it wrote behind llama.cpp's own `llama-server` (built from the sources vendored in
llama-cpp-python 0.3.36), with stop sequences: the persona recited.
"""

from __future__ import annotations

import pytest

from playground import domain
from playground.cognition import prompts, utterance
from playground.cognition.base import Context

NAMES = ["Ana", "Ben", "Chloe", "Hiro"]

#: (answer as the model wrote it, the message it holds)
CUT = [
    pytest.param(
        "… I'm actually going to the gym tonight.\n\nWhat's your next message?\n\nLemon-flavored"
        " beer …",
        "… I'm actually going to the gym tonight.",
        id="the-issue-blank-line-then-next-message",
    ),
    pytest.param(
        "Oh nice! I'm actually going to the gym tonight. What's your next message? Lemon-flavored"
        " beer is",
        "Oh nice! I'm actually going to the gym tonight.",
        id="the-issue-without-the-blank-lines",
    ),
    pytest.param(
        "You think.\n\nThis conversation so far has been a casual group chat with Chloe, Hiro.",
        "You think.",
        id="smollm2-blank-line",
    ),
    pytest.param(
        "System-II\nYou're in a casual group chat with Ben, Hiro.\nThat's not a joke. You just"
        " have to keep it light and fun!\n\n[message:4] System-III\nBen said this:",
        "System-II",
        id="smollm2-situation-contracted",
    ),
    pytest.param(
        "We had a wonderful evening at the beach. A few of us were there for the gym and some"
        " other stuff, but you could've just as well gone to the lake.\nBen: [subscriptioNA] I'm"
        " not sure what's going on.\nChloe: [subscriptioNA] It seems like the weather changed"
        " overnight.",
        "We had a wonderful evening at the beach. A few of us were there for the gym and some"
        " other stuff, but you could've just as well gone to the lake.",
        id="smollm2-other-participants-lines",
    ),
    pytest.param(
        "I'm so glad you decided to share your plans with Ben, but I have to add that if there's"
        " anything going on at the gym tonight, it'd probably be a great place for beer.\n\nYou"
        " just explained, and I'll add it to my list of things to do in the gym!\n\nLater, let's"
        " talk about a fun party idea. What's the lat",
        "I'm so glad you decided to share your plans with Ben, but I have to add that if there's"
        " anything going on at the gym tonight, it'd probably be a great place for beer.",
        id="smollm2-cut-at-the-limit-after-a-blank-line",
    ),
    pytest.param(
        "Just noticed the previous message.\nYou decided to write your next chat message?",
        "Just noticed the previous message.",
        id="smollm2-the-instruction-inside-a-later-line",
    ),
    pytest.param(
        "Sounds fun! [message:12] Ben: sure, when?",
        "Sounds fun!",
        id="transcript-line",
    ),
    pytest.param(
        "I'd love that, count me in.\nBen: Me too!\nChloe: Same here.",
        "I'd love that, count me in.",
        id="another-participants-turn",
    ),
    pytest.param(
        "Totally agree.\n**Hiro:** what about Sunday?",
        "Totally agree.",
        id="a-bold-name-line",
    ),
    pytest.param(
        "Great idea. You decided to say this thought out loud: bring snacks",
        "Great idea.",
        id="the-instruction-after-a-sentence",
    ),
    pytest.param(
        "Let's go hiking!\nUser: where?",
        "Let's go hiking!",
        id="a-chat-role-line",
    ),
    pytest.param(
        "See you there<|im_end|>\n<|im_start|>user",
        "See you there",
        id="a-chat-template-token",
    ),
    pytest.param(
        "Ha, same here! You are Chloe. A nurse from Lyon who sails.",
        "Ha, same here!",
        id="the-persona-after-a-message",
    ),
    pytest.param(
        "Sure thing. It's your turn to speak. Write your next chat message.",
        "Sure thing.",
        id="the-response-prompt-contracted",
    ),
]

#: Messages that merely look like scaffolding: kept whole.
KEPT = [
    pytest.param("What about you: do you still sail?", id="about-you-inside-a-sentence"),
    pytest.param("Ben: I think you'd love the coast.", id="addressing-someone-at-the-start"),
    pytest.param("It is lovely out there, you are right.", id="it-is-you-are"),
    pytest.param("Thanks, Ben. You are Ana's brother, right?", id="you-are-a-name-in-a-question"),
    pytest.param("Line one\nline two, same message.", id="a-single-line-break"),
    pytest.param("I sent my message yesterday.", id="the-word-message"),
    pytest.param("Ben, it is your turn to speak!", id="a-prompt-phrase-inside-the-first-line"),
]


@pytest.mark.parametrize(("raw", "message"), CUT)
def test_a_run_on_is_cut_where_the_scaffolding_starts(raw: str, message: str) -> None:
    assert utterance.cut_at_scaffolding(raw, names=NAMES) == message


@pytest.mark.parametrize("raw", KEPT)
def test_a_message_without_scaffolding_is_kept_whole(raw: str) -> None:
    assert utterance.scaffolding_start(raw, names=NAMES) is None
    assert utterance.cut_at_scaffolding(raw, names=NAMES) == raw


def test_a_name_line_is_scaffolding_only_for_the_participants() -> None:
    raw = "I'd love that.\nBen: Me too!"
    assert utterance.cut_at_scaffolding(raw, names=NAMES) == "I'd love that."
    assert utterance.cut_at_scaffolding(raw, names=["Ana", "Zoe"]) == raw


@pytest.mark.parametrize(
    "raw",
    [
        "You decided to say this thought out loud: The gym is my plan, maybe beer after.",
        "You decide to say this thought out loud: The gym is my plan, maybe beer after.\n\nYour"
        " next chat message is: [message]",
    ],
    ids=["decided", "decide-then-run-on"],
)
def test_an_echo_of_the_instruction_is_not_the_end_of_the_message_but_is_taken_off(
    raw: str,
) -> None:
    # SmolLM2 often repeats the line with the thought before saying it.
    end = utterance.scaffolding_start(raw, names=NAMES)
    assert end is None or end > 50
    said = utterance.without_echo(utterance.cut_at_scaffolding(raw, names=NAMES))
    assert said == "The gym is my plan, maybe beer after."


def test_any_instruction_echoed_with_a_colon_before_the_message_is_taken_off() -> None:
    echoed = "Write your next chat message: Anyone up for tacos?\n\nConversation so far:"
    assert utterance.without_echo(utterance.cut_at_scaffolding(echoed)) == "Anyone up for tacos?"


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param("Conversation so far:\n[message:1] Ana: hi", id="the-transcript"),
        pytest.param("Conversation so far: [message:1] Ana: hi", id="the-transcript-inline"),
        pytest.param("[message:3] Ben: Sounds good.", id="a-transcript-line"),
        pytest.param(
            "You are Hiro. A 26-year-old bicycle courier in Osaka who plays jazz piano and takes"
            " street photos. You are Chloe.",
            id="llama-server-smollm2-recites-the-persona",
        ),
        pytest.param("Write your next chat message.", id="the-instruction"),
        pytest.param(
            "You're in a casual group chat with Ben, Chloe.\nSomeone just posted a message.\n"
            "[message:1] Ben: Anyone got plans for tonight?\nChloe: Lemon-flavored beer at the"
            " lake!",
            id="smollm2-the-situation",
        ),
        pytest.param(
            "You've decided to say this thought out loud, but in a different way.\n\"Ben: I'm"
            ' planning to drink a bit of beer after tonight at the gym," you choose not to use'
            " your own name prefix or quotes.",
            id="smollm2-about-the-instruction",
        ),
    ],
)
def test_an_answer_that_is_only_scaffolding_leaves_nothing(raw: str) -> None:
    assert utterance.without_echo(utterance.cut_at_scaffolding(raw, names=NAMES)) == ""


# -- the phrases come from the prompts ---------------------------------------------------------


def _rendered() -> str:
    """Every utterance prompt as sent, in each situation that changes its words."""
    persona = domain.Persona(
        id="ana", name="Ana", description="A baker.", style="warm", facts=["I bake bread."]
    )
    msg = domain.Message(id=1, speaker="Ben", text="Who likes bread?", step=0, at="")
    thought = domain.Thought(
        id=3, agent="Ana", text="I bake every day.", system=2, created_step=1, last_access=1
    )
    stimuli = [domain.Stimulus(ref="memory:1", text="I bake bread.", saliency=0.5)]
    texts = []
    cases: list[tuple[domain.TriggerKind, list[domain.Message]]] = [
        ("new_message", [msg]),
        ("pause", []),
    ]
    for trigger, recent in cases:
        ctx = Context(
            agent="Ana",
            persona=persona,
            participants=["Ana", "Ben"],
            recent=recent,
            latest=msg if recent else None,
            trigger=trigger,
            step=1,
            interpretation="Ben asks the group.",
        )
        for messages in (
            prompts.articulation_messages(ctx, thought, stimuli, proactive_tone=False),
            prompts.response_messages(ctx),
        ):
            texts += [m["content"] for m in messages]
    return "\n".join(texts)


def test_every_scaffolding_phrase_is_part_of_the_utterance_prompts() -> None:
    rendered = _rendered()
    missing = [p for p in prompts.UTTERANCE_SCAFFOLDING if p not in rendered]
    assert missing == []


def test_the_stop_sequences_are_the_prompts_own_and_at_most_four() -> None:
    rendered = _rendered()
    assert len(prompts.UTTERANCE_STOPS) <= 4  # OpenAI's limit
    assert all(s in rendered for s in prompts.UTTERANCE_STOPS)
    # A stop the model meets at the start of its answer would leave it nothing to say: SmolLM2
    # echoes the line with the thought first.
    echo = "You decided to say this thought out loud: I bake every day."
    assert not any(s in echo for s in prompts.UTTERANCE_STOPS)
