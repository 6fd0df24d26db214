"""Where one trigger's time goes: each stage's readiness, start and run, and the critical path.

A stage is *ready* when the stages it waits for have ended; it *starts* then or later (behind
the room's limit of agents thinking at once) and runs for a while, part of it in model calls
(:class:`playground.clock.CallMeter`, filled by the model client). When the trigger ends, the
critical path is walked back from the stage that ended last, each time to the stage it waited
for that ended last: the chain of stages the user waited for, one after the other. The result
is published as :class:`playground.events.TriggerTimed`; nothing here changes what is computed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from playground import clock, domain, events
from playground.events import StageName


@dataclass
class _Stage:
    name: StageName
    agent: str
    detail: str
    ready: float
    started: float
    after: tuple[int, ...]
    took: float = 0.0
    meter: clock.CallMeter = field(default_factory=clock.CallMeter)

    @property
    def ended(self) -> float:
        return self.started + self.took


class Timeline:
    """The stages of one trigger, timed on ``now`` (seconds, monotonic) from its start."""

    def __init__(self, now: Callable[[], float]) -> None:
        self._now = now
        self._t0 = now()
        self._stages: list[_Stage] = []

    def _at(self) -> float:
        return self._now() - self._t0

    def ids(self, *names: StageName) -> list[int]:
        """The stages of these names, in the order they started."""
        return [i for i, s in enumerate(self._stages) if s.name in names]

    def ready_after(self, after: Sequence[int]) -> float:
        """When the stages ``after`` had all ended (the trigger's start without any)."""
        return max((self._stages[i].ended for i in after), default=0.0)

    @contextlib.contextmanager
    def stage(
        self,
        name: StageName,
        *,
        agent: str = "",
        detail: str = "",
        after: Sequence[int] = (),
        ready: float | None = None,
    ) -> Iterator[int]:
        """Time the block as one stage; yields its id (for the stages that wait for it). The
        model calls made in the block, and in the tasks it starts, are counted to it."""
        i = len(self._stages)
        started = self._at()
        st = _Stage(
            name=name,
            agent=agent,
            detail=detail,
            ready=self.ready_after(after) if ready is None else ready,
            started=started,
            after=tuple(after),
        )
        self._stages.append(st)
        token = clock.CALL_METER.set(st.meter)
        try:
            yield i
        finally:
            clock.CALL_METER.reset(token)
            st.took = self._at() - started

    def critical_path(self, end: int | None = None) -> list[int]:
        """The stages the trigger's end waited for, first to last: from ``end`` (the stage that
        ended last by default), back through the stage each waited for that ended last."""
        if not self._stages:
            return []
        i: int | None = (
            end
            if end is not None
            else max(range(len(self._stages)), key=lambda k: self._stages[k].ended)
        )
        path: list[int] = []
        while i is not None:
            path.append(i)
            after = self._stages[i].after
            i = max(after, key=lambda k: self._stages[k].ended) if after else None
        return path[::-1]

    def event(
        self,
        trigger: domain.TriggerKind,
        message_id: int | None,
        posted: int | None,
        end: int | None = None,
    ) -> events.TriggerTimed:
        """The trigger's timings as an event (its stages in the order they started)."""
        critical = set(self.critical_path(end))
        order = sorted(range(len(self._stages)), key=lambda k: (self._stages[k].started, k))
        stages = [
            events.StageTiming(
                stage=s.name,
                agent=s.agent,
                detail=s.detail,
                ready=round(s.ready, 4),
                started=round(s.started, 4),
                took=round(s.took, 4),
                in_calls=round(s.meter.seconds, 4),
                calls=s.meter.calls,
                critical=k in critical,
            )
            for k in order
            for s in (self._stages[k],)
        ]
        return events.TriggerTimed(
            trigger=trigger,
            message_id=message_id,
            posted=posted,
            total=round(self._at(), 4),
            stages=stages,
        )
