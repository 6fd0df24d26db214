"""Where a trigger's time went, as plain text: one line per trigger (its total and its critical
path) and a table of its stages.

The text is read from the ``trigger_timed`` event the room recorded when the trigger ended
(:class:`playground.events.TriggerTimed`); nothing is measured or re-computed here. The command
line (``playground show``) and the window's decision strip print the same text, live and in
replay.
"""

from __future__ import annotations

from playground import events

#: A stage's detail (a thought's text) is cut to this many characters in the table.
DETAIL_CHARS = 48
#: The table's last line: what its marks and numbers mean.
LEGEND = (
    "* on the critical path · seconds after the trigger fired · in calls: waiting for the"
    " model server"
)
_HEAD = ("", "agent", "stage", "ready", "started", "waited", "took", "in calls", "calls", "detail")
#: The columns aligned right (the numbers).
_NUMBERS = frozenset({3, 4, 5, 6, 7, 8})


def _s(seconds: float) -> str:
    return f"{seconds:.2f}"


def stage_label(s: events.StageTiming) -> str:
    """The stage with the agent it ran for: "Ana System-2 thoughts", or "floor"."""
    return f"{s.agent} {s.stage}" if s.agent else s.stage


def critical_path(e: events.TriggerTimed) -> list[events.StageTiming]:
    """The stages the trigger's end waited for, in the order they ran."""
    return sorted((s for s in e.stages if s.critical), key=lambda s: (s.started, s.ended))


def summary_line(e: events.TriggerTimed) -> str:
    """One line: the step, what fired it, its total, what it posted and its critical path, e.g.
    ``step 4 · new message #4 · 1.83 s · posted #5 · critical path: interpretation 0.41 → …``."""
    if e.trigger == "new_message":
        what = f"new message #{e.message_id}"
    else:
        what = f"a pause after #{e.message_id}" if e.message_id is not None else "a pause"
    outcome = f"posted #{e.posted}" if e.posted is not None else "everyone stayed silent"
    path = " → ".join(f"{stage_label(s)} {_s(s.took)}" for s in critical_path(e))
    return f"step {e.step} · {what} · {_s(e.total)} s · {outcome} · critical path: {path or 'none'}"


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"


def _row(s: events.StageTiming) -> tuple[str, ...]:
    waited = s.waited
    return (
        "*" if s.critical else "",
        s.agent,
        s.stage,
        _s(s.ready),
        _s(s.started),
        f"+{_s(waited)}" if round(waited, 2) > 0 else "",
        _s(s.took),
        _s(s.in_calls) if s.calls or s.in_calls else "",
        str(s.calls) if s.calls else "",
        _one_line(s.detail),
    )


def stage_table(e: events.TriggerTimed) -> list[str]:
    """The trigger's stages in the order they started, one line each, under a header: agent,
    stage, when it was ready, when it started (and how long it waited), how long it took, how
    much of that was spent in model calls and how many calls (:data:`LEGEND` says how to read
    it)."""
    stages = sorted(e.stages, key=lambda s: (s.started, s.ready, s.agent, s.stage))
    rows = [_HEAD, *(_row(s) for s in stages)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(_HEAD))]
    lines = [
        "  ".join(
            cell.rjust(widths[i]) if i in _NUMBERS else cell.ljust(widths[i])
            for i, cell in enumerate(r)
        ).rstrip()
        for r in rows
    ]
    return lines


#: The widest line of a breakdown's head (a tooltip wider than the screen is cut at its edge).
HEAD_WIDTH = 100


def head_lines(e: events.TriggerTimed, width: int = HEAD_WIDTH) -> list[str]:
    """:func:`summary_line` over a few lines of at most ``width`` characters, broken between the
    critical path's stages (never inside one)."""
    head, sep, path = summary_line(e).partition(" · critical path: ")
    if not sep:
        return [head]
    lines = [f"{head} ·"]
    line = "critical path:"
    for i, hop in enumerate(path.split(" → ")):
        piece = f" {hop}" if i == 0 else f" → {hop}"
        if len(line) + len(piece) > width and line.strip() != "critical path:":
            lines.append(line)
            line = "   " + piece
        else:
            line += piece
    lines.append(line)
    return lines


def breakdown(e: events.TriggerTimed) -> str:
    """The whole breakdown of one trigger: its head (:func:`head_lines`), :func:`stage_table`
    and :data:`LEGEND`."""
    return "\n".join([*head_lines(e), *stage_table(e), LEGEND])
