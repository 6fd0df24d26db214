"""The hidden-state pane: an agent's inner state over the session."""
