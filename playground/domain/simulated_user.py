"""The records of STORM-style simulated users: profile, difficulty, hidden state, judgement.

docs/spec.md §2.2–§2.5. A :class:`UserProfile` is private to its simulated user; the assistant
may see :meth:`UserProfile.masked` (``--profile-access``), never the whole. A :class:`HiddenState`
is produced with every message of a simulated user and is stored, shown to the researcher and never
put into another participant's prompt.

Scales (documented in the README):
- satisfaction: 0.0–1.0, the paper's scale; a turn whose satisfaction could not be read stores
  the placeholder :data:`MISSING_SATISFACTION` (0.5, the column cannot be NULL) flagged
  ``satisfaction_missing``, and no metric counts it (:attr:`HiddenState.rated_satisfaction`);
- intent clarity: 0.0–1.0 (0 = "I do not know what I want", 0.5 = "I know roughly what I want but
  not the details", 1 = "I could state exactly what I need and how to judge it"), rated by the
  simulated user every turn, so that Δclarity and Δsatisfaction share one scale. A turn that
  gave none keeps the previous turn's value (or the start value) with one of
  :data:`CLARITY_NOT_RATED` as its explanation, and no metric counts it
  (:attr:`HiddenState.rated_clarity`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

#: Satisfaction stored for a turn whose score could not be read (the paper's default, appendix
#: L.8). A placeholder only: ``satisfaction_missing`` is set and no metric counts it.
MISSING_SATISFACTION = 0.5
#: The clarity explanations of a turn that gave no readable clarity: the value was carried over
#: from the previous turn, or is the start value from the profile's uncertainty.
CLARITY_CARRIED = "(not rated this turn: carried over from the previous turn)"
CLARITY_START = "(not rated: the start value from the profile's uncertainty)"
CLARITY_NOT_RATED = (CLARITY_CARRIED, CLARITY_START)
#: The paper's uncertainty levels: the share (%) of profile attributes unknown to the user.
UNCERTAINTIES = (0, 40, 60, 80)
#: Message length limits in characters (STORM appendix L, table 5).
USER_LENGTH = (20, 100)
ASSISTANT_LENGTH = (30, 150)
#: Task categories (appendix I): 5 categories × 3 tasks.
CATEGORIES = ("technology", "healthcare", "daily living", "housing", "caregiver support")
#: A judge's label for one turn pair (appendix M).
Change = Literal["improve", "not change", "decrease"]
#: Where a hidden state's fields came from: the JSON answer, the paper's tagged text, or neither
#: (the message alone; every hidden field then falls back).
StateFormat = Literal["json", "tagged", "fallback", "offline"]
#: Where the emotion or intent came from: the model, or the paper's keyword maps (appendix L).
FieldSource = Literal["model", "keywords", "offline"]


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Difficulty(_Record):
    """How hard the user is to understand, 1 (precise) to 5 (ambiguous), per dimension."""

    style: int = Field(3, ge=1, le=5)
    length: int = Field(3, ge=1, le=5)
    content: int = Field(3, ge=1, le=5)
    tone: int = Field(3, ge=1, le=5)

    @property
    def level(self) -> int:
        """The overall level: the rounded mean of the four dimensions."""
        return round((self.style + self.length + self.content + self.tone) / 4)


class TaskProfile(_Record):
    """What the user wants done (appendix J)."""

    category: str = Field(min_length=1)
    task: str = Field(min_length=1, max_length=200)
    #: Task-specific attributes (budget, priorities, brand, urgency...), ``name -> value``.
    attributes: dict[str, str] = {}
    requirements: list[str] = []
    success_criteria: list[str] = []


class UserProfile(_Record):
    """A simulated user's private profile (appendices H–J), as saved in its TOML file.

    ``base``, ``traits`` and ``context`` map attribute names (the pools' keys, e.g.
    ``age_group``) to values. ``unknown`` lists the attributes the user does not know about
    themself (the uncertainty share), as ``"section.key"`` (e.g. ``"base.tech_experience"``,
    ``"task.budget"``); they are kept in the file for the researcher but never shown to the user
    model as known, nor to the assistant.
    """

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    name: str = Field(min_length=1, max_length=40, pattern=r"^[^\s,:;]+$")
    description: str = ""
    base: dict[str, str] = {}
    traits: dict[str, str] = {}
    context: dict[str, str] = {}
    task: TaskProfile
    difficulty: Difficulty = Difficulty()
    uncertainty: int = Field(0, ge=0, le=100)
    unknown: list[str] = []
    #: Example messages in the user's voice (the prompt's "Example messages").
    examples: list[str] = []
    seed: int | None = None
    #: "offline pools" when composed from the pools alone, else the model that enriched it.
    origin: str = "offline pools"

    def known(self, section: Literal["base", "traits", "context", "task"]) -> dict[str, str]:
        """A section's attributes the user knows (those not listed in ``unknown``)."""
        values = self.task.attributes if section == "task" else getattr(self, section)
        return {k: v for k, v in values.items() if f"{section}.{k}" not in self.unknown}

    def masked(self) -> dict[str, dict[str, str]]:
        """What ``--profile-access`` shows the assistant: every section without its unknown
        attributes (the uncertainty share masked)."""
        return {
            "base": self.known("base"),
            "traits": self.known("traits"),
            "context": self.known("context"),
            "task": {"task": self.task.task, **self.known("task")},
        }


class HiddenState(_Record):
    """What a simulated user thought and felt at one of its turns; never shown to the others."""

    inner_thoughts: str = ""
    satisfaction: float = Field(MISSING_SATISFACTION, ge=0, le=1)
    satisfaction_explanation: str = ""
    #: True when the answer gave no readable satisfaction: ``satisfaction`` is then the
    #: placeholder 0.5, which no metric counts.
    satisfaction_missing: bool = False
    clarity: float = Field(ge=0, le=1)
    clarity_explanation: str = ""
    emotion: str = ""
    intent: str = ""
    emotion_source: FieldSource = "model"
    intent_source: FieldSource = "model"
    format: StateFormat = "json"

    @property
    def rated_satisfaction(self) -> float | None:
        """The satisfaction the user gave, or None when it could not be read."""
        return None if self.satisfaction_missing else self.satisfaction

    @property
    def clarity_missing(self) -> bool:
        """True when the answer gave no readable clarity (``clarity`` was carried over or is the
        start value; its explanation says which)."""
        return self.clarity_explanation in CLARITY_NOT_RATED

    @property
    def rated_clarity(self) -> float | None:
        """The clarity the user gave, or None when it could not be read."""
        return None if self.clarity_missing else self.clarity


class UserTurn(_Record):
    """One turn of a simulated user: the visible message and its hidden state."""

    text: str = Field(min_length=1)
    state: HiddenState


class TurnJudgement(_Record):
    """A judge's analysis of one user turn pair (appendix M): turn ``pair`` → ``pair + 1``,
    counting the simulated user's turns from 0."""

    pair: int = Field(ge=0)
    clarity_change: Change
    satisfaction_change: Change
    explanation: str = ""
