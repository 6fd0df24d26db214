"""Write transactions, and the one fault-injection point that stops a process after its Nth write.

Every row a run saves (the recorder's, one transaction per event, and a batch's bookkeeping in
``experiment_runs``) goes through :func:`immediate`. That makes it the single place where the
number of committed writes is known, so a test can SIGKILL a real command right after any one of
them and check what a rerun makes of the database.

``PLAYGROUND_FAULT_AFTER_WRITES=N`` (a positive integer; anything else leaves it off) makes the
process SIGKILL itself right after its Nth committed write transaction that changed rows. It is
for tests only and documented in the README's Reliability section; unset, it costs a compare.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress

import sqlite_utils

FAULT_AFTER_WRITES = "PLAYGROUND_FAULT_AFTER_WRITES"


def _limit() -> int | None:
    text = os.environ.get(FAULT_AFTER_WRITES, "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


_kill_after = _limit()
_committed = 0


@contextmanager
def immediate(db: sqlite_utils.Database) -> Iterator[None]:
    """One write transaction that takes the write lock at once, waiting out the busy timeout.

    A deferred ``BEGIN`` reads first and may then fail to upgrade to a write lock without waiting
    for it. Inside a transaction already open on this connection (a caller making several writes
    one), it nests as a savepoint and commits with that transaction.
    """
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():
            yield
        return
    before = conn.total_changes
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            with suppress(sqlite3.Error):  # the error that got us here is the one to report
                conn.execute("ROLLBACK")
        raise
    if conn.total_changes != before:
        _after_commit()


def _after_commit() -> None:
    """Count a committed write; the Nth one kills the process when the fault point is set."""
    global _committed
    if _kill_after is None:
        return
    _committed += 1
    if _committed >= _kill_after:
        os.kill(os.getpid(), signal.SIGKILL)
