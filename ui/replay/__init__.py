"""Replaying a saved session in the window: the controller that drives the panes from a recording, its panel, transport and timeline, forking, and leaving a live session first."""
