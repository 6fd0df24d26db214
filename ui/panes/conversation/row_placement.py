"""Where a replay jump puts the messages it shows among the conversation's rows.

Rows stay in message order: hidden rows above the shown ones, then the shown ones, then hidden
rows below. A jump either slides the window over the hidden rows beside the messages it still
shows (a step back or forth rebinds a row or two), or rebinds the rows where they stand, leaving
a few hidden above so that the window can slide back later. Plain lists in and out: no Qt here.
"""

from __future__ import annotations

from typing import TypeVar

#: Messages laid out when a replay jumps to another moment: the ones just before it. Playing or
#: stepping on adds messages again (up to the conversation's MAX_MESSAGES).
JUMP_MESSAGES = 40
#: Hidden rows left above the shown ones after a jump: a replay stepping back slides over them
#: instead of rebinding every row.
SLIDE_ROOM = 8
#: Rows a replay makes ahead of need after opening: a jump's and room to slide both ways.
RESERVED_ROWS = JUMP_MESSAGES + 2 * SLIDE_ROOM

R = TypeVar("R")


def slide(
    above: list[R], shown: list[R], below: list[R], ids: list[int], final: list[int]
) -> tuple[list[R], list[R], list[R]] | None:
    """The rows (hidden above, shown, hidden below) for the messages ``final`` when the rows
    showing its messages stay and the window slides over the hidden rows around them; None when
    no shown message is still wanted, or the hidden rows on a side are too few.

    Args:
        above: the hidden rows above the shown ones.
        shown: the shown rows, showing the messages ``ids`` (in order).
        below: the hidden rows below the shown ones.
        ids: the message ids of ``shown``.
        final: the message ids to show, in order.
    """
    wanted = set(final)
    kept = [i for i, mid in enumerate(ids) if mid in wanted]
    if not kept:
        return None
    first, last = kept[0], kept[-1]
    lower = final.index(ids[first])  # new messages before the kept ones
    higher = len(final) - lower - len(kept)
    if ids[first : last + 1] != final[lower : lower + len(kept)]:
        return None  # not one run of messages in both
    up = above + shown[:first]
    down = shown[last + 1 :] + below
    if len(up) < lower or len(down) < higher:
        return None
    cut = len(up) - lower
    rows = up[cut:] + shown[first : last + 1] + down[:higher]
    return up[:cut], rows, down[higher:]


def in_place(
    above: list[R], shown: list[R], below: list[R], count: int
) -> tuple[list[R], list[R], list[R]]:
    """The rows (hidden above, shown, hidden below) for ``count`` messages, rebound where they
    stand: the first rows after a few hidden ones left above (room for the window to slide back
    later)."""
    rows = above + shown + below
    top = min(SLIDE_ROOM, max(0, len(rows) - count))
    return rows[:top], rows[top : top + count], rows[top + count :]
