"""Prompt templates and response schemas for the LLM-backed mind (our own wording)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from playground import domain
from playground.cognition.base import (
    SLOT_INTERPRETATION,
    SLOT_NEXT_REASON,
    SLOT_NEXT_SPEAKER,
    SLOT_RATING,
    SLOT_REASON_AGAINST,
    SLOT_REASON_FOR,
    SLOT_STIMULI,
    SLOT_SYSTEM,
    SLOT_THOUGHT,
    SLOT_THOUGHT_ID,
    Context,
)


class InterpretationOut(BaseModel):
    interpretation: str = Field(description="One sentence.")


class TurnTypeOut(BaseModel):
    next_speaker: str = Field(
        description="A participant's name if the message hands the turn to them, else 'anyone'."
    )


class ThoughtOut(BaseModel):
    system: int = Field(ge=1, le=2)
    text: str
    stimuli: list[str]


class ThoughtsOut(BaseModel):
    thoughts: list[ThoughtOut]


class EvaluationOut(BaseModel):
    reasons_for: list[str]
    reasons_against: list[str]
    rating: int = Field(ge=1, le=5)


class ThoughtEvaluationOut(BaseModel):
    thought_id: int
    reasons_for: list[str]
    reasons_against: list[str]
    rating: int = Field(ge=1, le=5)


class EvaluationsOut(BaseModel):
    evaluations: list[ThoughtEvaluationOut]


#: The evaluation prompts ask for the two strongest reasons each way: the schemas sent say so.
REASON_LENGTHS = {"reasons_for": 2, "reasons_against": 2}


HEURISTICS_TEXT = """\
- Relevance: does it connect to the topic, to my interests, memories or recent thoughts?
- Information gap: does it fill something missing, clear up confusion or ask what is unclear?
- Expected impact: would it add depth, steer the talk or open a new topic, rather than be redundant?
- Urgency: is it time-sensitive, e.g. correcting an error or misunderstanding right now?
- Coherence: does it follow logically from the last message without breaking the flow?
- Originality: is it new, not a repeat of what was already said?
- Balance: have I spoken much less or much more than the others? Should I leave room?
- Dynamics: is there a silence to fill, or are others mid-exchange and about to reply?"""

LEVELS_TEXT = """\
1 = very low: would stay quiet even if invited to speak.
2 = low: would only say it after a long silence.
3 = neutral: could say it or not.
4 = high: wants to take the next turn to say it.
5 = very high: would interrupt someone to say it."""


#: How an utterance is asked for: the message alone (a model's reply is posted as it is).
MESSAGE_ONLY = "Reply with the message text only, no name prefix or quotes."

#: Phrases of the utterance prompts (:func:`articulation_messages`, :func:`response_messages`
#: and the :func:`situation` they share) that a small model runs on into after its message:
#: where one starts, the message has ended (:mod:`playground.cognition.utterance` cuts there).
#: Each is a literal part of those prompts (tests/cognition/test_utterance.py checks it).
UTTERANCE_SCAFFOLDING = (
    "Write your next chat message",
    "It is your turn to speak",
    "You decided to say this thought out loud",
    "What inspired it:",
    "Conversation so far:",
    "What the last message seems to mean:",
    "You are in a casual group chat with",
    "Someone just posted a message.",
    "Nobody has said anything for a while.",
    "When you decide to say a thought out loud",
    "When it is your turn to speak",
    "Reply with the message text only",
    "Speaking style:",
    "(no messages yet)",
)

#: Stop sequences of the utterance requests (OpenAI takes at most four): the blank line between
#: the prompt's sections, a transcript line, and the two phrases a run-on most often reaches. A
#: phrase a model echoes at the start of its answer (SmolLM2: "You decided to say this thought
#: out loud: ...") is left out, or the server would stop before the message.
UTTERANCE_STOPS = ("\n\n", "[message:", "Conversation so far:", "Write your next chat message")


def transcript(messages: list[domain.Message]) -> str:
    if not messages:
        return "(no messages yet)"
    return "\n".join(f"[message:{m.id}] {m.speaker}: {m.text}" for m in messages)


def persona_block(ctx: Context) -> str:
    p = ctx.persona
    if p is None:
        return f"You are {ctx.agent}."
    facts = "\n".join(f"- {f}" for f in p.facts)
    return f"You are {p.name}. {p.description}\nSpeaking style: {p.style or 'natural'}\nAbout you:\n{facts}"


def situation(ctx: Context) -> str:
    others = ", ".join(p for p in ctx.participants if p != ctx.agent) or "nobody yet"
    trig = (
        "Someone just posted a message."
        if ctx.trigger == "new_message"
        else "Nobody has said anything for a while."
    )
    interp = (
        f"\nWhat the last message seems to mean: {ctx.interpretation}" if ctx.interpretation else ""
    )
    return f"You are in a casual group chat with {others}.\n{trig}{interp}\n\nConversation so far:\n{transcript(ctx.recent)}"


def slot(description: str) -> str:
    """A value in a reply shape: its description between angle brackets, never a sample a model
    could copy (see :func:`playground.cognition.base.placeholder_reason`)."""
    return f"<{description}>"


#: The reply shapes, in the system messages: each field described, no value to copy.
INTERPRETATION_SHAPE = f'{{"interpretation": {slot(SLOT_INTERPRETATION)}}}'
TURN_TYPE_SHAPE = f'{{"next_speaker": {slot(SLOT_NEXT_SPEAKER)}}}'
THOUGHTS_SHAPE = (
    f'{{"thoughts": [{{"system": {slot(SLOT_SYSTEM)}, "text": {slot(SLOT_THOUGHT)},'
    f' "stimuli": [{slot(SLOT_STIMULI)}]}}]}}'
)
_REASONS_SHAPE = (
    f'"reasons_for": [{slot(SLOT_REASON_FOR)}, {slot(SLOT_NEXT_REASON)}],'
    f' "reasons_against": [{slot(SLOT_REASON_AGAINST)}, {slot(SLOT_NEXT_REASON)}],'
    f' "rating": {slot(SLOT_RATING)}'
)
EVALUATION_SHAPE = f"{{{_REASONS_SHAPE}}}"
BATCH_EVALUATION_SHAPE = (
    f'{{"evaluations": [{{"thought_id": {slot(SLOT_THOUGHT_ID)}, {_REASONS_SHAPE}}}]}}'
)

# The stable part of each prompt (persona, task, reply shape) comes first and the conversation
# after it: a server's prompt cache reuses the longest prefix a request repeats.

INTERPRET_SYSTEM = (
    "You read group chats closely and explain what people mean. You are shown the participants,"
    " the earlier messages and the latest message. In one sentence, say what the speaker of the"
    " latest message said in this context and what they might be thinking or hoping for."
    f" Answer in JSON: {INTERPRETATION_SHAPE}."
)

TURN_TYPE_SYSTEM = (
    "You analyse turn-taking in multi-party chats. You are shown the participants and the last"
    " messages. Say whether the latest message hands the next turn to one specific participant"
    " (for example by asking them by name), or is open for anyone to answer."
    f' Answer in JSON: {TURN_TYPE_SHAPE}, with "anyone" when the turn is open.'
)

THINKING_TEXT = (
    "You think privately before you speak. You are asked for thoughts of two kinds:\n"
    "- System-1 thoughts: quick, automatic reactions to the last message (acknowledging, showing"
    " interest, agreeing);\n"
    "- System-2 thoughts: deliberate ideas built from what comes to mind (your memories, earlier"
    " messages, your earlier thoughts).\n"
    "Each thought is under 15 words, written as your own private thinking, in character, and"
    ' different from the others. For each, list in "stimuli" the ids of what it came from: the'
    " ids shown in brackets before each message and each thing that comes to mind, written as"
    " shown but without the brackets."
    f" Answer in JSON: {THOUGHTS_SHAPE}."
)

EVALUATION_TEXT = (
    "You judge your own motivation honestly. Rate how strongly you want to say a thought out"
    f" loud right now, weighing:\n{HEURISTICS_TEXT}\n\nLevels:\n{LEVELS_TEXT}\n\n"
)


def interpret_messages(
    message: domain.Message, recent: list[domain.Message], participants: list[str]
) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": INTERPRET_SYSTEM},
        {
            "role": "user",
            "content": (
                f"Participants: {', '.join(participants)}\n\nEarlier messages:\n{transcript(recent)}\n\n"
                f"Latest message, by {message.speaker}: {message.text}"
            ),
        },
    ]


def turn_type_messages(
    message: domain.Message, recent: list[domain.Message], participants: list[str]
) -> list[dict[str, str]]:
    others = [p for p in participants if p != message.speaker]
    return [
        {"role": "system", "content": TURN_TYPE_SYSTEM},
        {
            "role": "user",
            "content": (
                f"Participants: {', '.join(participants)}\n\nLast messages:\n{transcript([*recent[-4:], message])}\n\n"
                f"Does {message.speaker}'s latest message hand the next turn to one of "
                f'{", ".join(others)}, or is it open? Name that participant, or "anyone".'
            ),
        },
    ]


def stimuli_block(stimuli: list[domain.Stimulus]) -> str:
    if not stimuli:
        return "(nothing particular comes to mind)"
    return "\n".join(f"[{s.ref}] {s.text}" for s in stimuli)


def thoughts_messages(
    ctx: Context, stimuli: list[domain.Stimulus], *, system1: int, system2: int
) -> list[dict[str, str]]:
    ask = []
    if system1:
        ask.append(
            f"{system1} System-1 thought(s): quick, automatic reactions to the last message (acknowledging, showing interest, agreeing)"
        )
    if system2:
        ask.append(
            f"{system2} System-2 thought(s): deliberate ideas built from what comes to mind above (your memories, earlier messages, your earlier thoughts)"
        )
    return [
        {"role": "system", "content": f"{persona_block(ctx)}\n\n{THINKING_TEXT}"},
        {
            "role": "user",
            "content": (
                f"{situation(ctx)}\n\nWhat comes to mind (ids in brackets):\n{stimuli_block(stimuli)}\n\n"
                f"Form {' and '.join(ask)}."
            ),
        },
    ]


def _eval_situation(ctx: Context) -> str:
    return f"{situation(ctx)}\n\nYou have spoken {ctx.own_turns} of {ctx.total_turns} messages so far.\n\n"


def evaluation_messages(ctx: Context, thought: domain.Thought) -> list[dict[str, str]]:
    return [
        {
            "role": "system",
            "content": (
                f"{persona_block(ctx)}\n\n{EVALUATION_TEXT}First give the two strongest reasons to"
                " say the thought now, then the two strongest reasons not to, then the rating."
                f" Answer in JSON: {EVALUATION_SHAPE}."
            ),
        },
        {"role": "user", "content": _eval_situation(ctx) + f"Thought: {thought.text}"},
    ]


def batch_evaluation_messages(ctx: Context, thoughts: list[domain.Thought]) -> list[dict[str, str]]:
    listed = "\n".join(f"[{t.id}] {t.text}" for t in thoughts)
    return [
        {
            "role": "system",
            "content": (
                f"{persona_block(ctx)}\n\n{EVALUATION_TEXT}For every thought, in the order listed,"
                " first give the two strongest reasons to say it now, then the two strongest"
                f" reasons not to, then the rating. Answer in JSON: {BATCH_EVALUATION_SHAPE}."
            ),
        },
        {"role": "user", "content": _eval_situation(ctx) + f"Thoughts:\n{listed}"},
    ]


def articulation_messages(
    ctx: Context, thought: domain.Thought, stimuli: list[domain.Stimulus], *, proactive_tone: bool
) -> list[dict[str, str]]:
    tone = (
        " Word it confidently and assertively: state your view plainly, without hedging."
        if proactive_tone
        else ""
    )
    background = f"\nWhat inspired it:\n{stimuli_block(stimuli)}" if stimuli else ""
    return [
        {
            "role": "system",
            "content": (
                f"{persona_block(ctx)}\n\nWhen you decide to say a thought out loud, write it as"
                " your next chat message: one or two short, natural sentences in your own voice,"
                f" as a text chat message.{tone} {MESSAGE_ONLY}"
            ),
        },
        {
            "role": "user",
            "content": (
                f"{situation(ctx)}\n\nYou decided to say this thought out loud: {thought.text}{background}\n\n"
                "Write your next chat message."
            ),
        },
    ]


def response_messages(ctx: Context) -> list[dict[str, str]]:
    """A baseline agent's turn (next-speaker or reactive): it answers from its static persona and
    the conversation alone, with no thoughts, memories retrieved or motivation."""
    situation_text = situation(
        ctx
    )  # the interpretation is left out by the caller for baselines (see Room)
    return [
        {
            "role": "system",
            "content": (
                f"{persona_block(ctx)}\n\nWhen it is your turn to speak, write your next chat"
                " message: one or two short, natural sentences in your own voice, as a text chat"
                f" message, in character. {MESSAGE_ONLY}"
            ),
        },
        {
            "role": "user",
            "content": f"{situation_text}\n\nIt is your turn to speak. Write your next chat message.",
        },
    ]
