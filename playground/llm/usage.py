"""Counting a client's calls, tokens, retries and losses, for all its calls and per task.

:class:`Counts` are the running totals a client keeps; a usage scope (:data:`SCOPE`, set by
:meth:`playground.llm.transport.Transport.usage_scope`) counts the calls of one task apart as well,
so that conversations sharing a client each record their own usage.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import ConfigDict, Field

from playground import domain


class Counts(domain.Usage):
    """Running totals of one client, or of one task's calls through it: the fields of
    :class:`~playground.domain.Usage`, counted up in place, and the calls per label."""

    model_config = ConfigDict(frozen=False)

    by_label: dict[str, int] = Field(default_factory=dict)

    def usage(self, profile: str = "") -> domain.Usage:
        """The totals as a usage record; ``profile`` is the server profile as JSON."""
        totals = self.model_dump(exclude={"by_label"})
        totals.update(rate_limit_seconds=round(self.rate_limit_seconds, 3), server_profile=profile)
        return domain.Usage(**totals)


@dataclass
class Scope:
    """One task's own totals and whom to tell after each of its calls."""

    counts: Counts
    on_usage: Callable[[domain.Usage], None]


#: The usage scope of the task making a call (see
#: :meth:`~playground.llm.transport.Transport.usage_scope`).
SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("usage_scope", default=None)
