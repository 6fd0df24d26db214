"""The window's panes and widgets: participants, memory, conversation, decisions, thoughts, hidden states, the session library and small reusable widgets."""
