"""The user study's instruments: what people are asked after each conversation and at the end.

The ten statements are the participant questionnaire (:data:`playground.rating.store.
PARTICIPANT_ITEMS`: the paper's user-study constructs, §7 Table 4, in our words), each rated 1
(strongly disagree) to 7 (strongly agree). The three proactivity styles are
the study's conditions, named by the proactivity presets that implement them
(:data:`playground.settings.PRESETS`), with the description a participant matches them by. The
retrospective review asks the formative study's three questions (§4): what, why, when.
"""

from __future__ import annotations

from dataclasses import dataclass

from playground.rating.store import PARTICIPANT_ITEMS, Item

#: Rated about the conversation's agent after each conversation of a study plan: the
#: participant questionnaire the window gives its own human.
USER_STUDY_METRICS: tuple[Item, ...] = PARTICIPANT_ITEMS


@dataclass(frozen=True)
class Style:
    """One proactivity condition: the preset that implements it, as a participant sees it."""

    key: str
    label: str
    description: str


#: The user study's three conditions, in the paper's order.
STYLES: tuple[Style, ...] = (
    Style(
        "non-stop-chatter",
        "Non-stop chatter",
        "Took part all the time, even when it had little to add.",
    ),
    Style(
        "active-contributor",
        "Active contributor",
        "Shared its thoughts whenever they were relevant, without taking over.",
    ),
    Style(
        "selective-participant",
        "Selective participant",
        "Spoke only when it really cared about the topic, and was quiet otherwise.",
    ),
)

#: One topic per conversation of a plan, in order (the paper's three social topics).
TOPICS: tuple[str, ...] = ("hobbies and interests", "travel experiences", "weekend activities")

#: Retrospective review: "did you want to say it?" and "when would you have spoken?".
WANTED: dict[str, str] = {"yes": "Yes", "no": "No", "unsure": "Not sure"}
TIMINGS: dict[str, str] = {
    "immediately": "Right away",
    "pause": "At a pause",
    "after": "After a particular message",
    "never": "I would not have spoken",
}
