"""Thought Playground: Inner Thoughts agents in a shared chat room (the headless engine)."""

__version__ = "0.1.0"
