"""Prompt templates and response schemas for the LLM-backed mind (our own wording)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from playground import domain
from playground.cognition.base import Context


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


def interpret_messages(
    message: domain.Message, recent: list[domain.Message], participants: list[str]
) -> list[dict[str, str]]:
    return [
        {
            "role": "system",
            "content": "You read group chats closely and explain what people mean. Answer in JSON.",
        },
        {
            "role": "user",
            "content": (
                f"Participants: {', '.join(participants)}\n\nEarlier messages:\n{transcript(recent)}\n\n"
                f"Latest message, by {message.speaker}: {message.text}\n\n"
                "In one sentence, say what the speaker said in this context and what they might be thinking or hoping for. "
                'Reply as {"interpretation": "..."}.'
            ),
        },
    ]


def turn_type_messages(
    message: domain.Message, recent: list[domain.Message], participants: list[str]
) -> list[dict[str, str]]:
    others = [p for p in participants if p != message.speaker]
    return [
        {
            "role": "system",
            "content": "You analyse turn-taking in multi-party chats. Answer in JSON.",
        },
        {
            "role": "user",
            "content": (
                f"Participants: {', '.join(participants)}\n\nLast messages:\n{transcript([*recent[-4:], message])}\n\n"
                f"Does {message.speaker}'s latest message hand the next turn to one specific participant (for example by "
                f'asking them by name), or is it open for anyone to answer? Reply as {{"next_speaker": "<name>"}} with one of '
                f'{", ".join(others)}, or "anyone" when the turn is open.'
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
            f"{system2} System-2 thought(s): deliberate ideas built from what comes to mind below (your memories, earlier messages, your earlier thoughts)"
        )
    return [
        {
            "role": "system",
            "content": persona_block(ctx)
            + "\n\nYou think privately before you speak. Answer in JSON.",
        },
        {
            "role": "user",
            "content": (
                f"{situation(ctx)}\n\nWhat comes to mind (ids in brackets):\n{stimuli_block(stimuli)}\n\n"
                f"Form {' and '.join(ask)}. Each thought is under 15 words, written as your own private thinking, in character, "
                'and different from the others. For each, list the ids it came from in "stimuli" (e.g. "memory:3", "message:5", '
                '"thought:2"). Reply as {"thoughts": [{"system": 1 or 2, "text": "...", "stimuli": ["..."]}]}.'
            ),
        },
    ]


def _eval_intro(ctx: Context) -> str:
    return (
        f"{situation(ctx)}\n\nYou have spoken {ctx.own_turns} of {ctx.total_turns} messages so far.\n\n"
        f"Rate how strongly you want to say a thought out loud right now, weighing:\n{HEURISTICS_TEXT}\n\nLevels:\n{LEVELS_TEXT}\n\n"
    )


def evaluation_messages(ctx: Context, thought: domain.Thought) -> list[dict[str, str]]:
    return [
        {
            "role": "system",
            "content": persona_block(ctx)
            + "\n\nYou judge your own motivation honestly. Answer in JSON.",
        },
        {
            "role": "user",
            "content": (
                _eval_intro(ctx)
                + f"Thought: {thought.text}\n\nFirst give the two strongest reasons to say it now, then the two strongest "
                'reasons not to, then the rating. Reply as {"reasons_for": ["...", "..."], "reasons_against": ["...", "..."], "rating": 1-5}.'
            ),
        },
    ]


def batch_evaluation_messages(ctx: Context, thoughts: list[domain.Thought]) -> list[dict[str, str]]:
    listed = "\n".join(f"[{t.id}] {t.text}" for t in thoughts)
    return [
        {
            "role": "system",
            "content": persona_block(ctx)
            + "\n\nYou judge your own motivation honestly. Answer in JSON.",
        },
        {
            "role": "user",
            "content": (
                _eval_intro(ctx)
                + f"Thoughts:\n{listed}\n\nFor every thought, in the order listed, first give the two strongest reasons to "
                "say it now, then the two strongest reasons not to, then the rating. Reply as "
                '{"evaluations": [{"thought_id": <id>, "reasons_for": ["...", "..."], "reasons_against": ["...", "..."], "rating": 1-5}]}.'
            ),
        },
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
        {"role": "system", "content": persona_block(ctx)},
        {
            "role": "user",
            "content": (
                f"{situation(ctx)}\n\nYou decided to say this thought out loud: {thought.text}{background}\n\n"
                f"Write your next chat message: one or two short, natural sentences in your own voice, as a text chat message.{tone} "
                "Reply with the message text only, no name prefix or quotes."
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
        {"role": "system", "content": persona_block(ctx)},
        {
            "role": "user",
            "content": (
                f"{situation_text}\n\nIt is your turn to speak. Write your next chat message: one or two"
                " short, natural sentences in your own voice, as a text chat message, in character."
                " Reply with the message text only, no name prefix or quotes."
            ),
        },
    ]
