"""Error types: every failure the user can meet names what is wrong."""

from __future__ import annotations


class PlaygroundError(Exception):
    """Base class for errors the app reports to the user instead of crashing."""


class SettingsError(PlaygroundError):
    """A setting has an invalid value."""


class PersonaError(PlaygroundError):
    """A persona or icebreaker file is missing, unreadable or invalid.

    Attributes:
        path: the offending file.
        field: the offending field, dotted (``memories.2.weight``), or ``""`` for the whole file.
    """

    def __init__(self, path: object, field: str, message: str) -> None:
        self.path = str(path)
        self.field = field
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {message}")


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
    """The server did not answer within the timeout."""


class LLMServerError(LLMError):
    """The server answered 5xx after all retries, or another unexpected status."""


class LLMOutputError(LLMError):
    """The model's answer could not be parsed, even after one retry."""


class LLMBadResponse(LLMServerError):
    """The server answered, but not with what an OpenAI-compatible API sends (a web page, broken
    JSON, no ``choices``...)."""
