"""The five thinking steps behind one protocol, with an LLM and an offline implementation."""

from playground.cognition.base import Cognition

__all__ = ["Cognition"]
