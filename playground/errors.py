"""Error types: every failure the user can meet names what is wrong."""

from __future__ import annotations


class PlaygroundError(Exception):
    """Base class for errors the app reports to the user instead of crashing."""


class SettingsError(PlaygroundError):
    """A setting has an invalid value.

    Attributes:
        field: the setting's name (``max_turns``, ``timeout``...), or ``""`` when not one setting.
        reason: what is wrong with it, without the name (the whole message when there is none).
    """

    def __init__(self, message: str, *, field: str = "", reason: str = "") -> None:
        super().__init__(message)
        self.field = field
        self.reason = reason or message


class UsageError(PlaygroundError):
    """The command line itself is wrong: an unknown flag, a missing argument, a number outside
    its flag's range. Said in one line like any error, with argparse's exit code 2, before
    anything runs."""


class PersonaError(PlaygroundError):
    """A persona or icebreaker file is missing, unreadable or invalid.

    Attributes:
        path: the offending file.
        field: the offending field, dotted (``memories.2.weight``), or ``""`` for the whole file.
        reason: what is wrong, without the file and field.
    """

    def __init__(self, path: object, field: str, message: str) -> None:
        self.path = str(path)
        self.field = field
        self.reason = message
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {message}")


class ProfileError(PersonaError):
    """A simulated user's profile file is missing, unreadable or invalid (same attributes as
    :class:`PersonaError`: the file, the dotted field, the reason)."""


class SessionNotFound(PlaygroundError):
    """No session with that id in the database."""


class LLMError(PlaygroundError):
    """A call to the language-model server failed."""


class LLMUnreachable(LLMError):
    """The server could not be reached (wrong URL, server down)."""


class LLMAuthError(LLMError):
    """The server refused the API key (401/403)."""


class LLMRateLimited(LLMError):
    """The server kept answering 429 after all retries."""


class LLMTimeout(LLMError):
    """A call got no answer within the timeout, after its retries. The server still answers
    other calls: the caller skips what this call was for (one agent, one step) and goes on."""


class LLMServerGone(LLMTimeout):
    """The server stopped answering altogether: every call times out and none has been answered
    for a while. A session cannot go on."""


class LLMServerError(LLMError):
    """The server answered 5xx after all retries, or another unexpected status."""


class LLMOutputError(LLMError):
    """The model's answer could not be parsed, even after one retry."""


class LLMUnusableText(LLMOutputError):
    """A plain-text answer left nothing to say: empty, cut at the token limit before its first
    sentence ended, or nothing but the prompt's own scaffolding. Like any :class:`LLMOutputError`
    it skips what it was for (an agent stays silent for the step), never the session."""


class LLMBadResponse(LLMServerError):
    """The server answered, but not with what an OpenAI-compatible API sends (a web page, broken
    JSON, no ``choices``...)."""


class RecordingError(PlaygroundError):
    """The session database could not be written, so the run stops: a run must not go on unsaved.

    The message grows as the run winds down: how many messages were saved before, and whether the
    session could still be marked ``failed`` in the database.

    Attributes:
        path: the database file, as the user would name it.
        reason: what SQLite said (``attempt to write a readonly database``, ``database is locked``).
        session_id: the session being recorded, or ``""`` when its row was never saved.
        saved_messages: the messages saved before the failure.
        marked_failed: whether the session row was marked ``failed`` afterwards (None: not tried).
    """

    def __init__(self, path: str, reason: str, *, session_id: str, saved_messages: int) -> None:
        self.path = path
        self.reason = reason
        self.session_id = session_id
        self.saved_messages = saved_messages
        self.marked_failed: bool | None = None
        super().__init__(path, reason)

    def __str__(self) -> str:
        text = f"could not save to {self.path}: {self.reason} — the run stopped"
        if not self.session_id:
            return f"{text}; nothing was saved"
        n = self.saved_messages
        saved = "1 message was" if n == 1 else f"{n} messages were"
        text += f"; {saved} saved before, in session {self.session_id}"
        if self.marked_failed:
            text += "; the session is marked failed"
        elif self.marked_failed is False:
            text += "; the session could not be marked failed either (it will read as interrupted)"
        return text


class SessionEnded(PlaygroundError):
    """A command that would change a session that has already ended (finished, interrupted or
    failed): nothing is posted or recorded after its end.

    Attributes:
        status: how the session ended (``finished``, ``interrupted``, ``failed``).
        ended_at: when it ended, ISO 8601 (``""`` when not known).
    """

    def __init__(self, status: str, ended_at: str = "") -> None:
        self.status = status
        self.ended_at = ended_at
        when = f" at {ended_at[11:19]}" if len(ended_at) >= 19 else ""
        super().__init__(
            f"this session has ended ({status}{when}); it can no longer change."
            " Start a new session like this one, or fork it from a replay, to go on"
        )


class Cancelled(PlaygroundError):
    """Work stopped half-way because its result is no longer wanted (a newer refresh superseded
    it, or its window closed). Whoever asked for the stop expects this; nobody shows it."""
