"""The window's STORM parts: simulated users' profiles, their editor, adding them, the STORM view."""
