"""Counting a client's calls, tokens, retries and losses, for all its calls and per task.

:class:`Counts` are the running totals a client keeps; a usage scope (:data:`SCOPE`, set by
:meth:`playground.llm.transport.Transport.usage_scope`) counts the calls of one task apart as well,
so that conversations sharing a client each record their own usage.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field

from playground import domain


@dataclass
class Counts:
    """Running totals of one client, or of one task's calls through it."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    retries: int = 0
    rate_limit_waits: int = 0
    rate_limit_seconds: float = 0.0
    dropped: int = 0
    cut: int = 0
    by_label: dict[str, int] = field(default_factory=dict)

    def usage(self, profile: str = "") -> domain.Usage:
        """The totals as a usage record; ``profile`` is the server profile as JSON."""
        return domain.Usage(
            calls=self.calls,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
            embedding_calls=self.embedding_calls,
            retries=self.retries,
            rate_limit_waits=self.rate_limit_waits,
            rate_limit_seconds=round(self.rate_limit_seconds, 3),
            dropped=self.dropped,
            cut=self.cut,
            server_profile=profile,
        )


@dataclass
class Scope:
    """One task's own totals and whom to tell after each of its calls."""

    counts: Counts
    on_usage: Callable[[domain.Usage], None]


#: The usage scope of the task making a call (see
#: :meth:`~playground.llm.transport.Transport.usage_scope`).
SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("usage_scope", default=None)
