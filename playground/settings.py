"""Settings as pydantic models; the environment is read only in :func:`load_settings`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from playground import errors
from playground.urls import is_local, redact

#: Structured-output tiers, strongest first. ``json_schema_loose`` drops numeric and length
#: keywords; ``json_object_schema`` is JSON mode with the schema attached the way
#: llama-cpp-python reads it; in the last two tiers the schema travels in the prompt only.
StructuredTier = Literal[
    "json_schema", "json_schema_loose", "json_object_schema", "json_object", "text"
]
STRUCTURED_TIERS: tuple[StructuredTier, ...] = get_args(StructuredTier)
#: The request field that caps an answer's length (``none``: the server refuses both).
TokenParam = Literal["max_tokens", "max_completion_tokens", "none"]
TOKEN_PARAMS: tuple[TokenParam, ...] = get_args(TokenParam)
#: How a rating's distribution is estimated (:attr:`EngineSettings.rating_method`).
RatingMethod = Literal["auto", "logprobs", "sampled", "parsed"]
#: Where a rating's distribution is read (:attr:`EngineSettings.rating_call`).
RatingCall = Literal["auto", "final", "inline"]

#: Capabilities a user can pin, and the values each takes.
PIN_VALUES: Mapping[str, tuple[str, ...]] = {
    "structured": STRUCTURED_TIERS,
    "tokens": TOKEN_PARAMS,
    "temperature": ("yes", "no"),
    "logprobs": ("yes", "no"),
    "n": ("yes", "no"),
    "seed": ("yes", "no"),
    "stop": ("yes", "no"),
    "logprobs_cost": ("free", "per-token"),
}


def parse_pins(text: str | Mapping[str, str] | None) -> dict[str, str]:
    """``structured=json_object,logprobs=no`` (or a mapping) as a checked dict.

    Raises:
        ValueError: an unknown capability or value, naming the ones allowed.
    """
    if not text:
        return {}
    items: list[tuple[str, str]]
    if isinstance(text, Mapping):
        items = [(str(k), str(v)) for k, v in text.items()]
    else:
        items = []
        for part in text.split(","):
            if not part.strip():
                continue
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"{part.strip()!r} is not CAPABILITY=VALUE")
            items.append((key.strip(), value.strip()))
    out: dict[str, str] = {}
    for key, value in items:
        if key not in PIN_VALUES:
            raise ValueError(
                f"unknown capability {key!r}: one of {', '.join(PIN_VALUES)} can be pinned"
            )
        if value not in PIN_VALUES[key]:
            raise ValueError(f"{key} cannot be {value!r}: one of {', '.join(PIN_VALUES[key])}")
        out[key] = value
    return out


class ProactivitySettings(BaseModel):
    """How proactive one agent is (docs/spec.md §1.5 Participation)."""

    model_config = ConfigDict(frozen=True)

    system1_prob: float = Field(
        0.1,
        ge=0,
        le=1,
        description="Chance of a System-1 reply when no thought passes imThreshold (overt proactivity).",
    )
    im_threshold: float = Field(
        3.95,
        ge=1,
        le=5,
        description="Motivation needed to speak on an open turn (covert proactivity).",
    )
    interrupt_threshold: float = Field(
        4.8, ge=1, le=5, description="Motivation needed to take a turn allocated to someone else."
    )
    proactive_tone: bool = Field(
        False, description="Restyle utterances to sound more assertive (tonal proactivity)."
    )
    system1_count: int = Field(1, ge=0, le=5, description="System-1 thoughts formed per trigger.")
    system2_count: int = Field(2, ge=0, le=5, description="System-2 thoughts formed per trigger.")


#: The paper's three user-study presets plus the simulation-study defaults.
PRESETS: Mapping[str, ProactivitySettings] = {
    "simulation": ProactivitySettings(
        system1_prob=0.1, im_threshold=3.95, proactive_tone=False, interrupt_threshold=4.8
    ),
    "non-stop-chatter": ProactivitySettings(
        system1_prob=0.7, im_threshold=4.49, proactive_tone=False, interrupt_threshold=4.8
    ),
    "active-contributor": ProactivitySettings(
        system1_prob=0.2, im_threshold=3.59, proactive_tone=True, interrupt_threshold=4.8
    ),
    "selective-participant": ProactivitySettings(
        system1_prob=0.0, im_threshold=4.09, proactive_tone=False, interrupt_threshold=5.0
    ),
}
DEFAULT_PRESET = "simulation"


#: Seconds per call when ``timeout`` is unset (see :meth:`LLMSettings.call_timeout`).
HOSTED_TIMEOUT = 60.0
LOCAL_TIMEOUT = 300.0
OPENAI_URL = "https://api.openai.com/v1"


class LLMSettings(BaseModel):
    """Connection to an OpenAI-compatible server."""

    base_url: str | None = Field(
        None, description="OpenAI-compatible base URL; None means api.openai.com."
    )
    model: str = Field("gpt-4o-mini", min_length=1, description="Chat model name.")
    embedding_model: str = Field(
        "text-embedding-3-small", description="Model for the /embeddings endpoint."
    )
    api_key: SecretStr | None = Field(None, description="Never stored in the database or logs.")
    timeout: float | None = Field(
        None,
        gt=0,
        le=600,
        description=(
            "Seconds before one call is abandoned. Unset: 60 s for a hosted API, 300 s for a"
            " server on this machine or network, which computes one answer at a time and can"
            " take minutes for one under load (see call_timeout)."
        ),
    )
    max_retries: int = Field(
        3, ge=0, le=10, description="Retries on 429, 5xx, timeouts and connection errors."
    )
    retry_base_delay: float = Field(
        1.0, ge=0, le=60, description="First back-off delay in seconds; doubles each retry."
    )
    concurrency: int = Field(
        32,
        ge=1,
        le=64,
        description=(
            "Most chat calls in flight at once. Per-thought ratings make up to (listeners × (3 +"
            " max_retained)) calls together: 35 with 8 agents. Lower it for a server that"
            " cannot take that many."
        ),
    )
    temperature: float = Field(0.7, ge=0, le=2)
    adaptive_concurrency: bool = Field(
        True,
        description=(
            "Adapt the calls in flight to what the server sustains: start at 2 for a server on"
            " this machine or network and grow while answers keep their speed, halve when they"
            " slow down or time out (never above concurrency). Off: always concurrency"
            " (--llm-concurrency N)."
        ),
    )
    pins: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Capabilities fixed by the user instead of learned from the server: structured"
            " (json_schema, json_schema_loose, json_object_schema, json_object, text), tokens"
            " (max_tokens, max_completion_tokens, none), temperature, logprobs, n, seed (yes/no)."
        ),
    )

    @field_validator("pins", mode="before")
    @classmethod
    def _check_pins(cls, value: object) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, (str, Mapping)):
            raise ValueError("pins are CAPABILITY=VALUE pairs")
        return parse_pins(value)

    def call_timeout(self) -> float:
        """Seconds one call may take: ``timeout`` when set, else by where the server is.

        A hosted API answers in seconds or is in trouble; a CPU server on this machine computes
        one request at a time, and a long answer while other programs share the cores took over
        60 s in our runs (SmolLM2-135M on llama-cpp-python, 2 cores, 4 agents).
        """
        if self.timeout is not None:
            return self.timeout
        return LOCAL_TIMEOUT if is_local(self.base_url or OPENAI_URL) else HOSTED_TIMEOUT


class EngineSettings(BaseModel):
    """Which thinking engine and how it spends calls."""

    engine: Literal["offline", "openai"] = "offline"
    embeddings: Literal["local", "remote"] = Field(
        "local", description="MiniLM on this machine, or the server's /embeddings."
    )
    evaluation_mode: Literal["batched", "per-thought"] = Field(
        "per-thought",
        description=(
            "One call per thought (as the paper, whose thresholds were calibrated that way; the"
            " calls run concurrently), or one call per agent for all its thoughts (cheaper, but"
            " each rating is anchored on the ones before it)."
        ),
    )
    seed: int = 0
    rating_method: RatingMethod = Field(
        "auto",
        description=(
            "How a rating's distribution is estimated: the rating token's logprobs, the"
            " empirical distribution of sampled ratings (G-Eval's way without logprobs), or the"
            " parsed rating alone (probability 1, one call). auto: logprobs where the server"
            " gives them, else sampled."
        ),
    )
    rating_samples: int = Field(
        20, ge=2, le=100, description="Ratings sampled per evaluation with the sampled method."
    )
    rating_alternatives: int = Field(
        20,
        ge=1,
        le=20,
        description=(
            "Top logprobs asked for the rating token in the final rating call (the paper's"
            " models put the top 5 on digits; a weak model's top 5 are mostly quotes and"
            " brackets, and a digit left out of them is unknown, not improbable)."
        ),
    )
    rating_call: RatingCall = Field(
        "auto",
        description=(
            "Where the rating's distribution is read: a short final call that asks for the"
            " rating alone after the reasons (logprobs or samples for a few tokens), or inline,"
            " from the logprobs of the whole evaluation answer (one call, but every token of"
            " the reasons is scored too). auto: inline where the server's logprobs cost"
            " nothing (a hosted API: one dependent call less per message), a final call where"
            " they are slow (a server on this machine or network: llama-cpp-python computes"
            " logprobs for every token it generates, ~170 ms each for SmolLM2 on 2 cores)."
        ),
    )


class RoomSettings(BaseModel):
    """How the shared room runs."""

    max_turns: int = Field(
        15, ge=1, le=10_000, description="Stop after this many messages (the icebreaker counts)."
    )
    max_silent_steps: int = Field(
        4, ge=1, le=1000, description="Stop after this many consecutive silent steps."
    )
    pause_seconds: float = Field(
        10.0, gt=0, le=3600, description="Real time: seconds of silence before on_pause fires."
    )
    agent_concurrency: int = Field(8, ge=1, le=64, description="Most agents thinking at once.")
    saliency_threshold: float = Field(
        0.2,
        ge=0,
        le=1,
        description=(
            "Saliency a memory, message or thought needs to become a stimulus. The paper's 0.3 was"
            " set for its embedding model; 0.2 is the 90th percentile of MiniLM saliencies of"
            " persona memories to the icebreakers (bench/bench_saliency.py)."
        ),
    )
    memory_decay: float = Field(0.95, gt=0, le=1)
    silence_factor: float = Field(1.02, ge=1, le=2)
    max_agent_streak: int = Field(
        6,
        ge=1,
        le=1000,
        description="Real time: after this many agent messages in a row, agents wait for a human.",
    )
    pace: Literal["fast", "typing"] = Field(
        "fast", description="Post as fast as possible, or wait as long as typing the message takes."
    )
    typing_cps: float = Field(
        15.0, gt=0, le=1000, description="Typing speed in characters per second when paced."
    )
    show_thoughts: bool = Field(
        False,
        description=(
            "Study condition: the pages of people taking part from a browser show the agents'"
            " thoughts as they form and are rated (never their memories or other people's notes)."
        ),
    )
    creativity_prob: float = Field(
        0.1,
        ge=0,
        le=1,
        description=(
            "Chance per trigger of pulling in one random long-term memory ('creativity'). It never"
            " fires just because nothing was salient."
        ),
    )
    mixed_floor: Literal["prediction-first", "motivation-first"] = Field(
        "prediction-first",
        description=(
            "A room mixing next-speaker and Inner Thoughts agents: whether the agent the predictor"
            " picked goes before Inner Thoughts agents that want an open turn (prediction-first:"
            " the prediction is that condition's turn allocation, which Inner Thoughts agents take"
            " only by interrupting) or after them (motivation-first). The paper never mixes them."
        ),
    )
    max_retained: int = Field(
        2,
        ge=0,
        le=8,
        description="Most earlier thoughts re-scored per trigger: the most salient retained ones.",
    )
    simulated_speak_probability: float = Field(
        0.3,
        ge=0,
        le=1,
        description=(
            "Chance that a simulated user speaks at a trigger where nobody addressed it (an"
            " addressed one always answers). 0.3: in a room of two simulated users and one agent"
            " the users still answer each other now and then without drowning the agent out."
        ),
    )
    simulated_short_messages: Literal["keep", "retry"] = Field(
        "keep",
        description=(
            "A simulated user's message under 20 characters (STORM's lower limit): keep it as"
            " it is (people do write 'ok, thanks'), or ask the model once more and keep the"
            " longer answer. A message over 100 characters is always cut at a word boundary."
        ),
    )


class Settings(BaseModel):
    """Everything a session needs; snapshotted (without the key) into the database."""

    llm: LLMSettings = LLMSettings()
    engine: EngineSettings = EngineSettings()
    room: RoomSettings = RoomSettings()
    preset: str = DEFAULT_PRESET

    def snapshot(self) -> dict[str, object]:
        """Settings as JSON-able data, without the API key or credentials in the base URL."""
        data = self.model_dump(mode="json", exclude={"llm": {"api_key"}})
        if self.llm.base_url:
            data["llm"]["base_url"] = redact(self.llm.base_url)
        return data


def load_settings(
    environ: Mapping[str, str], overrides: Mapping[str, object] | None = None
) -> Settings:
    """Build settings from the environment and explicit overrides (CLI flags, GUI fields).

    ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL`` are read here and nowhere else. The engine is
    ``openai`` when either is present, else ``offline``, unless ``engine`` is overridden.

    Args:
        environ: usually ``os.environ``.
        overrides: flat keys ``engine``, ``model``, ``base_url``, ``api_key``, ``seed``, ``preset``,
            ``max_turns``, ``evaluation_mode``, ``embeddings``, ``timeout``, ``concurrency``...;
            ``None`` values are ignored.

    Raises:
        SettingsError: naming the setting and what is wrong with it.
    """
    o = {k: v for k, v in (overrides or {}).items() if v is not None}
    key = o.get("api_key") or environ.get("OPENAI_API_KEY") or None
    base_url = o.get("base_url") or environ.get("OPENAI_BASE_URL") or None
    engine = o.get("engine") or ("openai" if (key or base_url) else "offline")
    llm = {"base_url": base_url, "api_key": key}
    for name in (
        "model",
        "embedding_model",
        "timeout",
        "max_retries",
        "retry_base_delay",
        "concurrency",
        "temperature",
        "adaptive_concurrency",
        "pins",
    ):
        if name in o:
            llm[name] = o[name]
    if "llm_concurrency" in o:
        value = str(o["llm_concurrency"]).strip()
        if value == "auto":
            llm["adaptive_concurrency"] = True
        else:
            try:
                llm["concurrency"] = int(value)
            except ValueError:
                reason = f"auto or a whole number of calls (got {value!r})"
                raise errors.SettingsError(
                    f"llm_concurrency: {reason}", field="llm_concurrency", reason=reason
                ) from None
            llm["adaptive_concurrency"] = False
    eng = {"engine": engine}
    for name in (
        "embeddings",
        "evaluation_mode",
        "seed",
        "rating_method",
        "rating_samples",
        "rating_call",
        "rating_alternatives",
    ):
        if name in o:
            eng[name] = o[name]
    room = {n: o[n] for n in RoomSettings.model_fields if n in o}
    preset = str(o.get("preset", DEFAULT_PRESET))
    if preset not in PRESETS:
        raise errors.SettingsError(
            f"preset: unknown preset {preset!r}; choose one of {', '.join(PRESETS)}"
        )
    try:
        return Settings(
            llm=LLMSettings(**llm),
            engine=EngineSettings(**eng),
            room=RoomSettings(**room),
            preset=preset,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        reason = f"{first['msg']} (got {first.get('input')!r})"
        raise errors.SettingsError(f"{field}: {reason}", field=field, reason=reason) from exc
