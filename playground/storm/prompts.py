"""The simulated user's prompt and answer schema (our own wording; the facts are STORM's, L.6).

The prompt is built from the profile's *known* attributes only: an attribute listed in
``profile.unknown`` is named as something the user is unsure about, never with its value. It
holds the difficulty instructions per dimension, the example messages, the conversation so far
(visible messages only) and the user's own earlier hidden states. Nothing about any other
participant's hidden state exists to be put in it.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from playground.domain.simulated_user import USER_LENGTH, HiddenState, UserProfile

#: Messages of the conversation shown to the user model (the latest ones).
SHOWN_MESSAGES = 30
#: Earlier hidden states of its own shown to the user model (the latest ones).
SHOWN_STATES = 5


class ScoreOut(BaseModel):
    score: float = Field(description="A number from 0.0 to 1.0.")
    explanation: str = Field(description="One short sentence: why this score.")


class UserAnswerOut(BaseModel):
    """What the user model answers each turn (sent as the JSON schema)."""

    message: str = Field(
        description=f"What you say aloud, {USER_LENGTH[0]}-{USER_LENGTH[1]} characters."
    )
    inner_thoughts: str = Field(description="What you privately think right now (1-2 sentences).")
    satisfaction: ScoreOut = Field(description="How satisfied you are with the help so far.")
    clarity: ScoreOut = Field(description="How clearly you now know what you want.")
    emotion: str = Field(description="Your private emotion, one word.")
    intent: str = Field(description="What you are really trying to do now, one or two words.")


#: How a user at each level (1 precise ... 5 ambiguous) expresses themself, per dimension
#: (STORM appendix D.1; our wording).
DIFFICULTY_TEXT: dict[str, dict[int, str]] = {
    "style": {
        1: "organise what you say clearly and logically, one point after another",
        2: "mostly organised, with the odd aside",
        3: "somewhat loose: points come in the order they occur to you",
        4: "disorganised: jump between points and leave some half-finished",
        5: "incoherent at times: fragments, changes of direction, little structure",
    },
    "length": {
        1: "concise but complete: say everything needed in few words",
        2: "mostly well sized, occasionally a bit short or long",
        3: "sometimes too brief to be useful, sometimes rambling",
        4: "usually either too terse or padded with irrelevant detail",
        5: "either a few words that leave out what matters, or long and rambling",
    },
    "content": {
        1: "give every detail the helper needs, explicitly",
        2: "give most details; a minor one may be missing",
        3: "leave out some details you assume are obvious",
        4: "leave out important details; the helper must guess or ask",
        5: "omit the critical information; hint at it at best",
    },
    "tone": {
        1: "keep a calm, appropriate tone that fits what you say",
        2: "mostly steady, with mild shows of feeling",
        3: "let your mood show and shift a little",
        4: "let your mood swing noticeably, not always matching your words",
        5: "your emotions fluctuate and often clash with what you are saying",
    },
}

CLARITY_SCALE = (
    "0.0 = I do not know what I want; 0.5 = I know roughly what I want but not the details;"
    " 1.0 = I could state exactly what I need and how I would judge the result"
)


#: A score's shape in the answer: each field described, no value a model could copy.
SCORE_SHAPE = '{"score": <a number from 0.0 to 1.0>, "explanation": <one short sentence: why>}'


def _label(key: str) -> str:
    return key.replace("_", " ")


def _items(values: dict[str, str]) -> list[str]:
    return [f"- {_label(k)}: {v}" for k, v in values.items()]


def _unknown_names(profile: UserProfile) -> list[str]:
    return [_label(u.split(".", 1)[-1]) for u in profile.unknown]


def system_prompt(profile: UserProfile) -> str:
    """Who the simulated user is and how it answers: its known profile, difficulty, examples."""
    lines = [
        f"You are {profile.name}, a person (not an assistant) taking part in a text chat."
        # The description is written from the whole profile, so it may state what the user
        # does not know about themself: it is left out as soon as anything is unknown.
        + (f" {profile.description}" if profile.description and not profile.unknown else ""),
        "Everything below is private: it is who you are, not something to recite.",
    ]
    for title, section in (
        ("About you", "base"),
        ("Your habits and traits", "traits"),
        ("Your situation", "context"),
    ):
        known = profile.known(section)  # type: ignore[arg-type]
        if known:
            lines += ["", f"{title}:", *_items(known)]
    task = profile.task
    lines += ["", f"What you want to get done: {task.task} ({task.category})."]
    known_task = profile.known("task")
    if known_task:
        lines += ["Details you have in mind:", *_items(known_task)]
    if task.requirements and "task.requirements" not in profile.unknown:
        lines += ["What you need:", *(f"- {r}" for r in task.requirements)]
    if task.success_criteria and "task.success_criteria" not in profile.unknown:
        lines += ["You would be happy if:", *(f"- {c}" for c in task.success_criteria)]
    unsure = _unknown_names(profile)
    if unsure:
        lines += [
            "",
            "You have not made up your mind about these, and do not know them yourself: "
            + ", ".join(unsure)
            + ". Do not invent answers for them; if asked, say you are not sure.",
        ]
    d = profile.difficulty
    lines += [
        "",
        "How you express yourself (1 = precise, 5 = ambiguous):",
        f"- style {d.style}/5: {DIFFICULTY_TEXT['style'][d.style]}",
        f"- length {d.length}/5: {DIFFICULTY_TEXT['length'][d.length]}",
        f"- content {d.content}/5: {DIFFICULTY_TEXT['content'][d.content]}",
        f"- tone {d.tone}/5: {DIFFICULTY_TEXT['tone'][d.tone]}",
        "Reveal what you want gradually, as a real person would, not all at once.",
    ]
    if profile.examples:
        lines += ["", "Messages in your voice:", *(f"{i}. {e}" for i, e in enumerate(profile.examples, 1))]  # fmt: skip
    lo, hi = USER_LENGTH
    lines += [
        "",
        "Each turn, answer with a JSON object:",
        f'- "message": what you say aloud, between {lo} and {hi} characters;',
        '- "inner_thoughts": what you privately think (nobody else sees it);',
        f'- "satisfaction": {SCORE_SHAPE}: how satisfied you are with the help so far;',
        f'- "clarity": {SCORE_SHAPE}: how clearly you know what you want now ({CLARITY_SCALE});',
        '- "emotion": one word for how you feel; "intent": one or two words for what you are'
        " really trying to do.",
        "Stay in character.",
    ]
    return "\n".join(lines)


def _state_line(turn: int, s: HiddenState) -> str:
    # A rating the user's answer did not give is said to be missing, never shown as a number
    # (the stored placeholder would otherwise read as a rating the user gave).
    sat, clar = s.rated_satisfaction, s.rated_clarity
    line = f"- your turn {turn}: satisfaction {'not given' if sat is None else f'{sat:.2f}'}"
    if s.satisfaction_explanation:
        line += f" ({s.satisfaction_explanation})"
    line += f"; clarity {'not given' if clar is None else f'{clar:.2f}'}"
    if s.emotion:
        line += f"; felt {s.emotion}"
    if s.intent:
        line += f"; intent {s.intent}"
    if s.inner_thoughts:
        line += f"; thought: {s.inner_thoughts}"
    return line


def turn_prompt(
    me: str,
    messages: list[tuple[str, str]],
    previous: list[HiddenState],
    addressed_by: str | None,
) -> str:
    """The conversation so far, the user's own earlier states, and what is asked now."""
    lines: list[str] = []
    if previous:
        first = max(0, len(previous) - SHOWN_STATES)
        lines += ["How you felt at your earlier turns (private):"]
        lines += [_state_line(i, s) for i, s in enumerate(previous[first:], start=first)]
        lines.append("")
    shown = messages[-SHOWN_MESSAGES:]
    if shown:
        lines.append("The conversation so far:")
        lines += [f"{'You' if who == me else who}: {text}" for who, text in shown]
    else:
        lines.append("Nobody has said anything yet: you start the conversation.")
    lines.append("")
    if addressed_by:
        lines.append(f"{addressed_by} is talking to you. Answer as {me}.")
    elif shown:
        lines.append(f"Say something now, as {me}.")
    else:
        lines.append(f"Open the conversation as {me}: say what you are after.")
    lines.append("Reply with the JSON object only.")
    return "\n".join(lines)


def user_messages(
    profile: UserProfile,
    me: str,
    messages: list[tuple[str, str]],
    previous: list[HiddenState],
    addressed_by: str | None,
) -> list[dict[str, str]]:
    """The chat messages of one simulated user turn."""
    return [
        {"role": "system", "content": system_prompt(profile)},
        {"role": "user", "content": turn_prompt(me, messages, previous, addressed_by)},
    ]


def retry_short(length: int) -> str:
    """What the model is told when its message was too short (``short_messages="retry"``)."""
    lo, hi = USER_LENGTH
    return (
        f"Your message was {length} characters; it must be between {lo} and {hi}."
        " Answer again with the JSON object only."
    )
