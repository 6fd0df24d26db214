"""The memory pane: a participant's long-term memory, its table and editor."""
