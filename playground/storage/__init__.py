"""Sessions in SQLite: schema, a recorder that writes as events occur, and a reader."""

from playground.storage.database import open_database
from playground.storage.reader import SessionReader
from playground.storage.recorder import SessionRecorder

__all__ = ["SessionReader", "SessionRecorder", "open_database"]
